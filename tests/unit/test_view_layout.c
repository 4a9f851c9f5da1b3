/* test_view_layout.c — the view string (view.h), the view/find/repeat
 * commands, and the terminal layout (render/layout.h): dot in-process, dot in
 * a child process, and the simple fallback. */
#include "pb_test.h"

#include <poll.h>

#include "commands.h"
#include "render/layout.h"
#include "session.h"
#include "view.h"

static void test_view_string(void **state)
{
	char v[64] = "";
	char buf[64];
	assert_int_equal(pb_view_set(v, sizeof v, "zoom", "1"), 0);
	assert_int_equal(pb_view_set(v, sizeof v, "find", "a;b=c%d"), 0);
	assert_int_equal(pb_view_set_int(v, sizeof v, "x", -12), 0);
	assert_int_equal(pb_view_get(v, "find", NULL, buf, sizeof buf), 1);
	assert_string_equal(buf, "a;b=c%d");
	assert_int_equal(pb_view_get_int(v, "x", 0), -12);
	assert_int_equal(pb_view_get_int(v, "zoom", 0), 1);
	/* replacing keeps one entry; removing drops it */
	assert_int_equal(pb_view_set(v, sizeof v, "zoom", "2"), 0);
	assert_int_equal(pb_view_get_int(v, "zoom", 0), 2);
	assert_null(strstr(strstr(v, "zoom=") + 1, "zoom="));
	assert_int_equal(pb_view_set(v, sizeof v, "zoom", NULL), 0);
	assert_int_equal(pb_view_get(v, "zoom", "dflt", buf, sizeof buf), 0);
	assert_string_equal(buf, "dflt");
	/* a key that is a prefix of another is not confused with it */
	assert_int_equal(pb_view_set(v, sizeof v, "xx", "5"), 0);
	assert_int_equal(pb_view_get_int(v, "x", 0), -12);
	/* overflow fails and leaves the string unchanged */
	char before[64];
	memcpy(before, v, sizeof v);
	assert_int_equal(
	    pb_view_set(v, sizeof v, "long", "0123456789012345678901234567890123456789"), -1);
	assert_string_equal(v, before);
	assert_int_equal(pb_view_get_int("x=abc", "x", 7), 7);
}

static pb_session *chain_session(void)
{
	pb_session *s = pb_session_new();
	pb_graph *g =
	    pb_test_chain_graph(12, NULL, "0>1 1>2 2>3 3>4 4>5 5>6 6>7 7>8 8>9 9>10 10>11 2>7");
	assert_non_null(g);
	pb_session_set_graph(s, g, "chain");
	return s;
}

static int run(pb_cmd_ctx *ctx, const char *line, pb_error *err)
{
	rewind(ctx->out);
	return pb_cmd_run_line(ctx, line, err);
}

/* The typed view and its saved form: defaults, every key through the string
 * and back, refusals of unknown keys and bad values (a session's view went
 * through a string read by key at every use before). */
static void test_view_typed(void **state)
{
	(void)state;
	pb_view v, w;
	char text[512];
	pb_view_init(&v);
	assert_int_equal(v.sel, -1);
	assert_int_equal(v.depth, -1);
	assert_int_equal(v.follow, 1);
	assert_int_equal(v.mouse, 1);
	assert_int_equal(pb_view_format(&v, text, sizeof text), 0);
	assert_string_equal(text, ""); /* only what differs from the defaults */
	pb_error err = {0};
	const char *kv[][2] = {{"zoom", "2"},   {"x", "-7"},         {"y", "12"},
	                       {"sel", "5"},    {"color", "branch"}, {"dir", "LR"},
	                       {"depth", "3"},  {"open", "2-9,4-5"}, {"find", "a;b=c%d"},
	                       {"follow", "0"}, {"mouse", "0"},      {"constants", "1"},
	                       {"fit", "1"},    {"center", "1"},     {"top", "1"}};
	for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
		assert_int_equal(pb_view_set_key(&v, kv[i][0], kv[i][1], &err), PB_OK);
	assert_int_equal(pb_view_format(&v, text, sizeof text), 0);
	pb_view_parse(&w, text);
	assert_memory_equal(&v, &w, sizeof v);
	assert_int_equal(w.x, -7);
	assert_int_equal(w.color, PB_VIEW_BY_BRANCH);
	assert_int_equal(w.lr, 1);
	assert_int_equal(w.n_open, 2);
	assert_int_equal(w.open_last[1], 5);
	assert_string_equal(w.find, "a;b=c%d");
	/* an empty value is the default */
	assert_int_equal(pb_view_set_key(&w, "depth", NULL, &err), PB_OK);
	assert_int_equal(w.depth, -1);
	/* refused, naming the key; the view is unchanged */
	assert_int_equal(pb_view_set_key(&w, "bogus", "1", &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "bogus"));
	assert_int_equal(pb_view_set_key(&w, "zoom", "7", &err), PB_EUSAGE);
	assert_int_equal(pb_view_set_key(&w, "dir", "up", &err), PB_EUSAGE);
	assert_int_equal(pb_view_set_key(&w, "open", "3-", &err), PB_EUSAGE);
	assert_int_equal(w.zoom, 2);
	assert_int_equal(w.n_open, 2);
	/* an old or hand-written saved form: unknown keys and bad values are
	 * skipped, the rest is read */
	pb_view_parse(&w, "zoom=1;bogus=3;x=abc;dir=LR");
	assert_int_equal(w.zoom, 1);
	assert_int_equal(w.x, 0);
	assert_int_equal(w.lr, 1);
}

