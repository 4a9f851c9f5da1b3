/*
 * partition/chain/part_edit.c — hand edits of a many-core partition state
 * (part_edit.h).
 *
 * An edit reads the state's group list (pb_part_groups), changes the cores
 * and layers per group, and writes the state back (pb_part_state_from_groups):
 * a group of c cores and l layers is c-1 zeros then l, so the sum of cores
 * stays n and the sum of layers m whatever the edit, and the last core holds
 * layers. Then the Lua rules: a boundary the rules forbid that appears, one
 * they force that goes, or a pinned layer whose group loses the pinned core,
 * refuses the edit when the state before obeyed that rule (a plan that
 * already broke a rule can still be edited). The description compares the
 * two group lists: the groups common to both at either end are skipped, the
 * rest is printed before -> after with both states' max(t).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition/chain/chain_rules.h"
#include "partition/chain/env.h"
#include "partition/chain/part_edit.h"

typedef struct groups {
	int n;
	pb_part_group *g; /* P->n entries */
} groups;

static int groups_read(pb_part_problem *P, const int *ac, groups *gs, pb_error *err)
{
	gs->n = 0;
	gs->g = malloc((size_t)P->n * sizeof *gs->g);
	if (!gs->g)
		return pb_err(err, PB_ENOMEM, "out of memory");
	gs->n = pb_part_groups(P, ac, gs->g);
	return PB_OK;
}

static int check_group(const groups *gs, int G, int need_next, pb_error *err)
{
	int last = gs->n - 1 - (need_next ? 1 : 0);
	if (G < 0 || G > last)
		return pb_err(
		    err, PB_EUSAGE, "group %d does not exist (valid: 0..%d of %d groups)%s", G,
		    last, gs->n,
		    need_next && gs->n == 1 ? "; a plan of one group has no boundary" : "");
	return PB_OK;
}

/* Writes the state of groups gs with group G replaced by k groups (cores
 * c[], layers l[]) and group G+1 dropped when drop_next. */
static int write_state(const groups *gs, int G, int k, const int *c, const int *l, int drop_next,
                       int *out, pb_error *err)
{
	int cap = gs->n + k;
	int *cores = malloc((size_t)cap * 2 * sizeof *cores), *layers = cores ? cores + cap : NULL;
	if (!cores)
		return pb_err(err, PB_ENOMEM, "out of memory");
	int j = 0;
	for (int i = 0; i < gs->n; i++) {
		if (i == G) {
			for (int q = 0; q < k; q++) {
				cores[j] = c[q];
				layers[j++] = l[q];
			}
		} else if (!(drop_next && i == G + 1)) {
			cores[j] = gs->g[i].cores;
			layers[j++] = gs->g[i].layers;
		}
	}
	pb_part_state_from_groups(j, cores, layers, out);
	free(cores);
	return PB_OK;
}

static int finish(pb_part_problem *P, const pb_graph *g, const int *ac, const int *out, int rc,
                  pb_error *err)
{
	char why[400];
	if (rc == PB_OK && pb_part_edit_rule_broken(P, g, ac, out, why, sizeof why))
		rc = pb_err(err, PB_EUSAGE, "the edit breaks Lua %s", why);
	return rc;
}

int pb_part_edit_merge(pb_part_problem *P, const pb_graph *g, const int *ac, int G, int *out,
                       pb_error *err)
{
	groups gs;
	int rc = groups_read(P, ac, &gs, err);
	if (rc == PB_OK && (rc = check_group(&gs, G, 1, err)) == PB_OK) {
		int c = gs.g[G].cores + gs.g[G + 1].cores, l = gs.g[G].layers + gs.g[G + 1].layers;
		rc = write_state(&gs, G, 1, &c, &l, 1, out, err);
	}
	free(gs.g);
	return finish(P, g, ac, out, rc, err);
}

