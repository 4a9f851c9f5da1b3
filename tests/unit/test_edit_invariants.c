/* test_edit_invariants.c — the invariants of hand edits, as a property
 * test: random partition plans (random chains with skip edges, manycore-16,
 * with and without Lua cut and core rules) and random sequences of edits
 * (merge, split, boundary, action with arguments in and out of range) and
 * of undo / redo. After every command:
 *  - a refused edit leaves the plan as it was (the same JSON);
 *  - the plan is valid: every layer in exactly one group, groups contiguous
 *    and in chain order, their cores adjacent and adding up to the layout's;
 *  - its figures equal a recomputation from scratch (a new problem from the
 *    graph and the layout, evaluated on the plan's arranged_core);
 *  - a rule the plan obeyed is still obeyed, or the edit was refused
 *    naming the rule ("Lua rule 'NAME'");
 *  - merge G drops the group count by exactly one, and its group G has the
 *    cores and layers of the old G and G+1 (today's merge moved one core);
 *    split adds one group over the same cores and layers; boundary keeps
 *    the cores and moves exactly DELTA layers;
 *  - undo restores exactly the previous plan and redo exactly the next one
 *    (the session's history, checked against a model of it).
 * Map plans the same way (random graphs of kernels on layouts/hetero.lua,
 * with and without a Lua `backend` rule; `backend --node --to [--region]`
 * and undo / redo): every node on one backend and in one aggregate of that
 * backend, the moved node on its new backend, the figures those of a fresh
 * mapping with the plan's backends forced, the rule obeyed or the edit
 * refused naming it (a hand edit silently overrode a Lua backend rule).
 * Fuse plans too (`fuse-in --node --with`, `fuse-out`, undo / redo): every
 * group of two or more mutually unreachable nodes, the plan's kernel time
 * and launches those of the fusion cost model summed afresh.
 * dp x tp x pp plans: test_dtp_edit.c (their costing is minutes of MILPs).
 * The expected figures come from the problem's own evaluation on a fresh
 * problem, never from the command's output. */
#include "pb_test_ok.h"

#include "partition/chain/chain_problem.h"
#include "partition/chain/manycore.h"
#include "transform/fuse.h"
#include "transform/map.h"

static char buf[1 << 16];

#define MAXM 40
#define NC 16

/* A random DAG of m nodes in topological order: a chain plus skip edges. */
static pb_graph *random_graph(unsigned *seed, int m)
{
	double macs[MAXM];
	static char edges[8192];
	edges[0] = '\0';
	for (int i = 0; i < m; i++) {
		macs[i] = (pb_test_rnd(seed) % 8 == 0) ? 0 : 1e5 * (1 + pb_test_rnd(seed) % 100);
		char e[24];
		if (i) {
			snprintf(e, sizeof e, "%d>%d ", i - 1, i);
			strcat(edges, e);
		}
		if (i > 1 && pb_test_rnd(seed) % 3 == 0) {
			snprintf(e, sizeof e, "%u>%d ", pb_test_rnd(seed) % (unsigned)(i - 1), i);
			strcat(edges, e);
		}
	}
	pb_graph *g = pb_test_chain_graph(m, macs, edges);
	assert_non_null(g);
	return g;
}

static char *dump(const pb_plan *p)
{
	if (!p)
		return strdup("null");
	json_t *j = pb_plan_to_json(p, NULL);
	char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(j);
	assert_non_null(s);
	return s;
}

/* The rules of a trial, as the test knows them (not read from the program). */
typedef struct rules {
	int forbid, force; /* no boundary / a boundary after this node, -1 none */
	int pin, core;     /* node pin on core `core`, -1 none */
} rules;

