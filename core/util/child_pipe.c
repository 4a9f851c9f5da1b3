/*
 * child_pipe.c — see child_pipe.h.
 */
#include "util/child_pipe.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

int pb_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int pb_pipe_read(pb_pipe_buf *b, int fd)
{
	if (b->cap - b->len < 65536) {
		size_t cap = b->cap ? b->cap * 2 : 131072;
		char *nb = realloc(b->buf, cap);
		if (!nb)
			return PB_PIPE_OOM;
		b->buf = nb;
		b->cap = cap;
	}
	ssize_t r = read(fd, b->buf + b->len, b->cap - b->len);
	if (r > 0) {
		b->len += (size_t)r;
		return PB_PIPE_DATA;
	}
	if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
		return PB_PIPE_AGAIN;
	return PB_PIPE_EOF;
}
