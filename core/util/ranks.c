/*
 * util/ranks.c — the MPI job (ranks.h). Without PB_HAVE_MPI every function
 * is the job of one rank, and asking for more ranks is an error saying so.
 */
#include "util/ranks.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef PB_HAVE_MPI
#include <mpi.h>
#endif

static int g_started, g_rank, g_size = 1;
static char g_host[256];

int pb_ranks_built_with_mpi(void)
{
#ifdef PB_HAVE_MPI
	return 1;
#else
	return 0;
#endif
}

int pb_ranks_launched(void)
{
	const char *v = getenv("OMPI_COMM_WORLD_SIZE");
	if (!v)
		v = getenv("PMI_SIZE");
	long n = v ? strtol(v, NULL, 10) : 1;
	return n > 1 && n < 1000000 ? (int)n : 1;
}

const char *pb_ranks_host(void)
{
	if (!g_host[0] && gethostname(g_host, sizeof g_host - 1))
		snprintf(g_host, sizeof g_host, "?");
	return g_host;
}

int pb_ranks_rank(void)
{
	return g_rank;
}

int pb_ranks_size(void)
{
	return g_size;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int g_abandon;
/* seconds a collective waits for the last rank (pb_ranks_set_timeout) */
static double g_coll_timeout = 600;
static int g_broken; /* a collective timed out: the others fail at once */

void pb_ranks_abandon(void)
{
	g_abandon = 1;
}

void pb_ranks_set_timeout(double seconds)
{
	if (seconds > 0)
		g_coll_timeout = seconds;
}

#ifdef PB_HAVE_MPI
static void finish(void)
{
	if (g_abandon) /* a dead rank would keep MPI_Finalize waiting */
		return;
	int fin = 0;
	MPI_Finalized(&fin);
	if (!fin)
		MPI_Finalize();
}

static int mpi_fail(pb_error *err, int code, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS)
		snprintf(msg, sizeof msg, "error %d", code);
	return pb_err(err, PB_EINTERNAL, "MPI (rank %d of %d): %s: %s", g_rank, g_size, what, msg);
}

/* Waits for a collective begun with MPI_I*: every rank must reach it within
 * the collective timeout of the last one to arrive. A rank that died never
 * arrives (Open MPI without ULFM reports nothing; with --enable-recovery the
 * job goes on): the wait gives up, marks the job abandoned (no MPI_Finalize,
 * which would wait for the dead rank too) and fails naming the timeout. An
 * MPI error (ULFM's MPI_ERR_PROC_FAILED) ends it at once. */
static int wait_collective(MPI_Request *req, const char *what, pb_error *err)
{
	if (g_broken) /* a request that never ends is left: the job is over */
		return pb_err(err, PB_EINTERNAL,
		              "MPI (rank %d of %d): %s: another rank did not arrive within %.0f s "
		              "at an earlier step (died?); stopping without it",
		              g_rank, g_size, what, g_coll_timeout);
	double t0 = now();
	for (unsigned long spins = 0;; spins++) {
		int done = 0, rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS) {
			g_abandon = 1;
			return mpi_fail(err, rc, what);
		}
		if (done)
			return PB_OK;
		if (now() - t0 > g_coll_timeout) {
			g_abandon = g_broken = 1;
			return pb_err(err, PB_EINTERNAL,
			              "MPI (rank %d of %d): %s: another rank did not arrive within "
			              "%.0f s (died, or --rank-timeout is shorter than its work); "
			              "stopping without it",
			              g_rank, g_size, what, g_coll_timeout);
		}
		if (spins > 1000) /* a long wait: a slower rank's episode, a search */
			usleep(spins > 100000 ? 10000 : 200);
	}
}
#endif

#ifdef PB_HAVE_MPI
/* MPI_Init waits for every rank; a rank that dies while starting (before
 * partbench's first collective, where PB_RANK_TIMEOUT applies) kept the
 * others in MPI_Init for ever under --enable-recovery (issue 39). A thread
 * watches it: if MPI_Init has not returned within its timeout, the process
 * says so and exits 2 (nothing was done yet, so nothing is lost). The
 * timeout is PB_MPI_INIT_TIMEOUT when set (any positive value: the user
 * chose it for MPI_Init itself), else the rank timeout but at least 60 s:
 * a short PB_RANK_TIMEOUT is for the gaps between collectives, and MPI_Init
 * itself takes seconds on a loaded machine and under the sanitizers. */
typedef struct init_watch {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
	double seconds;
	const char *what;
} init_watch;

