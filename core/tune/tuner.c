/*
 * tune/tuner.c — RLTune (LSTM policy + mini-batch REINFORCE + cost model)
 * and the baselines (random, simulated annealing over the cost model,
 * exhaustive); see tuner.h for the contract.
 *
 * Measurement bookkeeping: a dense cache over the linear configuration ids
 * holds each configuration's hardware result (run at most once per run, or
 * read back from the log with --resume); each method has its own "seen" set
 * and counts a configuration once, when it first consumes its value.
 *
 * RL round (after the warm-up): `batch` policy samples; rewards are measured
 * values where known, else cost-model predictions, 0 when illegal; the top
 * `measure_per_round` unseen legal samples by prediction are measured and
 * their measured value replaces the prediction; then one REINFORCE update
 * with advantage (R - mean R) / scale. Several prediction-only updates run
 * between rounds that measure, because predictions cost no hardware time.
 */
#include "tune/tuner.h"
#include "util/fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tune/costmodel.h"
#include "tune/transfer.h"
#include "tune/log.h"
#include "tune/lstm_policy.h"
#include "tune/rng.h"

#define WARMUP 16
#define REFIT_EVERY 8
#define PER_ROUND 2
#define FREE_UPDATES 3
#define TRANSFER_ROWS 1024 /* at most this many rows from other shapes (transfer.h) */

typedef struct tuner {
	const pb_tune_space *sp;
	const pb_tune_opts *o;
	pb_tune_report *rep;
	pb_tune_bench *bench;
	FILE *log;
	int64_t size;
	double *gflops; /* cache: NAN = not run yet */
	unsigned char *valid;
	int nf;
	uint64_t rng;
	double planned, done; /* progress in measurements */
	double best_any;      /* best GFLOP/s known (any method): repetition cutoff */
	const char *phase;
	double acc_err[32];
	int n_acc;
	const pb_tune_transfer *xfer; /* other shapes' rows for the cost model, or NULL */
} tuner;

typedef struct method {
	pb_tune_method *res;
	unsigned char *seen;
	int cap;
} method;

static double now_wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int report_progress(tuner *t, const pb_tune_method *m, int budget)
{
	if (!t->o->progress)
		return 0;
	char line[200];
	double acc = t->rep->model_accuracy;
	char accs[32];
	if (isnan(acc))
		snprintf(accs, sizeof accs, "-");
	else
		snprintf(accs, sizeof accs, "%.0f%%", 100 * acc);
	snprintf(line, sizeof line, "%s %d/%d  best %.2f GFLOP/s  model acc %s", t->phase,
	         m->measurements, budget, m->best_gflops, accs);
	double f = t->planned > 0 ? t->done / t->planned : 0;
	return t->o->progress(t->o->progress_ud, f > 1 ? 1 : f, line);
}

/* Hardware result of a configuration (cached). */
static int hw_result(tuner *t, const int *idx, const char *method_name, double *g, pb_error *err)
{
	int64_t id = pb_tune_space_encode(t->sp, idx);
	if (!isnan(t->gflops[id])) {
		*g = t->gflops[id];
		return PB_OK;
	}
	pb_tune_result r;
	pb_tune_measure_opts mo = t->o->measure;
	if (t->best_any > 0 && mo.cutoff_seconds <= 0)
		mo.cutoff_seconds = 3 * pb_tune_shape_flops(&t->sp->shape) / (t->best_any * 1e9);
	int rc = pb_tune_bench_measure(t->bench, t->sp, idx, &mo, &r, err);
	if (rc)
		return rc;
	t->rep->hw_runs++;
	t->gflops[id] = r.gflops;
	if (r.gflops > t->best_any)
		t->best_any = r.gflops;
	t->valid[id] = (unsigned char)r.valid;
	if (t->o->sink) {
		char *line = pb_tune_log_line(t->sp, idx, &r, method_name);
		if (!line)
			return pb_err(err, PB_ENOMEM, "tune: out of memory");
		rc = t->o->sink(t->o->sink_ud, line, err);
		free(line);
		if (rc)
			return rc;
	} else if (t->log) {
		rc = pb_tune_log_append(t->log, t->o->log_path, t->sp, idx, &r, method_name, err);
		if (rc)
			return rc;
	}
	/* Return the cached (float) value, so a configuration reads the same
	 * whether it was just measured, taken from the cache or from the log. */
	*g = t->gflops[id];
	return PB_OK;
}

/* Consumes a configuration for a method: counts it once. Returns 1 if it was
 * new to the method, 0 if already seen; -1 on error. */