static void test_view_commands(void **state)
{
	pb_session *s = chain_session();
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	pb_cmd_ctx ctx = {.s = s, .out = out, .log = out};
	pb_error err = {0};
	assert_int_equal(run(&ctx, "view pan 3 -2", &err), PB_OK);
	assert_int_equal(run(&ctx, "view pan 3 -2", &err), PB_OK);
	assert_int_equal(s->view.x, 6);
	assert_int_equal(s->view.y, -4);
	assert_true(ctx.redraw & PB_REDRAW_CANVAS);
	assert_int_equal(run(&ctx, "view zoom -", &err), PB_OK);
	assert_int_equal(run(&ctx, "view zoom -", &err), PB_OK);
	assert_int_equal(run(&ctx, "view zoom -", &err), PB_OK);
	assert_int_equal(s->view.zoom, 2); /* clamped */
	assert_int_equal(run(&ctx, "view zoom 9x", &err), PB_EUSAGE);
	/* selection by name and by relation */
	assert_int_equal(run(&ctx, "view select n2", &err), PB_OK);
	assert_int_equal(s->view.sel, 2);
	assert_int_equal(run(&ctx, "view select succ", &err), PB_OK);
	assert_int_equal(s->view.sel, 3);
	assert_int_equal(run(&ctx, "view select nosuch", &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "nosuch"));
	/* find wraps around and remembers the pattern */
	assert_int_equal(run(&ctx, "find ^n1[01]$", &err), PB_OK);
	assert_int_equal(s->view.sel, 10);
	assert_int_equal(run(&ctx, "find", &err), PB_OK);
	assert_int_equal(s->view.sel, 11);
	assert_int_equal(run(&ctx, "find", &err), PB_OK);
	assert_int_equal(s->view.sel, 10);
	assert_int_equal(run(&ctx, "find --prev", &err), PB_OK);
	assert_int_equal(s->view.sel, 11);
	assert_int_equal(run(&ctx, "find 'n[1'", &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "regular expression"));
	assert_int_equal(run(&ctx, "find zzz", &err), PB_EUSAGE);
	/* expand / collapse ranges, innermost first */
	assert_int_equal(run(&ctx, "view expand 2 9", &err), PB_OK);
	assert_int_equal(run(&ctx, "view expand 4 5", &err), PB_OK);
	char text[256], open[64];
	pb_view_format(&s->view, text, sizeof text);
	pb_view_get(text, "open", NULL, open, sizeof open);
	assert_string_equal(open, "2-9,4-5");
	assert_int_equal(run(&ctx, "view collapse 4", &err), PB_OK);
	assert_int_equal(s->view.n_open, 1);
	assert_int_equal(s->view.open_first[0], 2);
	assert_int_equal(s->view.open_last[0], 9);
	assert_int_equal(run(&ctx, "view collapse 11", &err), PB_EUSAGE);
	/* repeat runs a quoted command N times */
	assert_int_equal(run(&ctx, "repeat 4 'view pan 1 0'", &err), PB_OK);
	assert_int_equal(s->view.x, 10);
	assert_int_equal(run(&ctx, "repeat 2 'view bogus'", &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "run 1 of 2"));
	/* a count that does not fit a long is refused, not clamped to LONG_MAX
	 * (a failing command shows it: it said "run 1 of 9223372036854775807") */
	assert_int_equal(run(&ctx, "repeat 99999999999999999999 'view bogus'", &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "count '99999999999999999999' is not a whole number"));
	assert_int_equal(run(&ctx, "repeat -99999999999999999999 'view bogus'", &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "is not a whole number"));
	assert_int_equal(run(&ctx, "view pan 99999999999999999999 0", &err), PB_EUSAGE);
	assert_int_equal(s->view.x, 10);
	ctx.redraw = 0;
	assert_int_equal(run(&ctx, "quit", &err), PB_OK);
	assert_true(ctx.redraw & PB_QUIT);
	fclose(out);
	free(buf);
	pb_session_free(s);
}

