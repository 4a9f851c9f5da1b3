/* test_read_file.c — whole-file reads (util/read_file.h): the bytes come
 * back NUL-terminated across several buffer doublings; a missing file, a
 * directory and a file over the size cap are errors naming the path. */
#include "pb_test.h"

#include <sys/stat.h>
#include <unistd.h>

#include "util/read_file.h"

static void test_reads_and_refuses(void **state)
{
	char dir[] = "/tmp/pb_read_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof path, "%s/big.txt", dir);
	/* 300000 bytes: more than two doublings of the 64 KiB start */
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	for (int i = 0; i < 300000; i++)
		fputc('a' + i % 26, f);
	fclose(f);
	pb_error err = {0};
	char *buf;
	size_t len;
	assert_int_equal(pb_read_file(path, PB_DOOR_ANY, 0, "graph", &buf, &len, &err), PB_OK);
	assert_int_equal(len, 300000);
	assert_int_equal(buf[len], '\0');
	assert_int_equal(buf[299999], 'a' + 299999 % 26);
	free(buf);
	/* over a 128 KiB cap ("0 MiB" as the cap is below a MiB) */
	assert_int_equal(pb_read_file(path, PB_DOOR_ANY, 1 << 17, "script", &buf, &len, &err),
	                 PB_EINPUT);
	assert_null(buf);
	assert_non_null(strstr(err.msg, "big.txt: script larger than"));
	/* a directory is an error, not an empty file (refused by util/file_door.h
	 * before any read) */
	assert_int_equal(pb_read_file(dir, PB_DOOR_ANY, 0, "script", &buf, &len, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "is a directory"));
	assert_non_null(strstr(err.msg, dir));
	unlink(path);
	assert_int_equal(pb_read_file(path, PB_DOOR_ANY, 0, "graph", &buf, &len, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "cannot open"));
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_reads_and_refuses)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
