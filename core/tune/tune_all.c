/*
 * tune/tune_all.c — whole-model tuning (tune_all.h): the distinct shapes of a
 * model, one shape's tuning with its summary line, and the report. The run
 * itself, on one rank or many, is in tune_all_ranks.c.
 */
#include "tune/tune_all.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"
#include "util/ranks.h"
#include "util/strmap.h"
#include "tune/log.h"

int pb_tune_all_plan(const pb_graph *g, pb_tune_all *out, pb_error *err)
{
	memset(out, 0, sizeof *out);
	out->g = g;
	pb_strmap *index = pb_strmap_new(64);
	int cap = 0, rc = PB_OK;
	if (!index)
		return pb_err(err, PB_ENOMEM, "tune: out of memory");
	for (int i = 0; i < g->n_nodes && !rc; i++) {
		const char *op = g->nodes[i].op;
		if (strcmp(op, "Conv") && strcmp(op, "Gemm") && strcmp(op, "MatMul"))
			continue;
		pb_tune_shape sh;
		pb_error ignore = {0};
		if (pb_tune_shape_from_node(g, i, &sh, &ignore)) {
			out->untunable++;
			continue;
		}
		char key[128];
		pb_tune_shape_key(&sh, key, sizeof key);
		int k = pb_strmap_get(index, key, -1);
		if (k < 0) {
			if (out->n == cap) {
				int nc = cap ? 2 * cap : 16;
				pb_tune_all_shape *s = realloc(out->shapes, (size_t)nc * sizeof *s);
				if (!s) {
					rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
					break;
				}
				out->shapes = s;
				cap = nc;
			}
			k = out->n++;
			pb_tune_all_shape *s = &out->shapes[k];
			memset(s, 0, sizeof *s);
			s->shape = sh;
			s->shape.batch = 1;
			snprintf(s->key, sizeof s->key, "%s", key);
			s->rank = -1;
			if (pb_strmap_put(index, key, k)) {
				rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
				break;
			}
		}
		pb_tune_all_shape *s = &out->shapes[k];
		int *nodes = realloc(s->nodes, (size_t)(s->n_nodes + 1) * sizeof *nodes);
		if (!nodes) {
			rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
			break;
		}
		s->nodes = nodes;
		s->nodes[s->n_nodes++] = i;
		double f = sh.batch * pb_tune_shape_flops(&sh);
		s->flops += f;
		out->flops += f;
	}
	pb_strmap_free(index);
	for (int k = 0; k < out->n; k++)
		out->shapes[k].share = out->flops > 0 ? out->shapes[k].flops / out->flops : 0;
	if (!rc && out->n == 0)
		rc = pb_err(err, PB_EINPUT,
		            "%s: no Conv/Gemm/MatMul node with a shape the tuner's kernels take "
		            "(%d such nodes are dilated, unevenly padded or of unknown shape)",
		            g->path ? g->path : "the model", out->untunable);
	if (rc)
		pb_tune_all_free(out);
	return rc;
}

void pb_tune_all_free(pb_tune_all *a)
{
	for (int k = 0; k < a->n; k++)
		free(a->shapes[k].nodes);
	free(a->shapes);
	memset(a, 0, sizeof *a);
}

int pb_tune_all_take_summary(pb_tune_all *a, int s, const json_t *line, int state)
{
	pb_tune_all_shape *sh = &a->shapes[s];
	const char *key = json_string_value(json_object_get(line, "key"));
	json_t *m = json_object_get(line, "measurements"),
	       *b = json_object_get(line, "best_gflops");
	json_t *t = json_object_get(line, "tune_seconds"), *rk = json_object_get(line, "rank");
	const char *host = json_string_value(json_object_get(line, "host"));
	if (!key || strcmp(key, sh->key) || !json_is_integer(m) || !json_is_number(b) ||
	    !isfinite(json_number_value(b)) || json_number_value(b) < 0)
		return -1;
	sh->state = state;
	sh->measurements = (int)json_integer_value(m);
	sh->best_gflops = json_number_value(b);
	sh->tune_seconds = json_is_number(t) ? json_number_value(t) : 0;
	sh->rank = json_is_integer(rk) ? (int)json_integer_value(rk) : -1;
	snprintf(sh->host, sizeof sh->host, "%s", host ? host : "");
	sh->why[0] = 0;
	return 0;
}