int pb_part_edit_split(pb_part_problem *P, const pb_graph *g, const int *ac, int G, int *out,
                       pb_error *err)
{
	groups gs;
	int rc = groups_read(P, ac, &gs, err);
	if (rc == PB_OK && (rc = check_group(&gs, G, 0, err)) == PB_OK) {
		const pb_part_group *gr = &gs.g[G];
		if (gr->cores < 2 || gr->layers < 2) {
			rc = pb_err(
			    err, PB_EUSAGE,
			    "group %d has %d core(s) and %d layer(s); splitting needs at least "
			    "two of each",
			    G, gr->cores, gr->layers);
		} else {
			int c[2] = {gr->cores / 2, gr->cores - gr->cores / 2};
			int a0 = gr->first_layer, b0 = a0 + gr->layers, best = a0 + 1;
			double best_v = INFINITY;
			for (int k = a0 + 1; k < b0; k++) {
				double v = fmax((P->pmacs[k] - P->pmacs[a0]) / c[0],
				                (P->pmacs[b0] - P->pmacs[k]) / c[1]);
				if (v < best_v) {
					best_v = v;
					best = k;
				}
			}
			int l[2] = {best - a0, b0 - best};
			rc = write_state(&gs, G, 2, c, l, 0, out, err);
		}
	}
	free(gs.g);
	return finish(P, g, ac, out, rc, err);
}

int pb_part_edit_boundary(pb_part_problem *P, const pb_graph *g, const int *ac, int G, int delta,
                          int *out, pb_error *err)
{
	groups gs;
	int rc = groups_read(P, ac, &gs, err);
	if (rc == PB_OK && (rc = check_group(&gs, G, 1, err)) == PB_OK) {
		int lg = gs.g[G].layers, ln = gs.g[G + 1].layers;
		if (delta == 0 || (delta > 0 && delta >= ln) || (delta < 0 && -delta >= lg)) {
			rc = pb_err(
			    err, PB_EUSAGE,
			    "cannot move %d layers: group %d has %d and group %d has %d, and "
			    "each must keep at least one",
			    delta, G, lg, G + 1, ln);
		} else {
			int c[2] = {gs.g[G].cores, gs.g[G + 1].cores},
			    l[2] = {lg + delta, ln - delta};
			rc = write_state(&gs, G, 2, c, l, 1, out, err);
		}
	}
	free(gs.g);
	return finish(P, g, ac, out, rc, err);
}

int pb_part_edit_action(pb_part_problem *P, const pb_graph *g, const int *ac, int action, int *out,
                        pb_error *err)
{
	int na = pb_env_n_actions(P->n);
	if (action < 0 || action >= na)
		return pb_err(err, PB_EUSAGE, "action %d is out of range (0..%d for %d cores)",
		              action, na - 1, P->n);
	memcpy(out, ac, (size_t)P->n * sizeof *out);
	const char *why;
	if (!pb_env_apply(out, P->n, action, &why)) {
		char desc[200];
		pb_env_describe(P->n, action, desc, sizeof desc);
		return pb_err(err, PB_EUSAGE, "action %d is invalid here: %s (%s)", action, desc,
		              why);
	}
	return finish(P, g, ac, out, PB_OK, err);
}

/* Group index per layer of state ac (gr: capacity P->n). */
static void layer_groups(pb_part_problem *P, const int *ac, pb_part_group *gr, int *of)
{
	int ng = pb_part_groups(P, ac, gr);
	for (int G = 0; G < ng; G++)
		for (int l = gr[G].first_layer; l < gr[G].first_layer + gr[G].layers; l++)
			of[l] = G;
}

int pb_part_edit_rule_broken(pb_part_problem *P, const pb_graph *g, const int *before,
                             const int *after, char *msg, size_t len)
{
	if (!P->cut && !P->pin)
		return 0;
	int m = P->m, n = P->n, found = 0;
	int *gn = calloc((size_t)(2 * m + 1), sizeof *gn), *go = gn ? gn + m : NULL;
	pb_part_group *grn = calloc((size_t)(2 * n), sizeof *grn), *gro = grn ? grn + n : NULL;
	if (!gn || !grn) {
		free(gn);
		free(grn);
		snprintf(msg, len, "rules (out of memory checking them)");
		return 1;
	}
	layer_groups(P, after, grn, gn);
	layer_groups(P, before, gro, go);
	/* layer l is node pb_part_layer_node(P, l) (load-time constants are no layers) */
#define NODE(l) pb_part_layer_node(P, l)
#define NAME(l)                                                                                    \
	(g && NODE(l) >= 0 && NODE(l) < g->n_nodes && g->nodes[NODE(l)].name                       \
	     ? g->nodes[NODE(l)].name                                                              \
	     : "?")
	for (int q = 1; q < m && P->cut && !found; q++) {
		int bn = gn[q - 1] != gn[q], bo = go[q - 1] != go[q];
		const char *effect = NULL;
		if (P->cut[q] == PB_CUT_FORBID && bn && !bo)
			effect = "cut=forbid";
		else if (P->cut[q] == PB_CUT_FORCE && !bn && bo)
			effect = "cut=force";
		if (effect) {
			snprintf(msg, len, "rule '%s' (%s): %s group boundary after node '%s'",
			         pb_part_rules_info_name(P->rules, effect, NAME(q - 1)), effect,
			         bn ? "a" : "no", NAME(q - 1));
			found = 1;
		}
	}
	for (int v = 0; v < m && P->pin && !found; v++) {
		int k = P->pin[v];
		const pb_part_group *a = &grn[gn[v]], *b = &gro[go[v]];
		if (k < 0 || (k >= a->first_core && k < a->first_core + a->cores) ||
		    !(k >= b->first_core && k < b->first_core + b->cores))
			continue;
		char effect[32];
		snprintf(effect, sizeof effect, "core=%d", k);
		snprintf(msg, len, "rule '%s' (%s): node '%s' would be on cores %d-%d",
		         pb_part_rules_info_name(P->rules, effect, NAME(v)), effect, NAME(v),
		         a->first_core, a->first_core + a->cores - 1);
		found = 1;
	}
#undef NAME
#undef NODE
	free(gn);
	free(grn);
	return found;
}

