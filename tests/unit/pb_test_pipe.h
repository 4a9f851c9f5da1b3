/* pb_test_pipe.h — set-up shared by the pipeline planner tests
 * (test_pipeline_*.c): a session with a model and a cluster layout open,
 * and the reload callback the planners change the batch through (as
 * cmd_pipeline.c and cmd_shard.c pass it). */
#ifndef PB_TEST_PIPE_H
#define PB_TEST_PIPE_H

#include "pb_test.h"
#include "model/gen_gpt.h"
#include "shard/cluster.h"

/* pb_pipe_reload_fn: the session (ud) reopens its model at the batch. */
static inline int pb_test_pipe_reload(void *ud, long batch, const pb_graph **g, pb_error *err)
{
	pb_session *s = ud;
	int rc = pb_session_set_batch(s, batch, err);
	*g = s->graph;
	return rc;
}

/* A session with model and layout open; *cl its cluster (freed by the
 * caller). */
static inline pb_session *pb_test_pipe_session(const char *model, const char *layout,
                                               pb_cluster *cl)
{
	pb_session *s = pb_session_new();
	pb_error err = {0};
	assert_int_equal(pb_session_open_model(s, model, NULL, 0, &err), PB_OK);
	assert_int_equal(pb_session_open_layout(s, layout, &err), PB_OK);
	assert_int_equal(pb_cluster_from_hw(s->hw, cl, &err), PB_OK);
	return s;
}

/* Writes a small generated GPT (6 layers, hidden 256, 4 heads, seq 64,
 * vocab 4000) to path. */
static inline int pb_test_small_gpt(const char *path)
{
	pb_gpt_spec sp;
	pb_gpt_spec_default(&sp);
	sp.layers = 6;
	sp.hidden = 256;
	sp.heads = 4;
	sp.seq = 64;
	sp.vocab = 4000;
	pb_error err = {0};
	return pb_gen_gpt_write(&sp, path, &err);
}

#endif
