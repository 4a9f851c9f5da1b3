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
#include "tune/blas_baseline.h"
#include "tune/log.h"

static int is_kernel_op(const char *op)
{
	return !strcmp(op, "Conv") || !strcmp(op, "Gemm") || !strcmp(op, "MatMul");
}

int pb_tune_all_plan(const pb_graph *g, pb_tune_all *out, pb_error *err)
{
	memset(out, 0, sizeof *out);
	out->g = g;
	pb_strmap *index = pb_strmap_new(64);
	int cap = 0, rc = PB_OK;
	if (!index)
		return pb_err(err, PB_ENOMEM, "tune: out of memory");
	out->skipped = calloc((size_t)g->n_nodes + 1, sizeof *out->skipped);
	if (!out->skipped)
		rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
	for (int i = 0; i < g->n_nodes && !rc; i++) {
		const char *op = g->nodes[i].op;
		pb_tune_all_skip *sk = &out->skipped[out->n_skipped];
		if (!is_kernel_op(op)) {
			sk->node = i;
			snprintf(
			    sk->why, sizeof sk->why,
			    "%s has no tuned kernel (only Conv, Gemm and MatMul): --costs keeps "
			    "its MACs/rate",
			    op);
			out->n_skipped++;
			continue;
		}
		pb_tune_shape sh;
		pb_error why = {0};
		if (pb_tune_shape_from_node(g, i, &sh, &why)) {
			sk->node = i;
			snprintf(sk->why, sizeof sk->why, "%s", why.msg);
			out->n_skipped++;
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
	free(a->skipped);
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
	json_t *ob = json_object_get(line, "openblas_gflops");
	const char *core = json_string_value(json_object_get(line, "openblas_core"));
	if (json_is_number(ob) && isfinite(json_number_value(ob)) && json_number_value(ob) > 0) {
		sh->openblas_gflops = json_number_value(ob);
		snprintf(sh->openblas_core, sizeof sh->openblas_core, "%s", core ? core : "");
	}
	return 0;
}

void pb_tune_all_openblas(pb_tune_all *a, int s, const pb_tune_all_opts *o)
{
	pb_tune_all_shape *sh = &a->shapes[s];
	pb_blas_baseline b;
	pb_blas_baseline_run(&sh->shape, &o->tune.measure, &b);
	sh->openblas_gflops = b.ran ? b.gflops : 0;
	snprintf(sh->openblas_core, sizeof sh->openblas_core, "%s", b.ran ? b.core : "");
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
	if (o->tune.baselines) {
		pb_blas_baseline b;
		pb_blas_baseline_run(&sh->shape, &o->tune.measure, &b);
		if (b.ran) {
			json_object_set_new(j, "openblas_gflops", json_real(b.gflops));
			json_object_set_new(j, "openblas_core", json_string(b.core));
		}
	}
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

/* Model kernel time of the tuned kernels and of OpenBLAS, summed over the
 * shapes that have both (seconds); *n_both: how many. */
static void model_times(const pb_tune_all *a, double *tuned, double *blas, double *tuned_all,
                        int *n_both)
{
	*tuned = *blas = *tuned_all = 0;
	*n_both = 0;
	for (int k = 0; k < a->n; k++) {
		const pb_tune_all_shape *s = &a->shapes[k];
		if (s->best_gflops <= 0)
			continue;
		*tuned_all += s->flops / (s->best_gflops * 1e9);
		if (s->openblas_gflops <= 0)
			continue;
		*tuned += s->flops / (s->best_gflops * 1e9);
		*blas += s->flops / (s->openblas_gflops * 1e9);
		(*n_both)++;
	}
}

static int cmp_op(const void *x, const void *y, void *ud)
{
	const pb_tune_all *a = ud;
	const pb_tune_all_skip *p = x, *q = y;
	int c = strcmp(a->g->nodes[p->node].op, a->g->nodes[q->node].op);
	return c ? c : p->node - q->node;
}

/* The nodes not tuned: each Conv/Gemm/MatMul with its reason, the other
 * operators counted per operator type. */
static void skipped_text(FILE *f, const pb_tune_all *a)
{
	for (int k = 0; k < a->n_skipped; k++) {
		const pb_tune_all_skip *sk = &a->skipped[k];
		const char *op = a->g->nodes[sk->node].op;
		if (is_kernel_op(op))
			fprintf(f, "not tuned: %s (%s): %s\n", a->g->nodes[sk->node].name, op,
			        sk->why);
	}
	pb_tune_all_skip *v = malloc(((size_t)a->n_skipped + 1) * sizeof *v);
	if (!v)
		return;
	int n = 0;
	for (int k = 0; k < a->n_skipped; k++)
		if (!is_kernel_op(a->g->nodes[a->skipped[k].node].op))
			v[n++] = a->skipped[k];
	qsort_r(v, (size_t)n, sizeof *v, cmp_op, (void *)a);
	if (n)
		fprintf(f,
		        "not tuned: %d nodes of operators without a tuned kernel (--costs keeps "
		        "their MACs/rate):",
		        n);
	for (int k = 0; k < n;) {
		const char *op = a->g->nodes[v[k].node].op;
		int m = k;
		while (m < n && !strcmp(a->g->nodes[v[m].node].op, op))
			m++;
		fprintf(f, "%s %s %d", k ? "," : "", op, m - k);
		k = m;
	}
	if (n)
		fputc('\n', f);
	free(v);
}

void pb_tune_all_report_text(FILE *f, const pb_tune_all *a, const pb_tune_all_report *r,
                             const char *log_path)
{
	fprintf(f, "%-40s %5s %6s %5s %10s %11s %10s %11s %8s  %s\n", "kernel", "nodes", "share",
	        "meas", "GFLOP/s", "model time", "OpenBLAS", "its time", "tuned in", "where");
	for (int k = 0; k < a->n; k++) {
		const pb_tune_all_shape *s = &a->shapes[k];
		char share[32], t[32], ts[32], where[96], ob[32], obt[32];
		snprintf(share, sizeof share, "%.1f%%", 100 * s->share);
		if (s->best_gflops > 0)
			pb_fmt_time(s->flops / (s->best_gflops * 1e9), t, sizeof t);
		else
			snprintf(t, sizeof t, "-");
		if (s->openblas_gflops > 0) {
			snprintf(ob, sizeof ob, "%.2f", s->openblas_gflops);
			pb_fmt_time(s->flops / (s->openblas_gflops * 1e9), obt, sizeof obt);
		} else {
			snprintf(ob, sizeof ob, "-");
			snprintf(obt, sizeof obt, "-");
		}
		pb_fmt_time(s->tune_seconds, ts, sizeof ts);
		if (s->state == PB_TUNE_ALL_MISSING)
			snprintf(where, sizeof where, "MISSING");
		else if (s->rank >= 0)
			snprintf(where, sizeof where, "%s, rank %d on %s", state_name(s->state),
			         s->rank, s->host);
		else
			snprintf(where, sizeof where, "%s", state_name(s->state));
		fprintf(f, "%-40.40s %5d %6s %5d %10.2f %11s %10s %11s %8s  %s\n", s->key,
		        s->n_nodes, share, s->measurements, s->best_gflops, t, ob, obt, ts, where);
	}
	char tt[32], wall[32];
	int n_nodes = 0, meas = 0;
	for (int k = 0; k < a->n; k++) {
		n_nodes += a->shapes[k].n_nodes;
		meas += a->shapes[k].measurements;
	}
	double tuned, blas, tuned_all;
	int n_both;
	model_times(a, &tuned, &blas, &tuned_all, &n_both);
	fprintf(f,
	        "%d kernel shapes (%d tuned now, %d already in the log, %d missing) for %d of "
	        "the model's %d nodes; %d measurements; measured model kernel time %s "
	        "(single thread, sum over the nodes)\n",
	        a->n, r->tuned, r->logged, r->missing, n_nodes, a->g->n_nodes, meas,
	        pb_fmt_time(tuned_all, tt, sizeof tt));
	if (n_both) {
		char t1[32], t2[32];
		const char *core = "";
		for (int k = 0; k < a->n && !core[0]; k++)
			core = a->shapes[k].openblas_core;
		fprintf(f,
		        "OpenBLAS (%s kernels, 1 thread) on %s%d kernel shapes: %s, tuned %s; "
		        "tuned / OpenBLAS speed %.3fx (OpenBLAS time / tuned time)\n",
		        core, n_both < a->n ? "the " : "all ", n_both,
		        pb_fmt_time(blas, t1, sizeof t1), pb_fmt_time(tuned, t2, sizeof t2),
		        tuned > 0 ? blas / tuned : 0);
	}
	fprintf(f, "ranks: %d (%d died); wall time %s; log: %s\n", r->ranks, r->dead_ranks,
	        pb_fmt_time(r->seconds, wall, sizeof wall), log_path);
	skipped_text(f, a);
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
		json_object_set_new(o, "flops", json_real(s->flops));
		json_object_set_new(o, "model_seconds",
		                    s->best_gflops > 0
		                        ? json_real(s->flops / (s->best_gflops * 1e9))
		                        : json_null());
		json_object_set_new(o, "openblas_gflops",
		                    s->openblas_gflops > 0 ? json_real(s->openblas_gflops)
		                                           : json_null());
		json_object_set_new(o, "openblas_core",
		                    s->openblas_gflops > 0 ? json_string(s->openblas_core)
		                                           : json_null());
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
	json_t *skip = json_array();
	for (int k = 0; k < a->n_skipped; k++) {
		const pb_tune_all_skip *sk = &a->skipped[k];
		json_t *o = json_object();
		json_object_set_new(o, "node", json_string(a->g->nodes[sk->node].name));
		json_object_set_new(o, "op", json_string(a->g->nodes[sk->node].op));
		json_object_set_new(o, "why", json_string(sk->why));
		json_array_append_new(skip, o);
	}
	json_object_set_new(j, "not_tuned", skip);
	json_object_set_new(j, "nodes", json_integer(a->g->n_nodes));
	double tuned, blas, tuned_all;
	int n_both, meas = 0;
	model_times(a, &tuned, &blas, &tuned_all, &n_both);
	for (int k = 0; k < a->n; k++)
		meas += a->shapes[k].measurements;
	json_object_set_new(j, "measurements", json_integer(meas));
	json_object_set_new(j, "model_seconds", json_real(tuned_all));
	json_object_set_new(j, "openblas_shapes", json_integer(n_both));
	json_object_set_new(j, "openblas_model_seconds", n_both ? json_real(blas) : json_null());
	json_object_set_new(j, "tuned_model_seconds_vs_openblas",
	                    n_both ? json_real(tuned) : json_null());
	json_object_set_new(j, "tuned_vs_openblas",
	                    n_both && tuned > 0 ? json_real(blas / tuned) : json_null());
	json_object_set_new(j, "ranks", json_integer(r->ranks));
	json_object_set_new(j, "dead_ranks", json_integer(r->dead_ranks));
	json_object_set_new(j, "seconds", json_real(r->seconds));
	json_object_set_new(j, "budget", json_real(r->budget));
	return j;
}
