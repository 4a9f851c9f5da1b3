/*
 * shard/pipeline/pipeline_diff.c — the message of every pipeline edit (stage or chunk
 * boundary, pin) made from the two plans (pipeline_diff.h): each group whose
 * nodes or time differ, before -> after, then the step times of both. The
 * edits of pipeline_edit.c and dtp_edit.c share it; it calls neither.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "shard/pipeline/pipeline_diff.h"
#include "util/fmt.h"

static void put(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	if (*at >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at += (size_t)n;
}

static void put_group(char *buf, size_t len, size_t *at, const pb_plan *p, int k)
{
	const pb_plan_group *g = &p->groups[k];
	char t[32];
	pb_fmt_time_fixed(g->time, t, sizeof t);
	int nodes = 0;
	for (int v = 0; v < p->n_nodes; v++)
		nodes += p->group[v] == k;
	if (g->first_node >= 0)
		put(buf, len, at, "[nodes %d-%d, %d nodes, %s]", g->first_node, g->last_node, nodes,
		    t);
	else
		put(buf, len, at, "[%d nodes, %s]", nodes, t);
}

void pb_pipeline_diff_describe(const pb_plan *before, const pb_plan *after, char *buf, size_t len)
{
	size_t at = 0;
	if (len)
		buf[0] = '\0';
	int ng = before->n_groups > after->n_groups ? before->n_groups : after->n_groups, shown = 0;
	for (int k = 0; k < ng; k++) {
		int same = k < before->n_groups && k < after->n_groups;
		for (int v = 0; same && v < before->n_nodes && v < after->n_nodes; v++)
			same = (before->group[v] == k) == (after->group[v] == k);
		if (same && before->groups[k].time == after->groups[k].time)
			continue;
		if (shown++ >= 4) {
			put(buf, len, &at, "; ...");
			break;
		}
		put(buf, len, &at, "%schunk %d (%s) ", shown > 1 ? "; " : "", k,
		    k < before->n_groups ? before->groups[k].label : after->groups[k].label);
		if (k < before->n_groups)
			put_group(buf, len, &at, before, k);
		else
			put(buf, len, &at, "[none]");
		put(buf, len, &at, " -> ");
		if (k < after->n_groups)
			put_group(buf, len, &at, after, k);
		else
			put(buf, len, &at, "[none]");
	}
	if (!shown)
		put(buf, len, &at, "no chunk changed");
	char a[32], b[32];
	pb_fmt_time_fixed(pb_plan_metric(before, "step_time", NAN), a, sizeof a);
	pb_fmt_time_fixed(pb_plan_metric(after, "step_time", NAN), b, sizeof b);
	put(buf, len, &at, "; step time %s -> %s", a, b);
}
