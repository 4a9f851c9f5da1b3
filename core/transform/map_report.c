/*
 * map_report.c — the mapping report (JSON), the "map" plan and the human
 * summary with a text timeline (map.h).
 */
#include "transform/map.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"
#include "util/job.h"
#include "util/proof_label.h"

static const char *task_name(const pb_map_result *r, const pb_hetero *h, int task, char *buf,
                             size_t len)
{
	if (task < r->n_agg) {
		snprintf(buf, len, "A%d", task);
	} else {
		const pb_map_edge *e = &r->edges[task - r->n_agg];
		snprintf(buf, len, "A%d->A%d", e->from, e->to);
	}
	(void)h;
	return buf;
}

void pb_map_label(const pb_graph *g, const pb_hetero *h, const pb_map_result *r, pb_label *L)
{
	pb_label_init(L, r->serial_input);
	if (r->objective == PB_MAP_LATENCY && r->enumerated) {
		pb_label_bound(L, r->serial_input); /* every assignment evaluated */
		return;
	}
	pb_label_restrict(L, r->objective == PB_MAP_THROUGHPUT ? "chosen for throughput"
	                     : r->transfer_aware               ? "priority rule + local descent"
	                                                       : "priority rule");
	double lb = 0, launch = INFINITY;
	int any = 0;
	for (int b = 0; b < h->n; b++)
		launch = fmin(launch, h->b[b].launch);
	for (int v = 0; v < g->n_nodes; v++) {
		if (r->folded && r->folded[v])
			continue;
		double best = INFINITY;
		for (int b = 0; b < r->n_backends; b++)
			if (r->prio[(size_t)v * r->n_backends + b] > 0)
				best = fmin(best, pb_map_node_time(g, h, b, v));
		if (!isfinite(best))
			return; /* a node no backend runs: no bound */
		lb += best;
		any = 1;
	}
	pb_label_bound(L, any ? lb + launch : 0);
}

void pb_map_period_label(const pb_graph *g, const pb_hetero *h, const pb_map_result *r, pb_label *L)
{
	pb_label_init(L, r->period);
	if (r->objective != PB_MAP_THROUGHPUT)
		pb_label_restrict(L, r->transfer_aware ? "chosen for latency" : "priority rule");
	else if (!r->enumerated)
		pb_label_restrict(L, "multi-start descent");
	double sum = 0, single = 0, launch = INFINITY;
	for (int b = 0; b < h->n; b++)
		launch = fmin(launch, h->b[b].launch);
	for (int v = 0; v < g->n_nodes; v++) {
		if (r->folded && r->folded[v])
			continue;
		double best = INFINITY, best_l = INFINITY;
		for (int b = 0; b < r->n_backends; b++)
			if (r->prio[(size_t)v * r->n_backends + b] > 0) {
				double t = pb_map_node_time(g, h, b, v);
				best = fmin(best, t);
				best_l = fmin(best_l, t + h->b[b].launch);
			}
		if (!isfinite(best))
			return; /* a node no backend runs: no bound */
		sum += best;
		single = fmax(single, best_l);
	}
	double lb = fmax(fmax((sum + launch) / h->n, single), r->period_lp);
	if (r->enumerated && r->objective == PB_MAP_THROUGHPUT)
		lb = r->period; /* every assignment evaluated */
	pb_label_bound(L, lb);
}

static const char *resource_name(const pb_hetero *h, int res, char *buf, size_t len)
{
	if (res < h->n)
		snprintf(buf, len, "%s", h->b[res].name);
	else
		snprintf(buf, len, "%s->%s", h->b[(res - h->n) / h->n].name,
		         h->b[(res - h->n) % h->n].name);
	return buf;
}

static const char *objective_name(int objective)
{
	return objective == PB_MAP_THROUGHPUT ? "throughput" : "latency";
}

