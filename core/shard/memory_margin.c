/*
 * shard/memory_margin.c — the memory headroom of a plan (memory_margin.h).
 */
#include "shard/memory_margin.h"

#include <math.h>

#include "util/fmt.h"

void pb_memory_margin_json(json_t *o, const pb_cluster *cl, double used)
{
	json_object_set_new(o, "memory_device", json_real(cl->memory_device));
	json_object_set_new(o, "memory_usable", json_real(cl->memory_usable));
	json_object_set_new(o, "memory_margin", json_real(cl->memory - used));
}

void pb_memory_margin_text(FILE *f, const pb_cluster *cl, double used)
{
	char lim[32], dev[32], mar[32];
	double m = cl->memory - used;
	pb_fmt_bytes(cl->memory, lim, sizeof lim);
	pb_fmt_bytes(cl->memory_device, dev, sizeof dev);
	pb_fmt_bytes(fabs(m), mar, sizeof mar);
	fprintf(f, "memory limit: %s = %.0f%% of %s per device (device_memory_usable); %s %s\n",
	        lim, cl->memory_usable * 100, dev, m >= 0 ? "margin" : "over it by", mar);
}