/* Group index per node of a partition plan, checked to be valid. */
static void check_valid(const pb_plan *p, int m, int *of)
{
	assert_string_equal(p->kind, "partition");
	assert_int_equal(p->n_nodes, m);
	int next_node = 0, next_core = 0;
	for (int k = 0; k < p->n_groups; k++) {
		const pb_plan_group *g = &p->groups[k];
		assert_int_equal(g->first_node, next_node);
		assert_true(g->last_node >= g->first_node);
		assert_int_equal(g->first_unit, next_core);
		assert_true(g->n_units >= 1);
		next_node = g->last_node + 1;
		next_core += g->n_units;
		for (int v = g->first_node; v <= g->last_node; v++)
			of[v] = k;
	}
	assert_int_equal(next_node, m);
	assert_int_equal(next_core, NC);
	for (int v = 0; v < m; v++)
		assert_int_equal(p->group[v], of[v]);
}

/* The plan's figures from a problem built afresh from graph and layout. */
static void check_figures(pb_session *s, const pb_plan *p)
{
	pb_manycore mc;
	pb_error err = {0};
	pb_part_problem *P = NULL;
	assert_int_equal(pb_manycore_parse(s->hw, &mc, &err), PB_OK);
	assert_int_equal(pb_part_problem_new(s->graph, &mc, &P, &err), PB_OK);
	const json_t *ja = json_object_get(p->detail, "arranged_core");
	assert_int_equal(json_array_size(ja), NC);
	int ac[NC];
	for (int i = 0; i < NC; i++)
		ac[i] = (int)json_integer_value(json_array_get(ja, (size_t)i));
	assert_true(pb_part_state_valid(P, ac, &err));
	pb_part_group gr[NC];
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, gr);
	assert_int_equal(ev.n_groups, p->n_groups);
	assert_float_equal(pb_plan_metric(p, "max_time", NAN), ev.max_time, 1e-12 * ev.max_time);
	assert_float_equal(pb_plan_metric(p, "reward", NAN), pb_part_reward(P, &ev), 1e-9);
	for (int k = 0; k < ev.n_groups; k++) {
		assert_int_equal(p->groups[k].first_unit, gr[k].first_core);
		assert_int_equal(p->groups[k].n_units, gr[k].cores);
		assert_int_equal(p->groups[k].first_node, gr[k].first_layer);
		assert_int_equal(p->groups[k].last_node, gr[k].first_layer + gr[k].layers - 1);
		assert_float_equal(p->groups[k].time, gr[k].time, 1e-12 * gr[k].time);
		assert_float_equal(p->groups[k].storage, gr[k].storage,
		                   1e-9 * gr[k].storage + 1e-9);
	}
	pb_part_problem_free(P);
}

/* Bit per rule: 1 when the plan obeys it. */
static int obeyed(const rules *r, const pb_plan *p, int m)
{
	int ok = 0;
	if (r->forbid < 0 || r->forbid >= m - 1 || p->group[r->forbid] == p->group[r->forbid + 1])
		ok |= 1;
	if (r->force < 0 || r->force >= m - 1 || p->group[r->force] != p->group[r->force + 1])
		ok |= 2;
	if (r->pin < 0)
		ok |= 4;
	else {
		const pb_plan_group *g = &p->groups[p->group[r->pin]];
		if (r->core >= g->first_unit && r->core < g->first_unit + g->n_units)
			ok |= 4;
	}
	return ok;
}

static void set_rules(pb_test_session *t, unsigned *seed, int m, rules *r)
{
	r->forbid = r->force = r->pin = -1;
	r->core = 0;
	if (pb_test_rnd(seed) % 2)
		return;
	r->forbid = (int)(pb_test_rnd(seed) % (unsigned)m);
	r->force = (int)(pb_test_rnd(seed) % (unsigned)m);
	if (r->force == r->forbid)
		r->force = -1;
	r->pin = (int)(pb_test_rnd(seed) % (unsigned)m);
	r->core = (int)(pb_test_rnd(seed) % NC);
	char code[640];
	snprintf(
	    code, sizeof code,
	    "pb.clear()"
	    " pb.rule{ name = 'no_cut', cut = 'forbid', match = function(op) return op.id == %d "
	    "end }"
	    " pb.rule{ name = 'a_cut', cut = 'force', match = function(op) return op.id == %d "
	    "end }"
	    " pb.rule{ name = 'on_core', core = %d, match = function(op) return op.id == %d "
	    "end }",
	    r->forbid, r->force, r->core, r->pin);
	pb_error err = {0};
	if (pb_test_session_lua(t, code, "rules.lua", &err) != PB_OK)
		fail_msg("%s: %s", code, err.msg);
}

