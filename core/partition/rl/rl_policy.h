/*
 * partition/rl/rl_policy.h — the policy network of the REINFORCE agent: a position-shared
 * MLP with one softsign hidden layer (s / (1 + |s|): tanh-like, without
 * the exponentials that dominated the step time) and a softmax over all actions, with
 * forward and backward passes written here (no BLAS needed at these sizes).
 *
 * The network scores n_pos positions (the adjacent core pairs) with the same
 * weights: position p has its own input vector x_p (n_in features of the
 * cores around the pair, policy inputs are laid out position-major,
 * x[p * n_in + i]), hidden units h_p = softsign(W1 x_p + b1), and n_types logits
 * z[k * n_pos + p] = W2[k] . h_p + b2[k] — action k * n_pos + p, which is
 * exactly the environment's numbering type * (n-1) + pair (env.h). One
 * softmax runs over all n_types * n_pos logits. With n_pos = 1 this is an
 * ordinary MLP with n_types outputs. Sharing the weights makes what is
 * learnt at one pair apply at every pair, and keeps the network small on
 * 64 cores.
 *
 * Parameters are one flat array: W1[hidden][in], b1[hidden],
 * W2[types][hidden], b2[types]. Invalid actions are masked out of the
 * softmax (probability 0).
 *
 * Loss of one sample (state x, action a, advantage A, entropy weight beta):
 *   L = -A * log p_a - beta * H(p),   H(p) = -sum_j p_j log p_j
 *   dL/dz_j = -A * (1[j = a] - p_j) + beta * p_j * (log p_j + H)
 */
#ifndef PB_RL_POLICY_H
#define PB_RL_POLICY_H

#include <stdint.h>

typedef struct pb_rl_policy {
	int n_in;     /* features per position */
	int n_hidden; /* hidden units (shared by all positions) */
	int n_types;  /* logits per position */
	int n_pos;    /* positions */
	int n_out;    /* n_types * n_pos actions */
	int n_params;
	double *w; /* n_params */
} pb_rl_policy;

/* Allocates and initialises with scaled uniform weights from the seed. */
pb_rl_policy *pb_rl_policy_new(int n_in, int n_hidden, int n_types, int n_pos, uint64_t seed);
void pb_rl_policy_free(pb_rl_policy *p);
/* Parameter count of such a network. */
long pb_rl_policy_param_count(int n_in, int n_hidden, int n_types);

/* Forward: h (n_pos * n_hidden) and probabilities prob (n_out) for input x
 * (n_pos * n_in). mask may be NULL (all valid); at least one action must
 * be valid. */
void pb_rl_policy_forward(const pb_rl_policy *p, const double *x, const unsigned char *mask,
                          double *h, double *prob);
/* Adds the gradient of one sample's loss to grad (n_params) and returns the
 * loss. h and prob must come from pb_rl_policy_forward on the same x, mask.
 * scratch holds n_pos * n_hidden doubles. */
double pb_rl_policy_backward(const pb_rl_policy *p, const double *x, const unsigned char *mask,
                             const double *h, const double *prob, int action, double advantage,
                             double beta, double *grad, double *scratch);

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
