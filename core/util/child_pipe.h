/*
 * child_pipe.h — the pipe between partbench and a forked worker (the Graphviz
 * layout child of the workbench, the shard scheme workers): the child writes
 * its whole result with pb_write_all, the parent collects it with
 * pb_pipe_read into a growing buffer until end of file.
 */
#ifndef PB_CHILD_PIPE_H
#define PB_CHILD_PIPE_H

#include <stddef.h>

/* Writes all n bytes (retrying short writes and EINTR); 0 or -1. */
int pb_write_all(int fd, const void *p, size_t n);

typedef struct pb_pipe_buf {
	char *buf;
	size_t len, cap;
} pb_pipe_buf;

enum {
	PB_PIPE_OOM = -1,  /* the buffer could not grow */
	PB_PIPE_AGAIN = 0, /* nothing to read now (EAGAIN, EINTR) */
	PB_PIPE_EOF = 1,   /* end of file, or a read error: the writer is done */
	PB_PIPE_DATA = 2,  /* bytes were appended to b */
};

/* One read(2) from fd appended to b (grown as needed); returns PB_PIPE_*. */
int pb_pipe_read(pb_pipe_buf *b, int fd);

#endif
