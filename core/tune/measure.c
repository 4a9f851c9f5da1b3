/*
 * tune/measure.c — correctness check and timing of one configuration
 * (see measure.h for the exactness argument and the clock).
 */
#include "tune/measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef PB_HAVE_OPENBLAS
#include "util/lazy_openblas.h"
#endif

struct pb_tune_bench {
	pb_tune_shape shape;
	float *a, *b, *out, *ref, *ws;
	size_t n_a, n_b, n_out, n_ws;
	int fault;
};

static double now_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void fill(float *p, size_t n, unsigned *state)
{
	for (size_t i = 0; i < n; i++) {
		*state = *state * 1103515245u + 12345u;
		p[i] = (float)((int)((*state >> 16) % 5u) - 2) * 0.25f;
	}
}

static float *alloc_floats(size_t n)
{
	size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
	return aligned_alloc(64, bytes ? bytes : 64);
}

int pb_tune_bench_new(const pb_tune_shape *shape, unsigned seed, pb_tune_bench **out, pb_error *err)
{
	pb_tune_bench *b = calloc(1, sizeof *b);
	if (!b)
		return pb_err(err, PB_ENOMEM, "tune: out of memory");
	b->shape = *shape;
	if (shape->op == PB_TUNE_GEMM) {
		b->n_a = (size_t)shape->m * shape->k;
		b->n_b = (size_t)shape->k * shape->n;
		b->n_out = (size_t)shape->m * shape->n;
	} else {
		const pb_conv_shape *c = &shape->conv;
		b->n_a = (size_t)c->n * c->c * c->h * c->w;
		b->n_b = (size_t)c->k * (c->c / pb_conv_groups(c)) * c->r * c->s;
		b->n_out = (size_t)c->n * c->k * pb_conv_out_h(c) * pb_conv_out_w(c);
	}
	b->a = alloc_floats(b->n_a);
	b->b = alloc_floats(b->n_b);
	b->out = alloc_floats(b->n_out);
	b->ref = alloc_floats(b->n_out);
	if (!b->a || !b->b || !b->out || !b->ref) {
		pb_tune_bench_free(b);
		return pb_err(err, PB_ENOMEM, "tune: out of memory for the operands");
	}
	unsigned st = seed ? seed : 1u;
	fill(b->a, b->n_a, &st);
	fill(b->b, b->n_b, &st);
	if (shape->op == PB_TUNE_GEMM)
		pb_gemm_ref(shape->m, shape->n, shape->k, b->a, b->b, b->ref);
	else
		pb_conv_ref(&shape->conv, b->a, b->b, b->ref);
	*out = b;
	return PB_OK;
}

void pb_tune_bench_free(pb_tune_bench *b)
{
	if (!b)
		return;
	free(b->a);
	free(b->b);
	free(b->out);
	free(b->ref);
	free(b->ws);
	free(b);
}

void pb_tune_bench_inject_fault(pb_tune_bench *b, int on)
{
	b->fault = on;
}

static int run_once(pb_tune_bench *b, const pb_tune_space *sp, const pb_gemm_cfg *gc,
                    const pb_conv_cfg *cc)
{
	if (sp->shape.op == PB_TUNE_GEMM)
		return pb_gemm_run(gc, sp->shape.m, sp->shape.n, sp->shape.k, b->a, b->b, b->out,
		                   b->ws);
	return pb_conv_run(cc, &sp->shape.conv, b->a, b->b, b->out, b->ws);
}