static void *init_watch_run(void *p)
{
	init_watch *w = p;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)w->seconds;
	until.tv_nsec += (long)((w->seconds - (double)(time_t)w->seconds) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->mu);
	int rc = 0;
	while (!w->done && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&w->cv, &w->mu, &until);
	int done = w->done;
	pthread_mutex_unlock(&w->mu);
	if (!done) {
		fprintf(stderr,
		        "%s: MPI_Init did not complete within %g s: a rank died while starting? "
		        "(PB_MPI_INIT_TIMEOUT, else PB_RANK_TIMEOUT but at least 60 s); stopping\n",
		        w->what, w->seconds);
		fflush(stderr);
		_exit(2);
	}
	return NULL;
}
#endif

int pb_ranks_start(const char *what, pb_error *err)
{
	if (g_started)
		return PB_OK;
	int n = pb_ranks_launched();
#ifdef PB_HAVE_MPI
	if (n <= 1) {
		g_started = 1;
		return PB_OK;
	}
	const char *t = getenv("PB_RANK_TIMEOUT");
	if (t && *t)
		pb_ranks_set_timeout(atof(t));
	double init_s = g_coll_timeout > 60 ? g_coll_timeout : 60;
	const char *it = getenv("PB_MPI_INIT_TIMEOUT");
	if (it && *it) {
		char *end;
		init_s = strtod(it, &end);
		if (*end || !(init_s > 0 && init_s <= 1e9))
			return pb_err(err, PB_EINPUT,
			              "%s: PB_MPI_INIT_TIMEOUT must be a number of seconds above 0 "
			              "and at most 1e9, "
			              "not '%.40s'",
			              what, it);
	}
	init_watch w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, init_s, what};
	pthread_t watcher;
	int watching = pthread_create(&watcher, NULL, init_watch_run, &w) == 0;
	int provided = 0, rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
	if (watching) {
		pthread_mutex_lock(&w.mu);
		w.done = 1;
		pthread_cond_signal(&w.cv);
		pthread_mutex_unlock(&w.mu);
		pthread_join(watcher, NULL);
	}
	if (rc != MPI_SUCCESS)
		return pb_err(err, PB_EINTERNAL, "%s: MPI_Init failed (error %d)", what, rc);
	atexit(finish);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &g_size);
	g_started = 1;
	if (g_rank != 0) {
		/* rank 0 prints the report; the others would print copies */
		fflush(stdout);
		/* door: a fixed system path, no user's */
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			close(fd);
		}
	}
	return PB_OK;
#else
	if (n > 1)
		return pb_err(err, PB_EUSAGE,
		              "%s: this partbench was built without Open MPI, so it cannot work "
		              "across the %d ranks mpirun started (each would run the whole "
		              "command); install libopenmpi-dev and rebuild (make build)",
		              what, n);
	g_started = 1;
	return PB_OK;
#endif
}

int pb_ranks_send(int to, int tag, const void *buf, size_t len, pb_error *err)
{
#ifdef PB_HAVE_MPI
	if (len > INT32_MAX)
		return pb_err(err, PB_EINTERNAL, "MPI: message of %zu bytes is too long", len);
	int rc = MPI_Send(buf, (int)len, MPI_BYTE, to, tag, MPI_COMM_WORLD);
	return rc == MPI_SUCCESS ? PB_OK : mpi_fail(err, rc, "send");
#else
	(void)to;
	(void)tag;
	(void)buf;
	(void)len;
	return pb_err(err, PB_EINTERNAL, "MPI: not built with Open MPI");
#endif
}

int pb_ranks_poll(int from, int tag, double timeout, int *src, int *tag_out, char **buf,
                  size_t *len, pb_error *err)
{
#ifdef PB_HAVE_MPI
	double t0 = now();
	unsigned nap = 50; /* microseconds, growing to 5 ms */
	for (;;) {
		int flag = 0;
		MPI_Status st;
		int rc = MPI_Iprobe(from < 0 ? MPI_ANY_SOURCE : from, tag < 0 ? MPI_ANY_TAG : tag,
		                    MPI_COMM_WORLD, &flag, &st);
		if (rc != MPI_SUCCESS)
			return -mpi_fail(err, rc, "probe");
		if (flag) {
			int n = 0;
			MPI_Get_count(&st, MPI_BYTE, &n);
			char *b = malloc((size_t)n + 1);
			if (!b)
				return -pb_err(err, PB_ENOMEM, "MPI: out of memory");
			rc = MPI_Recv(b, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
			              MPI_STATUS_IGNORE);
			if (rc != MPI_SUCCESS) {
				free(b);
				return -mpi_fail(err, rc, "receive");
			}
			b[n] = 0;
			*src = st.MPI_SOURCE;
			*tag_out = st.MPI_TAG;
			*buf = b;
			*len = (size_t)n;
			return 1;
		}
		if (timeout >= 0 && now() - t0 >= timeout)
			return 0;
		usleep(nap);
		if (nap < 5000)
			nap *= 2;
	}
#else
	(void)from;
	(void)tag;
	(void)src;
	(void)tag_out;
	(void)buf;
	(void)len;
	(void)err;
	if (timeout > 0)
		usleep((useconds_t)(timeout * 1e6));
	(void)now;
	return 0;
#endif
}

