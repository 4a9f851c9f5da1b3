/*
 * gpt_fixture.h — a generated GPT-style decoder (model/gen_gpt.h) loaded for
 * the unit tests, and a cluster read from a layout file; shared by the tests
 * of the generator, the strategy search, the pipeline and the Megatron table.
 */
#ifndef PB_GPT_FIXTURE_H
#define PB_GPT_FIXTURE_H

#include "pb_test.h"

#include "hw.h"
#include "model/gen_gpt.h"
#include "shard/cluster.h"

/* Generates the decoder of spec s and loads it; batch > 0 overrides the
 * batch dimension of input_ids (else the spec's batch stays). */
static inline pb_graph *pb_test_gpt_load(const pb_gpt_spec *s, long batch)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	pb_error err = {0};
	assert_int_equal(pb_gen_gpt_bytes(s, &buf, &len, &err), PB_OK);
	pb_load_opts o;
	memset(&o, 0, sizeof o);
	pb_input_override ov = {0};
	if (batch > 0) {
		char dims[64];
		snprintf(dims, sizeof dims, "input_ids=%ld,%ld", batch, s->seq);
		assert_int_equal(pb_parse_input_override(dims, &ov, &err), PB_OK);
		o.overrides = &ov;
		o.n_overrides = 1;
	}
	pb_graph *g = NULL;
	int rc = pb_onnx_load_buffer(buf, len, "gpt.onnx", &o, &g, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	if (batch > 0)
		pb_input_override_free(&ov);
	free(buf);
	return g;
}

/* The decoder of (layers, hidden, heads, seq, vocab, batch), fp32. */
static inline pb_graph *pb_test_gpt(long layers, long hidden, long heads, long seq, long vocab,
                                    long batch)
{
	pb_gpt_spec s;
	pb_gpt_spec_default(&s);
	s.layers = layers;
	s.hidden = hidden;
	s.heads = heads;
	s.seq = seq;
	s.vocab = vocab;
	s.batch = batch;
	return pb_test_gpt_load(&s, 0);
}

/* The cluster of a layout file (layouts/cluster-*.lua). */
static inline void pb_test_cluster_file(const char *path, pb_cluster *c)
{
	pb_hw *hw = NULL;
	pb_error err = {0};
	int rc = pb_hw_load(path, &hw, &err);
	if (rc == PB_OK)
		rc = pb_cluster_from_hw(hw, c, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	pb_hw_free(hw);
}

#endif
