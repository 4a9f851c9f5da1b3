/*
 * fuzz_target.h — included once by every fuzz target (each is its own
 * program).
 *
 * - The libFuzzer entry point's prototype.
 * - Undefined behaviour stops the run: the targets are built with
 *   -fsanitize=undefined, which by default only prints a report and goes on,
 *   so `make fuzz` would pass over it. (UBSAN_OPTIONS still overrides this.)
 *   A target whose loader has known, not yet fixed UB defines
 *   FUZZ_UB_NOT_FATAL before including this header, saying where.
 * - fuzz_tmp_write, for the loaders that read a path: the input goes to a
 *   fresh file under /tmp (mkstemp) that the target unlinks when done.
 *   Returns 0 with the name in path, -1 when the file cannot be written.
 */
#ifndef PB_FUZZ_TARGET_H
#define PB_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef FUZZ_UB_NOT_FATAL
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}
#endif

static inline int fuzz_tmp_write(const uint8_t *data, size_t size, char path[64])
{
	snprintf(path, 64, "/tmp/pb_fuzz_XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < size) {
		ssize_t w = write(fd, data + done, size - done);
		if (w <= 0) {
			close(fd);
			unlink(path);
			return -1;
		}
		done += (size_t)w;
	}
	close(fd);
	return 0;
}

#endif
