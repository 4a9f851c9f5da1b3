/* test_atomic_file.c — whole-file writes: a regular file is replaced
 * atomically (no temporary left), a missing directory is an error naming the
 * path, and a path that is not a regular file (a FIFO standing in for
 * /dev/null) is written in place, never replaced by a regular file; a
 * symbolic link stays a link and its target is replaced; a dangling link, a
 * directory, an empty path and the protected (open model) file are refused;
 * a link planted at the old PATH.tmp name is not followed; temporaries of
 * dead processes are removed; streaming writers (by FILE* or by name, as
 * glp_write_lp, pb_lp_write_atomic) go through the same path and a failing
 * one leaves PATH whole. */
#include "pb_test.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/atomic_file.h"
#include "util/lp_file.h"

static char dir[256];

static const char *in_dir(const char *name)
{
	static char buf[512];
	snprintf(buf, sizeof buf, "%s/%s", dir, name);
	return buf;
}

static void test_regular_file(void **state)
{
	pb_error err = {0};
	char path[512], tmp[600];
	snprintf(path, sizeof path, "%s", in_dir("a.txt"));
	assert_int_equal(pb_write_file_atomic(path, "old", 3, &err), PB_OK);
	assert_int_equal(pb_write_file_atomic(path, "hello", 5, &err), PB_OK);
	FILE *f = fopen(path, "rb");
	char buf[16] = {0};
	assert_int_equal(fread(buf, 1, sizeof buf, f), 5);
	fclose(f);
	assert_string_equal(buf, "hello");
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	assert_int_equal(access(tmp, F_OK), -1);
	unlink(path);
	assert_int_equal(pb_write_file_atomic(in_dir("no/such/dir.txt"), "x", 1, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "no/such/dir.txt"));
}