static int method_take(tuner *t, method *m, const char *name, const int *idx, double *g,
                       pb_error *err)
{
	int64_t id = pb_tune_space_encode(t->sp, idx);
	if (m->seen[id]) {
		*g = isnan(t->gflops[id]) ? 0 : t->gflops[id];
		return 0;
	}
	if (hw_result(t, idx, name, g, err))
		return -1;
	m->seen[id] = 1;
	pb_tune_method *r = m->res;
	if (r->measurements == m->cap) {
		int cap = m->cap ? 2 * m->cap : 64;
		double *tr = realloc(r->trace, (size_t)cap * sizeof *tr);
		if (!tr) {
			pb_err(err, PB_ENOMEM, "tune: out of memory");
			return -1;
		}
		r->trace = tr;
		m->cap = cap;
	}
	if (*g > r->best_gflops) {
		r->best_gflops = *g;
		memcpy(r->best_idx, idx, sizeof r->best_idx);
	}
	r->trace[r->measurements++] = r->best_gflops;
	t->done += 1;
	return 1;
}

static int method_init(tuner *t, method *m, pb_tune_method *res)
{
	memset(m, 0, sizeof *m);
	m->res = res;
	res->ran = 1;
	m->seen = calloc((size_t)t->size, 1);
	return m->seen ? 0 : -1;
}

static void random_legal(tuner *t, int *idx)
{
	for (int tries = 0; tries < 10000; tries++) {
		for (int i = 0; i < t->sp->n_params; i++)
			idx[i] = pb_rng_int(&t->rng, t->sp->params[i].n_values);
		if (pb_tune_space_legal(t->sp, idx, NULL, 0))
			return;
	}
}

/* ---- cost-model training set ---- */
typedef struct dataset {
	float *x, *y;
	int n, cap, nf;
	int since_fit;
} dataset;

static int data_row(dataset *d, const float *f, double y)
{
	if (d->n == d->cap) {
		int cap = d->cap ? 2 * d->cap : 128;
		float *x = realloc(d->x, (size_t)cap * d->nf * sizeof *x);
		if (!x)
			return -1;
		d->x = x;
		float *yy = realloc(d->y, (size_t)cap * sizeof *yy);
		if (!yy)
			return -1;
		d->y = yy;
		d->cap = cap;
	}
	memcpy(d->x + (size_t)d->n * d->nf, f, (size_t)d->nf * sizeof *f);
	d->y[d->n++] = (float)y;
	d->since_fit++;
	return 0;
}

static int data_add(dataset *d, const pb_tune_space *sp, const int *idx, double y)
{
	float f[PB_TUNE_MAX_FEATURES];
	pb_tune_space_features(sp, idx, f);
	return data_row(d, f, y);
}

static void data_free(dataset *d)
{
	free(d->x);
	free(d->y);
}

static int refit(tuner *t, pb_tune_costmodel *cm, dataset *d, int force, pb_error *err)
{
	if (d->n < 2 || (!force && pb_tune_costmodel_fitted(cm) && d->since_fit < REFIT_EVERY))
		return PB_OK;
	double t0 = now_wall();
	int rc = pb_tune_costmodel_fit(cm, d->x, d->y, d->n, err);
	t->rep->model_fit_seconds = now_wall() - t0;
	t->rep->model_fits++;
	d->since_fit = 0;
	return rc;
}

static int predict(tuner *t, pb_tune_costmodel *cm, int idx[][PB_TUNE_MAX_PARAMS], int n,
                   float *out, pb_error *err)
{
	float *x = malloc((size_t)n * t->nf * sizeof *x);
	if (!x)
		return pb_err(err, PB_ENOMEM, "tune: out of memory");
	for (int i = 0; i < n; i++)
		pb_tune_space_features(t->sp, idx[i], x + (size_t)i * t->nf);
	int rc = pb_tune_costmodel_predict(cm, x, n, out, err);
	free(x);
	return rc;
}

static void note_accuracy(tuner *t, double pred, double meas)
{
	double e = fabs(pred - meas) / (meas > 1e-6 ? meas : (pred > 1e-6 ? pred : 1));
	t->acc_err[t->n_acc++ % 32] = e > 1 ? 1 : e;
	int n = t->n_acc < 32 ? t->n_acc : 32;
	double s = 0;
	for (int i = 0; i < n; i++)
		s += t->acc_err[i];
	t->rep->model_accuracy = 1 - s / n;
}

