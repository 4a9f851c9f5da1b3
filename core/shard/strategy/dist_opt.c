/*
 * shard/strategy/dist_opt.c — the distributed optimizer's memory (dist_opt.h).
 *
 * The state a parameter shard would hold unsharded is its local bytes times
 * the optimizer's state bytes per weight byte (Adam: 8 bytes of moments plus
 * a 4-byte master copy when the weights are narrower than fp32, per weight
 * of e bytes); sharded, that over r, the product of the mesh axes along
 * which the strategy replicates the shard (its data-parallel replicas), as
 * pb_strategy_problem_train_param_factor counts it.
 */
#include "shard/strategy/dist_opt.h"

#include <string.h>

#include "shard/spec.h"

const char *const pb_dist_opt_names[3] = {"off", "on", "auto"};

int pb_dist_opt_parse(const char *s, int *mode, pb_error *err)
{
	for (int k = 0; k < 3; k++)
		if (s && !strcmp(s, pb_dist_opt_names[k])) {
			*mode = k;
			return PB_OK;
		}
	return pb_err(err, PB_EUSAGE, "shard: --dist-opt must be on, off or auto, got '%s'",
	              s ? s : "");
}

double pb_dist_opt_saved(const pb_shard_problem *p, const int *choice)
{
	const pb_graph *g = p->g;
	const pb_mesh *m = &p->mesh;
	double saved = 0;
	if (!p->opts.train || p->opts.zero < 1 || p->opts.optimizer != PB_OPTIM_ADAM)
		return 0;
	for (int c = 0; c < g->n_nodes; c++) {
		int k = pb_strategy_problem_node_strategy(p, choice, c);
		if (k < 0)
			continue;
		const pb_strat *st = &p->nodes[c].strat[k];
		const pb_node *n = &g->nodes[c];
		for (int i = 0; i < n->n_inputs && i < PB_SHARD_MAX_IN; i++) {
			int t = n->inputs[i];
			if (!pb_strategy_problem_trainable(p, t) ||
			    (p->param_owner && p->param_owner[t] != c))
				continue;
			const pb_tensor *tt = &g->tensors[t];
			double local = pb_tensor_bytes(tt) * pb_spec_pad_factor(tt, st->in[i], m) /
			               pb_spec_shrink(st->in[i], m);
			double reps = 1;
			for (int a = 0; a < m->n_axes; a++)
				if (st->in[i][a] == PB_SPEC_R)
					reps *= m->size[a];
			int e = pb_dtype_size(tt->dtype);
			double state = local * (8.0 + (e < 4 ? 4.0 : 0.0)) / (e > 0 ? e : 4);
			saved += state - state / reps;
		}
	}
	return saved;
}