static void test_fifo_written_in_place(void **state)
{
	char path[512];
	snprintf(path, sizeof path, "%s", in_dir("fifo"));
	assert_int_equal(mkfifo(path, 0600), 0);
	int rd = open(path, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	pb_error err = {0};
	if (pb_write_file_atomic(path, "abc", 3, &err) != PB_OK)
		fail_msg("%s", err.msg);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	char buf[8] = {0};
	assert_int_equal(read(rd, buf, sizeof buf), 3);
	assert_string_equal(buf, "abc");
	close(rd);
	unlink(path);
}

/* A symlinked output keeps its link; the target gets the new contents. */
static void test_symlink_followed(void **state)
{
	char target[512], link[512];
	snprintf(target, sizeof target, "%s", in_dir("target.txt"));
	snprintf(link, sizeof link, "%s", in_dir("link.txt"));
	pb_error err = {0};
	assert_int_equal(pb_write_file_atomic(target, "old", 3, &err), PB_OK);
	assert_int_equal(symlink("target.txt", link), 0);
	if (pb_write_file_atomic(link, "new!", 4, &err) != PB_OK)
		fail_msg("%s", err.msg);
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	FILE *f = fopen(target, "rb");
	char buf[16] = {0};
	assert_int_equal(fread(buf, 1, sizeof buf, f), 4);
	fclose(f);
	assert_string_equal(buf, "new!");
	unlink(link);
	unlink(target);
}

static void slurp(const char *path, char *buf, size_t n)
{
	memset(buf, 0, n);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t r = fread(buf, 1, n - 1, f);
	(void)r;
	fclose(f);
}

/* entries of dir whose name starts with '.' besides . and .. */
static int hidden_entries(void)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* Finding 5: a link planted at out.json.tmp pointed the write at its target. */
static void test_planted_tmp_link_ignored(void **state)
{
	char out[512], victim[512], planted[600], buf[32];
	snprintf(out, sizeof out, "%s", in_dir("out.json"));
	snprintf(victim, sizeof victim, "%s", in_dir("victim"));
	snprintf(planted, sizeof planted, "%s.tmp", out);
	pb_error err = {0};
	assert_int_equal(pb_write_file_atomic(victim, "precious", 8, &err), PB_OK);
	assert_int_equal(symlink(victim, planted), 0);
	if (pb_write_file_atomic(out, "{}", 2, &err) != PB_OK)
		fail_msg("%s", err.msg);
	slurp(victim, buf, sizeof buf);
	assert_string_equal(buf, "precious");
	slurp(out, buf, sizeof buf);
	assert_string_equal(buf, "{}");
	assert_int_equal(hidden_entries(), 0);
	unlink(planted);
	unlink(victim);
	unlink(out);
}

/* Decision: a dangling link is refused, the link stays and nothing is
 * created where it points. */
static void test_dangling_link_refused(void **state)
{
	char link[512], target[512];
	snprintf(link, sizeof link, "%s", in_dir("dangling.svg"));
	snprintf(target, sizeof target, "%s", in_dir("nowhere.svg"));
	assert_int_equal(symlink("nowhere.svg", link), 0);
	pb_error err = {0};
	assert_int_equal(pb_write_file_atomic(link, "x", 1, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "dangling.svg"));
	assert_non_null(strstr(err.msg, "missing file"));
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(access(target, F_OK), -1);
	assert_int_equal(hidden_entries(), 0);
	unlink(link);
}

static void test_refusals(void **state)
{
	pb_error err = {0};
	assert_int_equal(pb_write_file_atomic("", "x", 1, &err), PB_EUSAGE);
	assert_string_equal(err.msg, "the output path is empty");
	assert_int_equal(pb_write_file_atomic(dir, "x", 1, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "is a directory"));
}

/* An existing file keeps its permission bits. */
static void test_mode_kept(void **state)
{
	char path[512];
	snprintf(path, sizeof path, "%s", in_dir("mode.txt"));
	pb_error err = {0};
	assert_int_equal(pb_write_file_atomic(path, "a", 1, &err), PB_OK);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(pb_write_file_atomic(path, "b", 1, &err), PB_OK);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	unlink(path);
}

/* A temporary whose process is gone (kill -9 mid-write) is removed by the
 * next write to the same target; a live process's one and other names stay. */
static void test_stale_temporaries(void **state)
{
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	assert_true(child > 0);
	waitpid(child, NULL, 0);
	char path[512], stale[600], live[600], other[600];
	snprintf(path, sizeof path, "%s", in_dir("big.svg"));
	snprintf(stale, sizeof stale, "%s/.big.svg.pb-%d-00000000deadbeef.tmp", dir, (int)child);
	snprintf(live, sizeof live, "%s/.big.svg.pb-%d-00000000deadbeef.tmp", dir, (int)getppid());
	snprintf(other, sizeof other, "%s/.bigger.svg.pb-%d-00000000deadbeef.tmp", dir, (int)child);
	pb_error err = {0};
	assert_int_equal(pb_write_file_atomic(stale, "half", 4, &err), PB_OK);
	assert_int_equal(pb_write_file_atomic(live, "half", 4, &err), PB_OK);
	assert_int_equal(pb_write_file_atomic(other, "half", 4, &err), PB_OK);
	assert_int_equal(pb_write_file_atomic(path, "<svg/>", 6, &err), PB_OK);
	assert_int_equal(access(stale, F_OK), -1);
	assert_int_equal(access(live, F_OK), 0);
	assert_int_equal(access(other, F_OK), 0);
	unlink(live);
	unlink(other);
	unlink(path);
	assert_int_equal(hidden_entries(), 0);
}

/* like glp_write_lp: reopens the temporary by name */
static int by_name(void *ctx, FILE *f, const char *tmp_path, pb_error *err)
{
	FILE *g = fopen(tmp_path, "w");
	if (!g)
		return pb_err(err, PB_EINPUT, "cannot open");
	fputs(ctx, g);
	fclose(g);
	return PB_OK;
}

static int fails_halfway(void *ctx, FILE *f, const char *tmp_path, pb_error *err)
{
	fputs("half a file", f);
	return pb_err(err, PB_EINPUT, "the writer gave up");
}

/* the temporary is swapped for a link by someone else meanwhile */
static int swapped(void *ctx, FILE *f, const char *tmp_path, pb_error *err)
{
	unlink(tmp_path);
	if (symlink(ctx, tmp_path) != 0)
		return pb_err(err, PB_EINTERNAL, "symlink");
	return PB_OK;
}

static void test_streaming_writers(void **state)
{
	char path[512], victim[512], buf[32];
	snprintf(path, sizeof path, "%s", in_dir("model.lp"));
	snprintf(victim, sizeof victim, "%s", in_dir("victim.lp"));
	pb_error err = {0};
	if (pb_write_file_atomic_with(path, by_name, "Minimize", &err) != PB_OK)
		fail_msg("%s", err.msg);
	slurp(path, buf, sizeof buf);
	assert_string_equal(buf, "Minimize");
	assert_int_equal(pb_write_file_atomic_with(path, fails_halfway, NULL, &err), PB_EINPUT);
	assert_string_equal(err.msg, "the writer gave up");
	slurp(path, buf, sizeof buf);
	assert_string_equal(buf, "Minimize");
	assert_int_equal(hidden_entries(), 0);
	assert_int_equal(pb_write_file_atomic(victim, "precious", 8, &err), PB_OK);
	assert_int_equal(pb_write_file_atomic_with(path, swapped, victim, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "replaced while being written"));
	slurp(path, buf, sizeof buf);
	assert_string_equal(buf, "Minimize");
	slurp(victim, buf, sizeof buf);
	assert_string_equal(buf, "precious");
	/* the swapped-in link is left alone (not ours): clean it up here */
	DIR *d = opendir(dir);
	struct dirent *e;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, ".model.lp.pb-", 13) == 0)
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	unlink(path);
	unlink(victim);
}

