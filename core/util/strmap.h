/*
 * strmap.h — string → int hash map (open addressing, linear probing).
 * Keys are copied. Used for name lookups in graphs and tables.
 */
#ifndef PB_STRMAP_H
#define PB_STRMAP_H

#include <stddef.h>

typedef struct pb_strmap pb_strmap;

pb_strmap *pb_strmap_new(size_t hint);
void pb_strmap_free(pb_strmap *m);
/* Inserts or overwrites; returns 0, or -1 on allocation failure. */
int pb_strmap_put(pb_strmap *m, const char *key, int value);
/* Inserts key with value when absent; returns the value now stored under
 * key (the existing one if it was present), or -1 on allocation failure.
 * One hash and one probe sequence instead of a get followed by a put.
 * If stored is not NULL it receives the map's own copy of the key, which
 * stays valid until the map is freed (callers may use it as their name). */
int pb_strmap_add(pb_strmap *m, const char *key, int value, const char **stored);
/* Returns the value, or dflt when absent. */
int pb_strmap_get(const pb_strmap *m, const char *key, int dflt);
size_t pb_strmap_count(const pb_strmap *m);

#endif
