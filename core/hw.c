/*
 * hw.c — hardware layouts: Lua table → JSON, and checked field access (hw.h).
 *
 * Layout files run in a fresh sandbox with a small instruction budget, so a
 * broken or hostile layout can only produce an error message.
 */
#include "hw.h"

#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lua_sandbox.h"

static int finish_load(pb_lua *S, const char *src, pb_hw **out, pb_error *err)
{
	lua_State *L = pb_lua_state(S);
	if (!lua_istable(L, -1)) {
		return pb_err(
		    err, PB_EINPUT,
		    "%s: a layout must return a table (e.g. return { kind = \"manycore\", "
		    "... }), got %s",
		    src, lua_typename(L, lua_type(L, -1)));
	}
	/* pb_lua_to_json grows the Lua stack as it descends and refuses tables
	 * nested too deeply or too large (a table that holds itself). */
	json_t *root;
	int rc = pb_lua_to_json(L, -1, src, &root, err);
	if (rc)
		return rc;
	if (!json_is_object(root)) {
		json_decref(root);
		return pb_err(err, PB_EINPUT, "%s: a layout must be a table of named fields", src);
	}
	pb_hw *hw = calloc(1, sizeof *hw);
	hw->path = strdup(src);
	hw->root = root;
	const char *kind = json_string_value(json_object_get(root, "kind"));
	if (!kind) {
		pb_hw_free(hw);
		return pb_err(
		    err, PB_EINPUT,
		    "%s: field 'kind': missing or not a string (\"manycore\", \"cluster\" "
		    "or \"hetero\")",
		    src);
	}
	if (strcmp(kind, "manycore") && strcmp(kind, "cluster") && strcmp(kind, "hetero")) {
		/* kind lives in root, which pb_hw_free frees: the message first */
		int rc = pb_err(err, PB_EINPUT,
		                "%s: field 'kind' = \"%.64s\" is no layout kind (\"manycore\", "
		                "\"cluster\" or \"hetero\")",
		                src, kind);
		pb_hw_free(hw);
		return rc;
	}
	hw->kind = strdup(kind);
	const char *name = json_string_value(json_object_get(root, "name"));
	if (!name) {
		const char *base = strrchr(src, '/');
		name = base ? base + 1 : src;
	}
	hw->name = strdup(name);
	*out = hw;
	return PB_OK;
}

static int load_common(const char *path, const char *text, pb_hw **out, pb_error *err)
{
	*out = NULL;
	pb_lua_limits lim = {5000000, 64u << 20};
	pb_lua *S = pb_lua_new(&lim);
	if (!S)
		return pb_err(err, PB_ENOMEM, "%s: cannot create a Lua state", path);
	int rc = text ? pb_lua_run_string(S, text, path, err) : pb_lua_run_file(S, path, err);
	if (rc == PB_OK)
		rc = finish_load(S, path, out, err);
	else if (text || strstr(err->msg, path) == NULL)
		pb_err_prefix(err, "%s", path);
	pb_lua_free(S);
	return rc;
}

int pb_hw_load(const char *path, pb_hw **out, pb_error *err)
{
	return load_common(path, NULL, out, err);
}

int pb_hw_load_string(const char *text, const char *name, pb_hw **out, pb_error *err)
{
	return load_common(name, text, out, err);
}

void pb_hw_free(pb_hw *hw)
{
	if (!hw)
		return;
	free(hw->path);
	free(hw->kind);
	free(hw->name);
	json_decref(hw->root);
	free(hw);
}

static void field_name(char *buf, size_t len, const char *where, const char *field)
{
	if (where && *where)
		snprintf(buf, len, "%s.%s", where, field);
	else
		snprintf(buf, len, "%s", field);
}

int pb_hw_num(const pb_hw *hw, const json_t *obj, const char *where, const char *field,
              int required, double dflt, double min, double max, double *out, pb_error *err)
{
	char fn[256];
	field_name(fn, sizeof fn, where, field);
	const json_t *v = json_object_get(obj, field);
	if (!v || json_is_null(v)) {
		if (required)
			return pb_err(err, PB_EINPUT, "%s: field '%s' is missing (a number)",
			              hw->path, fn);
		*out = dflt;
		return PB_OK;
	}
	if (!json_is_number(v))
		return pb_err(err, PB_EINPUT, "%s: field '%s': expected a number, got %s", hw->path,
		              fn, json_is_string(v) ? "a string" : "a table or boolean");
	double d = json_number_value(v);
	if (!isfinite(d) || d < min || d > max)
		return pb_err(err, PB_EINPUT, "%s: field '%s' = %g is out of range [%g, %g]",
		              hw->path, fn, d, min, max);
	*out = d;
	return PB_OK;
}

int pb_hw_int(const pb_hw *hw, const json_t *obj, const char *where, const char *field,
              int required, long dflt, long min, long max, long *out, pb_error *err)
{
	double d;
	int rc = pb_hw_num(hw, obj, where, field, required, (double)dflt, (double)min, (double)max,
	                   &d, err);
	if (rc)
		return rc;
	if (d != floor(d)) {
		char fn[256];
		field_name(fn, sizeof fn, where, field);
		return pb_err(err, PB_EINPUT, "%s: field '%s' = %g must be a whole number",
		              hw->path, fn, d);
	}
	*out = (long)d;
	return PB_OK;
}

int pb_hw_str(const pb_hw *hw, const json_t *obj, const char *where, const char *field,
              int required, const char *dflt, const char **out, pb_error *err)
{
	char fn[256];
	field_name(fn, sizeof fn, where, field);
	const json_t *v = json_object_get(obj, field);
	if (!v || json_is_null(v)) {
		if (required)
			return pb_err(err, PB_EINPUT, "%s: field '%s' is missing (a string)",
			              hw->path, fn);
		*out = dflt;
		return PB_OK;
	}
	if (!json_is_string(v))
		return pb_err(err, PB_EINPUT, "%s: field '%s': expected a string", hw->path, fn);
	*out = json_string_value(v);
	return PB_OK;
}

const json_t *pb_hw_table(const pb_hw *hw, const json_t *obj, const char *where, const char *field,
                          int required, pb_error *err)
{
	char fn[256];
	field_name(fn, sizeof fn, where, field);
	const json_t *v = json_object_get(obj, field);
	if (!v || json_is_null(v)) {
		if (required)
			pb_err(err, PB_EINPUT, "%s: field '%s' is missing (a table)", hw->path, fn);
		return NULL;
	}
	if (!json_is_object(v) && !json_is_array(v)) {
		pb_err(err, PB_EINPUT, "%s: field '%s': expected a table", hw->path, fn);
		return NULL;
	}
	return v;
}

int pb_hw_expect_kind(const pb_hw *hw, const char *kind, pb_error *err)
{
	if (!hw)
		return pb_err(err, PB_EUSAGE, "no hardware layout loaded (use --layout)");
	if (strcmp(hw->kind, kind) != 0)
		return pb_err(err, PB_EUSAGE,
		              "%s: this command needs a '%s' layout, but the file's kind is '%s'",
		              hw->path, kind, hw->kind);
	return PB_OK;
}
