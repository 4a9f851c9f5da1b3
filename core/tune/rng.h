/*
 * tune/rng.h — small deterministic random numbers for the tuner
 * (splitmix64; state is one uint64_t owned by the caller).
 */
#ifndef PB_TUNE_RNG_H
#define PB_TUNE_RNG_H

#include <stdint.h>

static inline uint64_t pb_rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double pb_rng_unif(uint64_t *s)
{
	return (double)(pb_rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n). */
static inline int pb_rng_int(uint64_t *s, int n)
{
	return (int)(pb_rng_unif(s) * n);
}

#endif