/* What the random sequences covered (each kind must occur). */
static struct {
	int ok[6], refused[6], rule_refused, undone;
} seen;

typedef struct history {
	char *plan[512]; /* plan dumps, oldest first; plan[pos] is the current one */
	int n, pos;
} history;

static void history_push(history *h, char *d)
{
	for (int i = h->pos + 1; i < h->n; i++)
		free(h->plan[i]);
	h->n = h->pos + 1;
	assert_true(h->n < 512);
	h->plan[h->n++] = d;
	h->pos = h->n - 1;
}

static void history_free(history *h)
{
	for (int i = 0; i < h->n; i++)
		free(h->plan[i]);
}

/* One random command and its checks. */
static void one_step(pb_test_session *t, unsigned *seed, int m, const rules *r, history *h)
{
	pb_session *s = t->s;
	const pb_plan *old = s->plan;
	int ng = old ? old->n_groups : 0;
	int old_ok = old ? obeyed(r, old, m) : 7;
	pb_plan_group og[NC];
	if (old)
		memcpy(og, old->groups, (size_t)ng * sizeof *og);
	char *before = dump(old);
	/* merge, split and boundary twice as often as the others */
	static const int ops[9] = {0, 0, 1, 1, 2, 2, 3, 4, 5};
	int op = ops[pb_test_rnd(seed) % 9];
	int G = (int)(pb_test_rnd(seed) % (unsigned)(ng + 2)) - 1;
	int D = (int)(pb_test_rnd(seed) % 7) - 3;
	int K = (int)(pb_test_rnd(seed) % (4 * (NC - 1) + 2)) - 1;
	char line[64];
	switch (op) {
	case 0:
		snprintf(line, sizeof line, "merge %d", G);
		break;
	case 1:
		snprintf(line, sizeof line, "split %d", G);
		break;
	case 2:
		snprintf(line, sizeof line, "boundary %d %d", G, D);
		break;
	case 3:
		snprintf(line, sizeof line, "action %d", K);
		break;
	case 4:
		snprintf(line, sizeof line, "undo");
		break;
	default:
		snprintf(line, sizeof line, "redo");
		break;
	}
	pb_error err = {0};
	int rc = pb_test_session_cmd(t, line, &err);
	char *after = dump(s->plan);
	if (op == 4 || op == 5) {
		int can = op == 4 ? h->pos > 0 : h->pos < h->n - 1;
		seen.ok[op] += can;
		seen.refused[op] += !can;
		if (!can) {
			assert_int_not_equal(rc, PB_OK);
			assert_string_equal(after, before);
		} else {
			if (rc != PB_OK)
				fail_msg("'%s': %s", line, err.msg);
			h->pos += op == 4 ? -1 : 1;
			if (strcmp(after, h->plan[h->pos]) != 0)
				fail_msg("'%s' did not restore the exact plan", line);
		}
		free(before);
		free(after);
		return;
	}
	if (rc != PB_OK) {
		seen.refused[op]++;
		seen.rule_refused += strstr(err.msg, "Lua rule '") != NULL;
		assert_int_equal(rc, PB_EUSAGE);
		assert_true(err.msg[0] != '\0');
		if (strcmp(after, before) != 0)
			fail_msg("refused '%s' changed the plan", line);
		/* a merge or boundary move in range is refused only for a rule */
		int in_range =
		    old && G >= 0 && G + 1 < ng &&
		    (op == 0 || (op == 2 && D != 0 &&
		                 (D > 0 ? D < og[G + 1].last_node - og[G + 1].first_node + 1
		                        : -D < og[G].last_node - og[G].first_node + 1)));
		if (in_range && !strstr(err.msg, "Lua rule '"))
			fail_msg("'%s' refused without naming a rule: %s", line, err.msg);
		free(before);
		free(after);
		return;
	}
	free(before);
	seen.ok[op]++;
	history_push(h, after);
	const pb_plan *p = s->plan;
	int of[MAXM];
	check_valid(p, m, of);
	check_figures(s, p);
	int now_ok = obeyed(r, p, m);
	if ((old_ok & ~now_ok) != 0)
		fail_msg("'%s' broke a rule the plan obeyed (%d -> %d): %s", line, old_ok, now_ok,
		         t->buf);
	if (op == 0) { /* merge G */
		assert_int_equal(p->n_groups, ng - 1);
		const pb_plan_group *q = &p->groups[G];
		assert_int_equal(q->first_unit, og[G].first_unit);
		assert_int_equal(q->n_units, og[G].n_units + og[G + 1].n_units);
		assert_int_equal(q->first_node, og[G].first_node);
		assert_int_equal(q->last_node, og[G + 1].last_node);
		for (int k = 0; k < p->n_groups; k++) {
			int o = k < G ? k : k + 1;
			if (k == G)
				continue;
			assert_int_equal(p->groups[k].first_node, og[o].first_node);
			assert_int_equal(p->groups[k].n_units, og[o].n_units);
		}
	} else if (op == 1) { /* split G */
		assert_int_equal(p->n_groups, ng + 1);
		assert_int_equal(p->groups[G].n_units + p->groups[G + 1].n_units, og[G].n_units);
		assert_int_equal(p->groups[G].first_node, og[G].first_node);
		assert_int_equal(p->groups[G + 1].last_node, og[G].last_node);
	} else if (op == 2) { /* boundary G D */
		assert_int_equal(p->n_groups, ng);
		assert_int_equal(p->groups[G].n_units, og[G].n_units);
		assert_int_equal(p->groups[G + 1].n_units, og[G + 1].n_units);
		assert_int_equal(p->groups[G].last_node, og[G].last_node + D);
	}
	/* the message names the groups before -> after and both max(t) */
	if (!strstr(t->buf, " -> ") || !strstr(t->buf, "max(t)"))
		fail_msg("'%s' printed no before -> after: %s", line, t->buf);
}

