/* test_atomic_file.c — whole-file writes: a regular file is replaced
 * atomically (no PATH.tmp left), a missing directory is an error naming the
 * path, and a path that is not a regular file (a FIFO standing in for
 * /dev/null) is written in place, never replaced by a regular file; a
 * symbolic link stays a link and its target is replaced. */
#include "pb_test.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/atomic_file.h"

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
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return rc;
}
