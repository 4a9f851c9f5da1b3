/*
 * partition/rl/rl_checkpoint.c — saving and loading the agent's network (rl_reinforce.h).
 *
 * Format (all integers and doubles little-endian; docs/partition.md):
 *   8 bytes  magic "PBRLAGNT"
 *   u32      format version (3)
 *   u32      cores the agent was trained for
 *   u32 x 3  inputs per core pair, hidden units, logits per pair (= 4; a
 *            placement agent, rl_place.h: inputs per core, 8 per core)
 *   u64      episodes trained
 *   u32      parameter count P
 *   f64 x P  parameters (W1, b1, W2, b2; policy.h: the network is shared by
 *            the cores - 1 pairs)
 *   u32      CRC-32 (IEEE 802.3 polynomial) of every byte before it
 * Version 1 (a dense network over all cores, before the shared one) and
 * version 2 (whose network took the gap to the exact optimum as an input)
 * are refused with a message saying so; so are parameters that are not
 * finite or beyond +-CKPT_MAX_WEIGHT, and an episode counter beyond
 * CKPT_MAX_EPISODES (with a valid checksum it overflowed the trainer's count).
 * Written to FILE.tmp and renamed, so a crash never leaves half a file.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/atomic_file.h"
#include "util/file_door.h"
#include "partition/rl/rl_policy.h"
#include "partition/rl/rl_reinforce.h"

#define CKPT_MAGIC "PBRLAGNT"
#define CKPT_VERSION 3u
/* More episodes than any run trains (2^40: 35 years at 1000 per second);
 * the trainer adds to the counter it loads. */
#define CKPT_MAX_EPISODES ((uint64_t)1 << 40)
/* Trained weights stay far below this; a NaN, an infinity or a weight this
 * large (a corrupt file with a valid checksum, a diverged run) would make
 * the policy's probabilities NaN, so such a file is refused. */
#define CKPT_MAX_WEIGHT 1e6

static uint32_t crc32_bytes(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return ~c;
}

static void put_u32(unsigned char *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *b)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)b[i] << (8 * i);
	return v;
}

static uint64_t get_u64(const unsigned char *b)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

enum { HEADER = 8 + 4 * 5 + 8 + 4 };

int pb_rl_checkpoint_save(const pb_rl_policy *p, int cores, long episodes, const char *path,
                          pb_error *err)
{
	size_t len = HEADER + (size_t)p->n_params * 8 + 4;
	unsigned char *b = malloc(len);
	if (!b)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", path);
	memcpy(b, CKPT_MAGIC, 8);
	put_u32(b + 8, CKPT_VERSION);
	put_u32(b + 12, (uint32_t)cores);
	put_u32(b + 16, (uint32_t)p->n_in);
	put_u32(b + 20, (uint32_t)p->n_hidden);
	put_u32(b + 24, (uint32_t)p->n_types);
	put_u64(b + 28, (uint64_t)episodes);
	put_u32(b + 36, (uint32_t)p->n_params);
	for (int i = 0; i < p->n_params; i++) {
		uint64_t bits;
		memcpy(&bits, &p->w[i], 8);
		put_u64(b + HEADER + 8 * (size_t)i, bits);
	}
	put_u32(b + len - 4, crc32_bytes(b, len - 4));
	int rc = pb_write_file_atomic(path, (const char *)b, len, err);
	free(b);
	return rc;
}

int pb_rl_checkpoint_load(const char *path, int cores, pb_rl_policy **out, long *episodes,
                          pb_error *err)
{
	return pb_rl_checkpoint_load_net(path, cores, 4, cores - 1, out, episodes, err);
}

