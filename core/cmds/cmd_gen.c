/*
 * cmds/cmd_gen.c — `gen gpt`: writes a structure-only GPT-style decoder as
 * ONNX (core/model/gen_gpt.c) for the strategy search's tests and
 * benchmarks; docs/shard.md ("Generated GPT models").
 */
#include <string.h>

#include "commands.h"
#include "model/gen_gpt.h"
#include "util/fmt.h"

static const pb_opt gen_opts[] = {
    {.name = "layers",
     .short_name = 'L',
     .type = PB_OPT_INT,
     .metavar = "L",
     .help = "decoder blocks (default 12)"},
    {.name = "hidden",
     .short_name = 'H',
     .type = PB_OPT_INT,
     .metavar = "H",
     .help = "hidden size (default 768)"},
    {.name = "heads",
     .short_name = 'A',
     .type = PB_OPT_INT,
     .metavar = "A",
     .help = "attention heads, dividing H (default 12)"},
    {.name = "seq",
     .short_name = 'S',
     .type = PB_OPT_INT,
     .metavar = "S",
     .help = "sequence length (default 1024)"},
    {.name = "vocab",
     .short_name = 'V',
     .type = PB_OPT_INT,
     .metavar = "V",
     .help = "vocabulary size (default 50257)"},
    {.name = "batch",
     .short_name = 'b',
     .type = PB_OPT_INT,
     .metavar = "B",
     .help = "batch size of input_ids (default 1; shard --batch changes it)"},
    {.name = "fp16",
     .type = PB_OPT_FLAG,
     .help = "float16 weights and activations (default float32)"},
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "where to write the ONNX model (required)",
     .path = "w"},
    PB_OPTS_JSON,
    PB_OPTS_END,
};

static int cmd_gen(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	const char *what = pb_args_pos(a, 0);
	if (!what || strcmp(what, "gpt") != 0)
		return pb_err(err, PB_EUSAGE, "gen: the model family must be 'gpt' (usage: %s)",
		              cmd->usage);
	const char *outp = pb_args_str(a, "output", NULL);
	if (!outp)
		return pb_err(err, PB_EUSAGE, "gen: -o FILE is required (usage: %s)", cmd->usage);
	pb_gpt_spec s;
	pb_gpt_spec_default(&s);
	int rc;
	if ((rc = pb_args_int(a, "layers", s.layers, 1, 100000, &s.layers, err)) ||
	    (rc = pb_args_int(a, "hidden", s.hidden, 1, 1L << 20, &s.hidden, err)) ||
	    (rc = pb_args_int(a, "heads", s.heads, 1, 1L << 16, &s.heads, err)) ||
	    (rc = pb_args_int(a, "seq", s.seq, 1, 1L << 24, &s.seq, err)) ||
	    (rc = pb_args_int(a, "vocab", s.vocab, 1, 1L << 26, &s.vocab, err)) ||
	    (rc = pb_args_int(a, "batch", s.batch, 1, 1L << 24, &s.batch, err)))
		return rc;
	s.fp16 = pb_args_has(a, "fp16");
	if ((rc = pb_gen_gpt_write(&s, outp, err)))
		return rc;
	char params[32];
	pb_fmt_si(pb_gpt_params(&s), params, sizeof params);
	if (pb_args_has(a, "json"))
		fprintf(ctx->out,
		        "{\"output\": \"%s\", \"layers\": %ld, \"hidden\": %ld, \"heads\": %ld, "
		        "\"seq\": %ld, \"vocab\": %ld, \"batch\": %ld, \"dtype\": \"%s\", "
		        "\"params\": %.0f, \"nodes\": %ld, \"train_flops_per_sequence\": %.17g}\n",
		        outp, s.layers, s.hidden, s.heads, s.seq, s.vocab, s.batch,
		        s.fp16 ? "float16" : "float32", pb_gpt_params(&s), pb_gpt_node_count(&s),
		        pb_gpt_train_flops(&s, 1));
	else
		fprintf(ctx->out,
		        "%s: GPT decoder, %ld layers, hidden %ld, %ld heads, seq %ld, "
		        "vocab %ld, batch %ld, %s: %s parameters, %ld operators\n",
		        outp, s.layers, s.hidden, s.heads, s.seq, s.vocab, s.batch,
		        s.fp16 ? "float16" : "float32", params, pb_gpt_node_count(&s));
	return PB_OK;
}

const pb_command pb_cmds_gen[] = {
    {.name = "gen",
     .usage =
         "gen gpt --layers L --hidden H --heads A --seq S --vocab V [--batch B] [--fp16] -o FILE",
     .summary =
         "write a structure-only GPT-style decoder (ONNX, no weight bytes) for the cluster search",
     .opts = gen_opts,
     .fn = cmd_gen,
     .help =
         "Writes a GPT-2 / Megatron-LM style decoder (pre-LayerNorm blocks, tied embedding and\n"
         "language-model head) whose weights are external initializers without bytes, so any\n"
         "size is a small file. partbench loads it with shapes inferred. See docs/shard.md.",
     .script = PB_SCRIPT_NO},
    {0},
};