/* ---- RLTune ---- */
static int run_rl(tuner *t, pb_error *err)
{
	const pb_tune_space *sp = t->sp;
	const int B = t->o->batch > 1 ? t->o->batch : 16;
	const int T = t->o->trials < t->rep->legal ? t->o->trials : (int)t->rep->legal;
	pb_tune_method *res = &t->rep->rl;
	method m;
	if (method_init(t, &m, res))
		return pb_err(err, PB_ENOMEM, "tune: out of memory");
	int sizes[PB_TUNE_MAX_PARAMS];
	for (int i = 0; i < sp->n_params; i++)
		sizes[i] = sp->params[i].n_values;
	pb_tune_policy *pol = pb_tune_policy_new(sizes, sp->n_params, 32, 16, t->o->seed + 1);
	pb_tune_costmodel *cm = pb_tune_costmodel_new(t->nf, NULL);
	dataset d = {.nf = t->nf};
	int(*acts)[PB_TUNE_MAX_PARAMS] = calloc((size_t)B, sizeof *acts);
	double *R = calloc((size_t)B, sizeof *R), *grad = NULL;
	float *pred = calloc((size_t)B, sizeof *pred);
	int *order = calloc((size_t)B, sizeof *order);
	int rc = PB_OK;
	double t0 = now_wall();
	/* warm start: other shapes' measurements as the model's first rows */
	for (int i = 0; t->xfer && i < t->xfer->n && !rc; i++)
		if (data_row(&d, t->xfer->x + (size_t)i * t->nf, t->xfer->y[i]))
			rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
	if (rc)
		goto out;
	if (!pol || !cm || !acts || !R || !pred || !order ||
	    !(grad = calloc((size_t)pb_tune_policy_n_weights(pol), sizeof *grad))) {
		rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
		goto out;
	}
	t->phase = "rl";
	/* measurements read back from the log count for the tuner */
	for (int64_t id = 0; id < t->size; id++)
		if (!isnan(t->gflops[id])) {
			int idx[PB_TUNE_MAX_PARAMS];
			double g;
			pb_tune_space_decode(sp, id, idx);
			if (res->measurements >= T)
				break;
			if (method_take(t, &m, "rl", idx, &g, err) < 0) {
				rc = err->code ? err->code : PB_EINTERNAL;
				goto out;
			}
			if (data_add(&d, sp, idx, g)) {
				rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
				goto out;
			}
		}
	double scale = 1;
	long round = 0, max_rounds = 200L + 60L * T;
	while (res->measurements < T && round++ < max_rounds) {
		if (t->o->time_budget > 0 && res->best_gflops > 0 &&
		    now_wall() - t0 >= t->o->time_budget)
			break; /* --budget: this shape's share of the time is spent */
		int use_model = !t->o->no_costmodel && d.n >= WARMUP;
		if (use_model && (rc = refit(t, cm, &d, 0, err)))
			goto out;
		for (int i = 0; i < B; i++)
			pb_tune_policy_sample(pol, &t->rng, acts[i], NULL);
		if (use_model && (rc = predict(t, cm, acts, B, pred, err)))
			goto out;
		int measure_now = !use_model || round % (FREE_UPDATES + 1) == 0;
		/* rank samples by prediction for the measured slots */
		for (int i = 0; i < B; i++)
			order[i] = i;
		if (use_model)
			for (int i = 1; i < B; i++)
				for (int k = i; k > 0 && pred[order[k]] > pred[order[k - 1]]; k--) {
					int tmp = order[k];
					order[k] = order[k - 1];
					order[k - 1] = tmp;
				}
		int budget_now = use_model ? PER_ROUND : B;
		for (int k = 0; k < B; k++) {
			int i = order[k];
			int64_t id = pb_tune_space_encode(sp, acts[i]);
			if (!pb_tune_space_legal(sp, acts[i], NULL, 0)) {
				R[i] = 0;
				continue;
			}
			if (m.seen[id]) {
				R[i] = t->gflops[id];
				continue;
			}
			if (measure_now && budget_now > 0 && res->measurements < T) {
				double g;
				if (method_take(t, &m, "rl", acts[i], &g, err) < 0) {
					rc = err->code ? err->code : PB_EINTERNAL;
					goto out;
				}
				if (use_model)
					note_accuracy(t, pred[i], g);
				if (data_add(&d, sp, acts[i], g)) {
					rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
					goto out;
				}
				R[i] = g;
				budget_now--;
				continue;
			}
			R[i] = use_model ? (pred[i] > 0 ? pred[i] : 0) : 0;
		}
		/* a converged policy proposes only known configurations: measure the
		 * model's favourite (without a model: any) among random unseen ones,
		 * so the budget advances */
		if (measure_now && budget_now == (use_model ? PER_ROUND : B) &&
		    res->measurements < T) {
			enum { POOL = 64 };
			int pool[POOL][PB_TUNE_MAX_PARAMS];
			float pp[POOL];
			int np = 0;
			for (int tries = 0; tries < 20 * POOL && np < POOL; tries++) {
				random_legal(t, pool[np]);
				if (!m.seen[pb_tune_space_encode(sp, pool[np])])
					np++;
			}
			if (np > 0) {
				if (use_model && (rc = predict(t, cm, pool, np, pp, err)))
					goto out;
				int bi = 0;
				for (int i = 1; i < np && use_model; i++)
					if (pp[i] > pp[bi])
						bi = i;
				double g;
				if (method_take(t, &m, "rl", pool[bi], &g, err) < 0) {
					rc = err->code ? err->code : PB_EINTERNAL;
					goto out;
				}
				if (use_model)
					note_accuracy(t, pp[bi], g);
				if (data_add(&d, sp, pool[bi], g)) {
					rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
					goto out;
				}
			}
		}
		/* mini-batch REINFORCE, baseline = batch mean */
		double mean = 0;
		for (int i = 0; i < B; i++)
			mean += R[i];
		mean /= B;
		if (res->best_gflops > scale)
			scale = res->best_gflops;
		memset(grad, 0, (size_t)pb_tune_policy_n_weights(pol) * sizeof *grad);
		for (int i = 0; i < B; i++)
			if (R[i] != mean)
				pb_tune_policy_logprob(pol, acts[i], (R[i] - mean) / (scale * B),
				                       grad);
		pb_tune_policy_ascend(pol, grad, 0.05);
		t->rep->policy_updates++;
		if (report_progress(t, res, T)) {
			rc = pb_err(err, PB_ECANCEL, "tune: cancelled");
			goto out;
		}
	}
	if (!t->o->no_costmodel && d.n >= 2)
		rc = refit(t, cm, &d, d.since_fit > 0, err);
out:
	res->seconds = now_wall() - t0;
	pb_tune_policy_free(pol);
	pb_tune_costmodel_free(cm);
	data_free(&d);
	free(acts);
	free(R);
	free(pred);
	free(order);
	free(grad);
	free(m.seen);
	return rc;
}

