/*
 * layout.c — boxes and edges laid out by Graphviz dot, in terminal cells.
 *
 * pb_layout_run builds a cgraph graph with one fixed-size box node per box
 * (size converted from cells at 0.1 x 0.2 inch per cell), runs the "dot"
 * layout engine and converts node centres and edge Bezier control points back
 * to cells (y flipped so that it grows downwards). Graphviz messages go to a
 * buffer through agseterrf() and become the pb_error text; nothing is printed.
 *
 * pb_layout_spawn runs the same function in a forked child and streams a
 * binary image of the result (same executable, so same type sizes) through a
 * pipe; the parent never blocks on it. The child leaves with _exit() so it
 * runs no atexit handlers of the parent (curses, sanitizers).
 *
 * pb_layout_simple is a dependency-free fallback: longest-path layers from
 * the edges that go forward in index order (back edges are ignored, so any
 * input terminates), one barycentre sweep to order each layer, boxes packed
 * with two-cell gaps and straight edges.
 */
#include "render/layout.h"

#include <errno.h>
#include <fcntl.h>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/child_pipe.h"

#define CELL_W_IN 0.1
#define CELL_H_IN 0.2
#define PT_PER_IN 72.0

static char gv_msg[512];

static int gv_errf(char *msg)
{
	size_t n = strlen(gv_msg);
	if (n < sizeof gv_msg - 1)
		snprintf(gv_msg + n, sizeof gv_msg - n, "%s", msg);
	return 0;
}

static pb_layout *layout_alloc(int n_boxes, int n_edges, int n_pts)
{
	pb_layout *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	l->n_boxes = n_boxes;
	l->n_edges = n_edges;
	l->x = calloc((size_t)n_boxes + 1, sizeof *l->x);
	l->y = calloc((size_t)n_boxes + 1, sizeof *l->y);
	l->edge_first = calloc((size_t)n_edges + 1, sizeof *l->edge_first);
	l->px = calloc((size_t)n_pts + 1, sizeof *l->px);
	l->py = calloc((size_t)n_pts + 1, sizeof *l->py);
	if (!l->x || !l->y || !l->edge_first || !l->px || !l->py) {
		pb_layout_free(l);
		return NULL;
	}
	return l;
}

void pb_layout_free(pb_layout *l)
{
	if (!l)
		return;
	free(l->x);
	free(l->y);
	free(l->edge_first);
	free(l->px);
	free(l->py);
	free(l);
}

static void set_attr(void *obj, const char *name, const char *value)
{
	agsafeset(obj, (char *)name, (char *)value, "");
}

/* Samples a piecewise cubic Bezier (3k+1 control points) at 4 points per
 * segment plus its end. */
static int bezier_sample(const pointf *cp, int n, pointf *out)
{
	int k = 0;
	if (n < 4) {
		for (int i = 0; i < n; i++)
			out[k++] = cp[i];
		return k;
	}
	for (int s = 0; s + 3 < n; s += 3) {
		for (int j = 0; j < 4; j++) {
			double t = j / 4.0, u = 1 - t;
			pointf p;
			p.x = u * u * u * cp[s].x + 3 * u * u * t * cp[s + 1].x +
			      3 * u * t * t * cp[s + 2].x + t * t * t * cp[s + 3].x;
			p.y = u * u * u * cp[s].y + 3 * u * u * t * cp[s + 1].y +
			      3 * u * t * t * cp[s + 2].y + t * t * t * cp[s + 3].y;
			out[k++] = p;
		}
	}
	out[k++] = cp[n - 1 - (n - 1) % 3];
	return k;
}

