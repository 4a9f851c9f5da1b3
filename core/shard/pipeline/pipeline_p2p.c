/*
 * shard/pipeline/pipeline_p2p.c — one pipeline boundary transfer with Megatron-LM's
 * scatter/gather (pipeline_p2p.h).
 */
#include "shard/pipeline/pipeline_p2p.h"

#include "shard/spec.h"

double pb_pipeline_p2p_gather(const pb_cluster *cl, int dp, int tp, double bytes, int train)
{
	if (tp <= 1 || bytes <= 0 || dp < 1)
		return 0;
	int dpn = cl->devices_per_node;
	/* a replica's tp devices are consecutive: one node when tp divides it */
	const pb_link *l = tp <= dpn && dpn % tp == 0 ? &cl->intra : &cl->inter;
	return pb_spec_coll_time(PB_COLL_ALLGATHER, bytes / dp, tp, l) * (train ? 2 : 1);
}

double pb_pipeline_p2p_step(int overlap, int m, int p, int V, double t, double P, double fwd,
                            double *exposed)
{
	if (V < 1)
		V = 1;
	double K = V == 1 ? (double)(m + p - 1) : m + (double)(p - 1) / V;
	double plain = K * (t + V * P), e_plain = K * V * P;
	if (exposed)
		*exposed = e_plain;
	if (!overlap || p < 2 || !(P > 0))
		return plain;
	double f = fwd * t / V, b = (1 - fwd) * t / V, h = P / 2;
	double e = (h > b ? h - b : 0) + (h > f ? h - f : 0);
	double e_ov = K * V * e + (p - 1) * P;
	if (e_ov >= e_plain)
		return plain;
	if (exposed)
		*exposed = e_ov;
	return K * t + e_ov;
}

double pb_pipeline_p2p_time(const pb_cluster *cl, int first_a, int first_b, int dp, int tp,
                            double bytes, int train)
{
	if (bytes <= 0)
		return 0;
	int d = dp * tp, dpn = cl->devices_per_node;
	const pb_link *l = first_a / dpn != first_b / dpn || d > dpn ? &cl->inter : &cl->intra;
	return l->latency + bytes / d / l->bw * (train ? 2 : 1) +
	       pb_pipeline_p2p_gather(cl, dp, tp, bytes, train);
}