int pb_ranks_allgather(const void *mine, size_t len, char **all, size_t *lens, pb_error *err)
{
#ifdef PB_HAVE_MPI
	if (g_size > 1) {
		if (len > INT32_MAX)
			return pb_err(err, PB_EINTERNAL, "MPI: message of %zu bytes is too long",
			              len);
		int n = (int)len, *cnt = calloc((size_t)g_size, sizeof *cnt),
		    *off = calloc((size_t)g_size, sizeof *off);
		if (!cnt || !off) {
			free(cnt);
			free(off);
			return pb_err(err, PB_ENOMEM, "MPI: out of memory");
		}
		MPI_Request req;
		int rc = MPI_Iallgather(&n, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD, &req);
		if (rc == MPI_SUCCESS && wait_collective(&req, "allgather", err)) {
			free(cnt);
			free(off);
			return err ? err->code : PB_EINTERNAL;
		}
		size_t total = 0;
		for (int r = 0; r < g_size && rc == MPI_SUCCESS; r++) {
			off[r] = (int)total;
			lens[r] = (size_t)cnt[r];
			total += (size_t)cnt[r];
		}
		char *b = NULL;
		if (rc == MPI_SUCCESS && total > INT32_MAX) {
			free(cnt);
			free(off);
			return pb_err(err, PB_EINTERNAL, "MPI: %zu bytes to gather is too much",
			              total);
		}
		if (rc == MPI_SUCCESS && !(b = malloc(total + 1))) {
			free(cnt);
			free(off);
			return pb_err(err, PB_ENOMEM, "MPI: out of memory");
		}
		if (rc == MPI_SUCCESS)
			rc = MPI_Iallgatherv(mine, n, MPI_BYTE, b, cnt, off, MPI_BYTE,
			                     MPI_COMM_WORLD, &req);
		if (rc == MPI_SUCCESS && wait_collective(&req, "allgather", err)) {
			free(cnt);
			free(off);
			free(b);
			return err ? err->code : PB_EINTERNAL;
		}
		free(cnt);
		free(off);
		if (rc != MPI_SUCCESS) {
			free(b);
			return mpi_fail(err, rc, "allgather");
		}
		*all = b;
		return PB_OK;
	}
#endif
	char *b = malloc(len + 1);
	if (!b)
		return pb_err(err, PB_ENOMEM, "out of memory");
	if (len)
		memcpy(b, mine, len);
	*all = b;
	lens[0] = len;
	return PB_OK;
}

int pb_ranks_sum(double *v, size_t n, pb_error *err)
{
#ifdef PB_HAVE_MPI
	if (g_size > 1) {
		if (n > INT32_MAX)
			return pb_err(err, PB_EINTERNAL, "MPI: %zu values is too many", n);
		MPI_Request req;
		int rc = MPI_Iallreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_SUM,
		                        MPI_COMM_WORLD, &req);
		return rc == MPI_SUCCESS ? wait_collective(&req, "allreduce", err)
		                         : mpi_fail(err, rc, "allreduce");
	}
#endif
	(void)v;
	(void)n;
	(void)err;
	return PB_OK;
}

int pb_ranks_agree(unsigned long long value, int *all_same, pb_error *err)
{
	*all_same = 1;
#ifdef PB_HAVE_MPI
	if (g_size > 1) {
		unsigned long long mm[2] = {value, ~value};
		MPI_Request req;
		int rc = MPI_Iallreduce(MPI_IN_PLACE, mm, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
		                        MPI_COMM_WORLD, &req);
		if (rc != MPI_SUCCESS)
			return mpi_fail(err, rc, "allreduce");
		if ((rc = wait_collective(&req, "allreduce", err)))
			return rc;
		*all_same = mm[0] == value && ~mm[1] == value;
	}
#endif
	(void)err;
	return PB_OK;
}
