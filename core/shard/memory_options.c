/*
 * shard/memory_options.c — the distributed optimizer and sequence
 * parallelism of a plan settled (memory_options.h).
 */
#include "shard/memory_options.h"

#include "util/fmt.h"

/* index into m: without sequence parallelism (bit 0), without the
 * distributed optimizer (bit 1) */
static int at(int dist_on, int seq_on)
{
	return (dist_on ? 0 : 2) + (seq_on ? 0 : 1);
}

double pb_memory_options_settle(pb_mem_opts *o, int dist_mode, int seq_mode, double limit)
{
	double lim = limit * (1 + 1e-9);
	/* modes: 0 off, 1 on, 2 auto */
	o->seq = seq_mode == 1 || (seq_mode == 2 && o->m[1] > o->m[0] && o->m[1] > lim);
	double with = o->m[at(1, o->seq)], without = o->m[at(0, o->seq)];
	o->dist = dist_mode == 1 || (dist_mode == 2 && without > with && without > lim);
	return o->m[at(o->dist, o->seq)];
}

void pb_memory_options_add(pb_mem_opts *o, double memory, double D, double S)
{
	double v[4] = {memory, memory + S, memory + D, memory + D + S};
	for (int k = 0; k < 4; k++)
		if (v[k] > o->m[k])
			o->m[k] = v[k];
}

void pb_memory_options_json(json_t *j, const pb_mem_opts *o)
{
	json_object_set_new(j, "dist_opt", json_boolean(o->dist));
	json_object_set_new(j, "memory_dist_opt_on", json_real(o->m[at(1, o->seq)]));
	json_object_set_new(j, "memory_dist_opt_off", json_real(o->m[at(0, o->seq)]));
	json_object_set_new(j, "seq_parallel", json_boolean(o->seq));
	json_object_set_new(j, "memory_seq_parallel_on", json_real(o->m[at(o->dist, 1)]));
	json_object_set_new(j, "memory_seq_parallel_off", json_real(o->m[at(o->dist, 0)]));
}

static void line(FILE *f, const char *what, int on, double with, double without)
{
	char a[32], b[32];
	if (!(without > with))
		return;
	pb_fmt_bytes(with, a, sizeof a);
	pb_fmt_bytes(without, b, sizeof b);
	fprintf(f, "%s: %s: %s per device with it, %s without\n", what,
	        on ? "on" : "off (fits without it)", a, b);
}

void pb_memory_options_text(FILE *f, const pb_mem_opts *o)
{
	line(f, "sequence parallelism", o->seq, o->m[at(o->dist, 1)], o->m[at(o->dist, 0)]);
	line(f, "distributed optimizer", o->dist, o->m[at(1, o->seq)], o->m[at(0, o->seq)]);
}