/* The objective, its figure, the single-backend mappings beside it. */
static void objective_json(json_t *j, const pb_graph *g, const pb_hetero *h, const pb_map_result *r)
{
	char nm[160];
	json_object_set_new(j, "objective", json_string(objective_name(r->objective)));
	json_object_set_new(j, "period_per_input", json_real(r->period));
	json_object_set_new(j, "period_resource",
	                    json_string(resource_name(h, r->period_resource, nm, sizeof nm)));
	pb_label L;
	pb_map_period_label(g, h, r, &L);
	json_t *pl = json_object();
	pb_label_json(pl, &L);
	json_object_set_new(j, "period_label", pl);
	if (r->transfer_aware) {
		json_object_set_new(j, "assignments", json_real(r->assignments));
		json_object_set_new(j, "enumerated", json_boolean(r->enumerated));
		json_object_set_new(j, "candidates_evaluated", json_integer(r->candidates));
	}
	if (!r->base.valid)
		return;
	json_t *sb = json_object();
	for (int b = 0; b < h->n; b++)
		json_object_set_new(sb, h->b[b].name,
		                    isfinite(r->single_value[b]) ? json_real(r->single_value[b])
		                                                 : json_null());
	json_object_set_new(j, "single_backend", sb);
	json_object_set_new(j, "single_backend_figure",
	                    json_string(r->objective == PB_MAP_THROUGHPUT
	                                    ? "period_per_input"
	                                    : "serial_time_per_input"));
	if (r->single_best >= 0) {
		json_object_set_new(j, "best_single_backend",
		                    json_string(h->b[r->single_best].name));
		double mine = pb_map_objective_value(r, r->objective);
		json_object_set_new(
		    j, "vs_best_single_backend",
		    json_real(mine > 0 ? r->single_value[r->single_best] / mine : 1));
	} else {
		json_object_set_new(j, "best_single_backend", json_null());
	}
}