int pb_layout_run(const pb_layout_req *req, pb_layout **out, pb_error *err)
{
	*out = NULL;
	int n = req->n_boxes;
	gv_msg[0] = 0;
	agseterr(AGERR);
	agseterrf(gv_errf);
	GVC_t *gvc = gvContext();
	if (!gvc)
		return pb_err(err, PB_EINTERNAL, "layout: Graphviz context could not be created");
	Agraph_t *g = agopen("layout", Agdirected, NULL);
	char buf[64];
	set_attr(g, "rankdir", req->left_right ? "LR" : "TB");
	snprintf(buf, sizeof buf, "%.2f", req->left_right ? 0.2 : 0.2);
	set_attr(g, "nodesep", buf);
	snprintf(buf, sizeof buf, "%.2f", req->left_right ? 0.4 : 0.4);
	set_attr(g, "ranksep", buf);
	if (req->straight)
		set_attr(g, "splines", "line");
	Agnode_t **nodes = calloc((size_t)n + 1, sizeof *nodes);
	Agedge_t **edges = calloc((size_t)req->n_edges + 1, sizeof *edges);
	if (!nodes || !edges) {
		free(nodes);
		free(edges);
		agclose(g);
		gvFreeContext(gvc);
		return pb_err(err, PB_ENOMEM, "layout: out of memory");
	}
	for (int i = 0; i < n; i++) {
		snprintf(buf, sizeof buf, "b%d", i);
		nodes[i] = agnode(g, buf, 1);
		set_attr(nodes[i], "shape", "box");
		set_attr(nodes[i], "fixedsize", "true");
		set_attr(nodes[i], "label", "");
		snprintf(buf, sizeof buf, "%.3f", (req->w[i] < 1 ? 1 : req->w[i]) * CELL_W_IN);
		set_attr(nodes[i], "width", buf);
		snprintf(buf, sizeof buf, "%.3f", (req->h[i] < 1 ? 1 : req->h[i]) * CELL_H_IN);
		set_attr(nodes[i], "height", buf);
	}
	for (int e = 0; e < req->n_edges; e++) {
		int a = req->src[e], b = req->dst[e];
		if (a < 0 || b < 0 || a >= n || b >= n || a == b)
			continue;
		edges[e] = agedge(g, nodes[a], nodes[b], NULL, 0);
		if (!edges[e])
			edges[e] = agedge(g, nodes[a], nodes[b], NULL, 1);
	}
	int rc = PB_OK;
	if (gvLayout(gvc, g, "dot") != 0) {
		rc = pb_err(err, PB_EINTERNAL, "layout: Graphviz dot failed: %s",
		            gv_msg[0] ? gv_msg : "no message");
	} else {
		boxf bb = GD_bb(g);
		int n_pts = 0;
		for (int e = 0; e < req->n_edges; e++) {
			splines *sp = edges[e] ? ED_spl(edges[e]) : NULL;
			for (int k = 0; sp && k < sp->size; k++)
				n_pts += sp->list[k].size * 2 + 4;
		}
		pb_layout *l = layout_alloc(n, req->n_edges, n_pts);
		if (!l) {
			rc = pb_err(err, PB_ENOMEM, "layout: out of memory");
		} else {
			double sx = PT_PER_IN * CELL_W_IN, sy = PT_PER_IN * CELL_H_IN;
			l->width = (bb.UR.x - bb.LL.x) / sx;
			l->height = (bb.UR.y - bb.LL.y) / sy;
			l->from_dot = 1;
			for (int i = 0; i < n; i++) {
				pointf c = ND_coord(nodes[i]);
				l->x[i] = (c.x - bb.LL.x) / sx;
				l->y[i] = (bb.UR.y - c.y) / sy;
			}
			int k = 0;
			pointf *tmp = malloc(sizeof *tmp * (size_t)(n_pts + 4));
			for (int e = 0; e < req->n_edges; e++) {
				l->edge_first[e] = k;
				splines *sp = edges[e] ? ED_spl(edges[e]) : NULL;
				for (int s = 0; tmp && sp && s < sp->size; s++) {
					bezier *bz = &sp->list[s];
					int m = bezier_sample(bz->list, bz->size, tmp);
					if (bz->eflag)
						tmp[m++] = bz->ep;
					for (int j = 0; j < m; j++) {
						l->px[k] = (tmp[j].x - bb.LL.x) / sx;
						l->py[k] = (bb.UR.y - tmp[j].y) / sy;
						k++;
					}
				}
			}
			l->edge_first[req->n_edges] = k;
			free(tmp);
			*out = l;
		}
		gvFreeLayout(gvc, g);
	}
	free(nodes);
	free(edges);
	agclose(g);
	gvFreeContext(gvc);
	return rc;
}