/* ---- random search ---- */
static int run_random(tuner *t, int64_t legal, pb_error *err)
{
	method m;
	pb_tune_method *res = &t->rep->random;
	if (method_init(t, &m, res))
		return pb_err(err, PB_ENOMEM, "tune: out of memory");
	t->phase = "random";
	double t0 = now_wall();
	int rc = PB_OK, T = t->o->trials;
	while (res->measurements < T && res->measurements < legal) {
		int idx[PB_TUNE_MAX_PARAMS];
		double g;
		random_legal(t, idx);
		if (method_take(t, &m, "random", idx, &g, err) < 0) {
			rc = err->code ? err->code : PB_EINTERNAL;
			break;
		}
		if (report_progress(t, res, T)) {
			rc = pb_err(err, PB_ECANCEL, "tune: cancelled");
			break;
		}
	}
	res->seconds = now_wall() - t0;
	free(m.seen);
	return rc;
}

/* ---- simulated annealing over the cost model (AutoTVM-like) ---- */
static int run_sa(tuner *t, int64_t legal, pb_error *err)
{
	const pb_tune_space *sp = t->sp;
	enum { CHAINS = 32, STEPS = 60, PICK = 8 };
	method m;
	pb_tune_method *res = &t->rep->sa;
	if (method_init(t, &m, res))
		return pb_err(err, PB_ENOMEM, "tune: out of memory");
	t->phase = "sa";
	double t0 = now_wall();
	int rc = PB_OK, T = t->o->trials;
	pb_tune_costmodel *cm = pb_tune_costmodel_new(t->nf, NULL);
	dataset d = {.nf = t->nf};
	float *score = calloc(t->size, sizeof *score); /* best prediction seen this round */
	if (!cm || !score) {
		rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
		goto out;
	}
	int cur[CHAINS][PB_TUNE_MAX_PARAMS], nxt[CHAINS][PB_TUNE_MAX_PARAMS];
	float cs[CHAINS], ns[CHAINS];
	while (res->measurements < T && res->measurements < legal) {
		if (d.n < WARMUP) {
			int idx[PB_TUNE_MAX_PARAMS];
			double g;
			random_legal(t, idx);
			int r = method_take(t, &m, "sa", idx, &g, err);
			if (r < 0) {
				rc = err->code ? err->code : PB_EINTERNAL;
				goto out;
			}
			if (r == 1 && data_add(&d, sp, idx, g)) {
				rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
				goto out;
			}
			if (report_progress(t, res, T)) {
				rc = pb_err(err, PB_ECANCEL, "tune: cancelled");
				goto out;
			}
			continue;
		}
		if ((rc = refit(t, cm, &d, 1, err)))
			goto out;
		for (int64_t i = 0; i < t->size; i++)
			score[i] = -1;
		for (int c = 0; c < CHAINS; c++)
			random_legal(t, cur[c]);
		if ((rc = predict(t, cm, cur, CHAINS, cs, err)))
			goto out;
		for (int s = 0; s < STEPS; s++) {
			double temp = 1.0 - (double)s / STEPS,
			       sc = res->best_gflops > 1 ? res->best_gflops : 1;
			for (int c = 0; c < CHAINS; c++) {
				memcpy(nxt[c], cur[c], sizeof nxt[c]);
				int p = pb_rng_int(&t->rng, sp->n_params);
				nxt[c][p] = pb_rng_int(&t->rng, sp->params[p].n_values);
			}
			if ((rc = predict(t, cm, nxt, CHAINS, ns, err)))
				goto out;
			for (int c = 0; c < CHAINS; c++) {
				if (!pb_tune_space_legal(sp, nxt[c], NULL, 0))
					ns[c] = 0;
				int64_t id = pb_tune_space_encode(sp, nxt[c]);
				if (ns[c] > score[id])
					score[id] = ns[c];
				double delta = (ns[c] - cs[c]) / sc;
				if (delta > 0 ||
				    pb_rng_unif(&t->rng) < exp(delta / (0.05 * temp + 1e-9))) {
					memcpy(cur[c], nxt[c], sizeof cur[c]);
					cs[c] = ns[c];
				}
			}
		}
		/* measure the PICK best-predicted unseen configurations visited */
		int picked = 0;
		for (; picked < PICK && res->measurements < T; picked++) {
			int64_t best = -1;
			for (int64_t i = 0; i < t->size; i++)
				if (score[i] > 0 && !m.seen[i] &&
				    (best < 0 || score[i] > score[best]))
					best = i;
			if (best < 0)
				break;
			int idx[PB_TUNE_MAX_PARAMS];
			double g;
			pb_tune_space_decode(sp, best, idx);
			float pr = score[best];
			score[best] = -1;
			if (method_take(t, &m, "sa", idx, &g, err) < 0) {
				rc = err->code ? err->code : PB_EINTERNAL;
				goto out;
			}
			if (data_add(&d, sp, idx, g)) {
				rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
				goto out;
			}
			(void)pr;
		}
		if (picked == 0) { /* every visited configuration is known: explore */
			int idx[PB_TUNE_MAX_PARAMS];
			double g;
			random_legal(t, idx);
			int r = method_take(t, &m, "sa", idx, &g, err);
			if (r < 0) {
				rc = err->code ? err->code : PB_EINTERNAL;
				goto out;
			}
			if (r == 1 && data_add(&d, sp, idx, g)) {
				rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
				goto out;
			}
		}
		if (report_progress(t, res, T)) {
			rc = pb_err(err, PB_ECANCEL, "tune: cancelled");
			goto out;
		}
	}
out:
	res->seconds = now_wall() - t0;
	pb_tune_costmodel_free(cm);
	data_free(&d);
	free(score);
	free(m.seen);
	return rc;
}

