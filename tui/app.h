/*
 * app.h — state shared by the workbench's files (tui/ only; includes curses).
 *
 * The workbench reads the session through its query functions and the view
 * string (view.h), and changes it only by running command strings through
 * tui_run() (the same command table as the CLI). Redraw is driven by the
 * PB_REDRAW_* flags returned by commands and session listeners; the main
 * loop draws what is flagged and flushes once per iteration.
 */
#ifndef PB_TUI_APP_H
#define PB_TUI_APP_H

#include <curses.h>
#include <signal.h>
#include <stdio.h>

#include "commands.h"
#include "render/blocks.h"
#include "render/layout.h"

/* A box on the canvas: one node, or a contiguous range of nodes collapsed
 * into a block (same name prefix and plan group). */
typedef struct tui_item {
	int first, last; /* node id range */
	int group;       /* plan group of its first node (-1 if none) */
	int group_last;  /* plan group of its last node */
	int block;       /* 1 when it stands for more than one node */
	int w, h;        /* size in cells at the current zoom */
	char label[40];
	char slabel[16]; /* the label at zoom 1: at most TUI_SLABEL_MAX, index kept */
} tui_item;

/* Widest label of a box at zoom 0 (the box is two cells wider). */
#define TUI_LABEL_MAX 26
/* Widest label of a block at zoom 1 ("..denselayer11", "..5.1.attn"). */
#define TUI_SLABEL_MAX 14

/* The graph as drawn: items, edges between items and their layout. */
typedef struct tui_viewgraph {
	const pb_graph *graph; /* the graph the items were built for */
	int n_items;
	tui_item *items;
	int *item_of; /* node id -> item index */
	int n_edges;
	int *src, *dst;
	int zoom, lr;
	int depth;               /* collapse depth in use (-1: nothing collapsed) */
	pb_layout *layout;       /* current coordinates (simple or dot), may be NULL */
	pb_layout_job *job;      /* dot running in a child process */
	double job_start;        /* monotonic seconds */
	double dot_seconds;      /* duration of the last finished dot layout */
	char layout_note[96];    /* "dot 0.41 s", "simple (dot running)", ... */
	pb_blocks *blocks;       /* module-path or structural block hierarchy */
	unsigned char *top_cut;  /* per node: starts a run of top-level blocks at depth 0
	                            (NULL: depth 0 is one box; viewgraph.c) */
	unsigned char *is_const; /* per node: computes only from constants */
	int show_consts;         /* 1: boxes of constants only are drawn too */
	int n_hidden;            /* nodes in no drawn box (constants hidden) */
	long sel_seen;           /* the view's selection at the last update */
	int start_pending;       /* a model was opened in place of another */
} tui_viewgraph;

enum { TUI_OUT_LINES = 400 };

/* Output capture of one command run (app.c): its streams replace ctx->out
 * and ctx->log from begin to end; runs nest (a navigation command while a
 * job is suspended) and end in the reverse order. */
typedef struct tui_capture {
	FILE *out, *log, *saved_out, *saved_log;
	char *obuf, *lbuf;
	size_t olen, llen;
	int saved_redraw;
} tui_capture;

typedef struct tui_job tui_job;

typedef struct tui_app {
	pb_cmd_ctx *ctx;
	pb_session *s;
	int rows, cols, too_small;
	WINDOW *wtitle, *wcanvas, *wside, *wout, *wstatus, *wcmd;
	int canvas_h, canvas_w, side_w, out_h;
	int color, utf8, mouse_on;
	int redraw;
	int quit;
	tui_viewgraph vg;
	/* output pane: ring of lines; err marks error lines */
	char *out[TUI_OUT_LINES];
	int out_err[TUI_OUT_LINES];
	unsigned out_gen[TUI_OUT_LINES]; /* plan_gen when the line was added */
	unsigned plan_gen;               /* bumped on every plan change */
	/* the plan as of the last main-loop turn ("partition/exact (6 groups) of
	 * resnet18.onnx", "" for none) and whether it was unsaved: a model
	 * replaced under it says what was closed with it */
	char plan_note[160];
	int plan_note_dirty;
	int n_out, out_head;
	long out_total;  /* lines ever added */
	int table_first; /* first group row shown in the table */
	int run_depth;   /* nesting of tui_run (view requests run nested) */
	int fitting;     /* inside tui_canvas_fit (its commands must not refit) */
	/* library output captured from fd 2 */
	int saved_stderr;
	FILE *errfile;
	long err_off;
	/* mouse drag */
	int drag_node;
	/* progress while a command runs */
	char progress[160];
	long progress_calls; /* progress reports seen (long commands) */
	double last_progress_draw;
	/* timing log (PB_TUI_TIMING=file) */
	FILE *timing;
	double t_start, t_key;
	int key_for_timing;
	int logged_first, logged_dot;
	/* last selection seen (to follow it) */
	long last_sel;
	/* the command running in slices (jobs.c), NULL when idle */
	tui_job *job;
	double last_frame; /* monotonic seconds of the last doupdate */
	int job_frames;    /* 1 from a job's start to the first frame after it */
	unsigned spin;     /* busy indicator phase */
	/* branch colour mode (branch_color.c): the graph's branch groups,
	 * computed when the mode is first drawn for a graph and layout */
	struct tui_branch *branch;
} tui_app;

/* app.c */
double tui_now(void);
/* Runs a command line through the command table; output goes to the output
 * pane. Returns the status. */
