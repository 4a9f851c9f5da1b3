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
 * The expected figures come from the problem's own evaluation on a fresh
 * problem, never from the command's output. */
#include "pb_test_ok.h"

#include "partition/chain_problem.h"
#include "partition/manycore.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_partition_edit_invariants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