static const char *protected_path;
static const char *get_protected(void *ctx)
{
	return protected_path;
}

/* The open model is never overwritten: not by its name, a link or a hard
 * link to it. */
static void test_protected_model(void **state)
{
	char model[512], lnk[512], hard[512], buf[32];
	snprintf(model, sizeof model, "%s", in_dir("m.onnx"));
	snprintf(lnk, sizeof lnk, "%s", in_dir("m.json"));
	snprintf(hard, sizeof hard, "%s", in_dir("m2.onnx"));
	pb_error err = {0};
	assert_int_equal(pb_write_file_atomic(model, "ONNX", 4, &err), PB_OK);
	assert_int_equal(symlink("m.onnx", lnk), 0);
	assert_int_equal(link(model, hard), 0);
	protected_path = model;
	pb_atomic_file_protect(get_protected, NULL);
	const char *outs[] = {model, lnk, hard};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pb_write_file_atomic(outs[i], "{}", 2, &err), PB_EUSAGE);
		assert_non_null(strstr(err.msg, "is the open model"));
	}
	slurp(model, buf, sizeof buf);
	assert_string_equal(buf, "ONNX");
	pb_atomic_file_protect(NULL, NULL);
	unlink(lnk);
	unlink(hard);
	unlink(model);
}

/* --emit-lp: a GLPK problem through the temporary, the old LP replaced
 * whole, a link at the old PATH.tmp name not followed. */
static void test_lp_file(void **state)
{
	char path[512], planted[600], victim[512], buf[64];
	snprintf(path, sizeof path, "%s", in_dir("m.lp"));
	snprintf(planted, sizeof planted, "%s.tmp", path);
	snprintf(victim, sizeof victim, "%s", in_dir("victim"));
	pb_error err = {0};
	assert_int_equal(pb_write_file_atomic(path, "old LP", 6, &err), PB_OK);
	assert_int_equal(pb_write_file_atomic(victim, "precious", 8, &err), PB_OK);
	assert_int_equal(symlink(victim, planted), 0);
	glp_term_out(GLP_OFF);
	glp_prob *P = glp_create_prob();
	glp_set_prob_name(P, "tiny");
	glp_add_cols(P, 1);
	glp_set_col_name(P, 1, "x");
	glp_set_col_bnds(P, 1, GLP_DB, 0, 1);
	glp_set_obj_coef(P, 1, 1);
	if (pb_lp_write_atomic(P, path, &err) != PB_OK)
		fail_msg("%s", err.msg);
	glp_delete_prob(P);
	slurp(path, buf, sizeof buf);
	assert_non_null(strstr(buf, "tiny"));
	slurp(victim, buf, sizeof buf);
	assert_string_equal(buf, "precious");
	assert_int_equal(hidden_entries(), 0);
	unlink(planted);
	unlink(victim);
	unlink(path);
}

int main(void)
{
	snprintf(dir, sizeof dir, "%s/pb_atomic_%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
	         (int)getpid());
	if (mkdir(dir, 0700) != 0)
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_regular_file),
	    cmocka_unit_test(test_fifo_written_in_place),
	    cmocka_unit_test(test_symlink_followed),
	    cmocka_unit_test(test_planted_tmp_link_ignored),
	    cmocka_unit_test(test_dangling_link_refused),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_mode_kept),
	    cmocka_unit_test(test_stale_temporaries),
	    cmocka_unit_test(test_streaming_writers),
	    cmocka_unit_test(test_protected_model),
	    cmocka_unit_test(test_lp_file),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return rc;
}
