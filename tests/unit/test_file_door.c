/* test_file_door.c — the one door (util/file_door.h): a FIFO, a directory or
 * a device is refused at once (the open never waits for a writer); under a
 * script a read must be of the kind it expects (a text file is refused as a
 * model, a layout, a session or a profile; a JSON document of any name
 * passes); a streaming write refuses the open model and any file the running
 * command read in another role, also through a hard link or a symbolic link,
 * and a FIFO with no reader fails instead of blocking.
 *
 * Each FIFO case would block forever on the old code (fopen/open without
 * O_NONBLOCK); ctest's timeout turns that into a failure. */
#include "pb_test.h"

#include <sys/stat.h>
#include <unistd.h>

#include "util/atomic_file.h"
#include "util/file_door.h"

static char dir[] = "/tmp/pb_door_XXXXXX";

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_fifo_and_dir_refused(void **state)
{
	(void)state;
	char fifo[128];
	path_in(fifo, sizeof fifo, "model.onnx");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pb_error err = {0};
	assert_int_equal(pb_door_open_read(fifo, PB_DOOR_MODEL, "model", &err), -1);
	assert_int_equal(err.code, PB_EINPUT);
	assert_non_null(strstr(err.msg, "the model is a FIFO, not a regular file"));
	assert_non_null(strstr(err.msg, fifo));
	assert_null(pb_door_load_json(fifo, 0, PB_DOOR_JSON, "session", NULL, &err));
	assert_non_null(strstr(err.msg, "the session is a FIFO"));
	/* a FIFO is not of any kind a script may read, and never blocks the check */
	assert_int_equal(pb_door_kind_ok(PB_DOOR_MODEL, fifo), 0);
	/* writing to a FIFO nobody reads fails at once */
	assert_null(pb_door_fopen_write(fifo, 0, "training log", &err));
	assert_non_null(strstr(err.msg, "a FIFO with no reader"));
	/* the atomic writer writes devices in place: a FIFO with no reader too */
	assert_int_equal(pb_write_file_atomic(fifo, "x", 1, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "a FIFO with no reader"));
	unlink(fifo);
	assert_int_equal(pb_door_open_read(dir, PB_DOOR_ANY, "plan", &err), -1);
	assert_non_null(strstr(err.msg, "the plan is a directory"));
	assert_int_equal(pb_door_open_read("/dev/zero", PB_DOOR_ANY, "log", &err), -1);
	assert_non_null(strstr(err.msg, "a character device"));
}

static void test_script_kinds(void **state)
{
	(void)state;
	char secret[128], js[128], lua[128];
	path_in(secret, sizeof secret, "secret.txt");
	path_in(js, sizeof js, "anyname.txt");
	path_in(lua, sizeof lua, "rules.lua");
	write_text(secret, "password = hunter2\n");
	write_text(js, "{\"format\": \"partbench-session\"}\n");
	write_text(lua, "return {}\n");
	pb_error err = {0};
	/* outside a script any regular file opens (the loader names its problem) */
	int fd = pb_door_open_read(secret, PB_DOOR_LUA, "layout", &err);
	assert_true(fd >= 0);
	close(fd);
	pb_door_script_enter();
	assert_true(pb_door_in_script());
	assert_int_equal(pb_door_open_read(secret, PB_DOOR_LUA, "layout", &err), -1);
	assert_int_equal(err.code, PB_EUSAGE);
	assert_non_null(strstr(err.msg, "scripts read only .lua files as the layout"));
	assert_null(strstr(err.msg, "hunter2"));
	assert_int_equal(pb_door_open_read(secret, PB_DOOR_DATA, "profile", &err), -1);
	assert_int_equal(pb_door_open_read(secret, PB_DOOR_MODEL, "model", &err), -1);
	/* a JSON document of any name is data partbench reads anyway */
	fd = pb_door_open_read(js, PB_DOOR_JSON, "session", &err);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pb_door_open_read(js, PB_DOOR_LUA, "script", &err), -1);
	fd = pb_door_open_read(lua, PB_DOOR_LUA, "script", &err);
	assert_true(fd >= 0);
	close(fd);
	pb_door_script_leave();
	assert_false(pb_door_in_script());
	unlink(secret);
	unlink(js);
	unlink(lua);
}

static const char *protected_path;
static const char *get_protected(void *ctx)
{
	(void)ctx;
	return protected_path;
}

static void test_log_over_input(void **state)
{
	(void)state;
	char model[128], hard[128], soft[128], logp[128];
	path_in(model, sizeof model, "m.onnx");
	path_in(hard, sizeof hard, "hard.log");
	path_in(soft, sizeof soft, "soft.log");
	path_in(logp, sizeof logp, "train.log");
	write_text(model, "model bytes");
	assert_int_equal(link(model, hard), 0);
	assert_int_equal(symlink(model, soft), 0);
	pb_error err = {0};
	/* a read outside any command is not remembered */
	int fd = pb_door_open_read(model, PB_DOOR_ANY, "model", &err);
	assert_true(fd >= 0);
	close(fd);
	FILE *f = pb_door_fopen_write(hard, 1, "training log", &err);
	assert_non_null(f);
	fclose(f);
	int mark = pb_door_mark(); /* a command begins */
	fd = pb_door_open_read(model, PB_DOOR_ANY, "model", &err);
	assert_true(fd >= 0);
	close(fd);
	const char *targets[] = {model, hard, soft};
	for (int i = 0; i < 3; i++) {
		assert_null(pb_door_fopen_write(targets[i], 0, "training log", &err));
		assert_int_equal(err.code, PB_EUSAGE);
		assert_non_null(strstr(err.msg, "is the model this command reads"));
	}
	/* the same role may be read and appended (a tuning log resumed) */
	fd = pb_door_open_write(model, 1, 1, "model", &err);
	assert_true(fd >= 0);
	close(fd);
	/* another file is fine */
	f = pb_door_fopen_write(logp, 0, "training log", &err);
	assert_non_null(f);
	fclose(f);
	/* once the command ends, its reads are forgotten ... */
	pb_door_release(mark);
	f = pb_door_fopen_write(hard, 1, "training log", &err);
	assert_non_null(f);
	fclose(f);
	/* ... but the open model stays protected (the front end's hook) */
	protected_path = model;
	pb_atomic_file_protect(get_protected, NULL);
	assert_null(pb_door_fopen_write(hard, 0, "training log", &err));
	assert_non_null(strstr(err.msg, "is the open model"));
	pb_atomic_file_protect(NULL, NULL);
	/* the model's bytes survived every refusal (and the append of nothing) */
	char buf[64] = {0};
	f = fopen(model, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof buf, f));
	fclose(f);
	assert_string_equal(buf, "model bytes");
	assert_null(pb_door_fopen_write("", 0, "training log", &err));
	assert_null(pb_door_fopen_write(dir, 0, "training log", &err));
	assert_non_null(strstr(err.msg, "is a directory"));
	unlink(model);
	unlink(hard);
	unlink(soft);
	unlink(logp);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fifo_and_dir_refused),
	    cmocka_unit_test(test_script_kinds),
	    cmocka_unit_test(test_log_over_input),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return rc;
}