int tui_run(tui_app *a, const char *line);
int tui_run_argv(tui_app *a, int argc, char **argv);
void tui_out(tui_app *a, int is_err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tui_capture_begin(tui_app *a, tui_capture *c);
/* Restores the streams, shows the output and the error (rc != 0), applies the
 * redraw flags; returns rc. */
int tui_capture_end(tui_app *a, tui_capture *c, int rc, const pb_error *err);
void tui_timing_log(tui_app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tui_draw(tui_app *a);
void tui_pager(tui_app *a, const char *title, const char *text);
int tui_selected(const tui_app *a);
int tui_group_of(const tui_app *a, int node);

/* Horizontal / vertical rule with ─ │ (UTF-8) or - | (no alternate charset,
 * which terminals inside multiplexers may not translate). */
void tui_hrule(const tui_app *a, WINDOW *w, int y, int x, int n);
void tui_vrule(const tui_app *a, WINDOW *w, int y, int x, int n);

/* jobs.c */
/* 1 when the command line (its first word) may run while a job is running:
 * navigation, selection, search, help. */
int tui_cmd_is_navigation(const char *line);
/* Starts a command as a job and runs its first slice; a command that ends
 * within it is finished at once. Returns its status (PB_OK while it runs). */
int tui_job_start(tui_app *a, int argc, char **argv, const char *line);
/* Runs the running job for one slice; finishes it when it ends. */
void tui_job_pump(tui_app *a);
/* At exit on a signal: leaves the running job suspended for good. */
void tui_job_abandon(tui_app *a);
/* Asks the running job to stop (Esc, Ctrl-C). */
void tui_job_cancel(tui_app *a);
/* One line for the status bar while a job runs: spinner, command, elapsed
 * time, progress. */
void tui_job_status(tui_app *a, char *buf, size_t len);
/* A frame was flushed outside the main loop (the pager): PB_TUI_TIMING's job_frame_ms. */
void tui_job_frame(tui_app *a);

/* keymap.c */
/* Handles a key in normal mode. */
void tui_key(tui_app *a, int key);
/* Writes the key table and the command list (the '?' help). */
void tui_keys_help(FILE *out);

/* branch_color.c: colour by the kind of the parallel-branch group */
/* 1 when the view colours by branch group. */
int tui_branch_mode(const tui_app *a);
/* Kind index of node's branch group (-1 outside every group, or when the
 * groups could not be computed); *fused = 1 when fusion takes the node. */
int tui_branch_kind(tui_app *a, int node, int *fused);
/* Short name of a kind (for box borders). */
const char *tui_branch_kind_name(tui_app *a, int kind);
/* The legend: kinds with their group counts, or the reason there is none. */
void tui_branch_legend(tui_app *a, char *buf, size_t n);
void tui_branch_free(tui_app *a);

/* viewgraph.c */
/* Rebuilds items from the session and view; starts a relayout when the
 * items, zoom or direction changed. */
void tui_vg_update(tui_app *a);
/* Collects a finished dot layout; returns 1 when the layout changed. */
int tui_vg_poll(tui_app *a);
/* The item of node, or for a node in no drawn box (a hidden constant) the
 * next drawn item after it (where the constants are used), else the last
 * one before it; -1 when nothing is drawn. */
int tui_vg_item_near(const tui_app *a, int node);
void tui_vg_free(tui_viewgraph *vg);

/* canvas.c */
void tui_canvas_draw(tui_app *a);
/* Item under a canvas cell (window coordinates), or -1. */
int tui_canvas_hit(const tui_app *a, int y, int x);
/* Applies pending fit/center/follow/top requests of the view. */
void tui_canvas_fit(tui_app *a);
/* The first view of a model: selects its first computing node (the one
 * that reads the inputs) and asks to show it at the top of the canvas. */
void tui_view_start(tui_app *a);

/* panes.c */
void tui_title_draw(tui_app *a);
void tui_side_draw(tui_app *a);
void tui_out_draw(tui_app *a);
void tui_status_draw(tui_app *a);
/* Group whose table row is at side-pane row y, or -1. */
int tui_side_hit(const tui_app *a, int y);

/* quit.c */
/* Quits, first asking save / discard / cancel when the session has unsaved
 * changes; confirm: also ask "quit?" when it has none (Ctrl-C). */
void tui_ask_quit(tui_app *a, int confirm);
/* Ctrl-Z: leaves curses, stops the process, restores the screen on resume. */
void tui_suspend(tui_app *a);

/* recover.c */
/* SIGTERM and SIGHUP raise a flag that the main loop reads; a crash signal
 * writes the recovery bytes armed for the running job. */
void tui_signals_install(void);
/* Also reports SIGHUP when the terminal has hung up. Every input loop (main
 * loop, pager, prompt, questions) leaves when it is non-zero. */
int tui_signal_pending(void);
/* Writes the recovery session (path gets its name) when there are unsaved
 * changes: 0 written, 1 nothing to write, -1 failed. */
int tui_recover_write(tui_app *a, char *path, size_t len);
/* Before a job starts: the recovery bytes that a crash inside it writes (the
 * session now, when it has unsaved changes); after it ends: none. */
void tui_recover_arm(tui_app *a);
void tui_recover_disarm(void);
/* At start: offers to restore a recovery session of the open model. */
void tui_recover_offer(tui_app *a, const char *session_arg);

/* cmdline.c */
/* Shows question on the bottom row and waits for one of the keys in `keys`
 * (Esc and Ctrl-C answer 0); a running job keeps running meanwhile. */
int tui_ask(tui_app *a, const char *question, const char *keys);
/* Reads a line at the bottom row with editing, history and (for ':')
 * completion from the command table. Returns 1 with the text in buf, 0 if
 * cancelled. */
int tui_prompt(tui_app *a, const char *prompt, int complete, char *buf, size_t len);

#endif
