/*
 * util/regex_size.h — how big a POSIX extended regular expression becomes
 * once compiled.
 *
 * glibc's regcomp copies a bounded repetition's operand once per count, so
 * nested bounds multiply: `find '((a{255}){255}){255}'` (a line of 22 bytes)
 * compiled for 10 s and took 3.25 GB (issue 39), in C, where no time limit
 * can stop it. The `find` command asks for the size first and refuses a
 * pattern that would expand beyond a bound.
 */
#ifndef PB_REGEX_SIZE_H
#define PB_REGEX_SIZE_H

/* The number of atoms (characters, bracket expressions, anchors) the
 * pattern holds with every bounded repetition expanded: {m} and {m,n} copy
 * their operand max(m, n) times, {m,} m + 1 times. Stops counting past
 * `limit` and returns limit + 1 then. */
long pb_regex_size(const char *pat, long limit);

#endif
