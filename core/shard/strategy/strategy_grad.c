/*
 * shard/strategy/strategy_grad.c — the gradient all-reduces of a strategy
 * choice in training (strategy_grad.h): per parameter input replicated along
 * a mesh axis, an all-reduce of its shard over that axis (pb_spec_coll_time),
 * counted once per parameter (by its first consumer, param_owner).
 */
#include "shard/strategy/strategy_grad.h"

#include "shard/spec.h"
#include "shard/strategy/strategy_problem.h"

double pb_strategy_grad_collectives(const pb_shard_problem *p, const pb_strat *st, int c,
                                    json_t *arr, int owner_only)
{
	const pb_graph *g = p->g;
	const pb_node *n = &g->nodes[c];
	double total = 0;
	for (int i = 0; i < n->n_inputs && i < PB_SHARD_MAX_IN; i++) {
		int t = n->inputs[i];
		if (!pb_strategy_problem_trainable(p, t) ||
		    (owner_only && p->param_owner && p->param_owner[t] != c))
			continue;
		double by = pb_tensor_bytes(&g->tensors[t]) *
		            pb_spec_pad_factor(&g->tensors[t], st->in[i], &p->mesh);
		for (int a = 0; a < p->mesh.n_axes; a++) {
			if (st->in[i][a] != PB_SPEC_R)
				continue;
			double b = by;
			for (int k = 0; k < p->mesh.n_axes; k++)
				if (k != a && st->in[i][k] >= 0)
					b /= p->mesh.size[k];
			int kinds[2], nk = 0;
			double times[2];
			total += pb_strategy_problem_grad_sync(&p->opts, b, p->mesh.size[a],
			                                       &p->mesh.link[a], kinds, times, &nk);
			for (int k = 0; k < nk && arr; k++) {
				json_t *o = json_object();
				json_object_set_new(o, "tensor", json_string(g->tensors[t].name));
				json_object_set_new(o, "from", json_string(n->name));
				json_object_set_new(o, "to", json_string("(gradient)"));
				json_object_set_new(o, "kind",
				                    json_string(pb_spec_coll_name(kinds[k])));
				json_object_set_new(o, "axis", json_integer(a));
				json_object_set_new(o, "bytes", json_real(b));
				json_object_set_new(o, "time", json_real(times[k]));
				json_array_append_new(arr, o);
			}
		}
	}
	return total;
}

double pb_strategy_grad_time(const pb_shard_problem *p, const int *choice)
{
	double total = 0;
	if (!p->opts.train)
		return 0;
	for (int v = 0; v < p->g->n_nodes; v++) {
		int k = pb_strategy_problem_node_strategy(p, choice, v);
		if (k >= 0)
			total += pb_strategy_grad_collectives(p, &p->nodes[v].strat[k], v, NULL, 1);
	}
	return total;
}

double pb_strategy_grad_bytes(const pb_shard_problem *p, const int *choice)
{
	const pb_graph *g = p->g;
	double total = 0;
	for (int c = 0; p->opts.train && c < g->n_nodes; c++) {
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
			double b = pb_tensor_bytes(&g->tensors[t]) *
			           pb_spec_pad_factor(&g->tensors[t], st->in[i], &p->mesh);
			int repl = 0;
			for (int a = 0; a < p->mesh.n_axes; a++) {
				if (st->in[i][a] == PB_SPEC_R)
					repl = 1;
				else if (st->in[i][a] >= 0)
					b /= p->mesh.size[a];
			}
			if (repl)
				total += b;
		}
	}
	return total;
}

double pb_strategy_grad_node(const pb_shard_problem *p, int v, int k)
{
	return p->opts.train ? pb_strategy_grad_collectives(p, &p->nodes[v].strat[k], v, NULL, 1)
	                     : 0;
}

double pb_strategy_grad_max(const pb_shard_problem *p)
{
	double total = 0;
	for (int v = 0; p->opts.train && v < p->g->n_nodes; v++) {
		double worst = 0;
		for (int k = 0;
		     p->nodes[v].active && p->nodes[v].group >= 0 && k < p->nodes[v].n_strat; k++) {
			double t =
			    pb_strategy_grad_collectives(p, &p->nodes[v].strat[k], v, NULL, 1);
			worst = t > worst ? t : worst;
		}
		total += worst;
	}
	return total;
}
