/*
 * partition/milp/chain_milp_root.c — the root LP in a forked child (chain_milp_root.h).
 *
 * Wire: the child writes {rc, m, n} (ints), then, when rc is 0, the status of each
 * row and each column (ints, GLP_BS ...), then closes the pipe and _exits.
 */
#include "partition/milp/chain_milp_root.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void pb_milp_root_params(glp_smcp *sp)
{
	glp_init_smcp(sp);
	/* The standard basis (x = 0, T at its lower bound) is dual feasible. */
	sp->meth = GLP_DUALP;
}

/* In the child: the same glp_simplex calls as chain_milp.c's co_main. */
static void run_child(glp_prob *lp, double deadline, int fd)
{
	static const int sigs[] = {SIGHUP,  SIGTERM, SIGINT, SIGQUIT, SIGTSTP,
	                           SIGSEGV, SIGBUS,  SIGFPE, SIGABRT};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], SIG_DFL); /* the workbench's handlers write sessions */
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	glp_term_out(GLP_OFF);
	glp_term_hook(NULL, NULL);
	glp_smcp sp;
	pb_milp_root_params(&sp);
	sp.msg_lev = GLP_MSG_OFF;
	int rc;
	for (;;) {
		double chunk = PB_MILP_ROOT_CHUNK;
		if (isfinite(deadline) && deadline - now_seconds() < chunk)
			chunk = deadline - now_seconds();
		sp.tm_lim = chunk * 1e3 < 1 ? 1 : (int)(chunk * 1e3);
		rc = glp_simplex(lp, &sp);
		if (rc != GLP_ETMLIM || now_seconds() >= deadline)
			break;
	}
	int m = glp_get_num_rows(lp), n = glp_get_num_cols(lp);
	int head[3] = {rc, m, n}, bad = pb_write_all(fd, head, sizeof head);
	if (rc == 0 && !bad) {
		int *st = malloc(((size_t)m + (size_t)n) * sizeof *st);
		if (!st)
			_exit(3);
		for (int i = 1; i <= m; i++)
			st[i - 1] = glp_get_row_stat(lp, i);
		for (int j = 1; j <= n; j++)
			st[m + j - 1] = glp_get_col_stat(lp, j);
		bad = pb_write_all(fd, st, ((size_t)m + (size_t)n) * sizeof *st);
	}
	close(fd);
	_exit(bad ? 3 : 0);
}

int pb_milp_root_start(pb_milp_root *r, glp_prob *lp, double deadline, pb_error *err)
{
	memset(r, 0, sizeof *r);
	int fds[2];
	if (pipe(fds) != 0)
		return pb_err(err, PB_EINTERNAL, "milp: pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return pb_err(err, PB_EINTERNAL, "milp: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(fds[0]);
		run_child(lp, deadline, fds[1]);
	}
	close(fds[1]);
	fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
	r->pid = (int)pid;
	r->fd = fds[0];
	return PB_OK;
}

static void reap(pb_milp_root *r)
{
	int status;
	while (waitpid((pid_t)r->pid, &status, 0) < 0 && errno == EINTR)
		;
	close(r->fd);
	free(r->in.buf);
	memset(&r->in, 0, sizeof r->in);
	r->pid = 0;
}

int pb_milp_root_poll(pb_milp_root *r, glp_prob *lp, int *rc)
{
	if (!r->pid)
		return -1;
	int got;
	while ((got = pb_pipe_read(&r->in, r->fd)) == PB_PIPE_DATA)
		;
	if (got == PB_PIPE_AGAIN)
		return 0;
	int ok = got == PB_PIPE_EOF && r->in.len >= 3 * sizeof(int);
	int head[3] = {0, 0, 0};
	if (ok)
		memcpy(head, r->in.buf, sizeof head);
	const int m = glp_get_num_rows(lp), n = glp_get_num_cols(lp);
	ok = ok && head[1] == m && head[2] == n;
	if (ok && head[0] == 0) {
		ok = r->in.len == sizeof head + ((size_t)m + (size_t)n) * sizeof(int);
		const int *st = (const int *)(const void *)(r->in.buf + sizeof head);
		for (int i = 1; ok && i <= m; i++)
			glp_set_row_stat(lp, i, st[i - 1]);
		for (int j = 1; ok && j <= n; j++)
			glp_set_col_stat(lp, j, st[m + j - 1]);
	}
	*rc = head[0];
	reap(r);
	return ok ? 1 : -1;
}

void pb_milp_root_stop(pb_milp_root *r)
{
	if (!r->pid)
		return;
	kill((pid_t)r->pid, SIGKILL);
	reap(r);
}
