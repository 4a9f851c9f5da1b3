/*
 * grow.h — a growing array's next capacity: doubled (or first when empty),
 * reallocated; the label pools of the partition DPs and their scratch lists.
 */
#ifndef PB_UTIL_GROW_H
#define PB_UTIL_GROW_H

#include <stddef.h>

/* arr (cap entries of elem bytes, may be NULL with cap 0) reallocated to twice
 * cap, or first entries when cap is 0. Returns the new array and sets *cap, or
 * NULL (arr and *cap unchanged, arr still owned by the caller) when memory runs
 * out or the size would overflow. */
void *pb_grow(void *arr, long *cap, size_t elem, long first);

#endif