/* ---- exhaustive ---- */
static int run_exhaustive(tuner *t, int64_t legal, pb_error *err)
{
	method m;
	pb_tune_method *res = &t->rep->exhaustive;
	if (method_init(t, &m, res))
		return pb_err(err, PB_ENOMEM, "tune: out of memory");
	t->phase = "exhaustive";
	double t0 = now_wall();
	int rc = PB_OK;
	for (int64_t id = 0; id < t->size; id++) {
		int idx[PB_TUNE_MAX_PARAMS];
		double g;
		pb_tune_space_decode(t->sp, id, idx);
		if (!pb_tune_space_legal(t->sp, idx, NULL, 0))
			continue;
		if (method_take(t, &m, "exhaustive", idx, &g, err) < 0) {
			rc = err->code ? err->code : PB_EINTERNAL;
			break;
		}
		if (report_progress(t, res, (int)legal)) {
			rc = pb_err(err, PB_ECANCEL, "tune: cancelled");
			break;
		}
	}
	res->seconds = now_wall() - t0;
	free(m.seen);
	return rc;
}

int pb_tune_run(const pb_tune_space *sp, const pb_tune_opts *o, pb_tune_report *r, pb_error *err)
{
	memset(r, 0, sizeof *r);
	r->model_accuracy = NAN;
	tuner t = {sp, o, r};
	t.size = (int64_t)pb_tune_space_size(sp);
	t.rng = o->seed * 0x9E3779B97F4A7C15ull + 17;
	float f[PB_TUNE_MAX_FEATURES];
	int idx0[PB_TUNE_MAX_PARAMS] = {0};
	t.nf = pb_tune_space_features(sp, idx0, f);
	r->space_size = t.size;
	r->legal = pb_tune_space_count_legal(sp);
	if (o->trials < 1)
		return pb_err(err, PB_EUSAGE, "tune: --trials must be >= 1");
	if (r->legal == 0)
		return pb_err(err, PB_EINPUT, "tune: the search space has no legal configuration");
	t.gflops = malloc((size_t)t.size * sizeof *t.gflops);
	t.valid = calloc((size_t)t.size, 1);
	if (!t.gflops || !t.valid) {
		free(t.gflops);
		free(t.valid);
		return pb_err(err, PB_ENOMEM, "tune: out of memory");
	}
	for (int64_t i = 0; i < t.size; i++)
		t.gflops[i] = NAN;
	int rc = PB_OK;
	if (o->resume && o->log_path) {
		pb_tune_record *recs = NULL;
		int n = 0;
		rc = pb_tune_log_load(o->log_path, sp, &recs, &n, err);
		for (int i = 0; i < n && !rc; i++) {
			int64_t id = pb_tune_space_encode(sp, recs[i].idx);
			if (isnan(t.gflops[id]))
				r->resumed++;
			t.gflops[id] = recs[i].r.gflops;
			if (recs[i].r.gflops > t.best_any)
				t.best_any = recs[i].r.gflops;
			t.valid[id] = (unsigned char)recs[i].r.valid;
		}
		free(recs);
	}
	for (int i = 0; i < o->n_prior && !rc; i++) {
		const pb_tune_record *p = &o->prior[i];
		int in_space = 1;
		for (int k = 0; k < sp->n_params; k++)
			in_space &= p->idx[k] >= 0 && p->idx[k] < sp->params[k].n_values;
		if (!in_space || !isfinite(p->r.gflops) || p->r.gflops < 0 ||
		    (p->r.valid && !pb_tune_space_legal(sp, p->idx, NULL, 0)))
			continue;
		int64_t id = pb_tune_space_encode(sp, p->idx);
		if (isnan(t.gflops[id]))
			r->resumed++;
		t.gflops[id] = p->r.gflops;
		if (p->r.gflops > t.best_any)
			t.best_any = p->r.gflops;
		t.valid[id] = (unsigned char)p->r.valid;
	}
	pb_tune_transfer xfer = {0};
	if (!rc && o->log_path && !o->no_costmodel && !o->no_transfer) {
		rc = pb_tune_transfer_load(o->log_path, sp, TRANSFER_ROWS, &xfer, err);
		if (!rc && xfer.n > 0 && xfer.nf == t.nf)
			t.xfer = &xfer;
		r->transfer_rows = t.xfer ? xfer.n : 0;
		r->transfer_shapes = t.xfer ? xfer.shapes : 0;
	}
	if (!rc && o->log_path && !o->sink)
		rc = pb_tune_log_open(o->log_path, &t.log, err);
	if (!rc)
		rc = pb_tune_bench_new(&sp->shape, (unsigned)(o->seed + 1), &t.bench, err);
	int do_exh = o->baselines && r->legal <= (o->exhaustive_max > 0 ? o->exhaustive_max : 5000);
	int64_t lim = r->legal;
	t.planned = o->trials + (o->baselines ? 2.0 * (o->trials < lim ? o->trials : lim) : 0) +
	            (do_exh ? (double)r->legal : 0);
	if (!rc)
		rc = run_rl(&t, err);
	if (!rc && o->baselines)
		rc = run_random(&t, lim, err);
	if (!rc && o->baselines)
		rc = run_sa(&t, lim, err);
	if (!rc && do_exh)
		rc = run_exhaustive(&t, lim, err);
	if (!rc && o->baselines)
		pb_blas_baseline_run(&sp->shape, &o->measure, &r->openblas);
	if (t.log) {
		int crc = pb_tune_log_close(t.log, o->log_path, rc != PB_OK, err);
		rc = rc ? rc : crc;
	}
	pb_tune_bench_free(t.bench);
	pb_tune_transfer_free(&xfer);
	free(t.gflops);
	free(t.valid);
	return rc;
}

