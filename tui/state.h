/*
 * state.h — the workbench's state, shared by the files of tui/ (includes
 * curses), and the small helpers every layer of tui/ may use.
 *
 * tui/ is layered like core/ (docs/architecture.md, "tui/"): state (this
 * file, mode stack, output ring, signals) at the bottom; the view graph, the
 * branch-colour cache and the views above it; then running commands
 * (capture, jobs, run) and the camera (fit); then the modes (normal, command
 * line, pager, ask, job); the loop (app.c) on top. A file calls functions of
 * its own layer or lower ones only: a lower layer hands work up by returning
 * TUI_* / PB_REDRAW_* flags or a command string, never by calling up.
 *
 * The workbench reads the session through its query functions and the view
 * string (view.h), and changes it only by running command strings (run.h).
 */
#ifndef PB_TUI_STATE_H
#define PB_TUI_STATE_H

#include <curses.h>
#include <signal.h>
#include <stdio.h>

#include "commands.h"
#include "render/blocks.h"
#include "render/layout.h"

/* Redraw and loop flags returned by handlers (beside PB_REDRAW_* of
 * commands.h): TUI_FIT asks the loop to run the camera (fit.h) once. */
enum { TUI_FIT = 1 << 8, TUI_RECENTRE = 1 << 9 };

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

/* The output pane's ring (output.c): a line repeated in a row is kept once
 * with its count ("... x100"). */
enum { TUI_OUT_LINES = 400 };
typedef struct tui_outline {
	char *text;
	int err;      /* an error line (red) */
	unsigned gen; /* plan_gen when it was added (older lines are dimmed) */
	long repeat;  /* times it was written in a row (1: once) */
} tui_outline;

/* The branch colour mode's groups (branch_color.c), computed by the loop
 * when the graph, layout or fusion rules change, never while drawing. */
typedef struct tui_branch {
	const pb_graph *graph; /* what it was computed for */
	const pb_hw *hw;
	int n_nodes;
	pb_plan *plan; /* NULL when it failed (why in err) */
	char err[160];
	char legend[200];
} tui_branch;

/* The selected operator's candidate specs on a shard plan (spec_cands.c),
 * computed by the loop when the plan, the layout or the selection changed,
 * never while drawing; the inspector lists them and maps its rows back. */
typedef struct tui_cands {
	int valid;              /* computed for (gen, cmd_gen, hw, nid) */
	unsigned gen, cmd_gen;  /* plan_gen and cmd_gen it was computed at (a
	                         * command may have loaded rules) */
	const void *hw;         /* the layout then */
	int nid;                /* the operator (-1: none) */
	struct pb_spec_cand *c; /* n rows (NULL when none: why in err) */
	int n;
	int cursor; /* the row '=' pins ('[' ']' move it) */
	char err[200];
	int row0, first, n_drawn; /* as the inspector drew them: window row of the
	                           * first row drawn, its index, how many */
} tui_cands;

typedef struct tui_job tui_job;
typedef struct tui_mode tui_mode;

/* A mode on the stack (mode.h) with its private data. */
typedef struct tui_mode_entry {
	const tui_mode *mode;
	void *data;
} tui_mode_entry;
enum { TUI_MODES_MAX = 8 };

/* Placement of a registered view (views.c). */
enum { TUI_VIEWS_MAX = 12 };

typedef struct tui_app {
	pb_cmd_ctx *ctx;
	pb_session *s;
	int rows, cols, too_small;
	WINDOW *win[TUI_VIEWS_MAX]; /* one per registered view (views.c) */
	WINDOW *wcmd;               /* the bottom row: the modes' line */
	int canvas_h, canvas_w, side_w, out_h;
	int color, utf8, mouse_on;
	int redraw; /* PB_REDRAW_* | TUI_* flags for the next loop turn */
	int quit;
	tui_mode_entry modes[TUI_MODES_MAX]; /* modes[0] is normal */
	int n_modes;
	tui_viewgraph vg;
	tui_branch branch;
	tui_cands cands;
	/* output pane */
	tui_outline out[TUI_OUT_LINES];
	int n_out, out_head;
	long out_total;    /* lines ever added (a repeat counts) */
	unsigned plan_gen; /* bumped on every plan change */
	unsigned cmd_gen;  /* bumped by every command that is not navigation */
	/* the plan as of the last main-loop turn ("partition/exact (6 groups) of
	 * resnet18.onnx", "" for none) and whether it was unsaved: a model
	 * replaced under it says what was closed with it */
	char plan_note[160];
	int plan_note_dirty;
	/* the attached solver was detached during a command: said after the
	 * command's output (capture.c), where it is the last line seen */
	int detach_note;
	int table_first; /* first group row shown in the table */
	int run_depth;   /* nesting of tui_run (view requests run nested) */
	/* library output captured from fd 2 */
	int saved_stderr;
	FILE *errfile;
	long err_off;
	/* mouse drag */
	int drag_node;
	/* progress while a command runs */
	char progress[160];
	long progress_calls; /* progress reports seen (long commands) */
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
} tui_app;

double tui_now(void);
int tui_selected(const tui_app *a);
int tui_group_of(const tui_app *a, int node);
void tui_timing_log(tui_app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Horizontal / vertical rule with ─ │ (UTF-8) or - | (no alternate charset,
 * which terminals inside multiplexers may not translate). */
void tui_hrule(const tui_app *a, WINDOW *w, int y, int x, int n);
void tui_vrule(const tui_app *a, WINDOW *w, int y, int x, int n);
/* One line of text at row y of w, control characters blanked, cut at the
 * window's width; what an earlier longer line left is cleared. */
void tui_line(WINDOW *w, int y, attr_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