static void test_partition_edit_invariants(void **state)
{
	(void)state;
	for (unsigned trial = 0; trial < 24; trial++) {
		unsigned seed = 7919u * (trial + 1);
		int m = 6 + (int)(pb_test_rnd(&seed) % (MAXM - 5));
		pb_test_session t;
		pb_test_session_open(&t, buf, sizeof buf);
		pb_session_set_graph(t.s, random_graph(&seed, m), "random.test");
		pb_test_ok(&t, "layout layouts/manycore-16.lua");
		rules r;
		set_rules(&t, &seed, m, &r);
		pb_error err = {0};
		if (pb_test_session_cmd(&t, "partition --method exact", &err) != PB_OK) {
			/* rules no partition obeys: drop them */
			r.forbid = r.force = r.pin = -1;
			pb_test_session_lua(&t, "pb.clear()", "clear.lua", &err);
			pb_test_ok(&t, trial % 2 ? "partition --method equal"
			                         : "partition --method exact");
		}
		history h = {{0}, 0, 0};
		h.plan[h.n++] = strdup("null"); /* the session's history starts at no plan */
		history_push(&h, dump(t.s->plan));
		for (int step = 0; step < 60; step++)
			one_step(&t, &seed, m, &r, &h);
		history_free(&h);
		pb_test_session_close(&t);
	}
	printf("edits done: merge %d, split %d, boundary %d, action %d, undo %d, redo %d; "
	       "refused %d (%d naming a Lua rule)\n",
	       seen.ok[0], seen.ok[1], seen.ok[2], seen.ok[3], seen.ok[4], seen.ok[5],
	       seen.refused[0] + seen.refused[1] + seen.refused[2] + seen.refused[3],
	       seen.rule_refused);
	for (int k = 0; k < 6; k++)
		assert_true(seen.ok[k] > 0 && seen.refused[k] > 0);
	assert_true(seen.rule_refused > 0);
}

/* ------------------------------------------------------------- map */

static const char *const KOPS[] = {"Relu", "Add", "MatMul", "Conv", "Softmax", "Gemm"};
static const char *const BACKENDS[] = {"cpu", "gpu", "fpga"};