json_t *pb_map_report_json(const pb_graph *g, const pb_hetero *h, const pb_map_result *r)
{
	json_t *j = json_object();
	json_object_set_new(j, "model", json_string(g->path ? g->path : ""));
	json_object_set_new(j, "layout", json_string(h->path));
	json_t *bl = json_array();
	for (int b = 0; b < h->n; b++) {
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(h->b[b].name));
		json_object_set_new(o, "launch", json_real(h->b[b].launch));
		json_object_set_new(o, "flops", json_real(h->b[b].flops));
		json_object_set_new(o, "bandwidth", json_real(h->b[b].bandwidth));
		json_object_set_new(o, "busy_per_input", json_real(r->backend_busy[b]));
		json_array_append_new(bl, o);
	}
	json_object_set_new(j, "backend_list", bl);
	json_t *nodes = json_array();
	json_t *backends = json_object();
	for (int v = 0; v < g->n_nodes; v++) {
		json_t *o = json_object(), *sup = json_array(), *pr = json_object();
		for (int b = 0; b < h->n; b++) {
			int p = r->prio[v * h->n + b];
			if (p > 0) {
				json_array_append_new(sup, json_string(h->b[b].name));
				json_object_set_new(pr, h->b[b].name, json_integer(p));
			}
		}
		json_object_set_new(o, "name", json_string(g->nodes[v].name));
		json_object_set_new(o, "op", json_string(g->nodes[v].op));
		json_object_set_new(o, "backends", json_deep_copy(sup));
		json_object_set_new(o, "priority", pr);
		json_object_set_new(o, "backend",
		                    r->backend[v] >= 0 ? json_string(h->b[r->backend[v]].name)
		                                       : json_null());
		json_object_set_new(o, "folded", json_boolean(r->folded[v]));
		json_object_set_new(o, "aggregate", json_integer(r->agg[v]));
		json_object_set_new(o, "time", json_real(r->node_time[v]));
		json_array_append_new(nodes, o);
		json_object_set_new(backends, g->nodes[v].name, sup);
	}
	json_object_set_new(j, "backends", backends);
	json_object_set_new(j, "nodes", nodes);
	json_t *al = json_array();
	for (int a = 0; a < r->n_agg; a++) {
		json_t *o = json_object(), *mem = json_array();
		json_object_set_new(o, "id", json_integer(a));
		json_object_set_new(o, "backend", json_string(h->b[r->agg_backend[a]].name));
		for (int v = r->agg_first[a]; v <= r->agg_last[a]; v++)
			if (r->agg[v] == a)
				json_array_append_new(mem, json_string(g->nodes[v].name));
		json_object_set_new(o, "nodes", mem);
		json_object_set_new(o, "time", json_real(r->agg_time[a]));
		json_object_set_new(o, "compute", json_real(r->agg_compute[a]));
		json_array_append_new(al, o);
	}
	json_object_set_new(j, "aggregates", al);
	json_t *buf = json_array();
	for (int e = 0; e < r->n_edges; e++) {
		const pb_map_edge *ed = &r->edges[e];
		if (!ed->buffer)
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "from", json_integer(ed->from));
		json_object_set_new(o, "to", json_integer(ed->to));
		json_object_set_new(o, "from_backend",
		                    json_string(h->b[r->agg_backend[ed->from]].name));
		json_object_set_new(o, "to_backend",
		                    json_string(h->b[r->agg_backend[ed->to]].name));
		json_object_set_new(o, "bytes", json_real(ed->bytes));
		json_object_set_new(o, "transfer_time", json_real(ed->time));
		json_object_set_new(o, "slots", json_integer(r->buffers));
		json_array_append_new(buf, o);
	}
	json_object_set_new(j, "buffers", buf);
	json_object_set_new(j, "folded_constants", json_integer(r->n_folded));
	json_object_set_new(j, "launches_before", json_integer(r->launches_before));
	json_object_set_new(j, "launches_after", json_integer(r->launches_after));
	json_object_set_new(j, "stream", json_integer(r->stream));
	json_object_set_new(j, "buffer_slots", json_integer(r->buffers));
	json_object_set_new(j, "serial_time_per_input", json_real(r->serial_input));
	pb_label L; /* of serial_time_per_input */
	pb_map_label(g, h, r, &L);
	pb_label_json(j, &L);
	json_object_set_new(j, "serial_time", json_real(r->serial_time));
	json_object_set_new(j, "pipelined_time", json_real(r->pipelined_time));
	json_object_set_new(j, "throughput_serial",
	                    json_real(r->serial_time > 0 ? r->stream / r->serial_time : 0));
	json_object_set_new(j, "throughput_pipelined",
	                    json_real(r->pipelined_time > 0 ? r->stream / r->pipelined_time : 0));
	json_object_set_new(
	    j, "speedup",
	    json_real(r->pipelined_time > 0 ? r->serial_time / r->pipelined_time : 1));
	json_object_set_new(j, "bottleneck_backend", json_string(h->b[r->bottleneck].name));
	json_object_set_new(j, "assignment",
	                    json_string(r->objective == PB_MAP_THROUGHPUT ? "throughput"
	                                : !r->transfer_aware              ? "priority"
	                                : r->kept_priority ? "priority (transfer-aware no faster)"
	                                                   : "transfer-aware"));
	objective_json(j, g, h, r);
	if (r->base.valid) {
		/* The seed's priority rule beside the transfer-aware choice. */
		json_t *b = json_object();
		json_object_set_new(b, "serial_time_per_input", json_real(r->base.serial_input));
		json_object_set_new(b, "serial_time", json_real(r->base.serial_time));
		json_object_set_new(b, "pipelined_time", json_real(r->base.pipelined_time));
		json_object_set_new(b, "launches_after", json_integer(r->base.launches_after));
		json_object_set_new(b, "buffers", json_integer(r->base.n_buffers));
		json_object_set_new(b, "period_per_input", json_real(r->base.period));
		json_object_set_new(j, "priority_rule", b);
		json_object_set_new(j, "moved_nodes",
		                    json_integer(r->kept_priority ? 0 : r->moved));
		json_object_set_new(j, "serial_time_saved",
		                    json_real(r->base.serial_time - r->serial_time));
		json_object_set_new(j, "pipelined_time_saved",
		                    json_real(r->base.pipelined_time - r->pipelined_time));
	}
	json_t *sw = json_array();
	for (int k = 0; k < PB_MAP_SWEEP; k++) {
		json_t *o = json_object();
		json_object_set_new(o, "buffers", json_integer(k + 1));
		json_object_set_new(o, "pipelined_time", json_real(r->sweep[k]));
		json_object_set_new(o, "throughput",
		                    json_real(r->sweep[k] > 0 ? r->stream / r->sweep[k] : 0));
		json_array_append_new(sw, o);
	}
	json_object_set_new(j, "buffer_sweep", sw);
	json_t *tl = json_array();
	char nm[64];
	for (int i = 0; i < r->n_events; i++) {
		const pb_map_event *ev = &r->events[i];
		json_t *o = json_object();
		json_object_set_new(o, "input", json_integer(ev->input));
		json_object_set_new(o, "task",
		                    json_string(task_name(r, h, ev->task, nm, sizeof nm)));
		int is_agg = ev->task < r->n_agg;
		const pb_map_edge *e = is_agg ? NULL : &r->edges[ev->task - r->n_agg];
		char res[160];
		if (is_agg)
			snprintf(res, sizeof res, "%s", h->b[r->agg_backend[ev->task]].name);
		else
			snprintf(res, sizeof res, "%s->%s", h->b[r->agg_backend[e->from]].name,
			         h->b[r->agg_backend[e->to]].name);
		json_object_set_new(o, "resource", json_string(res));
		json_object_set_new(o, "start", json_real(ev->start));
		json_object_set_new(o, "end", json_real(ev->end));
		json_array_append_new(tl, o);
	}
	json_object_set_new(j, "timeline", tl);
	return j;
}