pb_layout *pb_layout_simple(const pb_layout_req *req)
{
	int n = req->n_boxes;
	pb_layout *l = layout_alloc(n, req->n_edges, 2 * req->n_edges);
	int *layer = calloc((size_t)n + 1, sizeof *layer);
	double *order = calloc((size_t)n + 1, sizeof *order);
	int *idx = calloc((size_t)n + 1, sizeof *idx);
	if (!l || !layer || !order || !idx) {
		pb_layout_free(l);
		free(layer);
		free(order);
		free(idx);
		return NULL;
	}
	/* longest path over forward edges: edges are visited in target order */
	int changed = 1, n_layers = n ? 1 : 0;
	for (int pass = 0; changed && pass < n + 1; pass++) {
		changed = 0;
		for (int e = 0; e < req->n_edges; e++) {
			int a = req->src[e], b = req->dst[e];
			if (a >= 0 && b > a && b < n && layer[b] < layer[a] + 1) {
				layer[b] = layer[a] + 1;
				changed = 1;
			}
		}
	}
	for (int i = 0; i < n; i++)
		if (layer[i] + 1 > n_layers)
			n_layers = layer[i] + 1;
	/* barycentre of predecessors' indices (one sweep), index as tie break */
	for (int i = 0; i < n; i++) {
		double sum = 0;
		int cnt = 0;
		for (int e = 0; e < req->n_edges; e++)
			if (req->dst[e] == i && req->src[e] >= 0 && req->src[e] < i) {
				sum += order[req->src[e]];
				cnt++;
			}
		order[i] = cnt ? sum / cnt + i * 1e-6 : i;
	}
	int lr = req->left_right;
	double along = 0; /* position along the rank axis */
	for (int L = 0; L < n_layers; L++) {
		int m = 0;
		for (int i = 0; i < n; i++)
			if (layer[i] == L)
				idx[m++] = i;
		for (int a = 1; a < m; a++) /* insertion sort by order */
			for (int b = a; b > 0 && order[idx[b]] < order[idx[b - 1]]; b--) {
				int t = idx[b];
				idx[b] = idx[b - 1];
				idx[b - 1] = t;
			}
		double thick = 0, across = 0;
		for (int j = 0; j < m; j++) {
			int i = idx[j];
			double bw = req->w[i], bh = req->h[i];
			double t = lr ? bw : bh, s = lr ? bh : bw;
			if (t > thick)
				thick = t;
			if (lr) {
				l->y[i] = across + s / 2;
			} else {
				l->x[i] = across + s / 2;
			}
			across += s + (lr ? 1 : 2);
		}
		for (int j = 0; j < m; j++) {
			int i = idx[j];
			if (lr)
				l->x[i] = along + thick / 2;
			else
				l->y[i] = along + thick / 2;
		}
		if (lr && across > l->height)
			l->height = across;
		if (!lr && across > l->width)
			l->width = across;
		along += thick + (lr ? 4 : 2);
	}
	if (lr)
		l->width = along;
	else
		l->height = along;
	int k = 0;
	for (int e = 0; e < req->n_edges; e++) {
		int a = req->src[e], b = req->dst[e];
		l->edge_first[e] = k;
		if (a < 0 || b < 0 || a >= n || b >= n || a == b)
			continue;
		if (lr) {
			l->px[k] = l->x[a] + req->w[a] / 2.0;
			l->py[k++] = l->y[a];
			l->px[k] = l->x[b] - req->w[b] / 2.0;
			l->py[k++] = l->y[b];
		} else {
			l->px[k] = l->x[a];
			l->py[k++] = l->y[a] + req->h[a] / 2.0;
			l->px[k] = l->x[b];
			l->py[k++] = l->y[b] - req->h[b] / 2.0;
		}
	}
	l->edge_first[req->n_edges] = k;
	free(layer);
	free(order);
	free(idx);
	return l;
}

/* ---- running dot in a child process ---- */

struct pb_layout_job {
	pid_t pid;
	int fd;
	pb_pipe_buf in; /* what the child wrote so far */
};

static void child_run(const pb_layout_req *req, int fd)
{
	pb_error err = {0};
	pb_layout *l = NULL;
	int rc = pb_layout_run(req, &l, &err);
	int32_t hdr[5] = {rc, 0, 0, 0, 0};
	if (rc) {
		hdr[1] = (int32_t)strlen(err.msg);
		pb_write_all(fd, hdr, sizeof hdr);
		pb_write_all(fd, err.msg, (size_t)hdr[1]);
		return;
	}
	int n_pts = l->edge_first[l->n_edges];
	hdr[1] = l->n_boxes;
	hdr[2] = l->n_edges;
	hdr[3] = n_pts;
	hdr[4] = l->from_dot;
	double ext[2] = {l->width, l->height};
	if (pb_write_all(fd, hdr, sizeof hdr) || pb_write_all(fd, ext, sizeof ext) ||
	    pb_write_all(fd, l->x, sizeof(double) * (size_t)l->n_boxes) ||
	    pb_write_all(fd, l->y, sizeof(double) * (size_t)l->n_boxes) ||
	    pb_write_all(fd, l->edge_first, sizeof(int) * (size_t)(l->n_edges + 1)) ||
	    pb_write_all(fd, l->px, sizeof(double) * (size_t)n_pts) ||
	    pb_write_all(fd, l->py, sizeof(double) * (size_t)n_pts))
		return;
}

