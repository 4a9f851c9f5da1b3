/* test_onnx_wire.c — the hand-written NodeProto/ValueInfoProto decoders
 * (onnx_wire.h) against protobuf-c, differentially: for every node, graph
 * input/output and value_info of the bundled models and of ONNX's backend
 * test models (libonnx-testdata, when installed), and for byte-mutated copies
 * of those parts, whenever the fast decoder accepts the bytes protobuf-c must
 * accept them too and both messages must pack to the same bytes (protobuf-c's
 * unknown fields, which the fast decoder skips, are dropped before packing).
 * A fast decoder that returns NULL is always allowed: the loader then uses
 * protobuf-c. */
#include "pb_test.h"

#include <dirent.h>

#include "onnx.pb-c.h"
#include "model/onnx_wire.h"

/* ---- a malloc-chain allocator for the fast decoder, freed per part ---- */
typedef struct chunk {
	struct chunk *next;
	max_align_t data[];
} chunk;

static void *chain_alloc(void *ud, size_t n)
{
	chunk *c = malloc(sizeof *c + n);
	if (!c)
		return NULL;
	c->next = *(chunk **)ud;
	*(chunk **)ud = c;
	return c->data;
}

static void chain_free_one(void *ud, void *p)
{
	(void)ud;
	(void)p;
}

static void chain_release(chunk **head)
{
	while (*head) {
		chunk *n = (*head)->next;
		free(*head);
		*head = n;
	}
}

/* Drops unknown fields everywhere in a message tree (protobuf-c keeps them;
 * the fast decoder skips them); `owned`: they were malloc'ed (protobuf-c's
 * default allocator) and are freed here. */
static void strip_unknown(ProtobufCMessage *m, int owned)
{
	if (!m)
		return;
	if (owned) {
		for (unsigned k = 0; k < m->n_unknown_fields; k++)
			free(m->unknown_fields[k].data);
		free(m->unknown_fields);
	}
	m->unknown_fields = NULL;
	m->n_unknown_fields = 0;
	const ProtobufCMessageDescriptor *d = m->descriptor;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		char *at = (char *)m + f->offset;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(size_t *)((char *)m + f->quantifier_offset);
			ProtobufCMessage **v = *(ProtobufCMessage ***)at;
			for (size_t k = 0; k < n; k++)
				strip_unknown(v[k], owned);
		} else if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) ||
		           *(uint32_t *)((char *)m + f->quantifier_offset) == f->id) {
			strip_unknown(*(ProtobufCMessage **)at, owned);
		}
	}
}

static int checked, fast_ok;

/* One part: kind 0 = NodeProto, 1 = ValueInfoProto. */
static void check_part(int kind, const uint8_t *p, size_t len, const char *where)
{
	chunk *head = NULL;
	ProtobufCAllocator a = {chain_alloc, chain_free_one, &head};
	ProtobufCMessage *fast = kind == 0
	                             ? (ProtobufCMessage *)pb_onnx_wire_node(&a, p, len)
	                             : (ProtobufCMessage *)pb_onnx_wire_value_info(&a, p, len);
	checked++;
	if (!fast) {
		chain_release(&head);
		return;
	}
	fast_ok++;
	ProtobufCMessage *ref =
	    kind == 0 ? (ProtobufCMessage *)onnx__node_proto__unpack(NULL, len, p)
	              : (ProtobufCMessage *)onnx__value_info_proto__unpack(NULL, len, p);
	if (!ref)
		fail_msg("%s: the fast decoder accepted bytes protobuf-c rejects", where);
	strip_unknown(ref, 1);
	strip_unknown(fast, 0); /* tensor attributes come from protobuf-c, unknowns kept */
	size_t n1 = protobuf_c_message_get_packed_size(fast);
	size_t n2 = protobuf_c_message_get_packed_size(ref);
	uint8_t *b1 = malloc(n1 + 1), *b2 = malloc(n2 + 1);
	protobuf_c_message_pack(fast, b1);
	protobuf_c_message_pack(ref, b2);
	if ((n1 != n2 || memcmp(b1, b2, n1) != 0) && getenv("WIRE_DUMP")) {
		FILE *o = fopen("/tmp/wire_in.bin", "wb");
		fwrite(p, 1, len, o);
		fclose(o);
		o = fopen("/tmp/wire_fast.bin", "wb");
		fwrite(b1, 1, n1, o);
		fclose(o);
		o = fopen("/tmp/wire_ref.bin", "wb");
		fwrite(b2, 1, n2, o);
		fclose(o);
	}
	if (n1 != n2 || memcmp(b1, b2, n1) != 0)
		fail_msg("%s: fast and protobuf-c decodings differ (%zu vs %zu bytes packed)",
		         where, n1, n2);
	free(b1);
	free(b2);
	protobuf_c_message_free_unpacked(ref, NULL);
	chain_release(&head);
}