int pb_tune_bench_measure(pb_tune_bench *b, const pb_tune_space *sp, const int *idx,
                          const pb_tune_measure_opts *o, pb_tune_result *r, pb_error *err)
{
	memset(r, 0, sizeof *r);
	if (!pb_tune_space_legal(sp, idx, r->why, sizeof r->why))
		return PB_OK;
	pb_gemm_cfg gc;
	pb_conv_cfg cc;
	size_t ws;
	if (sp->shape.op == PB_TUNE_GEMM) {
		pb_tune_space_gemm_cfg(sp, idx, &gc);
		ws = pb_gemm_workspace(&gc, sp->shape.m, sp->shape.n, sp->shape.k);
	} else {
		pb_tune_space_conv_cfg(sp, idx, &cc);
		ws = pb_conv_workspace(&cc, &sp->shape.conv);
	}
	if (ws > b->n_ws) {
		free(b->ws);
		b->ws = alloc_floats(ws);
		b->n_ws = b->ws ? ws : 0;
		if (!b->ws)
			return pb_err(err, PB_ENOMEM,
			              "tune: out of memory for a %zu-float workspace", ws);
	}
	/* Poison the output so a kernel that skips elements cannot pass. */
	for (size_t i = 0; i < b->n_out; i++)
		b->out[i] = 1e30f;
	r->measured = 1;
	double t_check = now_cpu();
	int refused = run_once(b, sp, &gc, &cc);
	t_check = now_cpu() - t_check;
	if (refused) {
		snprintf(r->why, sizeof r->why, "kernel refused the configuration");
		return PB_OK;
	}
	if (b->fault && b->n_out)
		b->out[b->n_out / 2] += 0.25f;
	for (size_t i = 0; i < b->n_out; i++)
		if (b->out[i] != b->ref[i]) {
			snprintf(r->why, sizeof r->why,
			         "wrong result: element %zu is %g, reference %g", i,
			         (double)b->out[i], (double)b->ref[i]);
			return PB_OK;
		}
	int min_reps = o && o->min_reps > 0 ? o->min_reps : 3;
	int max_reps = o && o->max_reps > 0 ? o->max_reps : 10;
	double min_s = o && o->min_seconds >= 0 ? o->min_seconds : 0.05;
	if (max_reps < min_reps)
		max_reps = min_reps;
	double best = t_check > 0 ? t_check : 1e300, total = 0;
	if (o && o->cutoff_seconds > 0 && t_check > o->cutoff_seconds)
		max_reps = min_reps = 0;
	for (int rep = 0; rep < max_reps && (rep < min_reps || total < min_s); rep++) {
		double t0 = now_cpu();
		run_once(b, sp, &gc, &cc);
		double dt = now_cpu() - t0;
		total += dt;
		if (dt < best)
			best = dt;
	}
	if (best <= 0)
		best = 1e-9;
	r->valid = 1;
	r->seconds = best;
	r->gflops = pb_tune_shape_flops(&sp->shape) / best / 1e9;
	return PB_OK;
}

int pb_tune_openblas_gflops(const pb_tune_shape *shape, const pb_tune_measure_opts *o,
                            double *gflops, char *core, size_t len)
{
#ifdef PB_HAVE_OPENBLAS
	const pb_openblas_api *ob = pb_openblas();
	if (!ob)
		return -1;
	const char *name = ob->get_corename();
	snprintf(core, len, "%s", name ? name : "unknown");
	int M, N, K, groups = 1;
	if (shape->op == PB_TUNE_GEMM) {
		M = shape->m, N = shape->n, K = shape->k;
	} else {
		const pb_conv_shape *c = &shape->conv;
		/* one group's implicit GEMM, run once per group */
		groups = pb_conv_groups(c);
		M = c->k / groups, N = pb_conv_out_h(c) * pb_conv_out_w(c) * c->n;
		K = c->c / groups * c->r * c->s;
	}
	float *a = alloc_floats((size_t)M * K), *b = alloc_floats((size_t)K * N);
	float *c = alloc_floats((size_t)M * N);
	if (!a || !b || !c) {
		free(a);
		free(b);
		free(c);
		return -1;
	}
	unsigned st = 7;
	fill(a, (size_t)M * K, &st);
	fill(b, (size_t)K * N, &st);
	ob->set_num_threads(1);
	int min_reps = o && o->min_reps > 0 ? o->min_reps : 3;
	int max_reps = o && o->max_reps > 0 ? o->max_reps : 10;
	double min_s = o && o->min_seconds >= 0 ? o->min_seconds : 0.05, best = 1e300, total = 0;
	ob->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
	for (int rep = 0; rep < max_reps && (rep < min_reps || total < min_s); rep++) {
		double t0 = now_cpu();
		for (int gi = 0; gi < groups; gi++)
			ob->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b,
			          N, 0.0f, c, N);
		double dt = now_cpu() - t0;
		total += dt;
		if (dt < best)
			best = dt;
	}
	free(a);
	free(b);
	free(c);
	*gflops = 2.0 * M * N * K * groups / (best > 0 ? best : 1e-9) / 1e9;
	return 0;
#else
	(void)shape;
	(void)o;
	(void)gflops;
	(void)core;
	(void)len;
	return -1;
#endif
}
