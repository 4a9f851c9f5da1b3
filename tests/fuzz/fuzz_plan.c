/*
 * fuzz_plan.c — libFuzzer target for the plan JSON loader (core/plan.h).
 *
 * The bytes are parsed as pb_plan_load parses a file (jansson, then
 * pb_plan_from_json, for any node count). A plan that loads is walked: every
 * node's group must name a group (or -1), group ranges and metrics are read,
 * the plan is copied, and its JSON form must load again with the same
 * assignment, groups and metrics (a plan partbench accepts is one it can
 * save). Seeds: tests/fuzz/seeds/fuzz_plan/ (`partition`, `map`, `fuse`,
 * `shard` and `pipeline` plans written with -o).
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "plan.h"

static double walk(const pb_plan *p)
{
	double sum = 0;
	for (int i = 0; i < p->n_nodes; i++) {
		int g = p->group[i];
		if (g < -1 || (p->n_groups > 0 && g >= p->n_groups))
			abort(); /* pb_plan_from_json promises a group or -1 */
		if (g >= 0 && p->n_groups > 0)
			sum += p->groups[g].time + (double)strlen(p->groups[g].label);
	}
	for (int k = 0; k < p->n_groups; k++) {
		const pb_plan_group *g = &p->groups[k];
		sum += g->compute + g->routing + g->storage + g->macs + g->n_units + g->first_unit;
		if (g->first_node >= 0 && g->first_node < p->n_nodes)
			sum += p->group[g->first_node];
		if (g->last_node >= 0 && g->last_node < p->n_nodes)
			sum += p->group[g->last_node];
	}
	for (int m = 0; m < p->n_metrics; m++)
		sum += pb_plan_metric(p, p->metric_names[m], 0) + pb_plan_has_metric(p, "max_time");
	sum += (double)strlen(p->kind) + (double)strlen(p->method) + json_object_size(p->detail);
	return sum;
}

/* The JSON form of p must load again to the same plan. */
static void round_trip(const pb_plan *p)
{
	json_t *j = pb_plan_to_json(p, NULL);
	char *text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!text)
		abort();
	json_error_t je;
	json_t *back = json_loads(text, 0, &je);
	free(text);
	pb_plan *q = NULL;
	pb_error err = {0};
	if (!back || pb_plan_from_json(back, "round trip", p->n_nodes, &q, &err) != PB_OK)
		abort();
	json_decref(back);
	if (q->n_nodes != p->n_nodes || q->n_groups != p->n_groups ||
	    q->n_metrics != p->n_metrics || strcmp(q->kind, p->kind) ||
	    strcmp(q->method, p->method))
		abort();
	for (int i = 0; i < p->n_nodes; i++)
		if (q->group[i] != p->group[i])
			abort();
	for (int k = 0; k < p->n_groups; k++)
		if (strcmp(q->groups[k].label, p->groups[k].label) ||
		    q->groups[k].first_node != p->groups[k].first_node ||
		    q->groups[k].last_node != p->groups[k].last_node ||
		    q->groups[k].n_units != p->groups[k].n_units)
			abort();
	pb_plan_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, 0, &je);
	if (!j)
		return 0;
	pb_plan *p = NULL;
	pb_error err = {0};
	if (pb_plan_from_json(j, "fuzz.json", -1, &p, &err) == PB_OK) {
		(void)walk(p);
		round_trip(p);
		pb_plan *c = pb_plan_copy(p);
		(void)walk(c);
		pb_plan_free(c);
		/* A model with one node more must refuse the plan. */
		pb_plan *other = NULL;
		if (pb_plan_from_json(j, "fuzz.json", p->n_nodes + 1, &other, &err) == PB_OK)
			abort();
		pb_plan_free(p);
	}
	json_decref(j);
	return 0;
}
