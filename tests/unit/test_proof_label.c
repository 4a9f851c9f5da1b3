/* test_proof_label.c — the label every plan kind reports (util/proof_label.h):
 * optimal only when the value attains the bound, gap = (value - bound) /
 * value, restrictions listed once, the JSON fields and the text. */
#include "pb_test.h"

#include <math.h>
#include <string.h>

#include "util/fmt.h"
#include "util/proof_label.h"

static void test_best_found(void **state)
{
	(void)state;
	pb_label L;
	pb_label_init(&L, 4.0);
	assert_false(L.optimal);
	assert_true(isnan(pb_label_gap(&L))); /* no bound: no gap */
	pb_label_restrict(&L, "shrink");
	pb_label_restrict(&L, "layers");
	pb_label_restrict(&L, "shrink"); /* once */
	assert_int_equal(L.n_restricted, 2);
	pb_label_bound(&L, 3.0);
	pb_label_bound(&L, 2.0); /* the larger bound stays */
	assert_false(L.optimal);
	assert_true(fabs(L.bound - 3.0) < 1e-15);
	assert_true(fabs(pb_label_gap(&L) - 0.25) < 1e-15); /* (4 - 3) / 4 */
	json_t *j = json_object();
	pb_label_json(j, &L);
	assert_true(json_is_false(json_object_get(j, "optimal")));
	assert_true(fabs(json_real_value(json_object_get(j, "bound")) - 3.0) < 1e-15);
	assert_true(fabs(json_real_value(json_object_get(j, "gap")) - 0.25) < 1e-15);
	assert_int_equal(json_array_size(json_object_get(j, "restricted_by")), 2);
	json_decref(j);
	char buf[200];
	pb_label_text(&L, NULL, buf, sizeof buf);
	assert_string_equal(buf, "best found, bound 3, gap 25%; restricted by shrink, layers");
}

static void test_optimal_when_attained(void **state)
{
	(void)state;
	pb_label L;
	pb_label_init(&L, 1e-3);
	pb_label_restrict(&L, "layers"); /* a restricted search can still be proven */
	pb_label_bound(&L, 1e-3 * (1 - 1e-12));
	assert_true(L.optimal);
	assert_true(pb_label_gap(&L) == 0);
	json_t *j = json_object();
	pb_label_json(j, &L);
	assert_true(json_is_true(json_object_get(j, "optimal")));
	assert_true(json_real_value(json_object_get(j, "gap")) == 0);
	json_decref(j);
	char buf[200];
	assert_string_equal(pb_label_text(&L, pb_fmt_time_fixed, buf, sizeof buf),
	                    "optimal; restricted by layers");
	/* a bound below the value by more than the tolerance proves nothing */
	pb_label_init(&L, 1.0);
	pb_label_bound(&L, 1.0 - 1e-6);
	assert_false(L.optimal);
	/* no bound known: JSON nulls */
	pb_label_init(&L, 1.0);
	j = json_object();
	pb_label_json(j, &L);
	assert_true(json_is_null(json_object_get(j, "bound")));
	assert_true(json_is_null(json_object_get(j, "gap")));
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_best_found),
	    cmocka_unit_test(test_optimal_when_attained),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
