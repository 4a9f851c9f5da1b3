/*
 * policy.h — the policy network of the REINFORCE agent: an MLP with one
 * tanh hidden layer and a softmax over the 4(n-1) actions, with forward and
 * backward passes written here (no BLAS needed at these sizes).
 *
 * Parameters are one flat array: W1[hidden][in], b1[hidden], W2[out][hidden],
 * b2[out]. Invalid actions are masked out of the softmax (probability 0).
 *
 * Loss of one sample (state x, action a, advantage A, entropy weight beta):
 *   L = -A * log p_a - beta * H(p),   H(p) = -sum_j p_j log p_j
 *   dL/dz_j = -A * (1[j = a] - p_j) + beta * p_j * (log p_j + H)
 */
#ifndef PB_RL_POLICY_H
#define PB_RL_POLICY_H

#include <stdint.h>

typedef struct pb_rl_policy {
	int n_in, n_hidden, n_out;
	int n_params;
	double *w; /* n_params */
} pb_rl_policy;

/* Allocates and initialises with scaled uniform weights from the seed. */
pb_rl_policy *pb_rl_policy_new(int n_in, int n_hidden, int n_out, uint64_t seed);
void pb_rl_policy_free(pb_rl_policy *p);

/* Forward: h (n_hidden) and probabilities prob (n_out) for input x. mask may
 * be NULL (all valid); at least one action must be valid. */
void pb_rl_policy_forward(const pb_rl_policy *p, const double *x, const unsigned char *mask,
                          double *h, double *prob);
/* Adds the gradient of one sample's loss to grad (n_params) and returns the
 * loss. h and prob must come from pb_rl_policy_forward on the same x, mask. */
double pb_rl_policy_backward(const pb_rl_policy *p, const double *x, const unsigned char *mask,
                             const double *h, const double *prob, int action, double advantage,
                             double beta, double *grad);

/* Adam with global-norm gradient clipping (clip <= 0: no clipping). */
typedef struct pb_rl_adam {
	double lr, beta1, beta2, eps, clip;
	double *m, *v;
	long t;
	int n;
} pb_rl_adam;

int pb_rl_adam_init(pb_rl_adam *a, int n, double lr, double clip);
/* Scales grad to the clip norm if larger, updates w; returns the norm before clipping. */
double pb_rl_adam_step(pb_rl_adam *a, double *w, double *grad);
void pb_rl_adam_free(pb_rl_adam *a);

/* Deterministic random numbers (splitmix64). */
uint64_t pb_rl_rand(uint64_t *state);
double pb_rl_uniform(uint64_t *state); /* [0, 1) */

#endif
