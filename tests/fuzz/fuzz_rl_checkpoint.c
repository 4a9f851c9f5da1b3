/*
 * fuzz_rl_checkpoint.c — libFuzzer target for the RL agent checkpoint loader
 * (pb_rl_checkpoint_load, core/partition/rl/rl_checkpoint.c).
 *
 * The loader reads a path, so each input is written to a file under /tmp
 * (fuzz_target.h) and loaded twice: as it is, and with its last four bytes
 * replaced by the CRC-32 of the others, so that mutations get past the
 * checksum to the header and network checks. The core count asked for is the
 * one the header states when it is plausible (2..1024), else 16. A network
 * that loads is run forward once (every parameter is touched) and its
 * probabilities must be a distribution. Seeds: tests/fuzz/seeds/fuzz_rl_checkpoint/
 * (`partbench train ... -o x.ckpt` with a few episodes).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_target.h"
#include "partition/rl/rl_policy.h"
#include "partition/rl/rl_reinforce.h"

/* The checksum of the format (IEEE 802.3 polynomial, reflected). */
static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c & 1u) ? (c >> 1) ^ 0xedb88320u : c >> 1;
	}
	return ~c;
}

static void run_forward(const pb_rl_policy *p)
{
	size_t nx = (size_t)p->n_pos * (size_t)p->n_in, nh = (size_t)p->n_pos * (size_t)p->n_hidden;
	double *x = malloc((nx ? nx : 1) * sizeof *x), *h = malloc((nh ? nh : 1) * sizeof *h);
	double *prob = malloc((size_t)p->n_out * sizeof *prob);
	if (!x || !h || !prob)
		abort();
	for (size_t i = 0; i < nx; i++)
		x[i] = (double)(i % 7) / 7.0 - 0.3;
	pb_rl_policy_forward(p, x, NULL, h, prob);
	double sum = 0;
	for (int o = 0; o < p->n_out; o++) {
		if (!(prob[o] >= 0 && prob[o] <= 1))
			abort(); /* a loaded network gives probabilities */
		sum += prob[o];
	}
	if (fabs(sum - 1) > 1e-6)
		abort();
	free(x);
	free(h);
	free(prob);
}

static void load(const uint8_t *data, size_t size, int cores)
{
	char path[64];
	if (fuzz_tmp_write(data, size, path))
		return;
	pb_rl_policy *p = NULL;
	long episodes = 0;
	pb_error err = {0};
	int rc = pb_rl_checkpoint_load(path, cores, &p, &episodes, &err);
	unlink(path);
	if (rc != PB_OK) {
		if (p)
			abort(); /* nothing is returned on error */
		return;
	}
	if (p->n_pos != cores - 1 || p->n_types != 4 || p->n_in < 1 || p->n_hidden < 1 ||
	    p->n_params != (int)pb_rl_policy_param_count(p->n_in, p->n_hidden, p->n_types))
		abort();
	run_forward(p);
	pb_rl_policy_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int cores = 16;
	if (size >= 16) {
		uint32_t c = (uint32_t)data[12] | (uint32_t)data[13] << 8 |
		             (uint32_t)data[14] << 16 | (uint32_t)data[15] << 24;
		if (c >= 2 && c <= 1024)
			cores = (int)c;
	}
	load(data, size, cores);
	if (size >= 8) {
		uint8_t *fixed = malloc(size);
		if (!fixed)
			return 0;
		memcpy(fixed, data, size);
		uint32_t crc = crc32_ieee(fixed, size - 4);
		for (int i = 0; i < 4; i++)
			fixed[size - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
		load(fixed, size, cores);
		free(fixed);
	}
	return 0;
}
