/*
 * partition/mesh/rl_place.c — the agent's placement actions and their REINFORCE
 * training (rl_place.h documents the actions, features and episodes).
 *
 * The donor check of a move depends on the core only, so the mask runs one
 * connectivity search per core (n per step), not one per action.
 */
#include "partition/mesh/rl_place.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "partition/mesh/mesh_place.h"
#include "partition/rl/rl_reinforce.h"

enum { RLP_DIR_F = 5, RLP_FEATURES = 6 + 4 * RLP_DIR_F + 2 };

/* The neighbour of core c in direction d (PB_MESH_E, W, S, N), -1 off the grid. */
static int neighbour(const pb_mesh_grid *g, int c, int d)
{
	int r = c / g->cols, k = c % g->cols;
	switch (d) {
	case PB_MESH_E:
		return k + 1 < g->cols ? c + 1 : -1;
	case PB_MESH_W:
		return k > 0 ? c - 1 : -1;
	case PB_MESH_S:
		return r + 1 < g->rows ? c + g->cols : -1;
	default:
		return r > 0 ? c - g->cols : -1;
	}
}

int pb_rl_place_n_actions(int n)
{
	return PB_RL_PLACE_TYPES * n;
}

int pb_rl_place_valid(const pb_mesh_grid *g, const int *owner, int k, int *seen, int *queue)
{
	int n = g->rows * g->cols;
	if (k < 0 || k >= pb_rl_place_n_actions(n))
		return 0;
	int type = k / n, c = k % n, nb = neighbour(g, c, type % 4);
	if (nb < 0 || owner[nb] == owner[c])
		return 0;
	return type >= 4 || pb_mesh_place_connected(g, owner, owner[c], c, seen, queue);
}

int pb_rl_place_apply(const pb_mesh_grid *g, int *owner, int k, int *seen, int *queue)
{
	if (!pb_rl_place_valid(g, owner, k, seen, queue))
		return 0;
	int n = g->rows * g->cols, type = k / n, c = k % n, nb = neighbour(g, c, type % 4);
	int p = owner[c], q = owner[nb];
	if (type < 4)
		owner[c] = q;
	else
		for (int i = 0; i < n; i++)
			owner[i] = owner[i] == p ? q : owner[i] == q ? p : owner[i];
	return 1;
}

int pb_rl_place_mask(const pb_mesh_grid *g, const int *owner, unsigned char *mask, int *seen,
                     int *queue)
{
	int n = g->rows * g->cols, cnt = 0;
	for (int c = 0; c < n; c++) {
		int border = 0;
		for (int d = 0; d < 4; d++) {
			int nb = neighbour(g, c, d);
			border |= nb >= 0 && owner[nb] != owner[c];
		}
		/* the donor check, once per core */
		int can_give =
		    border && pb_mesh_place_connected(g, owner, owner[c], c, seen, queue);
		for (int d = 0; d < 4; d++) {
			int nb = neighbour(g, c, d), other = nb >= 0 && owner[nb] != owner[c];
			mask[d * n + c] = (unsigned char)(other && can_give);
			mask[(4 + d) * n + c] = (unsigned char)other;
			cnt += mask[d * n + c] + mask[(4 + d) * n + c];
		}
	}
	return cnt;
}

void pb_rl_place_config_default(pb_rl_place_config *c)
{
	memset(c, 0, sizeof *c);
	c->episodes = 300;
	c->steps = 24;
	c->hidden = 32;
	c->lr = 3e-3;
	c->gamma = 0.95;
	c->entropy = 0.01;
	c->clip = 5.0;
	c->seed = 1;
}

pb_rl_policy *pb_rl_place_policy_new(int n, int hidden, unsigned long seed)
{
	return pb_rl_policy_new(RLP_FEATURES, hidden, PB_RL_PLACE_TYPES, n,
	                        (uint64_t)seed * 0x9e3779b97f4a7c15ULL + 7);
}

int pb_rl_place_save(const pb_rl_policy *p, int cores, long episodes, const char *path,
                     pb_error *err)
{
	return pb_rl_checkpoint_save(p, cores, episodes, path, err);
}

