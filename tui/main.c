/*
 * main.c — the partbench program: batch CLI and (later) the workbench TUI.
 *
 *   partbench CMD [ARGS]     runs one command of the command table and exits
 *   partbench [MODEL] [...]  opens the workbench on MODEL
 *
 * Exit codes: 0 success, 1 usage error, 2 bad input (see error.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "tui.h"
#include "util/atomic_file.h"

static int term_progress(void *ud, double fraction, const char *line)
{
	(void)ud;
	static int drew = 0;
	if (!isatty(2))
		return 0;
	if (fraction < 0) { /* finished: end the line */
		if (drew)
			fputc('\n', stderr);
		drew = 0;
		return 0;
	}
	int width = 30, fill = (int)(fraction * width + 0.5);
	if (fill > width)
		fill = width;
	fprintf(stderr, "\r[%.*s%*s] %3.0f%% %s\033[K", fill, "##############################",
	        width - fill, "", fraction * 100, line);
	fflush(stderr);
	drew = 1;
	return 0;
}

static void list_cmd(void *ud, const pb_command *c)
{
	if (!(c->flags & PB_CMD_HIDDEN))
		fprintf((FILE *)ud, "  %-12s %s\n", c->name, c->summary);
}

static void usage(FILE *out)
{
	fprintf(out,
	        "partbench — partition deep-learning computation graphs across cores, devices\n"
	        "and backends.\n\n"
	        "Usage:\n"
	        "  partbench [MODEL] [--layout FILE] [--input NAME=DIMS]  open the workbench\n"
	        "  partbench COMMAND [ARGS...]                             run one command\n"
	        "  partbench COMMAND --help                                help for a command\n\n"
	        "Commands:\n");
	pb_cmd_foreach(list_cmd, out);
	fprintf(out, "\nExit codes: 0 success, 1 usage error, 2 bad input.\n"
	             "Documentation: README.md and docs/ in the source tree.\n");
}

/* No command writes over the model it has open (convert m.onnx -o m.onnx,
 * export -o m.onnx, plan -o m.onnx): util/atomic_file.h asks for its path. */
static const char *open_model_path(void *ud)
{
	const pb_session *s = ud;
	return s && s->model_path && s->model_path[0] ? s->model_path : NULL;
}

/* A first argument that is no command, no option and no file is refused
 * before the workbench starts (which would only say that it needs a
 * terminal): a word without '/' or '.' is a mistyped command, anything else
 * a missing model. */
static int bad_first_arg(const char *a)
{
	if (a[0] == '-' || pb_cmd_find(a) || access(a, F_OK) == 0)
		return 0;
	if (!strchr(a, '/') && !strchr(a, '.'))
		fprintf(stderr, "partbench: unknown command '%s' (see partbench --help)\n", a);
	else
		fprintf(stderr,
		        "partbench: %s: no such file (and no command of that name; see partbench "
		        "--help)\n",
		        a);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc >= 2 &&
	    (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	     strcmp(argv[1], "help") == 0) &&
	    argc == 2) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		printf("partbench %s\n", PB_VERSION);
		return 0;
	}
	if (argc >= 2 && bad_first_arg(argv[1]))
		return pb_exit_code(PB_EUSAGE);
	pb_session *s = pb_session_new();
	pb_atomic_file_protect(open_model_path, s);
	pb_cmd_ctx ctx = {.s = s, .out = stdout, .log = stderr, .progress = term_progress};
	pb_error err = {0};
	int rc;
	if (argc >= 2 && argv[1][0] != '-' && pb_cmd_find(argv[1])) {
		rc = pb_cmd_run_argv(&ctx, argc - 1, argv + 1, &err);
	} else {
		rc = pb_tui_main(&ctx, argc - 1, argv + 1, &err);
	}
	if (rc != PB_OK)
		fprintf(stderr, "partbench: %s\n", err.msg[0] ? err.msg : "failed");
	fflush(stdout);
	pb_atomic_file_protect(NULL, NULL);
	pb_session_free(s);
	return pb_exit_code(rc);
}
