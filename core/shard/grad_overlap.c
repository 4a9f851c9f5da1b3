/*
 * shard/grad_overlap.c — bucketed gradient all-reduce behind the backward
 * pass (grad_overlap.h).
 */
#include "shard/grad_overlap.h"

#include <math.h>

long pb_grad_overlap_buckets(double bytes, double bucket_bytes)
{
	if (!(bucket_bytes > 0) || !(bytes > bucket_bytes))
		return 1;
	double n = ceil(bytes / bucket_bytes);
	return n > 1e9 ? 1000000000L : (long)n;
}

double pb_grad_overlap_exposed(double G, double T, long n)
{
	if (!(G > 0))
		return 0;
	if (n <= 1 || !(T > 0))
		return G;
	double last = G / (double)n, rest = G - T * (double)(n - 1) / (double)n;
	return rest > last ? rest : last;
}

double pb_grad_overlap_backward_share(int recompute_full)
{
	return recompute_full ? 3.0 / 4.0 : 2.0 / 3.0;
}