int pb_tune_all_one(const pb_tune_all *a, int s, const pb_tune_all_opts *o,
                    const pb_tune_record *prior, int n_prior, double budget,
                    int (*sink)(void *ud, const char *line, pb_error *err), void *sink_ud,
                    int (*progress)(void *ud, double fraction, const char *line), void *pud,
                    char **summary, pb_error *err)
{
	const pb_tune_all_shape *sh = &a->shapes[s];
	pb_tune_space sp;
	pb_tune_space_init(&sp, &sh->shape);
	pb_tune_opts to = o->tune;
	to.baselines = 0;
	to.resume = 0; /* the earlier measurements come as prior */
	to.prior = prior;
	to.n_prior = n_prior;
	to.time_budget = budget;
	to.sink = sink;
	to.sink_ud = sink_ud;
	to.progress = progress;
	to.progress_ud = pud;
	pb_tune_report r;
	int rc = pb_tune_run(&sp, &to, &r, err);
	if (rc) {
		pb_tune_report_free(&r);
		return pb_err_prefix(err, "%s", sh->key);
	}
	json_t *j = json_object();
	json_object_set_new(j, "key", json_string(sh->key));
	json_object_set_new(j, "op", json_string(pb_tune_op_name(sh->shape.op)));
	json_object_set_new(j, "valid", json_false());
	json_object_set_new(j, "gflops", json_real(0));
	json_object_set_new(j, "method", json_string(PB_TUNE_LOG_SHAPE_METHOD));
	json_t *nodes = json_array();
	for (int k = 0; k < sh->n_nodes; k++)
		json_array_append_new(nodes, json_string(a->g->nodes[sh->nodes[k]].name));
	json_object_set_new(j, "nodes", nodes);
	json_object_set_new(j, "share", json_real(sh->share));
	json_object_set_new(j, "measurements", json_integer(r.rl.measurements));
	json_object_set_new(j, "best_gflops", json_real(r.rl.best_gflops));
	if (r.rl.best_gflops > 0)
		json_object_set_new(j, "best_config",
		                    pb_tune_space_config_json(&sp, r.rl.best_idx));
	json_object_set_new(j, "tune_seconds", json_real(r.rl.seconds));
	json_object_set_new(j, "budget_seconds", json_real(budget));
	json_object_set_new(j, "rank", json_integer(pb_ranks_rank()));
	json_object_set_new(j, "host", json_string(pb_ranks_host()));
	json_object_set_new(j, "isa", json_string(pb_kernels_isa()));
	*summary = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(j);
	pb_tune_report_free(&r);
	if (!*summary)
		return pb_err(err, PB_ENOMEM, "tune: out of memory");
	return PB_OK;
}

static const char *state_name(int st)
{
	switch (st) {
	case PB_TUNE_ALL_LOGGED:
		return "logged";
	case PB_TUNE_ALL_TUNED:
		return "tuned";
	case PB_TUNE_ALL_MISSING:
		return "missing";
	default:
		return "todo";
	}
}

