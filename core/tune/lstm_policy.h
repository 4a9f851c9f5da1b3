/*
 * tune/lstm_policy.h — the LSTM policy network of the tuner (RLTune).
 *
 * One MDP step per tuning parameter: at step t the network reads the choice
 * made at step t-1 (a start token at t = 0) through an input fully connected
 * layer (tanh), updates one LSTM cell shared by all steps, and an output fully
 * connected layer gives the logits of parameter t's values, turned into a
 * distribution by a softmax over that parameter's values only. Forward and
 * backward (back-propagation through the n steps) are written here; weights
 * are trained by gradient ascent with Adam.
 */
#ifndef PB_TUNE_POLICY_H
#define PB_TUNE_POLICY_H

#include <stdint.h>

typedef struct pb_tune_policy pb_tune_policy;

/* sizes[t] = number of values of parameter t (n steps). NULL on OOM. */
pb_tune_policy *pb_tune_policy_new(const int *sizes, int n, int hidden, int embed, uint64_t seed);
void pb_tune_policy_free(pb_tune_policy *p);
int pb_tune_policy_n_weights(const pb_tune_policy *p);
double *pb_tune_policy_weights(pb_tune_policy *p);

/* Samples one action per step; logp (may be NULL) gets log pi(actions). */
void pb_tune_policy_sample(pb_tune_policy *p, uint64_t *rng, int *actions, double *logp);
/* log pi(actions); when grad != NULL adds scale * d log pi / d weights. */
double pb_tune_policy_logprob(pb_tune_policy *p, const int *actions, double scale, double *grad);
/* Probability of value v at step t after the given earlier actions. */
double pb_tune_policy_prob(pb_tune_policy *p, const int *actions, int t, int v);
/* Adam ascent step along grad (same layout as the weights). */
void pb_tune_policy_ascend(pb_tune_policy *p, const double *grad, double lr);

#endif
