/*
 * gv.c — shared Graphviz context and message capture (see gv.h).
 *
 * The plugin libraries are located with dladdr() on a libgvc symbol: Debian
 * installs them in <libdir>/graphviz/. Their handles stay open for the life
 * of the process because the context keeps pointers into them.
 */
#include "render/gv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cgraph.h>

#include "util/strmap.h"

static GVC_t *ctx;
static int deterministic;
static char msgs[4096];
static size_t n_msgs;

/* cgraph calls this for every message at or above the AGWARN threshold. */
static int gv_message(char *text)
{
	size_t len = strlen(text);
	if (n_msgs + len + 1 >= sizeof msgs)
		len = sizeof msgs - n_msgs - 1;
	memcpy(msgs + n_msgs, text, len);
	n_msgs += len;
	msgs[n_msgs] = '\0';
	return 0;
}

void pb_gv_messages_clear(void)
{
	n_msgs = 0;
	msgs[0] = '\0';
	agreseterrors();
}

const char *pb_gv_messages(void)
{
	return msgs;
}

int pb_gv_fail(pb_error *err, const char *what)
{
	char clean[sizeof msgs];
	size_t k = 0;
	for (size_t i = 0; i < n_msgs && k + 1 < sizeof clean; i++)
		clean[k++] = msgs[i] == '\n' ? ' ' : msgs[i];
	while (k > 0 && clean[k - 1] == ' ')
		k--;
	clean[k] = '\0';
	return pb_err(err, PB_EINTERNAL, "%s: Graphviz failed%s%s", what, k ? ": " : "", clean);
}

/* ---- id discipline: names get ids 2, 4, 6 ... in creation order,
 * anonymous objects (edges) odd ids; print() maps an even id back. ---- */

typedef struct {
	pb_strmap *ids;
	char **names;
	long n, cap;
	IDTYPE anon;
} id_state;

static void *id_open(Agraph_t *g, Agdisc_t *d)
{
	id_state *s = calloc(1, sizeof *s);
	if (s) {
		s->ids = pb_strmap_new(64);
		s->anon = 1;
	}
	return s;
}

static long id_map(void *state, int objtype, char *str, IDTYPE *id, int createflag)
{
	id_state *s = state;
	if (!str) {
		*id = s->anon;
		s->anon += 2;
		return 1;
	}
	int k = pb_strmap_get(s->ids, str, -1);
	if (k < 0) {
		if (!createflag)
			return 0;
		if (s->n == s->cap) {
			long nc = s->cap ? 2 * s->cap : 64;
			char **nn = realloc(s->names, (size_t)nc * sizeof *nn);
			if (!nn)
				return 0;
			s->names = nn;
			s->cap = nc;
		}
		s->names[s->n] = strdup(str);
		if (!s->names[s->n] || pb_strmap_put(s->ids, str, (int)s->n) != 0)
			return 0;
		k = (int)s->n++;
	}
	*id = (IDTYPE)(2 * (k + 1));
	return 1;
}

static long id_alloc(void *state, int objtype, IDTYPE request)
{
	return 0;
}

static void id_free(void *state, int objtype, IDTYPE id)
{
}

static char *id_print(void *state, int objtype, IDTYPE id)
{
	id_state *s = state;
	if (id % 2 == 0 && id > 0 && (long)(id / 2 - 1) < s->n)
		return s->names[id / 2 - 1];
	return NULL;
}

static void id_close(void *state)
{
	id_state *s = state;
	if (!s)
		return;
	for (long i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	pb_strmap_free(s->ids);
	free(s);
}

static void id_register(void *state, int objtype, void *obj)
{
}

static Agiddisc_t id_disc = {id_open, id_map, id_alloc, id_free, id_print, id_close, id_register};

Agraph_t *pb_gv_open(const char *name)
{
	static Agdisc_t disc;
	disc.mem = &AgMemDisc;
	disc.id = &id_disc;
	disc.io = &AgIoDisc;
	return agopen((char *)name, Agdirected, &disc);
}

int pb_gv_deterministic(void)
{
	return deterministic;
}

/* Opens <dir of libgvc>/graphviz/libgvplugin_NAME.so.6 and returns the
 * address of its gvplugin_NAME_LTX_library table, or NULL. */
static void *plugin_table(const char *dir, const char *name)
{
	char path[1024], sym[128];
	snprintf(path, sizeof path, "%s/graphviz/libgvplugin_%s.so.6", dir, name);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return NULL;
	snprintf(sym, sizeof sym, "gvplugin_%s_LTX_library", name);
	void *t = dlsym(h, sym);
	if (!t)
		dlclose(h);
	return t;
}

static GVC_t *restricted_context(void)
{
	Dl_info info;
	if (!dladdr((void *)gvContext, &info) || !info.dli_fname)
		return NULL;
	char dir[768];
	snprintf(dir, sizeof dir, "%s", info.dli_fname);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	static lt_symlist_t builtins[3];
	void *core = plugin_table(dir, "core");
	void *dot = plugin_table(dir, "dot_layout");
	if (!core || !dot)
		return NULL;
	builtins[0] = (lt_symlist_t){"gvplugin_core_LTX_library", core};
	builtins[1] = (lt_symlist_t){"gvplugin_dot_layout_LTX_library", dot};
	builtins[2] = (lt_symlist_t){NULL, NULL};
	return gvContextPlugins(builtins, 0);
}

GVC_t *pb_gv_context(pb_error *err)
{
	if (ctx)
		return ctx;
	agseterr(AGWARN);
	agseterrf(gv_message);
	pb_gv_messages_clear();
	ctx = restricted_context();
	deterministic = ctx != NULL;
	if (!ctx)
		ctx = gvContext();
	if (!ctx)
		pb_gv_fail(err, "graphviz context");
	return ctx;
}

void pb_gv_shutdown(void)
{
	if (ctx)
		gvFreeContext(ctx);
	ctx = NULL;
}