void pb_tune_report_free(pb_tune_report *r)
{
	free(r->rl.trace);
	free(r->random.trace);
	free(r->sa.trace);
	free(r->exhaustive.trace);
	memset(r, 0, sizeof *r);
}

/* ---- the report (`tune`, `tune --json`) ---- */

static json_t *num_or_null(int ran, double v)
{
	return ran ? json_real(v) : json_null();
}

static json_t *trace_json(const pb_tune_method *m)
{
	json_t *a = json_array();
	for (int i = 0; i < m->measurements; i++)
		json_array_append_new(a, json_real(m->trace[i]));
	return a;
}

static void baselines_json(json_t *j, const pb_tune_space *sp, const pb_tune_report *r)
{
	json_object_set_new(j, "random_best_gflops", json_real(r->random.best_gflops));
	json_object_set_new(j, "random_measurements", json_integer(r->random.measurements));
	json_object_set_new(j, "sa_best_gflops", json_real(r->sa.best_gflops));
	json_object_set_new(j, "sa_measurements", json_integer(r->sa.measurements));
	json_object_set_new(j, "exhaustive_best_gflops",
	                    num_or_null(r->exhaustive.ran, r->exhaustive.best_gflops));
	json_object_set_new(j, "exhaustive_measurements",
	                    r->exhaustive.ran ? json_integer(r->exhaustive.measurements)
	                                      : json_null());
	json_object_set_new(j, "exhaustive_best_config",
	                    r->exhaustive.ran && r->exhaustive.best_gflops > 0
	                        ? pb_tune_space_config_json(sp, r->exhaustive.best_idx)
	                        : json_null());
	const pb_blas_baseline *ob = &r->openblas;
	json_object_set_new(j, "openblas_gflops", num_or_null(ob->ran, ob->gflops));
	/* what ran, what the library chose by itself, what the CPU's flags allow */
	json_object_set_new(j, "openblas_core", ob->ran ? json_string(ob->core) : json_null());
	json_object_set_new(j, "openblas_detected",
	                    ob->ran ? json_string(ob->detected) : json_null());
	json_object_set_new(j, "openblas_detected_gflops",
	                    num_or_null(ob->ran, ob->detected_gflops));
	json_object_set_new(j, "openblas_cpu_best",
	                    ob->cpu_best[0] ? json_string(ob->cpu_best) : json_null());
	json_object_set_new(j, "openblas_env", ob->env[0] ? json_string(ob->env) : json_null());
	json_object_set_new(j, "openblas_forced", json_boolean(ob->forced));
	json_object_set_new(j, "openblas_note", ob->note[0] ? json_string(ob->note) : json_null());
	json_object_set_new(j, "tuned_vs_openblas",
	                    num_or_null(ob->ran && ob->gflops > 0 && r->rl.best_gflops > 0,
	                                r->rl.best_gflops / ob->gflops));
	json_t *tr = json_object();
	json_object_set_new(tr, "rl", trace_json(&r->rl));
	json_object_set_new(tr, "random", trace_json(&r->random));
	json_object_set_new(tr, "sa", trace_json(&r->sa));
	if (r->exhaustive.ran)
		json_object_set_new(tr, "exhaustive", trace_json(&r->exhaustive));
	json_object_set_new(j, "traces", tr);
}