int pb_layout_spawn(const pb_layout_req *req, pb_layout_job **job, pb_error *err)
{
	*job = NULL;
	int p[2];
	if (pipe(p) != 0)
		return pb_err(err, PB_EINTERNAL, "layout: pipe: %s", strerror(errno));
	pb_layout_job *j = calloc(1, sizeof *j);
	if (!j) {
		close(p[0]);
		close(p[1]);
		return pb_err(err, PB_ENOMEM, "layout: out of memory");
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		free(j);
		return pb_err(err, PB_EINTERNAL, "layout: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(p[0]);
		child_run(req, p[1]);
		close(p[1]);
		_exit(0);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	j->pid = pid;
	j->fd = p[0];
	*job = j;
	return PB_OK;
}

int pb_layout_job_fd(const pb_layout_job *job)
{
	return job->fd;
}

static void job_free(pb_layout_job *job)
{
	if (job->fd >= 0)
		close(job->fd);
	if (job->pid > 0)
		waitpid(job->pid, NULL, 0);
	free(job->in.buf);
	free(job);
}

void pb_layout_job_cancel(pb_layout_job *job)
{
	if (!job)
		return;
	if (job->pid > 0)
		kill(job->pid, SIGKILL);
	job_free(job);
}

static int take(const char **p, const char *end, void *dst, size_t n)
{
	if ((size_t)(end - *p) < n)
		return -1;
	memcpy(dst, *p, n);
	*p += n;
	return 0;
}

static int job_parse(pb_layout_job *job, pb_layout **out, pb_error *err)
{
	const char *p = job->in.buf, *end = job->in.buf + job->in.len;
	int32_t hdr[5];
	if (take(&p, end, hdr, sizeof hdr)) {
		int status = 0;
		pid_t w = job->pid > 0 ? waitpid(job->pid, &status, 0) : -1;
		job->pid = 0;
		if (w > 0 && WIFSIGNALED(status))
			return pb_err(err, PB_EINTERNAL,
			              "layout: the layout process ended early (signal %d: %s)",
			              WTERMSIG(status), strsignal(WTERMSIG(status)));
		if (w > 0 && WIFEXITED(status))
			return pb_err(err, PB_EINTERNAL,
			              "layout: the layout process ended early (exit status %d)",
			              WEXITSTATUS(status));
		return pb_err(err, PB_EINTERNAL, "layout: the layout process ended early");
	}
	if (hdr[0] != 0) {
		int n = hdr[1];
		if (n < 0 || n > end - p)
			n = (int)(end - p);
		return pb_err(err, hdr[0], "%.*s", n, p);
	}
	if (hdr[1] < 0 || hdr[2] < 0 || hdr[3] < 0)
		return pb_err(err, PB_EINTERNAL, "layout: malformed result");
	pb_layout *l = layout_alloc(hdr[1], hdr[2], hdr[3]);
	if (!l)
		return pb_err(err, PB_ENOMEM, "layout: out of memory");
	l->from_dot = hdr[4];
	double ext[2];
	if (take(&p, end, ext, sizeof ext) ||
	    take(&p, end, l->x, sizeof(double) * (size_t)hdr[1]) ||
	    take(&p, end, l->y, sizeof(double) * (size_t)hdr[1]) ||
	    take(&p, end, l->edge_first, sizeof(int) * (size_t)(hdr[2] + 1)) ||
	    take(&p, end, l->px, sizeof(double) * (size_t)hdr[3]) ||
	    take(&p, end, l->py, sizeof(double) * (size_t)hdr[3])) {
		pb_layout_free(l);
		return pb_err(err, PB_EINTERNAL, "layout: truncated result");
	}
	l->width = ext[0];
	l->height = ext[1];
	*out = l;
	return PB_OK;
}

int pb_layout_job_poll(pb_layout_job *job, pb_layout **out, pb_error *err)
{
	*out = NULL;
	for (;;) {
		int r = pb_pipe_read(&job->in, job->fd);
		if (r == PB_PIPE_OOM) {
			pb_layout_job_cancel(job);
			pb_err(err, PB_ENOMEM, "layout: out of memory");
			return -1;
		}
		if (r == PB_PIPE_AGAIN)
			return 0;
		if (r == PB_PIPE_DATA)
			continue;
		break; /* EOF or error: the child is done */
	}
	int rc = job_parse(job, out, err);
	job_free(job);
	return rc == PB_OK ? 1 : -1;
}