static int same_group(const pb_part_group *a, const pb_part_group *b)
{
	return a->first_core == b->first_core && a->cores == b->cores &&
	       a->first_layer == b->first_layer && a->layers == b->layers;
}

/* Appends "group 2 [cores 2-3 layers 6-11]" or "groups 2-3 [..., ...]". */
static void put_groups(char *buf, size_t len, size_t *at, const groups *gs, int from, int to)
{
#define PUT(...)                                                                                   \
	do {                                                                                       \
		if (*at < len)                                                                     \
			*at += (size_t)snprintf(buf + *at, len - *at, __VA_ARGS__);                \
	} while (0)
	if (to - from == 1)
		PUT("group %d [", from);
	else
		PUT("groups %d-%d [", from, to - 1);
	for (int i = from; i < to; i++) {
		const pb_part_group *g = &gs->g[i];
		if (i > from + 3 && i < to - 1) {
			PUT(", ... %d more", to - 1 - i);
			i = to - 2;
			continue;
		}
		PUT("%scores %d-%d layers %d-%d", i > from ? ", " : "", g->first_core,
		    g->first_core + g->cores - 1, g->first_layer, g->first_layer + g->layers - 1);
	}
	PUT("]");
#undef PUT
}

void pb_part_edit_describe(pb_part_problem *P, const int *before, const int *after, char *buf,
                           size_t len)
{
	pb_part_eval eb, ea;
	pb_part_evaluate(P, before, &eb, NULL);
	pb_part_evaluate(P, after, &ea, NULL);
	pb_part_edit_describe_times(P, before, after, "max(t)", eb.max_time, ea.max_time, buf, len);
}

void pb_part_edit_describe_times(pb_part_problem *P, const int *before, const int *after,
                                 const char *what, double t_before, double t_after, char *buf,
                                 size_t len)
{
	groups b = {0, NULL}, a = {0, NULL};
	pb_error e = {0};
	if (len)
		buf[0] = '\0';
	b.g = a.g = NULL;
	if (groups_read(P, before, &b, &e) || groups_read(P, after, &a, &e)) {
		free(b.g);
		snprintf(buf, len, "(out of memory describing the edit)");
		return;
	}
	int i = 0, j = 0;
	while (i < b.n && i < a.n && same_group(&b.g[i], &a.g[i]))
		i++;
	while (j < b.n - i && j < a.n - i && same_group(&b.g[b.n - 1 - j], &a.g[a.n - 1 - j]))
		j++;
	size_t at = 0;
	if (i == b.n && i == a.n) {
		at = (size_t)snprintf(buf, len, "no change");
	} else {
		put_groups(buf, len, &at, &b, i, b.n - j);
		if (at < len)
			at += (size_t)snprintf(buf + at, len - at, " -> ");
		put_groups(buf, len, &at, &a, i, a.n - j);
	}
	if (at < len)
		snprintf(buf + at, len - at, "; %d -> %d groups; %s %.6f ms -> %.6f ms", b.n, a.n,
		         what, t_before * 1e3, t_after * 1e3);
	free(b.g);
	free(a.g);
}
