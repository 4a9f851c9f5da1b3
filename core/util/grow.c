/*
 * grow.c — doubling reallocation (grow.h).
 */
#include "util/grow.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

void *pb_grow(void *arr, long *cap, size_t elem, long first)
{
	if (*cap > LONG_MAX / 2)
		return NULL;
	long nc = *cap > 0 ? 2 * *cap : first;
	if (nc <= *cap || elem == 0 || (size_t)nc > SIZE_MAX / elem)
		return NULL;
	void *np = realloc(arr, (size_t)nc * elem);
	if (np)
		*cap = nc;
	return np;
}