static pb_graph *random_kernels(unsigned *seed, int n)
{
	const char *ops[MAXM];
	static char edges[4096];
	edges[0] = '\0';
	for (int i = 0; i < n; i++) {
		ops[i] = KOPS[pb_test_rnd(seed) % 6];
		char e[24];
		if (i) {
			snprintf(e, sizeof e, "%d>%d ", i - 1, i);
			strcat(edges, e);
		}
		if (i > 1 && pb_test_rnd(seed) % 3 == 0) {
			snprintf(e, sizeof e, "%u>%d ", pb_test_rnd(seed) % (unsigned)(i - 1), i);
			strcat(edges, e);
		}
	}
	return pb_test_ops_graph("kernels.test", n, ops, edges, 1 << (10 + pb_test_rnd(seed) % 8),
	                         0, 0);
}

static int map_backend_of(const pb_plan *p, int v)
{
	return (int)json_integer_value(
	    json_array_get(json_object_get(p->detail, "node_backend"), (size_t)v));
}

/* Valid, and its figures those of a fresh mapping with its backends forced. */
static void check_map(pb_session *s, const pb_plan *p)
{
	int n = s->graph->n_nodes;
	assert_string_equal(p->kind, "map");
	int force[MAXM], agg_backend[MAXM];
	for (int k = 0; k < MAXM; k++)
		agg_backend[k] = -2;
	for (int v = 0; v < n; v++) {
		force[v] = map_backend_of(p, v);
		assert_true(force[v] >= 0 && force[v] < 3); /* no constants in these graphs */
		int a = p->group[v];
		assert_true(a >= 0 && a < p->n_groups);
		if (agg_backend[a] == -2)
			agg_backend[a] = force[v];
		assert_int_equal(agg_backend[a], force[v]); /* an aggregate is one backend's */
	}
	pb_hetero *h = NULL;
	pb_error err = {0};
	assert_int_equal(pb_hetero_parse(s->hw, &h, &err), PB_OK);
	pb_map_opts o = {(int)pb_plan_metric(p, "buffers", 2), (int)pb_plan_metric(p, "stream", 16),
	                 0, force, 0};
	pb_map_result *r = NULL;
	assert_int_equal(pb_map_run(s->graph, h, &o, &r, &err), PB_OK);
	assert_int_equal(r->n_agg, p->n_groups);
	assert_float_equal(pb_plan_metric(p, "serial_time", NAN), r->serial_time,
	                   1e-12 * r->serial_time);
	assert_float_equal(pb_plan_metric(p, "pipelined_time", NAN), r->pipelined_time,
	                   1e-12 * r->pipelined_time);
	for (int v = 0; v < n; v++)
		assert_int_equal(r->backend[v], force[v]);
	pb_map_result_free(r);
	pb_hetero_free(h);
}