static int varint(const uint8_t *p, size_t end, size_t *off, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64 && *off < end; s += 7) {
		uint8_t b = p[(*off)++];
		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return 1;
	}
	return 0;
}

/* Calls fn for each node (kind 0) and value info (kind 1) of the model. */
static void walk(const uint8_t *p, size_t len, void (*fn)(int, const uint8_t *, size_t, void *),
                 void *ud)
{
	size_t off = 0;
	uint64_t key, l;
	while (off < len && varint(p, len, &off, &key)) {
		int wt = (int)(key & 7);
		if (wt == 0) {
			varint(p, len, &off, &l);
			continue;
		}
		if (wt != 2 || !varint(p, len, &off, &l) || l > len - off)
			return;
		if ((key >> 3) == 7) { /* graph */
			size_t g = off, gend = off + l;
			while (g < gend && varint(p, gend, &g, &key)) {
				uint64_t gl;
				if ((key & 7) == 0) {
					varint(p, gend, &g, &gl);
					continue;
				}
				if ((key & 7) != 2 || !varint(p, gend, &g, &gl) || gl > gend - g)
					break;
				uint64_t num = key >> 3;
				if (num == 1)
					fn(0, p + g, gl, ud);
				else if (num == 11 || num == 12 || num == 13)
					fn(1, p + g, gl, ud);
				g += gl;
			}
		}
		off += l;
	}
}

typedef struct {
	const char *file;
	unsigned rng;
	int mutations; /* per part */
} ctx;

static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void visit(int kind, const uint8_t *p, size_t len, void *ud)
{
	ctx *c = ud;
	char where[600];
	snprintf(where, sizeof where, "%s (%s of %zu bytes)", c->file, kind ? "value_info" : "node",
	         len);
	check_part(kind, p, len, where);
	if (len == 0 || c->mutations == 0)
		return;
	uint8_t *m = malloc(len);
	for (int k = 0; k < c->mutations; k++) {
		memcpy(m, p, len);
		int flips = 1 + (int)(next_rand(&c->rng) % 3);
		for (int f = 0; f < flips; f++)
			m[next_rand(&c->rng) % len] = (uint8_t)next_rand(&c->rng);
		size_t cut = (next_rand(&c->rng) % 4 == 0) ? next_rand(&c->rng) % len : len;
		snprintf(where, sizeof where, "%s (mutated %s, %zu bytes)", c->file,
		         kind ? "value_info" : "node", cut);
		check_part(kind, m, cut, where);
	}
	free(m);
}

static void check_file(const char *path, int mutations)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	size_t got = fread(buf, 1, n > 0 ? (size_t)n : 0, f);
	fclose(f);
	ctx c = {path, 12345u, mutations};
	walk(buf, got, visit, &c);
	free(buf);
}

static void test_bundled_models(void **state)
{
	static const char *models[] = {"models/resnet18.onnx", "models/googlenet.onnx",
	                               "models/swin_t.onnx", "models/bert_base_like.onnx",
	                               "models/squeezenet1_1.onnx"};
	int sanitized = getenv("PB_SANITIZED") != NULL;
	for (size_t i = 0; i < sizeof models / sizeof *models; i++)
		check_file(models[i], sanitized ? 0 : 4);
	printf("bundled: %d parts checked, %d decoded by the fast path\n", checked, fast_ok);
	/* The fast path must actually be the common path on real models. */
	assert_true(fast_ok > checked / 2);
}

static void test_onnx_testdata(void **state)
{
	const char *dir = "/usr/share/libonnx-testdata/data/node";
	DIR *d = opendir(dir);
	if (!d) {
		print_message("%s missing (install libonnx-testdata); skipping\n", dir);
		skip();
	}
	checked = fast_ok = 0;
	struct dirent *e;
	int models = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[1024];
		snprintf(path, sizeof path, "%s/%s/model.onnx", dir, e->d_name);
		check_file(path, getenv("PB_SANITIZED") ? 1 : 8);
		models++;
	}
	closedir(d);
	printf("testdata: %d models, %d parts checked, %d decoded by the fast path\n", models,
	       checked, fast_ok);
	assert_true(fast_ok > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bundled_models),
	    cmocka_unit_test(test_onnx_testdata),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
