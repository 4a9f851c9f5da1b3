/*
 * strmap.c — string → int hash map with linear probing.
 * The table is kept at most half full, so probes stay short. Keys are hashed
 * eight bytes at a time (multiply-xorshift mixing): model tensor names are
 * long ("/features/features.1/.../Constant_output_0") and a byte-wise hash
 * was the largest single cost of loading a 6.6k-node ONNX graph.
 *
 * Each slot keeps a 32-bit hash of its key (0 marks an empty slot; a real
 * hash of 0 is stored as 1) next to the value and the key pointer, so a
 * probe reads one cache line and compares strings only when the hashes
 * agree. The key copies
 * live in a chain of large blocks owned by the map (no malloc per key), so
 * freeing a map of 10^4 names is a handful of free() calls.
 */
#include "util/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct key_block {
	struct key_block *next;
	size_t used, cap;
	char data[];
} key_block;

#define KEY_BLOCK (32 * 1024)

/* One 16-byte slot: a probe reads one cache line (the tables of a large
 * model do not fit in L2, so probes were cache misses on three arrays). */
typedef struct {
	uint32_t hash; /* 0 = empty slot */
	int val;
	const char *key;
} slot;

struct pb_strmap {
	slot *slots;
	size_t cap, count;
	key_block *blocks; /* head: the block being filled */
};

static uint32_t hash_str(const char *s, size_t *len)
{
	size_t n = strlen(s);
	*len = n;
	uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n, w;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	uint32_t r = (uint32_t)(h ^ (h >> 29) ^ (h >> 32));
	return r ? r : 1;
}

static int alloc_table(pb_strmap *m, size_t cap)
{
	m->slots = calloc(cap, sizeof *m->slots);
	m->cap = cap;
	return m->slots ? 0 : -1;
}

pb_strmap *pb_strmap_new(size_t hint)
{
	pb_strmap *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	/* A hint is usually an upper estimate: size for 1.5x it (the map still
	 * grows at half full). */
	size_t cap = 16;
	while (cap < hint + hint / 2)
		cap *= 2;
	if (alloc_table(m, cap) != 0) {
		free(m);
		return NULL;
	}
	return m;
}

void pb_strmap_free(pb_strmap *m)
{
	if (!m)
		return;
	while (m->blocks) {
		key_block *n = m->blocks->next;
		free(m->blocks);
		m->blocks = n;
	}
	free(m->slots);
	free(m);
}

/* A copy of key (n bytes plus the terminator) in the map's key blocks. */
static const char *store_key(pb_strmap *m, const char *key, size_t n)
{
	key_block *b = m->blocks;
	if (!b || b->cap - b->used < n + 1) {
		size_t cap = n + 1 > KEY_BLOCK ? n + 1 : KEY_BLOCK;
		key_block *nb = malloc(sizeof *nb + cap);
		if (!nb)
			return NULL;
		nb->used = 0;
		nb->cap = cap;
		/* A key larger than a block gets its own block behind the head. */
		if (b && cap > KEY_BLOCK) {
			nb->next = b->next;
			b->next = nb;
		} else {
			nb->next = b;
			m->blocks = nb;
		}
		b = nb;
	}
	char *p = b->data + b->used;
	memcpy(p, key, n + 1);
	b->used += n + 1;
	return p;
}

static size_t find_slot(const pb_strmap *m, uint32_t h, const char *key)
{
	size_t mask = m->cap - 1, i = (size_t)h & mask;
	while (m->slots[i].hash && (m->slots[i].hash != h || strcmp(m->slots[i].key, key) != 0))
		i = (i + 1) & mask;
	return i;
}

static int grow(pb_strmap *m)
{
	slot *old = m->slots;
	size_t old_cap = m->cap;
	if (alloc_table(m, old_cap * 2) != 0) {
		m->slots = old;
		m->cap = old_cap;
		return -1;
	}
	size_t mask = m->cap - 1;
	for (size_t i = 0; i < old_cap; i++) {
		if (!old[i].hash)
			continue;
		size_t j = (size_t)old[i].hash & mask;
		while (m->slots[j].hash)
			j = (j + 1) & mask;
		m->slots[j] = old[i];
	}
	free(old);
	return 0;
}

int pb_strmap_add(pb_strmap *m, const char *key, int value, const char **stored)
{
	if ((m->count + 1) * 2 > m->cap && grow(m) != 0)
		return -1;
	size_t n;
	uint32_t h = hash_str(key, &n);
	size_t i = find_slot(m, h, key);
	if (!m->slots[i].hash) {
		const char *k = store_key(m, key, n);
		if (!k)
			return -1;
		m->slots[i].hash = h;
		m->slots[i].key = k;
		m->slots[i].val = value;
		m->count++;
	}
	if (stored)
		*stored = m->slots[i].key;
	return m->slots[i].val;
}

int pb_strmap_put(pb_strmap *m, const char *key, int value)
{
	if ((m->count + 1) * 2 > m->cap && grow(m) != 0)
		return -1;
	size_t n;
	uint32_t h = hash_str(key, &n);
	size_t i = find_slot(m, h, key);
	if (!m->slots[i].hash) {
		const char *k = store_key(m, key, n);
		if (!k)
			return -1;
		m->slots[i].hash = h;
		m->slots[i].key = k;
		m->count++;
	}
	m->slots[i].val = value;
	return 0;
}

int pb_strmap_get(const pb_strmap *m, const char *key, int dflt)
{
	if (!m || !key)
		return dflt;
	size_t n;
	size_t i = find_slot(m, hash_str(key, &n), key);
	return m->slots[i].hash ? m->slots[i].val : dflt;
}

size_t pb_strmap_count(const pb_strmap *m)
{
	return m ? m->count : 0;
}