static void test_map_edit_invariants(void **state)
{
	(void)state;
	int ok = 0, refused = 0, by_rule = 0, undone = 0;
	for (unsigned trial = 0; trial < 16; trial++) {
		unsigned seed = 104729u * (trial + 1);
		int n = 5 + (int)(pb_test_rnd(&seed) % 16);
		pb_test_session t;
		pb_test_session_open(&t, buf, sizeof buf);
		pb_session_set_graph(t.s, random_kernels(&seed, n), "kernels.test");
		pb_test_ok(&t, "layout layouts/hetero.lua");
		int ruled = -1, rule_b = 0;
		pb_error err = {0};
		if (trial % 2) {
			ruled = (int)(pb_test_rnd(&seed) % (unsigned)n);
			rule_b = (int)(pb_test_rnd(&seed) % 2); /* cpu or gpu: they run every op */
			char code[256];
			snprintf(code, sizeof code,
			         "pb.clear() pb.rule{ name = 'keep_on', backend = '%s', match = "
			         "function(op) return op.id == %d end }",
			         BACKENDS[rule_b], ruled);
			if (pb_test_session_lua(&t, code, "rule.lua", &err) != PB_OK)
				fail_msg("%s: %s", code, err.msg);
		}
		pb_test_ok(&t, trial % 4 < 2 ? "map" : "map --priority");
		history h = {{0}, 0, 0};
		h.plan[h.n++] = strdup("null");
		history_push(&h, dump(t.s->plan));
		check_map(t.s, t.s->plan);
		if (ruled >= 0)
			assert_int_equal(map_backend_of(t.s->plan, ruled), rule_b);
		for (int step = 0; step < 30; step++) {
			int op = (int)(pb_test_rnd(&seed) % 6);
			char line[96];
			int v = (int)(pb_test_rnd(&seed) % (unsigned)n),
			    b = (int)(pb_test_rnd(&seed) % 3);
			if (op < 4)
				snprintf(line, sizeof line, "backend --node n%d --to %s%s", v,
				         BACKENDS[b], op == 3 ? " --region" : "");
			else
				snprintf(line, sizeof line, "%s", op == 4 ? "undo" : "redo");
			char *before = dump(t.s->plan);
			int old_b = t.s->plan ? map_backend_of(t.s->plan, v) : -1;
			memset(&err, 0, sizeof err);
			int rc = pb_test_session_cmd(&t, line, &err);
			char *after = dump(t.s->plan);
			if (op >= 4) {
				int can = op == 4 ? h.pos > 0 : h.pos < h.n - 1;
				assert_int_equal(rc == PB_OK, can);
				if (can) {
					h.pos += op == 4 ? -1 : 1;
					assert_string_equal(after, h.plan[h.pos]);
					undone++;
				} else {
					assert_string_equal(after, before);
				}
				free(after);
			} else if (rc != PB_OK) {
				refused++;
				assert_string_equal(after, before);
				free(after);
				/* a move of the ruled node off its backend names the rule */
				if (v == ruled && b != rule_b && old_b == rule_b && op < 3) {
					if (!strstr(err.msg, "Lua rule 'keep_on' (backend="))
						fail_msg("'%s' refused without the rule: %s", line,
						         err.msg);
					by_rule++;
				}
			} else {
				ok++;
				history_push(&h, after);
				check_map(t.s, t.s->plan);
				assert_int_equal(map_backend_of(t.s->plan, v), b);
				if (ruled >= 0 && old_b >= 0 &&
				    map_backend_of(t.s->plan, ruled) != rule_b) {
					fail_msg("'%s' moved node n%d off the backend rule "
					         "'keep_on' gives it",
					         line, ruled);
				}
				if (!strstr(t.buf, " -> "))
					fail_msg("'%s' printed no before -> after: %s", line,
					         t.buf);
			}
			free(before);
		}
		history_free(&h);
		pb_test_session_close(&t);
	}
	printf("map edits: %d done, %d refused (%d naming the rule), %d undo/redo\n", ok, refused,
	       by_rule, undone);
	assert_true(ok > 0 && refused > 0 && by_rule > 0 && undone > 0);
}

/* ------------------------------------------------------------ fuse */

/* A random tree of elementwise kernels: node i reads a random earlier one,
 * so many nodes are parallel (fusable together). */
static pb_graph *random_branches(unsigned *seed, int n)
{
	static const char *const EOPS[] = {"Relu", "Add", "Sigmoid", "Mul"};
	const char *ops[MAXM];
	static char edges[4096];
	edges[0] = '\0';
	for (int i = 0; i < n; i++) {
		ops[i] = EOPS[pb_test_rnd(seed) % 4];
		if (i) {
			char e[24];
			snprintf(e, sizeof e, "%u>%d ", pb_test_rnd(seed) % (unsigned)i, i);
			strcat(edges, e);
		}
	}
	return pb_test_ops_graph("branches.test", n, ops, edges, 1 << (10 + pb_test_rnd(seed) % 8),
	                         0, 0);
}

/* 1 when a path leads from u to v (node ids are topological). */
static int reaches(const pb_graph *g, int u, int v)
{
	if (u == v)
		return 1;
	if (u > v)
		return 0;
	const pb_node *n = &g->nodes[u];
	for (int k = 0; k < n->n_outputs; k++) {
		const pb_tensor *t = &g->tensors[n->outputs[k]];
		for (int c = 0; c < t->n_consumers; c++)
			if (reaches(g, t->consumers[c], v))
				return 1;
	}
	return 0;
}

