/*
 * layout.h — Graphviz `dot` layout of boxes and edges into terminal cells.
 *
 * The caller describes boxes by their size in character cells and directed
 * edges between them; the result gives each box's centre and each edge's
 * path as points, all in cells (x to the right, y downwards, origin at the
 * top-left of the drawing). A cell is taken as 0.1 x 0.2 inch, the usual 1:2
 * aspect of terminal characters.
 *
 * pb_layout_run() calls Graphviz in-process and must run on the main thread.
 * pb_layout_spawn() forks a child that runs the same code and sends the
 * result back through a pipe, so a front end can keep handling keys while a
 * large graph is laid out; poll the job's fd and collect with
 * pb_layout_job_poll(). pb_layout_simple() is the instant fallback (longest
 * path layering with one barycentre sweep) used while dot runs or when it
 * exceeds its time limit.
 */
#ifndef PB_RENDER_LAYOUT_H
#define PB_RENDER_LAYOUT_H

#include <sys/types.h>

#include "util/error.h"

typedef struct pb_layout_req {
	int n_boxes;
	const int *w, *h; /* box sizes in cells (>= 1) */
	int n_edges;
	const int *src, *dst; /* box indices */
	int left_right;       /* 1: ranks left to right; 0: top down */
	int straight;         /* 1: straight edges (faster for big graphs) */
} pb_layout_req;

typedef struct pb_layout {
	int n_boxes;
	double *x, *y;        /* box centres (cells) */
	double width, height; /* extent of the drawing (cells) */
	int n_edges;
	int *edge_first; /* n_edges + 1 offsets into px/py */
	double *px, *py; /* edge path points (cells), tail to head */
	int from_dot;    /* 1 when computed by Graphviz, 0 for the fallback */
} pb_layout;

int pb_layout_run(const pb_layout_req *req, pb_layout **out, pb_error *err);
pb_layout *pb_layout_simple(const pb_layout_req *req);
void pb_layout_free(pb_layout *l);

typedef struct pb_layout_job pb_layout_job;
int pb_layout_spawn(const pb_layout_req *req, pb_layout_job **job, pb_error *err);
/* Readable file descriptor of the job (for poll/select). */
int pb_layout_job_fd(const pb_layout_job *job);
/* Reads what is available. Returns 1 and sets *out (or fills err and returns
 * -1) when the job is finished; 0 while it is still running. The job is
 * freed when 1 or -1 is returned. */
int pb_layout_job_poll(pb_layout_job *job, pb_layout **out, pb_error *err);
/* Kills the child (by its pid) and frees the job. */
void pb_layout_job_cancel(pb_layout_job *job);

#endif
