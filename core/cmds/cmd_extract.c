/*
 * cmds/cmd_extract.c — `extract MODEL --plan PLAN -o DIR`: one ONNX model per
 * part of a plan plus DIR/manifest.json (core/export/extract.h,
 * docs/extract.md).
 */
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "export/extract.h"
#include "util/fmt.h"

static const pb_opt extract_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_JSON,
    {.name = "plan",
     .short_name = 'p',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "plan JSON (partition, pipeline or map; default: the session's current plan)",
     .path = "r:json"},
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "DIR",
     .help = "folder to write (or the last argument; must be new or empty)",
     .path = "w"},
    {.name = "force", .short_name = 'f', .type = PB_OPT_FLAG, .help = "replace a non-empty DIR"},
    {.name = "structure-only",
     .type = PB_OPT_FLAG,
     .help =
         "allow a missing external weights file: the parts keep the references (structure only)"},
    PB_OPTS_END,
};

static void print_report(FILE *out, const char *dir, const pb_extract_report *rep)
{
	const json_t *parts = json_object_get(rep->manifest, "parts");
	char b1[32], b2[32];
	fprintf(out, "wrote %s: %d part%s of a %s plan, weights %s, %s between parts\n", dir,
	        rep->n_parts, rep->n_parts == 1 ? "" : "s",
	        json_string_value(json_object_get(rep->manifest, "kind")), rep->weights,
	        pb_fmt_bytes(rep->cross_bytes, b1, sizeof b1));
	fprintf(out, "%-12s %-16s %6s %7s %8s %12s\n", "file", "place", "nodes", "inputs",
	        "outputs", "predicted");
	size_t i;
	const json_t *p;
	json_array_foreach(parts, i, p)
	{
		const json_t *pl = json_object_get(p, "place");
		fprintf(out, "%-12s %-16s %6d %7zu %8zu %12s\n",
		        json_string_value(json_object_get(p, "file")),
		        json_string_value(json_object_get(pl, "label")),
		        (int)json_integer_value(json_object_get(p, "nodes")),
		        json_array_size(json_object_get(p, "inputs")),
		        json_array_size(json_object_get(p, "outputs")),
		        pb_fmt_time(json_number_value(json_object_get(p, "predicted_time")), b2,
		                    sizeof b2));
	}
}

/* `extract MODEL DIR`, `extract MODEL -o DIR`, `extract DIR` (the open model,
 * as `:extract DIR` in the workbench): a positional naming a file is the
 * model, opened into the session with the --input overrides. */
static int open_model(pb_cmd_ctx *ctx, const pb_args *a, const char **dir, pb_error *err)
{
	const char *p0 = pb_args_pos(a, 0), *p1 = pb_args_pos(a, 1), *model = NULL;
	struct stat st;
	if (pb_args_pos(a, 2) || (p1 && *dir))
		return pb_err(err, PB_EUSAGE,
		              "extract: too many arguments (MODEL and DIR at most)");
	if (p1) {
		model = p0;
		*dir = p1;
	} else if (p0 && (*dir || (stat(p0, &st) == 0 && S_ISREG(st.st_mode)))) {
		model = p0;
	} else if (p0) {
		*dir = p0;
	}
	if (!model)
		return PB_OK;
	const char **specs;
	int n_ov = pb_args_list(a, "input", &specs), rc = PB_OK;
	pb_input_override ov[PB_ARGS_MAX_LIST];
	for (int i = 0; i < n_ov && !rc; i++)
		if ((rc = pb_parse_input_override(specs[i], &ov[i], err)) != PB_OK)
			n_ov = i;
	if (!rc)
		rc = pb_session_open_model(ctx->s, model, ov, n_ov, err);
	for (int i = 0; i < n_ov; i++)
		pb_input_override_free(&ov[i]);
	if (!rc)
		ctx->redraw |= PB_REDRAW_ALL;
	return rc;
}

static int cmd_extract(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	const char *dir = pb_args_str(a, "output", NULL);
	int rc = open_model(ctx, a, &dir, err);
	if (rc)
		return rc;
	if (!dir)
		return pb_err(err, PB_EUSAGE, "extract: give the output folder DIR (usage: %s)",
		              cmd->usage);
	if (!s->graph)
		return pb_err(err, PB_EUSAGE,
		              "extract: no model given and none is open (usage: %s)", cmd->usage);
	const char *plan_path = pb_args_str(a, "plan", NULL);
	pb_plan *loaded = NULL;
	if (plan_path && (rc = pb_extract_load_plan(s->graph, plan_path, &loaded, err)) != PB_OK)
		return rc;
	const pb_plan *plan = loaded ? loaded : s->plan;
	if (!plan)
		return pb_err(err, PB_EUSAGE, "extract: give --plan FILE (no plan is open)");
	pb_extract_opts o = {pb_args_has(a, "force"), pb_args_has(a, "structure-only")};
	pb_extract_report rep;
	rc = pb_extract_write(s->graph, plan, plan_path ? plan_path : "the current plan", dir, &o,
	                      &rep, err);
	pb_plan_free(loaded);
	if (rc)
		return rc;
	if (pb_args_has(a, "json")) {
		json_dumpf(rep.manifest, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
		fputc('\n', ctx->out);
	} else {
		print_report(ctx->out, dir, &rep);
	}
	pb_extract_report_free(&rep);
	return PB_OK;
}

const pb_command pb_cmds_extract[] = {
    {.name = "extract",
     .usage = "extract [MODEL] [--plan PLAN] [-o] DIR [--force] [--structure-only] [--json]",
     .summary =
         "write one ONNX model per part of a plan (core group, stage, backend) and a manifest",
     .opts = extract_opts,
     .fn = cmd_extract,
     .help = "Parts come in execution order; each has exactly the inputs it consumes and the\n"
             "outputs later parts or the model need, the initializers it uses, and the\n"
             "source's opset and IR version (nodes, weights and value infos are copied byte\n"
             "for byte). External weights are hard-linked (else copied) into DIR. DIR is\n"
             "written as a temporary folder renamed at the end. DIR/manifest.json lists the\n"
             "parts, their place in the plan, the tensors between them with their bytes and\n"
             "the plan's predicted time per part (docs/extract.md, with a runner).\n"
             "`extract DIR` (the workbench's `:extract DIR`) uses the open model and plan.",
     .script = PB_SCRIPT_NO},
    {0},
};