pb_plan *pb_map_plan(const pb_graph *g, const pb_hetero *h, const pb_map_result *r)
{
	pb_job_tick(); /* a workbench job stays live (util/job.h) */
	pb_plan *p = pb_plan_new("map",
	                         r->objective == PB_MAP_THROUGHPUT        ? "throughput"
	                         : r->transfer_aware && !r->kept_priority ? "transfer-aware"
	                                                                  : "priority",
	                         g->n_nodes);
	if (!p)
		return NULL;
	int na = r->n_agg;
	double *in_xfer = calloc((size_t)na + 1, sizeof *in_xfer);
	double *buf_bytes = calloc((size_t)na + 1, sizeof *buf_bytes);
	int *order = malloc(((size_t)na + 1) * sizeof *order); /* plan group -> aggregate */
	int *pos = malloc(((size_t)na + 1) * sizeof *pos);     /* aggregate -> plan group */
	int *row = calloc((size_t)h->n + 1, sizeof *row);      /* backend -> schedule row */
	if (!in_xfer || !buf_bytes || !order || !pos || !row) {
		free(in_xfer);
		free(buf_bytes);
		free(order);
		free(pos);
		free(row);
		pb_plan_free(p);
		return NULL;
	}
	/* Group order: the first aggregate of every used backend, then the rest
	 * by first node. So plan group b' (b' < backends used) is labelled with
	 * the backend of schedule row b', which `plot timeline` relies on. */
	int k = 0, used = 0;
	for (int a = 0; a < na; a++)
		pos[a] = -1;
	for (int b = 0; b < h->n; b++)
		for (int a = 0; a < na; a++)
			if (r->agg_backend[a] == b) {
				row[b] = k;
				pos[a] = k;
				order[k++] = a;
				used++;
				break;
			}
	for (int a = 0; a < na; a++)
		if (pos[a] < 0) {
			pos[a] = k;
			order[k++] = a;
		}
	for (int v = 0; v < g->n_nodes; v++)
		p->group[v] = r->agg[v] >= 0 ? pos[r->agg[v]] : -1;
	for (int e = 0; e < r->n_edges; e++)
		if (r->edges[e].buffer) {
			in_xfer[r->edges[e].to] += r->edges[e].time;
			buf_bytes[r->edges[e].to] += r->edges[e].bytes * r->buffers;
		}
	json_t *ab = json_array(), *aid = json_array();
	for (int i = 0; i < na; i++) {
		int a = order[i];
		pb_plan_group pg = {0};
		int b = r->agg_backend[a];
		pg.label = h->b[b].name;
		pg.first_unit = b;
		pg.n_units = 1;
		pg.time = r->agg_time[a];
		pg.compute = r->agg_compute[a];
		pg.routing = in_xfer[a];
		pg.storage = buf_bytes[a];
		pg.macs = r->agg_macs[a];
		pg.first_node = r->agg_first[a];
		pg.last_node = r->agg_last[a];
		pg.bottleneck = b == r->bottleneck;
		pb_plan_add_group(p, &pg);
		json_array_append_new(ab, json_string(h->b[b].name));
		json_array_append_new(aid, json_integer(a));
	}
	pb_plan_set_metric(p, "launches_before", r->launches_before);
	pb_plan_set_metric(p, "launches_after", r->launches_after);
	pb_plan_set_metric(p, "serial_time", r->serial_time);
	pb_label L;
	if (r->objective == PB_MAP_THROUGHPUT)
		pb_map_period_label(g, h, r, &L);
	else
		pb_map_label(g, h, r, &L);
	pb_plan_set_label(p, &L);
	pb_plan_set_metric(p, "period_per_input", r->period);
	pb_plan_set_metric(p, "pipelined_time", r->pipelined_time);
	pb_plan_set_metric(p, "serial_time_per_input", r->serial_input);
	pb_plan_set_metric(p, "throughput_serial",
	                   r->serial_time > 0 ? r->stream / r->serial_time : 0);
	pb_plan_set_metric(p, "throughput_pipelined",
	                   r->pipelined_time > 0 ? r->stream / r->pipelined_time : 0);
	pb_plan_set_metric(p, "buffers", r->buffers);
	pb_plan_set_metric(p, "stream", r->stream);
	pb_plan_set_metric(p, "max_time", r->pipelined_time);
	if (r->base.valid) {
		pb_plan_set_metric(p, "priority_serial_time", r->base.serial_time);
		pb_plan_set_metric(p, "priority_pipelined_time", r->base.pipelined_time);
	}
	json_t *bn = json_array();
	for (int b = 0; b < h->n; b++)
		json_array_append_new(bn, json_string(h->b[b].name));
	json_object_set_new(p->detail, "backends", bn);
	json_object_set_new(p->detail, "group_backend", ab);
	json_object_set_new(p->detail, "group_aggregate", aid);
	json_t *nb = json_array();
	for (int v = 0; v < g->n_nodes; v++)
		json_array_append_new(nb, json_integer(r->backend[v]));
	json_object_set_new(p->detail, "node_backend", nb);
	json_object_set_new(p->detail, "layout", json_string(h->path));
	/* The pipelined compute timeline of the first inputs for `plot
	 * timeline`: one row ("stage") per used backend, kind "C". Transfers
	 * are in the report's timeline (map --json). */
	json_t *sched = json_array();
	for (int i = 0; i < r->n_events; i++) {
		const pb_map_event *ev = &r->events[i];
		if (ev->input >= PB_MAP_PLAN_INPUTS || ev->task >= na)
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "stage", json_integer(row[r->agg_backend[ev->task]]));
		json_object_set_new(o, "mb", json_integer(ev->input));
		json_object_set_new(o, "kind", json_string("C"));
		json_object_set_new(o, "group", json_integer(pos[ev->task]));
		json_object_set_new(o, "start", json_real(ev->start));
		json_object_set_new(o, "end", json_real(ev->end));
		json_array_append_new(sched, o);
	}
	json_object_set_new(p->detail, "schedule", sched);
	char nm[128];
	snprintf(nm, sizeof nm, "backends pipelined with %d buffer slot(s), first %d input(s)",
	         r->buffers, r->stream < PB_MAP_PLAN_INPUTS ? r->stream : PB_MAP_PLAN_INPUTS);
	json_object_set_new(p->detail, "schedule_name", json_string(nm));
	(void)used;
	free(in_xfer);
	free(buf_bytes);
	free(order);
	free(pos);
	free(row);
	return p;
}

