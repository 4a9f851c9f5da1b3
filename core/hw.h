/*
 * hw.h — hardware layouts (files in layouts/, written in Lua).
 *
 * A layout is a Lua file evaluated in the sandbox (core/util/lua_sandbox.h);
 * the chunk returns a table, e.g.
 *     return { kind = "manycore", name = "chip16", cores = 16, ... }
 * which is converted to a JSON tree so that the modules that interpret a kind
 * (partition: "manycore", shard: "cluster", transform: "hetero") read plain
 * data and never touch Lua. The accessors below produce errors that name the
 * file and the field: "layouts/x.lua: field 'cores': expected an integer >= 1".
 */
#ifndef PB_HW_H
#define PB_HW_H

#include <jansson.h>

#include "util/error.h"

typedef struct pb_hw {
	char *path;
	char *kind; /* "manycore", "cluster", "hetero" */
	char *name;
	json_t *root; /* the returned table as JSON (object) */
} pb_hw;

int pb_hw_load(const char *path, pb_hw **out, pb_error *err);
/* Builds a layout from Lua source text (tests, `:lua` consoles). */
int pb_hw_load_string(const char *text, const char *name, pb_hw **out, pb_error *err);
void pb_hw_free(pb_hw *hw);

/* Field accessors on an object inside the layout. `where` is the dotted path
 * of obj for messages ("" for the root, "backends[2]"). A missing optional
 * field gives dflt; a missing required one, a wrong type or a value outside
 * [min, max] is an error naming the file and the field. */
int pb_hw_num(const pb_hw *hw, const json_t *obj, const char *where, const char *field,
              int required, double dflt, double min, double max, double *out, pb_error *err);
int pb_hw_int(const pb_hw *hw, const json_t *obj, const char *where, const char *field,
              int required, long dflt, long min, long max, long *out, pb_error *err);
int pb_hw_str(const pb_hw *hw, const json_t *obj, const char *where, const char *field,
              int required, const char *dflt, const char **out, pb_error *err);
/* Requires field to be a table (object or array); returns it or NULL. */
const json_t *pb_hw_table(const pb_hw *hw, const json_t *obj, const char *where, const char *field,
                          int required, pb_error *err);
/* Checks the layout's kind; error names file and expected kind. */
int pb_hw_expect_kind(const pb_hw *hw, const char *kind, pb_error *err);

#endif
