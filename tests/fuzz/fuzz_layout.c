/*
 * fuzz_layout.c — libFuzzer target for hardware layouts (core/hw.h): Lua text
 * run in the sandbox (instruction budget, memory cap) and turned into JSON.
 *
 * The bytes go to pb_hw_load_string (up to the first NUL, as a file's text
 * would be read). A layout that loads is walked through the checked field
 * accessors on every root field, and then read by the module of its kind,
 * as the commands do: manycore (partition), cluster (shard: also its
 * grouping schemes and a mesh), hetero (map: also each backend's support of
 * a few ops), plus the optional fusion table of any layout.
 * Seeds: tests/fuzz/seeds/fuzz_layout/ (copies of the bundled layouts in layouts/).
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "hw.h"
#include "partition/chain/manycore.h"
#include "shard/cluster.h"
#include "transform/fuse.h"
#include "transform/map.h"

static void walk_fields(const pb_hw *hw)
{
	const char *key;
	const json_t *v;
	json_object_foreach(hw->root, key, v)
	{
		pb_error err = {0};
		double d;
		long l;
		const char *s;
		(void)pb_hw_num(hw, hw->root, "", key, 1, 0, -1e300, 1e300, &d, &err);
		(void)pb_hw_int(hw, hw->root, "", key, 0, 0, -1000000, 1000000, &l, &err);
		(void)pb_hw_str(hw, hw->root, "", key, 0, "", &s, &err);
		(void)pb_hw_table(hw, hw->root, "backends[1]", key, 1, &err);
	}
}

static void walk_cluster(const pb_hw *hw)
{
	pb_cluster c;
	pb_error err = {0};
	if (pb_cluster_from_hw(hw, &c, &err) == PB_OK) {
		pb_mesh schemes[64];
		char dropped[16][64];
		int n_dropped = 0;
		int n = pb_cluster_mesh_schemes(&c, 2, schemes, 64, dropped, &n_dropped, 16);
		if (n < 0 || n > 64)
			abort();
		pb_mesh m;
		char text[32];
		snprintf(text, sizeof text, "%d", c.n_devices);
		(void)pb_cluster_mesh_parse(&m, &c, text, &err);
	}
	pb_cluster_free(&c);
}

static void walk_hetero(const pb_hw *hw)
{
	pb_hetero *h = NULL;
	pb_error err = {0};
	if (pb_hetero_parse(hw, &h, &err) != PB_OK)
		return;
	static const char *const ops[] = {"Conv", "MatMul", "Relu", "*", ""};
	for (int b = 0; b < h->n; b++)
		for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
			double speed = 0;
			(void)pb_hetero_support(h, b, ops[k], &speed);
		}
	pb_hetero_free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	pb_hw *hw = NULL;
	pb_error err = {0};
	int rc = pb_hw_load_string(text, "fuzz.lua", &hw, &err);
	free(text);
	if (rc != PB_OK) {
		if (hw || !strstr(err.msg, "fuzz.lua"))
			abort(); /* errors name the layout, nothing is returned */
		return 0;
	}
	if (!hw->kind || !hw->name || !json_is_object(hw->root))
		abort();
	walk_fields(hw);
	pb_manycore mc;
	(void)pb_manycore_parse(hw, &mc, &err);
	walk_cluster(hw);
	walk_hetero(hw);
	pb_fuse_model fm;
	pb_fuse_model_default(&fm);
	(void)pb_fuse_model_from_hw(hw, &fm, &err);
	pb_hw_free(hw);
	return 0;
}
