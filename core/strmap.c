/*
 * strmap.c — string → int hash map with linear probing.
 * The table is kept at most half full, so probes stay short. Keys are hashed
 * eight bytes at a time (multiply-xorshift mixing): model tensor names are
 * long ("/features/features.1/.../Constant_output_0") and a byte-wise hash
 * was the largest single cost of loading a 6.6k-node ONNX graph.
 */
#include "strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pb_strmap {
	char **keys;
	int *vals;
	size_t cap, count;
};

static uint64_t hash_str(const char *s)
{
	size_t n = strlen(s);
	uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n, w;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 29);
}

pb_strmap *pb_strmap_new(size_t hint)
{
	pb_strmap *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->cap = 16;
	while (m->cap < hint * 2)
		m->cap *= 2;
	m->keys = calloc(m->cap, sizeof *m->keys);
	m->vals = calloc(m->cap, sizeof *m->vals);
	if (!m->keys || !m->vals) {
		pb_strmap_free(m);
		return NULL;
	}
	return m;
}

void pb_strmap_free(pb_strmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; m->keys && i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	free(m);
}

static size_t find_slot(char **keys, size_t cap, const char *key)
{
	size_t i = hash_str(key) & (cap - 1);
	while (keys[i] && strcmp(keys[i], key) != 0)
		i = (i + 1) & (cap - 1);
	return i;
}

static int grow(pb_strmap *m)
{
	size_t ncap = m->cap * 2;
	char **nk = calloc(ncap, sizeof *nk);
	int *nv = calloc(ncap, sizeof *nv);
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = find_slot(nk, ncap, m->keys[i]);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

int pb_strmap_put(pb_strmap *m, const char *key, int value)
{
	if ((m->count + 1) * 2 > m->cap && grow(m) != 0)
		return -1;
	size_t i = find_slot(m->keys, m->cap, key);
	if (!m->keys[i]) {
		m->keys[i] = strdup(key);
		if (!m->keys[i])
			return -1;
		m->count++;
	}
	m->vals[i] = value;
	return 0;
}

int pb_strmap_get(const pb_strmap *m, const char *key, int dflt)
{
	if (!m || !key)
		return dflt;
	size_t i = find_slot(m->keys, m->cap, key);
	return m->keys[i] ? m->vals[i] : dflt;
}

size_t pb_strmap_count(const pb_strmap *m)
{
	return m ? m->count : 0;
}
