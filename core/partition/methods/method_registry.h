/*
 * method_registry.h — the partition methods by name (method_registry.c lists
 * them, one line each). Everything that names the methods reads this list:
 * the solver, partition --help and its error for an unknown method, the
 * completion of --method values, and the TUI keys that run a method.
 */
#ifndef PB_PARTITION_METHOD_REGISTRY_H
#define PB_PARTITION_METHOD_REGISTRY_H

#include <stddef.h>
#include <stdio.h>

#include "util/error.h"
#include "partition/methods/method.h"

/* The number of methods, and method i (0 <= i < count) in the registry's order. */
int pb_part_method_count(void);
const pb_part_method *pb_part_method_at(int i);
/* The method of that name; NULL when there is none. */
const pb_part_method *pb_part_method_find(const char *name);
/* Fills err with "partition: unknown method 'NAME' (the valid ones)"; returns PB_EUSAGE. */
int pb_part_method_unknown(pb_error *err, const char *name);
/* The names, in order, joined by sep, into buf; returns buf. */
char *pb_part_method_names(char *buf, size_t len, const char *sep);
/* Up to max names into out (for --method's choices); returns how many. */
int pb_part_method_choices(const char **out, int max);
/* partition --help: one line per method (name, summary, its own options). */
void pb_part_method_help(FILE *out);

#endif