static void check_fuse(pb_session *s, const pb_plan *p)
{
	const pb_graph *g = s->graph;
	int n = g->n_nodes, members[MAXM];
	pb_fuse_model m;
	pb_fuse_model_default(&m);
	pb_error err = {0};
	assert_int_equal(pb_fuse_model_from_hw(s->hw, &m, &err), PB_OK);
	double t = 0;
	int launches = 0;
	for (int v = 0; v < n; v++)
		if (p->group[v] < 0) {
			t += pb_fuse_node_time(&m, g, v);
			launches++;
		}
	for (int gi = 0; gi < p->n_groups; gi++) {
		int k = 0;
		for (int v = 0; v < n; v++)
			if (p->group[v] == gi)
				members[k++] = v;
		assert_true(k >= 2); /* a group of one dissolves */
		for (int i = 0; i < k; i++)
			for (int j = i + 1; j < k; j++)
				assert_false(reaches(g, members[i], members[j]));
		t += pb_fuse_set_time(&m, g, members, k);
		launches++;
	}
	assert_float_equal(pb_plan_metric(p, "time_after", NAN), t, 1e-12 * t);
	assert_int_equal((int)pb_plan_metric(p, "launches_after", -1), launches);
}

static void test_fuse_edit_invariants(void **state)
{
	(void)state;
	int ok = 0, refused = 0, undone = 0;
	for (unsigned trial = 0; trial < 16; trial++) {
		unsigned seed = 15485863u * (trial + 1);
		int n = 6 + (int)(pb_test_rnd(&seed) % 14);
		pb_test_session t;
		pb_test_session_open(&t, buf, sizeof buf);
		pb_session_set_graph(t.s, random_branches(&seed, n), "branches.test");
		pb_test_ok(&t, "layout layouts/hetero.lua");
		pb_test_ok(&t, "fuse");
		history h = {{0}, 0, 0};
		h.plan[h.n++] = strdup("null");
		history_push(&h, dump(t.s->plan));
		for (int step = 0; step < 30; step++) {
			int op = (int)(pb_test_rnd(&seed) % 6);
			int v = (int)(pb_test_rnd(&seed) % (unsigned)n),
			    w = (int)(pb_test_rnd(&seed) % (unsigned)n);
			char line[96];
			if (op < 3)
				snprintf(line, sizeof line, "fuse-in --node n%d --with n%d", v, w);
			else if (op == 3)
				snprintf(line, sizeof line, "fuse-out --node n%d", v);
			else
				snprintf(line, sizeof line, "%s", op == 4 ? "undo" : "redo");
			char *before = dump(t.s->plan);
			pb_error err = {0};
			int rc = pb_test_session_cmd(&t, line, &err);
			char *after = dump(t.s->plan);
			if (op >= 4) {
				int can = op == 4 ? h.pos > 0 : h.pos < h.n - 1;
				assert_int_equal(rc == PB_OK, can);
				if (can) {
					h.pos += op == 4 ? -1 : 1;
					assert_string_equal(after, h.plan[h.pos]);
					undone++;
				} else {
					assert_string_equal(after, before);
				}
				free(after);
			} else if (rc != PB_OK) {
				refused++;
				assert_string_equal(after, before);
				free(after);
			} else {
				ok++;
				history_push(&h, after);
				check_fuse(t.s, t.s->plan);
				const pb_plan *p = t.s->plan;
				if (op < 3)
					assert_true(p->group[v] >= 0 && p->group[v] == p->group[w]);
				else
					assert_true(p->group[v] < 0);
				if (!strstr(t.buf, " -> "))
					fail_msg("'%s' printed no before -> after: %s", line,
					         t.buf);
			}
			free(before);
		}
		history_free(&h);
		pb_test_session_close(&t);
	}
	printf("fuse edits: %d done, %d refused, %d undo/redo\n", ok, refused, undone);
	assert_true(ok > 0 && refused > 0 && undone > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_partition_edit_invariants),
	    cmocka_unit_test(test_map_edit_invariants),
	    cmocka_unit_test(test_fuse_edit_invariants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