void pb_map_print(FILE *out, const pb_graph *g, const pb_hetero *h, const pb_map_result *r,
                  int timeline)
{
	pb_job_tick();
	int count[PB_MAP_MAX_BACKENDS] = {0}, aggs[PB_MAP_MAX_BACKENDS] = {0};
	for (int v = 0; v < g->n_nodes; v++)
		if (r->backend[v] >= 0)
			count[r->backend[v]]++;
	for (int a = 0; a < r->n_agg; a++)
		aggs[r->agg_backend[a]]++;
	char t1[32], t2[32];
	fprintf(out, "%s on %s: %d nodes (%d load-time constants, not mapped)\n", g->path, h->path,
	        g->n_nodes, r->n_folded);
	for (int b = 0; b < h->n; b++) {
		pb_fmt_time_fixed(r->backend_busy[b], t1, sizeof t1);
		fprintf(out, "  %-8s %5d nodes in %4d aggregates, busy %s per input%s\n",
		        h->b[b].name, count[b], aggs[b], t1,
		        b == r->bottleneck ? "  (bottleneck)" : "");
	}
	int nbuf = 0;
	for (int e = 0; e < r->n_edges; e++)
		nbuf += r->edges[e].buffer;
	fprintf(out, "backend launches: %d -> %d (aggregates)\n", r->launches_before,
	        r->launches_after);
	fprintf(out, "buffers between backends: %d (%d slots each)\n", nbuf, r->buffers);
	pb_fmt_time_fixed(r->serial_input, t1, sizeof t1);
	pb_label L;
	char words[300];
	pb_map_label(g, h, r, &L);
	fprintf(out, "one input, serial: %s (%s)\n", t1,
	        pb_label_text(&L, pb_fmt_time_fixed, words, sizeof words));
	pb_fmt_time_fixed(r->serial_time, t1, sizeof t1);
	pb_fmt_time_fixed(r->pipelined_time, t2, sizeof t2);
	fprintf(out, "stream of %d inputs: serial %s, pipelined %s (x%.2f throughput)\n", r->stream,
	        t1, t2, r->pipelined_time > 0 ? r->serial_time / r->pipelined_time : 1.0);
	fprintf(out, "buffer slots:");
	for (int k = 0; k < PB_MAP_SWEEP; k++) {
		pb_fmt_time_fixed(r->sweep[k], t1, sizeof t1);
		fprintf(out, "  k=%d %s", k + 1, t1);
	}
	fputc('\n', out);
	char nm[160];
	pb_map_period_label(g, h, r, &L);
	pb_fmt_time_fixed(r->period, t1, sizeof t1);
	fprintf(out,
	        "objective: %s; period per input (busiest resource %s, enough slots): %s (%s)\n",
	        objective_name(r->objective), resource_name(h, r->period_resource, nm, sizeof nm),
	        t1, pb_label_text(&L, pb_fmt_time_fixed, words, sizeof words));
	if (r->transfer_aware && (r->enumerated || r->objective == PB_MAP_THROUGHPUT))
		fprintf(out, "assignments: %.4g, %s (%d candidates mapped)\n", r->assignments,
		        r->enumerated ? "every one evaluated"
		                      : "candidates from a multi-start descent",
		        r->candidates);
	else if (r->transfer_aware)
		fprintf(out, "assignments: %.4g, a local descent from the priority rule\n",
		        r->assignments);
	if (r->base.valid && r->single_best >= 0) {
		double mine = pb_map_objective_value(r, r->objective);
		pb_fmt_time_fixed(r->single_value[r->single_best], t1, sizeof t1);
		fprintf(out, "best single backend: %s, %s %s (this mapping x%.3f of it)\n",
		        h->b[r->single_best].name,
		        r->objective == PB_MAP_THROUGHPUT ? "period" : "serial per input", t1,
		        mine > 0 ? r->single_value[r->single_best] / mine : 1.0);
	} else if (r->base.valid) {
		fprintf(out, "best single backend: none runs every node\n");
	}
	if (r->base.valid) {
		char t3[32], t4[32];
		pb_fmt_time_fixed(r->base.serial_time, t1, sizeof t1);
		pb_fmt_time_fixed(r->base.pipelined_time, t2, sizeof t2);
		fprintf(out,
		        "priority rule (baseline): %d launches, %d buffers, serial %s, "
		        "pipelined %s\n",
		        r->base.launches_after, r->base.n_buffers, t1, t2);
		pb_fmt_time_fixed(r->base.serial_time - r->serial_time, t3, sizeof t3);
		pb_fmt_time_fixed(r->base.pipelined_time - r->pipelined_time, t4, sizeof t4);
		if (r->objective == PB_MAP_THROUGHPUT)
			fprintf(out,
			        "throughput (%d nodes moved off their priority backend): saves %s "
			        "serial, %s pipelined\n",
			        r->moved, t3, t4);
		else if (r->kept_priority)
			fprintf(
			    out,
			    "transfer-aware: no faster plan found; the priority plan is kept\n");
		else
			fprintf(out,
			        "transfer-aware (%d nodes moved off their priority backend): "
			        "saves %s serial, %s pipelined\n",
			        r->moved, t3, t4);
	}
	if (timeline <= 0 || r->n_events == 0)
		return;
	/* Text Gantt: one row per resource, 72 columns over the first inputs. */
	double end = 0;
	for (int i = 0; i < r->n_events; i++)
		if (r->events[i].input < timeline && r->events[i].end > end)
			end = r->events[i].end;
	if (end <= 0)
		return;
	pb_fmt_time_fixed(end, t1, sizeof t1);
	fprintf(out, "timeline of the first %d input(s) (digits = input, 0..%s):\n", timeline, t1);
	const int W = 72;
	char row[80];
	for (int res = 0; res < h->n + h->n * h->n; res++) {
		memset(row, ' ', (size_t)W);
		row[W] = '\0';
		int any = 0;
		for (int i = 0; i < r->n_events; i++) {
			const pb_map_event *ev = &r->events[i];
			if (ev->input >= timeline)
				continue;
			int rr;
			if (ev->task < r->n_agg) {
				rr = r->agg_backend[ev->task];
			} else {
				const pb_map_edge *e = &r->edges[ev->task - r->n_agg];
				rr = h->n + r->agg_backend[e->from] * h->n + r->agg_backend[e->to];
			}
			if (rr != res)
				continue;
			any = 1;
			int c0 = (int)(ev->start / end * W), c1 = (int)(ev->end / end * W);
			if (c1 <= c0)
				c1 = c0 + 1;
			/* The oldest input wins a shared column. */
			for (int c = c0; c < c1 && c < W; c++)
				if (row[c] == ' ' || row[c] - '0' > ev->input % 10)
					row[c] = (char)('0' + ev->input % 10);
		}
		if (!any)
			continue;
		char name[40];
		if (res < h->n)
			snprintf(name, sizeof name, "%s", h->b[res].name);
		else
			snprintf(name, sizeof name, "%s>%s", h->b[(res - h->n) / h->n].name,
			         h->b[(res - h->n) % h->n].name);
		fprintf(out, "  %-10.10s |%s|\n", name, row);
	}
}