void pb_tune_all_report_text(FILE *f, const pb_tune_all *a, const pb_tune_all_report *r,
                             const char *log_path)
{
	fprintf(f, "%-40s %5s %6s %5s %10s %11s %8s  %s\n", "kernel", "nodes", "share", "meas",
	        "GFLOP/s", "model time", "tuned in", "where");
	double total = 0;
	for (int k = 0; k < a->n; k++) {
		const pb_tune_all_shape *s = &a->shapes[k];
		char share[32], t[32], ts[32], where[96];
		snprintf(share, sizeof share, "%.1f%%", 100 * s->share);
		if (s->best_gflops > 0) {
			double sec = s->flops / (s->best_gflops * 1e9);
			total += sec;
			pb_fmt_time(sec, t, sizeof t);
		} else
			snprintf(t, sizeof t, "-");
		pb_fmt_time(s->tune_seconds, ts, sizeof ts);
		if (s->state == PB_TUNE_ALL_MISSING)
			snprintf(where, sizeof where, "MISSING");
		else if (s->rank >= 0)
			snprintf(where, sizeof where, "%s, rank %d on %s", state_name(s->state),
			         s->rank, s->host);
		else
			snprintf(where, sizeof where, "%s", state_name(s->state));
		fprintf(f, "%-40.40s %5d %6s %5d %10.2f %11s %8s  %s\n", s->key, s->n_nodes, share,
		        s->measurements, s->best_gflops, t, ts, where);
	}
	char tt[32], wall[32];
	int n_nodes = 0;
	for (int k = 0; k < a->n; k++)
		n_nodes += a->shapes[k].n_nodes;
	fprintf(f,
	        "%d kernel shapes (%d tuned now, %d already in the log, %d missing) for %d "
	        "nodes; measured model kernel time %s\n",
	        a->n, r->tuned, r->logged, r->missing, n_nodes, pb_fmt_time(total, tt, sizeof tt));
	fprintf(f, "ranks: %d (%d died); wall time %s; log: %s\n", r->ranks, r->dead_ranks,
	        pb_fmt_time(r->seconds, wall, sizeof wall), log_path);
	if (a->untunable)
		fprintf(f,
		        "%d Conv/Gemm/MatMul nodes have shapes the kernels cannot take "
		        "(dilated, uneven pads, unknown): --costs keeps MACs/rate for them\n",
		        a->untunable);
	for (int k = 0; k < a->n; k++)
		if (a->shapes[k].state == PB_TUNE_ALL_MISSING)
			fprintf(f, "missing: %s (%s)\n", a->shapes[k].key, a->shapes[k].why);
	if (r->missing)
		fprintf(f, "run the same command with --resume to complete the missing shapes\n");
}

json_t *pb_tune_all_report_json(const pb_tune_all *a, const pb_tune_all_report *r,
                                const char *log_path)
{
	json_t *j = json_object(), *arr = json_array(), *miss = json_array();
	for (int k = 0; k < a->n; k++) {
		const pb_tune_all_shape *s = &a->shapes[k];
		json_t *o = json_object(), *nodes = json_array();
		json_object_set_new(o, "key", json_string(s->key));
		for (int i = 0; i < s->n_nodes; i++)
			json_array_append_new(nodes, json_string(a->g->nodes[s->nodes[i]].name));
		json_object_set_new(o, "nodes", nodes);
		json_object_set_new(o, "share", json_real(s->share));
		json_object_set_new(o, "state", json_string(state_name(s->state)));
		json_object_set_new(o, "measurements", json_integer(s->measurements));
		json_object_set_new(o, "best_gflops", json_real(s->best_gflops));
		json_object_set_new(o, "tune_seconds", json_real(s->tune_seconds));
		json_object_set_new(o, "rank", json_integer(s->rank));
		json_object_set_new(o, "host", json_string(s->host));
		if (s->state == PB_TUNE_ALL_MISSING) {
			json_object_set_new(o, "why", json_string(s->why));
			json_array_append_new(miss, json_string(s->key));
		}
		json_array_append_new(arr, o);
	}
	json_object_set_new(j, "model", json_string(a->g->path ? a->g->path : ""));
	json_object_set_new(j, "log", json_string(log_path));
	json_object_set_new(j, "shapes", arr);
	json_object_set_new(j, "missing", miss);
	json_object_set_new(j, "tuned", json_integer(r->tuned));
	json_object_set_new(j, "logged", json_integer(r->logged));
	json_object_set_new(j, "untunable_nodes", json_integer(a->untunable));
	json_object_set_new(j, "ranks", json_integer(r->ranks));
	json_object_set_new(j, "dead_ranks", json_integer(r->dead_ranks));
	json_object_set_new(j, "seconds", json_real(r->seconds));
	json_object_set_new(j, "budget", json_real(r->budget));
	return j;
}
