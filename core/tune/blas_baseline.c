/*
 * tune/blas_baseline.c — the OpenBLAS baseline in child processes (see
 * blas_baseline.h). Each child sets OPENBLAS_CORETYPE (or not), loads the
 * library (util/lazy_openblas.h), measures one-thread sgemm with the tuner's
 * own clock and repetitions (tune/measure.c), and writes one fixed-size
 * record to a pipe (util/child_pipe.h). The parent never loads OpenBLAS for
 * the baseline, so each child's library reads its own environment.
 */
#include "tune/blas_baseline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/child_pipe.h"

typedef struct wire {
	int ok;
	double gflops;
	char core[32];
} wire;

int pb_blas_baseline_rank(const char *core)
{
	static const char *const avx512[] = {"SkylakeX", "Cooperlake", "SapphireRapids"};
	static const char *const avx2[] = {"Haswell", "Zen"};
	static const char *const avx[] = {"Sandybridge", "Bulldozer", "Piledriver", "Steamroller",
	                                  "Excavator"};
	if (!core)
		return 0;
	for (size_t i = 0; i < sizeof avx512 / sizeof *avx512; i++)
		if (!strcasecmp(core, avx512[i]))
			return 3;
	for (size_t i = 0; i < sizeof avx2 / sizeof *avx2; i++)
		if (!strcasecmp(core, avx2[i]))
			return 2;
	for (size_t i = 0; i < sizeof avx / sizeof *avx; i++)
		if (!strcasecmp(core, avx[i]))
			return 1;
	return 0;
}

const char *pb_blas_baseline_cpu_core(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512cd"))
		return "SkylakeX";
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return "Haswell";
	if (__builtin_cpu_supports("avx"))
		return "Sandybridge";
#endif
	return NULL;
}

/* One child: OPENBLAS_CORETYPE = coretype (NULL: as inherited), then the measurement.
 * Returns 0 with *w filled, or -1 with why[] (the child died or could not start). */
static int run_child(const pb_tune_shape *shape, const pb_tune_measure_opts *o,
                     const char *coretype, wire *w, char *why, size_t len)
{
	int fds[2];
	memset(w, 0, sizeof *w);
	if (pipe(fds) != 0) {
		snprintf(why, len, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL); /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		snprintf(why, len, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		wire r = {0};
		if (coretype)
			setenv("OPENBLAS_CORETYPE", coretype, 1);
		r.ok = pb_tune_openblas_gflops(shape, o, &r.gflops, r.core, sizeof r.core) == 0;
		int bad = pb_write_all(fds[1], &r, sizeof r);
		close(fds[1]);
		_exit(bad ? 3 : 0);
	}
	close(fds[1]);
	pb_pipe_buf in = {0};
	int st;
	while ((st = pb_pipe_read(&in, fds[0])) != PB_PIPE_EOF && st != PB_PIPE_OOM)
		;
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	int rc = -1;
	if (in.len == sizeof *w) {
		memcpy(w, in.buf, sizeof *w);
		w->core[sizeof w->core - 1] = '\0';
		rc = 0;
	} else if (WIFSIGNALED(status)) {
		snprintf(why, len, "its child process died (signal %d)", WTERMSIG(status));
	} else {
		snprintf(why, len, "its child process exited with status %d",
		         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	free(in.buf);
	return rc;
}

void pb_blas_baseline_run(const pb_tune_shape *shape, const pb_tune_measure_opts *o,
                          pb_blas_baseline *b)
{
	memset(b, 0, sizeof *b);
	const char *env = getenv("OPENBLAS_CORETYPE"), *best = pb_blas_baseline_cpu_core();
	snprintf(b->env, sizeof b->env, "%s", env ? env : "");
	snprintf(b->cpu_best, sizeof b->cpu_best, "%s", best ? best : "");
	wire d, f;
	char why[128] = "";
	if (run_child(shape, o, NULL, &d, why, sizeof why) != 0 || !d.ok) {
		if (why[0])
			snprintf(b->note, sizeof b->note, "OpenBLAS could not run: %s", why);
		return; /* not available */
	}
	b->ran = 1;
	b->gflops = b->detected_gflops = d.gflops;
	snprintf(b->core, sizeof b->core, "%s", d.core);
	snprintf(b->detected, sizeof b->detected, "%s", d.core);
	if (!best || pb_blas_baseline_rank(d.core) >= pb_blas_baseline_rank(best))
		return;
	/* The library's choice is weaker than the CPU allows: its best kernels, forced. */
	if (run_child(shape, o, best, &f, why, sizeof why) != 0 || !f.ok) {
		snprintf(b->note, sizeof b->note, "OPENBLAS_CORETYPE=%s did not run: %s", best,
		         why[0] ? why : "OpenBLAS did not load");
		return;
	}
	if (pb_blas_baseline_rank(f.core) <= pb_blas_baseline_rank(d.core)) {
		snprintf(b->note, sizeof b->note,
		         "OPENBLAS_CORETYPE=%s gave %s kernels: this OpenBLAS lacks them", best,
		         f.core);
		return;
	}
	b->forced = 1;
	b->gflops = f.gflops;
	snprintf(b->core, sizeof b->core, "%s", f.core);
}