int pb_rl_checkpoint_load_net(const char *path, int cores, int types, int n_pos, pb_rl_policy **out,
                              long *episodes, pb_error *err)
{
	*out = NULL;
	FILE *f = pb_door_fopen_read(path, PB_DOOR_DATA, "agent checkpoint", err);
	if (!f)
		return err ? err->code : PB_EINPUT;
	unsigned char *b = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			if (cap > ((size_t)1 << 31)) {
				free(b);
				fclose(f);
				return pb_err(err, PB_EINPUT,
				              "%s: too large for an agent checkpoint", path);
			}
			unsigned char *nb = realloc(b, cap);
			if (!nb) {
				free(b);
				fclose(f);
				return pb_err(err, PB_ENOMEM, "%s: out of memory", path);
			}
			b = nb;
		}
		size_t r = fread(b + len, 1, cap - len, f);
		len += r;
		if (r == 0)
			break;
	}
	fclose(f);
	int rc = PB_OK;
	if (len < HEADER + 4 || memcmp(b, CKPT_MAGIC, 8) != 0) {
		rc = pb_err(err, PB_EINPUT, "%s: not a partbench agent checkpoint (bad magic)",
		            path);
	} else if (get_u32(b + 8) == 1u) {
		rc = pb_err(err, PB_EINPUT,
		            "%s: checkpoint format version 1 holds the dense network of earlier "
		            "partbench versions; this build's agent shares one network across "
		            "core pairs (version %u): train a new one with 'partbench train'",
		            path, CKPT_VERSION);
	} else if (get_u32(b + 8) == 2u) {
		rc = pb_err(err, PB_EINPUT,
		            "%s: checkpoint format version 2 holds an agent that read the exact "
		            "optimum as an input; this build's agent is blind to it (version %u): "
		            "train a new one with 'partbench train'",
		            path, CKPT_VERSION);
	} else if (get_u32(b + 8) != CKPT_VERSION) {
		rc = pb_err(err, PB_EINPUT, "%s: checkpoint format version %u, this build reads %u",
		            path, get_u32(b + 8), CKPT_VERSION);
	} else {
		uint32_t np = get_u32(b + 36);
		if (len != HEADER + (size_t)np * 8 + 4)
			rc = pb_err(err, PB_EINPUT,
			            "%s: truncated or padded checkpoint (%zu bytes)", path, len);
		else if (crc32_bytes(b, len - 4) != get_u32(b + len - 4))
			rc = pb_err(err, PB_EINPUT, "%s: checksum mismatch: the file is corrupted",
			            path);
		else if ((int)get_u32(b + 12) != cores)
			rc = pb_err(
			    err, PB_EINPUT,
			    "%s: this agent was trained for %u cores, the layout has %d; train "
			    "one for this layout with 'partbench train'",
			    path, get_u32(b + 12), cores);
		else {
			int ni = (int)get_u32(b + 16), nh = (int)get_u32(b + 20),
			    nt = (int)get_u32(b + 24);
			if (nt != types && (nt == 4 || nt == 8)) {
				rc = pb_err(
				    err, PB_EINPUT,
				    "%s: a %s agent (%d logits per position), not a %s agent", path,
				    nt == 4 ? "partition" : "placement", nt,
				    types == 4 ? "partition" : "placement");
			} else if (ni <= 0 || nh <= 0 || nt != types || ni > 1 << 16 ||
			           nh > 1 << 16 || cores < 2 ||
			           pb_rl_policy_param_count(ni, nh, nt) != (long)np) {
				rc = pb_err(err, PB_EINPUT, "%s: inconsistent network sizes", path);
			} else {
				pb_rl_policy *p = pb_rl_policy_new(ni, nh, nt, n_pos, 0);
				if (!p) {
					rc = pb_err(err, PB_ENOMEM, "%s: out of memory", path);
				} else {
					uint32_t bad = np;
					for (uint32_t i = 0; i < np; i++) {
						uint64_t bits = get_u64(b + HEADER + 8 * (size_t)i);
						memcpy(&p->w[i], &bits, 8);
						if (bad == np &&
						    !(fabs(p->w[i]) <= CKPT_MAX_WEIGHT))
							bad = i;
					}
					if (bad < np) {
						rc = pb_err(err, PB_EINPUT,
						            "%s: parameter %u is %g (beyond +-%g): "
						            "not a trained network",
						            path, bad, p->w[bad], CKPT_MAX_WEIGHT);
						pb_rl_policy_free(p);
					} else if (get_u64(b + 28) > CKPT_MAX_EPISODES) {
						/* counted on from here: near 2^63 it
						 * overflows (a negative counter saved) */
						rc = pb_err(err, PB_EINPUT,
						            "%s: episode counter %llu is beyond "
						            "2^40: not a trained agent",
						            path,
						            (unsigned long long)get_u64(b + 28));
						pb_rl_policy_free(p);
					} else {
						*episodes = (long)get_u64(b + 28);
						*out = p;
					}
				}
			}
		}
	}
	free(b);
	return rc;
}