int pb_rl_place_load(const char *path, int cores, pb_rl_policy **out, long *episodes, pb_error *err)
{
	int rc =
	    pb_rl_checkpoint_load_net(path, cores, PB_RL_PLACE_TYPES, cores, out, episodes, err);
	if (!rc && (*out)->n_in != RLP_FEATURES) {
		int ni = (*out)->n_in;
		pb_rl_policy_free(*out);
		*out = NULL;
		return pb_err(err, PB_EINPUT,
		              "%s: a placement agent with %d inputs per core; this build's has %d",
		              path, ni, RLP_FEATURES);
	}
	return rc;
}

int pb_rl_place_default_agent(const char *layout_path, int cores, char *buf, int len)
{
	const char *slash = strrchr(layout_path, '/'), *base = slash ? slash + 1 : layout_path;
	const char *dot = strrchr(base, '.');
	int dir_len = (int)(base - layout_path),
	    stem_len = dot ? (int)(dot - base) : (int)strlen(base);
	int w = snprintf(buf, (size_t)len, "%.*s../agents/%.*s.place.ckpt", dir_len, layout_path,
	                 stem_len, base);
	struct stat st;
	if (w <= 0 || w >= len || stat(buf, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	/* a layout of the same name with another core count does not match */
	pb_rl_policy *pol = NULL;
	long ep;
	pb_error e = {0};
	if (pb_rl_place_load(buf, cores, &pol, &ep, &e) != PB_OK)
		return 0;
	pb_rl_policy_free(pol);
	return 1;
}

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cap(double v, double hi)
{
	return v < hi ? v : hi;
}

/* Policy inputs of placement owner (C->g and C->load from its evaluation
 * ev) at step t of `steps`. */
static void features(const pb_mesh_cost *C, const int *owner, const pb_mesh_eval *ev, double start,
                     int t, int steps, double *x)
{
	const pb_mesh_grid *g = &C->grid;
	int n = C->n;
	double tmax = ev->max_time > 0 ? ev->max_time : 1;
	double hot = ev->hot_load > 0 ? ev->hot_load : 1;
	double prog = start > 0 ? fmax(-1, cap(ev->objective / start - 1, 1)) : 0;
	for (int c = 0; c < n; c++) {
		double *f = x + (size_t)c * RLP_FEATURES;
		const pb_mesh_gtime *gt = &C->g[owner[c]];
		f[0] = gt->time / tmax;
		f[1] = owner[c] == ev->bottleneck;
		f[2] = cap(gt->cores / 8.0, 2);
		f[3] = gt->time > 0 ? gt->link_time / gt->time : 0;
		f[4] = g->rows > 1 ? (double)(c / g->cols) / (g->rows - 1) : 0;
		f[5] = g->cols > 1 ? (double)(c % g->cols) / (g->cols - 1) : 0;
		for (int d = 0; d < 4; d++) {
			double *fd = f + 6 + d * RLP_DIR_F;
			int nb = neighbour(g, c, d);
			fd[0] = nb >= 0;
			fd[1] = nb >= 0 && owner[nb] != owner[c];
			fd[2] = nb >= 0 ? C->g[owner[nb]].time / tmax : 0;
			fd[3] = nb >= 0 && owner[nb] == ev->bottleneck;
			fd[4] = nb >= 0 ? C->load[c * 4 + d] / hot : 0;
		}
		f[6 + 4 * RLP_DIR_F] = prog;
		f[7 + 4 * RLP_DIR_F] = (double)t / steps;
	}
}

typedef struct rlp_buf {
	double *xs, *hs, *probs, *rews, *ret, *adv, *base, *grad, *scratch;
	unsigned char *masks, *base_set;
	int *acts, *cur, *best, *seen, *queue;
} rlp_buf;

static void buf_free(rlp_buf *b)
{
	free(b->xs), free(b->hs), free(b->probs), free(b->rews), free(b->ret), free(b->adv);
	free(b->base), free(b->grad), free(b->scratch), free(b->masks), free(b->base_set);
	free(b->acts), free(b->cur), free(b->best), free(b->seen), free(b->queue);
}

static int buf_alloc(rlp_buf *b, const pb_rl_policy *pol, int n, int L)
{
	size_t na = (size_t)pol->n_out, L1 = (size_t)L;
	memset(b, 0, sizeof *b);
	b->xs = malloc(L1 * (size_t)n * RLP_FEATURES * sizeof *b->xs);
	b->hs = malloc(L1 * (size_t)n * (size_t)pol->n_hidden * sizeof *b->hs);
	b->probs = malloc(L1 * na * sizeof *b->probs);
	b->rews = calloc(L1, sizeof *b->rews);
	b->ret = calloc(L1, sizeof *b->ret);
	b->adv = calloc(L1, sizeof *b->adv);
	b->base = calloc(L1, sizeof *b->base);
	b->grad = calloc((size_t)pol->n_params, sizeof *b->grad);
	b->scratch = malloc((size_t)n * (size_t)pol->n_hidden * sizeof *b->scratch);
	b->masks = malloc(L1 * na);
	b->base_set = calloc(L1, 1);
	b->acts = malloc(L1 * sizeof *b->acts);
	b->cur = malloc((size_t)n * sizeof *b->cur);
	b->best = malloc((size_t)n * sizeof *b->best);
	b->seen = malloc((size_t)n * sizeof *b->seen);
	b->queue = malloc((size_t)n * sizeof *b->queue);
	return b->xs && b->hs && b->probs && b->rews && b->ret && b->adv && b->base && b->grad &&
	       b->scratch && b->masks && b->base_set && b->acts && b->cur && b->best && b->seen &&
	       b->queue;
}

/* Samples an action from prob (masked entries are 0). */
static int sample(const double *prob, int na, uint64_t *rng)
{
	double u = pb_rl_uniform(rng), acc = 0;
	int last = -1;
	for (int k = 0; k < na; k++) {
		if (prob[k] <= 0)
			continue;
		last = k;
		acc += prob[k];
		if (u < acc)
			return k;
	}
	return last;
}

/* One episode from b->cur: acts, records, keeps the best; returns its steps. */
static int rollout(pb_mesh_cost *C, const pb_rl_policy *pol, const pb_rl_place_config *cfg,
                   rlp_buf *b, pb_mesh_eval *best_ev, double start, uint64_t *rng,
                   pb_rl_place_stats *st, int *improved)
{
	int n = C->n, na = pol->n_out, L = cfg->steps, t = 0;
	pb_mesh_eval ev;
	pb_mesh_cost_eval(C, b->cur, &ev);
	st->evals++;
	for (; t < L; t++) {
		double *x = b->xs + (size_t)t * n * RLP_FEATURES;
		unsigned char *m = b->masks + (size_t)t * na;
		if (!pb_rl_place_mask(&C->grid, b->cur, m, b->seen, b->queue))
			break; /* one group: nothing to place */
		features(C, b->cur, &ev, start, t, L, x);
		double *pr = b->probs + (size_t)t * na;
		pb_rl_policy_forward(pol, x, m, b->hs + (size_t)t * n * pol->n_hidden, pr);
		int a = sample(pr, na, rng);
		b->acts[t] = a;
		double before = ev.objective;
		pb_rl_place_apply(&C->grid, b->cur, a, b->seen, b->queue);
		pb_mesh_cost_eval(C, b->cur, &ev);
		st->evals++;
		b->rews[t] = start > 0 ? (before - ev.objective) / start : 0;
		if (pb_mesh_cost_better(&ev, best_ev)) {
			*best_ev = ev;
			memcpy(b->best, b->cur, (size_t)n * sizeof *b->cur);
			*improved = 1;
		}
	}
	return t;
}

/* REINFORCE update from the episode's T steps. */
static void update(const pb_rl_policy *pol, pb_rl_adam *adam, const pb_rl_place_config *cfg,
                   rlp_buf *b, int T, int n)
{
	if (T == 0)
		return;
	double g = 0, mean = 0, var = 0;
	for (int t = T - 1; t >= 0; t--)
		b->ret[t] = g = b->rews[t] + cfg->gamma * g;
	for (int t = 0; t < T; t++) {
		if (!b->base_set[t])
			b->base[t] = b->ret[t], b->base_set[t] = 1;
		b->adv[t] = b->ret[t] - b->base[t];
		b->base[t] = 0.9 * b->base[t] + 0.1 * b->ret[t];
		mean += b->adv[t];
	}
	mean /= T;
	for (int t = 0; t < T; t++)
		var += (b->adv[t] - mean) * (b->adv[t] - mean);
	double sd = sqrt(var / T) + 1e-8;
	memset(b->grad, 0, (size_t)pol->n_params * sizeof *b->grad);
	int na = pol->n_out;
	for (int t = 0; t < T; t++)
		pb_rl_policy_backward(
		    pol, b->xs + (size_t)t * n * RLP_FEATURES, b->masks + (size_t)t * na,
		    b->hs + (size_t)t * n * pol->n_hidden, b->probs + (size_t)t * na, b->acts[t],
		    (b->adv[t] - mean) / sd / T, cfg->entropy / T, b->grad, b->scratch);
	pb_rl_adam_step(adam, pol->w, b->grad);
}

int pb_rl_place_train(pb_mesh_cost *C, pb_rl_policy *pol, const pb_rl_place_config *cfg, int *owner,
                      pb_mesh_eval *ev, pb_rl_place_stats *st, pb_error *err)
{
	memset(st, 0, sizeof *st);
	st->beat_episode = -1;
	int n = C->n, L = cfg->steps > 0 ? cfg->steps : 24;
	pb_rl_place_config c = *cfg;
	c.steps = L;
	if (pol->n_pos != n || pol->n_types != PB_RL_PLACE_TYPES || pol->n_in != RLP_FEATURES)
		return pb_err(err, PB_EUSAGE,
		              "placement agent: a network for %d positions, the mesh has %d cores",
		              pol->n_pos, n);
	rlp_buf b;
	pb_rl_adam adam;
	memset(&adam, 0, sizeof adam);
	if (!buf_alloc(&b, pol, n, L) || pb_rl_adam_init(&adam, pol->n_params, c.lr, c.clip)) {
		buf_free(&b);
		pb_rl_adam_free(&adam);
		return pb_err(err, PB_ENOMEM, "placement agent: out of memory");
	}
	double t0 = thread_cpu();
	uint64_t rng = (uint64_t)c.seed * 0x2545f4914f6cdd1dULL + 1;
	pb_mesh_cost_eval(C, owner, ev);
	st->evals = 1;
	st->start = ev->objective;
	memcpy(b.best, owner, (size_t)n * sizeof *owner);
	while ((c.episodes <= 0 || st->episodes < c.episodes) &&
	       (c.seconds <= 0 || thread_cpu() - t0 < c.seconds) &&
	       (c.episodes > 0 || c.seconds > 0) && !pb_mesh_cost_stop(C)) {
		/* half of the episodes start from the best placement so far */
		memcpy(b.cur, pb_rl_uniform(&rng) < 0.5 ? b.best : owner,
		       (size_t)n * sizeof *owner);
		int improved = 0;
		int T = rollout(C, pol, &c, &b, ev, st->start, &rng, st, &improved);
		update(pol, &adam, &c, &b, T, n);
		st->episodes++;
		st->steps += T;
		if (improved && st->beat_episode < 0 && ev->objective < st->start)
			st->beat_episode = st->episodes;
	}
	st->stopped = C->stopped;
	memcpy(owner, b.best, (size_t)n * sizeof *owner);
	pb_mesh_cost_eval(C, owner, ev); /* C->g and loads of the kept placement */
	st->best = ev->objective;
	st->seconds = thread_cpu() - t0;
	pb_rl_adam_free(&adam);
	buf_free(&b);
	return PB_OK;
}

int pb_rl_place_train_many(pb_mesh_cost **C, int n_problems, pb_rl_policy *pol,
                           const pb_rl_place_config *cfg, int chunk, pb_rl_place_stats *st,
                           pb_error *err)
{
	double t0 = thread_cpu();
	long done = 0;
	int n = pol->n_pos, rc = PB_OK;
	int *own = malloc((size_t)n * sizeof *own);
	if (!own)
		return pb_err(err, PB_ENOMEM, "placement agent: out of memory");
	memset(st, 0, (size_t)n_problems * sizeof *st);
	for (long round = 0; rc == PB_OK; round++) {
		if ((cfg->episodes > 0 && done >= cfg->episodes) ||
		    (cfg->seconds > 0 && thread_cpu() - t0 >= cfg->seconds))
			break;
		for (int k = 0; k < n_problems && rc == PB_OK; k++) {
			pb_rl_place_config c = *cfg;
			c.episodes = chunk;
			c.seconds = 0;
			c.seed = cfg->seed + (unsigned long)(round * n_problems + k);
			pb_mesh_place_snake(C[k]->n_groups, C[k]->gsize, C[k]->order, own);
			pb_mesh_eval ev;
			long before = st[k].episodes;
			rc = pb_rl_place_train(C[k], pol, &c, own, &ev, &st[k], err);
			st[k].episodes += before;
		}
		done += chunk;
	}
	free(own);
	return rc;
}