json_t *pb_tune_report_json(const pb_tune_space *sp, const pb_tune_report *r, int baselines)
{
	const pb_tune_shape *shape = &sp->shape;
	char key[128];
	pb_tune_shape_key(shape, key, sizeof key);
	json_t *j = json_object();
	json_object_set_new(j, "key", json_string(key));
	json_object_set_new(j, "op", json_string(pb_tune_op_name(shape->op)));
	json_object_set_new(j, "batch", json_integer(shape->batch));
	json_object_set_new(j, "flops", json_real(pb_tune_shape_flops(shape)));
	json_object_set_new(j, "isa", json_string(pb_kernels_isa()));
	json_object_set_new(j, "space_size", json_integer(r->space_size));
	json_object_set_new(j, "legal_configs", json_integer(r->legal));
	json_object_set_new(j, "best_gflops", json_real(r->rl.best_gflops));
	json_object_set_new(j, "best_config",
	                    r->rl.best_gflops > 0 ? pb_tune_space_config_json(sp, r->rl.best_idx)
	                                          : json_null());
	json_object_set_new(j, "measurements", json_integer(r->rl.measurements));
	json_object_set_new(j, "resumed", json_integer(r->resumed));
	json_object_set_new(j, "hw_runs", json_integer(r->hw_runs));
	json_object_set_new(j, "policy_updates", json_integer(r->policy_updates));
	json_object_set_new(j, "model_fits", json_integer(r->model_fits));
	json_object_set_new(j, "transfer_rows", json_integer(r->transfer_rows));
	json_object_set_new(j, "transfer_shapes", json_integer(r->transfer_shapes));
	json_object_set_new(j, "model_fit_seconds", json_real(r->model_fit_seconds));
	json_object_set_new(j, "model_accuracy",
	                    isnan(r->model_accuracy) ? json_null() : json_real(r->model_accuracy));
	json_object_set_new(j, "rl_seconds", json_real(r->rl.seconds));
	if (baselines)
		baselines_json(j, sp, r);
	return j;
}