/* Boxes of a small DAG: 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3, 3 -> 4. */
static const int W[] = {10, 6, 14, 8, 4}, H[] = {3, 3, 3, 1, 1};
static const int SRC[] = {0, 0, 1, 2, 3}, DST[] = {1, 2, 3, 3, 4};

static void check_layout(const pb_layout *l, int lr)
{
	assert_int_equal(l->n_boxes, 5);
	for (int e = 0; e < 5; e++) {
		int a = SRC[e], b = DST[e];
		if (lr)
			assert_true(l->x[a] + W[a] / 2.0 <= l->x[b] - W[b] / 2.0);
		else
			assert_true(l->y[a] + H[a] / 2.0 <= l->y[b] - H[b] / 2.0);
		int k0 = l->edge_first[e], k1 = l->edge_first[e + 1];
		assert_true(k1 - k0 >= 2);
		/* the path starts at its tail box and ends at its head box */
		assert_true(fabs(l->px[k0] - l->x[a]) <= W[a] / 2.0 + 1.5);
		assert_true(fabs(l->py[k0] - l->y[a]) <= H[a] / 2.0 + 1.5);
		assert_true(fabs(l->px[k1 - 1] - l->x[b]) <= W[b] / 2.0 + 1.5);
		assert_true(fabs(l->py[k1 - 1] - l->y[b]) <= H[b] / 2.0 + 1.5);
	}
	for (int i = 0; i < 5; i++) {
		assert_true(l->x[i] - W[i] / 2.0 >= -0.5 && l->x[i] + W[i] / 2.0 <= l->width + 0.5);
		assert_true(l->y[i] - H[i] / 2.0 >= -0.5 &&
		            l->y[i] + H[i] / 2.0 <= l->height + 0.5);
		for (int j = 0; j < i; j++) { /* no two boxes overlap */
			int apart = fabs(l->x[i] - l->x[j]) >= (W[i] + W[j]) / 2.0 ||
			            fabs(l->y[i] - l->y[j]) >= (H[i] + H[j]) / 2.0;
			assert_true(apart);
		}
	}
}

static void test_layout_dot_and_simple(void **state)
{
	for (int lr = 0; lr < 2; lr++) {
		pb_layout_req req = {5, W, H, 5, SRC, DST, lr, 0};
		pb_layout *l = NULL;
		pb_error err = {0};
		assert_int_equal(pb_layout_run(&req, &l, &err), PB_OK);
		assert_true(l->from_dot);
		check_layout(l, lr);
		pb_layout *f = pb_layout_simple(&req);
		assert_false(f->from_dot);
		check_layout(f, lr);
		pb_layout_free(f);
		/* the child process gives exactly the in-process result */
		pb_layout_job *job;
		assert_int_equal(pb_layout_spawn(&req, &job, &err), PB_OK);
		pb_layout *c = NULL;
		int r;
		while ((r = pb_layout_job_poll(job, &c, &err)) == 0) {
			struct pollfd pfd = {pb_layout_job_fd(job), POLLIN, 0};
			poll(&pfd, 1, 1000);
		}
		assert_int_equal(r, 1);
		assert_int_equal(c->n_edges, l->n_edges);
		for (int i = 0; i < 5; i++) {
			assert_true(fabs(c->x[i] - l->x[i]) < 1e-9);
			assert_true(fabs(c->y[i] - l->y[i]) < 1e-9);
		}
		assert_int_equal(c->edge_first[5], l->edge_first[5]);
		pb_layout_free(c);
		pb_layout_free(l);
	}
	/* a cancelled job leaves nothing behind */
	pb_layout_req req = {5, W, H, 5, SRC, DST, 0, 1};
	pb_layout_job *job;
	pb_error err = {0};
	assert_int_equal(pb_layout_spawn(&req, &job, &err), PB_OK);
	pb_layout_job_cancel(job);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_view_string),
	    cmocka_unit_test(test_view_typed),
	    cmocka_unit_test(test_view_commands),
	    cmocka_unit_test(test_layout_dot_and_simple),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
