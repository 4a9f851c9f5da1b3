/*
 * signals.c — a recovery session when the workbench is killed or a job crashes.
 *
 * SIGTERM and SIGHUP only raise a flag (the handler does nothing else); the
 * main loop sees it between two slices of any running job, when the session
 * is consistent, writes the session atomically to RECOVERY = the last saved
 * or loaded session file + ".recover" (partbench-session.json.recover in the
 * working directory when there is none) and leaves. The next start whose
 * model is the recovery's offers to restore it (r), delete it (d) or leave it
 * (Esc; recover.c); a restored session counts as unsaved and remembers the
 * file the recovery stands for.
 *
 * A crash (SIGSEGV, SIGBUS, SIGFPE, SIGABRT) cannot wait for the main loop and
 * its handler may only call async-signal-safe functions. So the recovery bytes
 * are made before each job starts (tui_recover_arm: the session file's JSON,
 * when there are unsaved changes, i.e. the work up to the command that
 * crashed) and dropped when the job ends; the handler writes them with
 * open/write/fsync to RECOVERY.crash-tmp and renames that onto RECOVERY (the
 * same atomic replace as a save), puts the terminal back as far as it can
 * without curses (tty modes saved at start-up, terminfo's rmcup and cnorm
 * looked up beforehand), says so on stderr and re-raises the signal with its
 * default action (core dump and exit status as without the handler). It runs
 * on its own stack, so a job that overflowed its coroutine's stack is caught
 * too.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "signals.h"

static volatile sig_atomic_t pending;

static void on_signal(int sig)
{
	pending = sig;
}

/* ---- a crash inside a job ------------------------------------------------ */

static char *crash_bytes; /* the recovery file's contents, NULL: nothing to write */
static size_t crash_len;
static volatile sig_atomic_t crash_armed;
static char crash_path[PATH_MAX + 16], crash_tmp[PATH_MAX + 32];
static char term_reset[64];
static size_t term_reset_len;
static struct termios crash_tty;
static int have_tty;
static volatile sig_atomic_t crash_errfd = 2; /* the terminal's stderr (fd 2 goes to
                                               * the capture of library output) */

static void put(const char *s)
{
	ssize_t r = write(crash_errfd, s, strlen(s));
	(void)r;
}

static void on_crash(int sig)
{
	int saved_errno = errno;
	if (have_tty)
		tcsetattr(0, TCSANOW, &crash_tty);
	if (term_reset_len) {
		ssize_t r = write(1, term_reset, term_reset_len);
		(void)r;
	}
	int written = 0;
	if (crash_armed && crash_bytes) {
		/* door: in a signal handler (async-signal-safe calls only); the
		 * path is the workbench's own recovery file, made at start-up */
		int fd = open(crash_tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			size_t off = 0;
			while (off < crash_len) {
				ssize_t w = write(fd, crash_bytes + off, crash_len - off);
				if (w <= 0)
					break;
				off += (size_t)w;
			}
			int ok = off == crash_len && fsync(fd) == 0;
			close(fd);
			if (ok && rename(crash_tmp, crash_path) == 0)
				written = 1;
			else
				unlink(crash_tmp);
		}
	}
	char num[4] = {(char)('0' + sig / 10 % 10), (char)('0' + sig % 10), 0, 0};
	put("\r\npartbench: crashed inside a job (signal ");
	put(sig >= 10 ? num : num + 1);
	if (written) {
		put("); the unsaved session before it was written to ");
		put(crash_path);
		put(" (the next start on the model offers it)\r\n");
	} else {
		put(crash_armed ? "); could not write the recovery session "
		                : "); nothing unsaved to recover");
		put(crash_armed ? crash_path : "");
		put("\r\n");
	}
	errno = saved_errno;
	/* SA_RESETHAND restored the default action, SA_NODEFER lets it act now */
	raise(sig);
}

static void term_reset_add(const char *cap)
{
	char *v = tigetstr((char *)cap);
	if (!v || v == (char *)-1)
		return;
	size_t n = strlen(v);
	if (term_reset_len + n < sizeof term_reset) {
		memcpy(term_reset + term_reset_len, v, n);
		term_reset_len += n;
	}
}

static void crash_install(void)
{
	static char *alt;
	if (!alt && (alt = malloc(1 << 16))) {
		stack_t ss = {.ss_sp = alt, .ss_size = 1 << 16, .ss_flags = 0};
		sigaltstack(&ss, NULL);
	}
	/* the tty as the shell had it (curses keeps it in its shell mode) */
	if (tcgetattr(0, &crash_tty) == 0) {
		crash_tty.c_lflag |= ICANON | ECHO | ISIG | IEXTEN;
		crash_tty.c_iflag |= ICRNL;
		crash_tty.c_oflag |= OPOST;
		have_tty = 1;
	}
	term_reset_len = 0;
	term_reset_add("rmcup");
	term_reset_add("cnorm");
	term_reset_add("sgr0");
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_crash;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGABRT};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
}

/* A process the workbench forks (a shard worker, the layout process) is not
 * the workbench: a crash there must not write the recovery session or the
 * crash message over the screen, and SIGTERM / SIGHUP must end it. Its parent
 * reports how it ended. */
static void signals_default_in_child(void)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], SIG_DFL);
}

void tui_signals_install(void)
{
	static int watching;
	if (!watching)
		watching = pthread_atfork(NULL, NULL, signals_default_in_child) == 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	crash_install();
}

void tui_recover_disarm(void)
{
	crash_armed = 0;
	free(crash_bytes);
	crash_bytes = NULL;
	crash_len = 0;
}

void tui_recover_arm(tui_app *a)
{
	tui_recover_disarm();
	crash_errfd = a->saved_stderr >= 0 ? a->saved_stderr : 2;
	if (!a->s->graph || !a->s->dirty)
		return;
	json_t *j = pb_session_to_json(a->s);
	/* as pb_json_save_atomic writes it */
	char *b = j ? json_dumps(j, JSON_INDENT(1) | JSON_REAL_PRECISION(12)) : NULL;
	json_decref(j);
	if (!b)
		return;
	size_t n = strlen(b);
	char *nb = realloc(b, n + 2);
	if (!nb) {
		free(b);
		return;
	}
	nb[n++] = '\n';
	nb[n] = 0;
	tui_recovery_path(a->s->session_path, crash_path, sizeof crash_path);
	snprintf(crash_tmp, sizeof crash_tmp, "%s.crash-tmp", crash_path);
	crash_bytes = nb;
	crash_len = n;
	crash_armed = 1;
}

int tui_signal_pending(void)
{
	if (!pending) {
		/* a terminal that went away without a SIGHUP reaching us (its
		 * reads return EOF at once: every input loop would spin) */
		struct pollfd p = {0, POLLIN, 0};
		if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)))
			pending = SIGHUP;
	}
	return pending;
}

void tui_recovery_path(const char *session, char *buf, size_t len)
{
	snprintf(buf, len, "%s.recover", session ? session : TUI_DEFAULT_SESSION);
}

int tui_recover_write(tui_app *a, char *path, size_t len)
{
	tui_recovery_path(a->s->session_path, path, len);
	if (!a->s->graph || !a->s->dirty)
		return 1; /* nothing to recover */
	char *session = a->s->session_path ? strdup(a->s->session_path) : NULL;
	pb_error err = {0};
	int rc = pb_session_save(a->s, path, &err);
	/* saving a copy does not make the session saved */
	free(a->s->session_path);
	a->s->session_path = session;
	a->s->dirty = 1;
	return rc == PB_OK ? 0 : -1;
}