/* The OpenBLAS line names the core type that ran and, when it is not the library's own
 * choice, that one too; then the tuned kernel against it. */
static void openblas_text(FILE *f, const pb_blas_baseline *ob, double tuned, int conv)
{
	if (!ob->ran) {
		fprintf(f, "OpenBLAS sgemm: not measured (%s)\n",
		        ob->note[0] ? ob->note : "OpenBLAS is not available");
		return;
	}
	fprintf(f, "OpenBLAS sgemm: %.2f GFLOP/s (1 thread%s; %s kernels", ob->gflops,
	        conv ? ", implicit GEMM" : "", ob->core);
	if (ob->forced)
		fprintf(f,
		        ", run with OPENBLAS_CORETYPE=%s as this CPU's flags allow; detected: %s, "
		        "%.2f GFLOP/s",
		        ob->cpu_best, ob->detected, ob->detected_gflops);
	else if (ob->env[0])
		fprintf(f, ", OPENBLAS_CORETYPE=%s from the environment", ob->env);
	else
		fprintf(f, ", the library's own choice");
	fprintf(f, ")\n");
	if (ob->note[0])
		fprintf(f, "OpenBLAS note: %s\n", ob->note);
	if (tuned > 0 && ob->gflops > 0)
		fprintf(f, "tuned / OpenBLAS (%s): %.2fx (%.2f vs %.2f GFLOP/s)\n", ob->core,
		        tuned / ob->gflops, tuned, ob->gflops);
}

void pb_tune_report_text(FILE *f, const pb_tune_space *sp, const pb_tune_report *r, int baselines,
                         const char *what, const char *log_path)
{
	const pb_tune_shape *shape = &sp->shape;
	char key[128], cfg[256];
	pb_tune_shape_key(shape, key, sizeof key);
	pb_tune_space_config_str(sp, r->rl.best_idx, cfg, sizeof cfg);
	fprintf(f, "tune %s (%s)\n", key, what);
	fprintf(f, "space: %lld configurations, %lld legal; kernels: %s\n",
	        (long long)r->space_size, (long long)r->legal, pb_kernels_isa());
	fprintf(f, "best: %.2f GFLOP/s after %d measurements (%d from the log): %s\n",
	        r->rl.best_gflops, r->rl.measurements, r->resumed,
	        r->rl.best_gflops > 0 ? cfg : "no valid configuration");
	double flops = pb_tune_shape_flops(shape);
	if (shape->batch > 1) {
		char t1[32], t2[32];
		double one = flops / (r->rl.best_gflops * 1e9);
		fprintf(f, "node time: %s (%d x %s)\n",
		        pb_fmt_time_fixed(shape->batch * one, t1, sizeof t1), shape->batch,
		        pb_fmt_time_fixed(one, t2, sizeof t2));
	}
	if (isnan(r->model_accuracy))
		fprintf(f, "cost model: not used\n");
	else
		fprintf(f,
		        "cost model: %d fits (last %.3f s), accuracy %.0f%% on unseen samples; "
		        "%d policy updates\n",
		        r->model_fits, r->model_fit_seconds, 100 * r->model_accuracy,
		        r->policy_updates);
	if (r->transfer_rows > 0)
		fprintf(f,
		        "cost model warm start: %d measurements of %d other %s shapes in the log\n",
		        r->transfer_rows, r->transfer_shapes, pb_tune_op_name(shape->op));
	if (baselines) {
		fprintf(f, "random search:  %.2f GFLOP/s (%d measurements)\n",
		        r->random.best_gflops, r->random.measurements);
		fprintf(f, "annealing:      %.2f GFLOP/s (%d measurements)\n", r->sa.best_gflops,
		        r->sa.measurements);
		if (r->exhaustive.ran)
			fprintf(f, "exhaustive:     %.2f GFLOP/s (%d measurements)\n",
			        r->exhaustive.best_gflops, r->exhaustive.measurements);
		else
			fprintf(f, "exhaustive:     skipped (%lld legal > --exhaustive-max)\n",
			        (long long)r->legal);
		openblas_text(f, &r->openblas, r->rl.best_gflops, shape->op == PB_TUNE_CONV2D);
	}
	if (log_path)
		fprintf(f, "log: %s\n", log_path);
}
