/*
 * libout.c — library messages (Graphviz, igraph, GLPK, Lua) never reach the
 * screen: fd 2 is redirected to an unlinked temporary file for the whole
 * session and new text in it is shown as "[lib]" lines in the output pane.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libout.h"
#include "output.h"

void tui_libout_start(tui_app *a)
{
	a->saved_stderr = -1;
	a->errfile = tmpfile();
	if (!a->errfile)
		return;
	fflush(stderr);
	a->saved_stderr = dup(2);
	dup2(fileno(a->errfile), 2);
}

void tui_libout_poll(tui_app *a)
{
	struct stat st;
	if (!a->errfile || fstat(fileno(a->errfile), &st) != 0 || st.st_size <= a->err_off)
		return;
	size_t n = (size_t)(st.st_size - a->err_off);
	if (n > 8192)
		n = 8192;
	char *buf = malloc(n + 1);
	if (!buf)
		return;
	ssize_t r = pread(fileno(a->errfile), buf, n, a->err_off);
	if (r > 0) {
		buf[r] = 0;
		a->err_off += r;
		char *save = NULL;
		for (char *line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			tui_out(a, 1, "[lib] %s", line);
	}
	free(buf);
}

void tui_libout_stop(tui_app *a)
{
	if (a->saved_stderr >= 0) {
		fflush(stderr);
		dup2(a->saved_stderr, 2);
		close(a->saved_stderr);
	}
	if (a->errfile)
		fclose(a->errfile);
	a->errfile = NULL;
}
