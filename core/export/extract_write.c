/*
 * export/extract_write.c — DIR/part<k>.onnx and DIR/manifest.json for a plan
 * (see extract.h, docs/extract.md).
 *
 * Everything is written into a fresh temporary directory beside DIR
 * (DIR.pb-tmp-XXXXXX) that is renamed to DIR at the end, so a failure never
 * leaves a half-written DIR. An existing non-empty DIR is refused unless
 * --force, which renames it aside and removes it only after the new one is
 * in place.
 *
 * Weights: inline initializers travel inside the parts. External ones keep
 * their TensorProto bytes (location, offset, length), so each part points at
 * a file of the source's weights name inside DIR: a hard link to the
 * source's weights file (the same file, no copy), or a copy when DIR is on
 * another file system. Runtimes refuse external data outside the model's
 * folder (ONNX Runtime resolves symbolic links and checks), hence no
 * symbolic link. A missing weights file is an error unless structure_only.
 */
#include "export/extract.h"
#include "util/file_door.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/onnx_parts.h"
#include "util/atomic_file.h"
#include "util/json_file.h"

int pb_extract_load_plan(const pb_graph *g, const char *path, pb_plan **out, pb_error *err)
{
	*out = NULL;
	json_error_t je;
	pb_error open_err = {0};
	json_t *j = pb_door_load_json(path, 0, PB_DOOR_JSON, "plan", &je, &open_err);
	if (!j && je.line < 0)
		return pb_err(err, open_err.code, "%s", open_err.msg);
	if (!j)
		return pb_err(err, PB_EINPUT, "%s: cannot read the plan: %s (line %d)", path,
		              je.text, je.line);
	const json_t *names = json_is_object(j) ? json_object_get(j, "node_names") : NULL;
	if (json_is_array(names)) {
		if ((int)json_array_size(names) != g->n_nodes) {
			int n = (int)json_array_size(names);
			json_decref(j);
			return pb_err(err, PB_EINPUT,
			              "%s: a plan of another model: it names %d nodes, %s has %d",
			              path, n, g->path ? g->path : "the model", g->n_nodes);
		}
		for (int i = 0; i < g->n_nodes; i++) {
			const char *nm = json_string_value(json_array_get(names, (size_t)i));
			if (!nm || strcmp(nm, g->nodes[i].name ? g->nodes[i].name : "") != 0) {
				int rc =
				    pb_err(err, PB_EINPUT,
				           "%s: a plan of another model: node %d is '%s' in the "
				           "plan but '%s' in %s",
				           path, i, nm ? nm : "(not a string)",
				           g->nodes[i].name ? g->nodes[i].name : "",
				           g->path ? g->path : "the model");
				json_decref(j);
				return rc;
			}
		}
	}
	int rc = pb_plan_from_json(j, path, g->n_nodes, out, err);
	json_decref(j);
	return rc;
}

void pb_extract_report_free(pb_extract_report *rep)
{
	if (rep && rep->manifest) {
		json_decref(rep->manifest);
		rep->manifest = NULL;
	}
}

/* ------------------------------------------------------------ directories */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void rm_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int folder_empty(const char *dir)
{
	DIR *d = opendir(dir); /* door: counts names, opens no file */
	if (!d)
		return 0;
	const struct dirent *e;
	int n = 0;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n == 0;
}

/* 1 when path lies inside dir (both resolved; path must exist). */
static int inside(const char *dir, const char *path)
{
	char rd[PATH_MAX], rp[PATH_MAX];
	if (!realpath(dir, rd) || !realpath(path, rp))
		return 0;
	size_t n = strlen(rd);
	return strncmp(rd, rp, n) == 0 && (rp[n] == '/' || rp[n] == 0);
}

/* ------------------------------------------------------------ weights */

typedef struct weights_ctx {
	const char *model_dir;
	const char *tmp;
	int structure_only;
	json_t *files; /* the weights files placed (or absent) */
	int linked, copied, absent;
} weights_ctx;

static int copy_file(const char *from, const char *to, pb_error *err)
{
	FILE *in = pb_door_fopen_read(from, PB_DOOR_ANY, "weights file", err);
	if (!in)
		return err ? err->code : PB_EINPUT;
	/* door: a new file (O_EXCL) in the part folder this command just made */
	FILE *out = fopen(to, "wbx");
	if (!out) {
		fclose(in);
		return pb_err(err, PB_EINPUT, "%s: cannot create: %s", to, strerror(errno));
	}
	char buf[1 << 16];
	size_t n;
	int bad = 0;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		if (fwrite(buf, 1, n, out) != n) {
			bad = 1;
			break;
		}
	bad |= ferror(in);
	fclose(in);
	if (fclose(out) || bad)
		return pb_err(err, PB_EINPUT, "%s: cannot write the weights copy: %s", to,
		              strerror(errno));
	return PB_OK;
}

static int place_weights(weights_ctx *w, const char *model, const char *loc, pb_error *err)
{
	if (!loc[0] || loc[0] == '/' || strstr(loc, "..") || strchr(loc, '\\'))
		return pb_err(err, PB_EINPUT,
		              "%s: external data location '%s' is not a plain relative file name",
		              model, loc);
	for (size_t i = 0; i < json_array_size(w->files); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(w->files, i), "file")),
		           loc) == 0)
			return PB_OK;
	char src[PATH_MAX], dst[PATH_MAX];
	snprintf(src, sizeof src, "%s/%s", w->model_dir, loc);
	snprintf(dst, sizeof dst, "%s/%s", w->tmp, loc);
	const char *how;
	char real[PATH_MAX];
	if (access(src, F_OK) != 0) {
		if (!w->structure_only)
			return pb_err(
			    err, PB_EINPUT,
			    "%s: its weights file %s is missing (the parts would not run; "
			    "--structure-only writes them without weights)",
			    model, src);
		how = "absent";
		w->absent++;
	} else {
		/* Through the door: a FIFO, device or directory named by the model is
		 * refused (it was taken for a missing file, or read through a link);
		 * what a link resolves to must stay in the model's folder, as
		 * runtimes require (issue 39: `w.bin -> /etc/passwd` was copied). */
		int fd = pb_door_open_read(src, PB_DOOR_ANY, "weights file", err);
		if (fd < 0)
			return err ? err->code : PB_EINPUT;
		close(fd);
		if (!realpath(src, real) || !inside(w->model_dir, real))
			return pb_err(err, PB_EINPUT,
			              "%s: external data location '%s' resolves to %s, outside the "
			              "model's folder %s",
			              model, loc, realpath(src, real) ? real : src, w->model_dir);
		/* sub-folders of the location */
		for (char *q = strchr(dst + strlen(w->tmp) + 1, '/'); q; q = strchr(q + 1, '/')) {
			*q = 0;
			if (mkdir(dst, 0755) && errno != EEXIST) {
				int e = errno;
				*q = '/';
				return pb_err(err, PB_EINPUT, "%s: cannot create: %s", dst,
				              strerror(e));
			}
			*q = '/';
		}
		if (link(real, dst) == 0) {
			how = "linked";
			w->linked++;
		} else {
			int rc = copy_file(real, dst, err);
			if (rc)
				return rc;
			how = "copied";
			w->copied++;
		}
	}
	char abs[PATH_MAX];
	json_array_append_new(w->files, json_pack("{s:s,s:s,s:s}", "file", loc, "source",
	                                          realpath(src, abs) ? abs : src, "placed", how));
	return PB_OK;
}

/* ------------------------------------------------------------ manifest */

static json_t *shape_json(const pb_tensor *t)
{
	if (t->rank < 0)
		return json_null();
	json_t *a = json_array();
	for (int d = 0; d < t->rank; d++)
		json_array_append_new(a, t->dim_params[d] && t->dim_params[d][0]
		                             ? json_string(t->dim_params[d])
		                         : t->dims[d] >= 0 ? json_integer(t->dims[d])
		                                           : json_null());
	return a;
}

static json_t *tensor_json(const pb_tensor *t)
{
	double b = pb_tensor_bytes(t);
	return json_pack("{s:s,s:s,s:o,s:o}", "name", t->name, "dtype", pb_dtype_name(t->dtype),
	                 "shape", shape_json(t), "bytes", b > 0 ? json_real(b) : json_null());
}

static json_t *place_json(const pb_plan *plan, int gr, int k)
{
	const pb_plan_group *G = &plan->groups[gr];
	json_t *pl = json_pack("{s:s,s:i}", "label", G->label ? G->label : "", "group", gr);
	if (strcmp(plan->kind, "partition") == 0 && G->first_unit >= 0) {
		json_object_set_new(
		    pl, "cores", json_pack("[i,i]", G->first_unit, G->first_unit + G->n_units - 1));
	} else if (strcmp(plan->kind, "pipeline") == 0) {
		json_object_set_new(pl, "stage", json_integer(gr));
		const json_t *st =
		    json_array_get(json_object_get(plan->detail, "stages"), (size_t)gr);
		const json_t *dev = json_object_get(st, "devices");
		if (json_is_array(dev))
			json_object_set(pl, "devices", (json_t *)dev);
		else if (G->first_unit >= 0)
			json_object_set_new(
			    pl, "devices",
			    json_pack("[i,i]", G->first_unit, G->first_unit + G->n_units - 1));
	} else if (strcmp(plan->kind, "map") == 0) {
		const json_t *b =
		    json_array_get(json_object_get(plan->detail, "group_backend"), (size_t)gr);
		json_object_set_new(pl, "backend",
		                    json_string(json_is_string(b) ? json_string_value(b)
		                                                  : (G->label ? G->label : "")));
	}
	(void)k;
	return pl;
}

static json_t *build_manifest(const pb_graph *g, const pb_plan *plan, const char *plan_src,
                              const pb_extract_split_t *sp, const pb_onnx_src *src, json_t *files,
                              const char *weights, double *cross)
{
	json_t *m = json_object();
	json_object_set_new(m, "format", json_string("partbench-extract"));
	json_object_set_new(m, "version", json_integer(1));
	json_object_set_new(m, "model", json_string(g->path ? g->path : ""));
	json_object_set_new(m, "plan", json_string(plan_src));
	json_object_set_new(m, "kind", json_string(plan->kind));
	json_object_set_new(m, "method", json_string(plan->method ? plan->method : ""));
	json_object_set_new(m, "ir_version", json_integer(src->ir_version));
	json_t *ops = json_array();
	for (int i = 0; i < g->n_opsets; i++)
		json_array_append_new(ops, json_pack("{s:s,s:I}", "domain", g->opsets[i].domain,
		                                     "version", (json_int_t)g->opsets[i].version));
	json_object_set_new(m, "opsets", ops);
	json_object_set_new(m, "weights", json_string(weights));
	json_object_set(m, "weights_files", files);
	json_t *parts = json_array(), *flows = json_array();
	*cross = 0;
	for (int k = 0; k < sp->n_parts; k++) {
		const pb_extract_part *p = &sp->parts[k];
		char file[32];
		snprintf(file, sizeof file, "part%d.onnx", k);
		json_t *in = json_array(), *out = json_array();
		for (int i = 0; i < p->n_inputs; i++) {
			json_t *t = tensor_json(&g->tensors[p->inputs[i]]);
			json_object_set_new(t, "from",
			                    p->input_from[i] < 0 ? json_string("model")
			                                         : json_integer(p->input_from[i]));
			json_array_append_new(in, t);
		}
		for (int i = 0; i < p->n_outputs; i++) {
			const pb_tensor *ten = &g->tensors[p->outputs[i]];
			json_t *t = tensor_json(ten);
			json_t *to = json_array();
			for (int q = k + 1; q < sp->n_parts; q++)
				for (int j = 0; j < sp->parts[q].n_inputs; j++)
					if (sp->parts[q].inputs[j] == p->outputs[i])
						json_array_append_new(to, json_integer(q));
			if (ten->is_output)
				json_array_append_new(to, json_string("model"));
			json_object_set(t, "to", to);
			json_array_append_new(out, t);
			if (json_array_size(to) > (ten->is_output ? 1u : 0u)) {
				json_t *fl = tensor_json(ten);
				json_object_set_new(fl, "from", json_integer(k));
				json_object_set_new(fl, "to", to);
				json_array_append_new(flows, fl);
				double b = pb_tensor_bytes(ten);
				*cross += b > 0 ? b : 0;
			} else {
				json_decref(to);
			}
		}
		const pb_plan_group *G = &plan->groups[p->group];
		json_t *pj = json_pack("{s:i,s:s,s:o,s:o,s:i,s:i,s:o,s:f}", "index", k, "file",
		                       file, "inputs", in, "outputs", out, "nodes", p->n_nodes,
		                       "copied_nodes", p->n_copied, "place",
		                       place_json(plan, p->group, k), "predicted_time", G->time);
		json_object_set_new(pj, "predicted_compute", json_real(G->compute));
		json_object_set_new(pj, "predicted_routing", json_real(G->routing));
		json_object_set_new(pj, "macs", json_real(G->macs));
		json_array_append_new(parts, pj);
	}
	json_object_set_new(m, "parts", parts);
	json_object_set_new(m, "tensors", flows);
	json_object_set_new(m, "cross_bytes", json_real(*cross));
	return m;
}

/* ------------------------------------------------------------ writing */

static int write_parts(const pb_graph *g, const pb_plan *plan, const char *plan_src,
                       const pb_extract_split_t *sp, const pb_onnx_src *src, const char *tmp,
                       int structure_only, pb_extract_report *rep, pb_error *err)
{
	char model_dir[PATH_MAX];
	snprintf(model_dir, sizeof model_dir, "%s", g->path);
	weights_ctx w = {dirname(model_dir), tmp, structure_only, json_array()};
	int rc = PB_OK, n_inline = 0;
	/* weights of every initializer the parts use */
	for (int k = 0; k < sp->n_parts && !rc; k++)
		for (int i = 0; i < sp->parts[k].n_nodes && !rc; i++) {
			const pb_node *n = &g->nodes[sp->parts[k].nodes[i]];
			for (int j = 0; j < n->n_inputs && !rc; j++) {
				int t = n->inputs[j];
				if (t < 0 || !g->tensors[t].is_initializer)
					continue;
				int ii = pb_strmap_get(src->init_index, g->tensors[t].name, -1);
				if (ii < 0)
					continue;
				if (src->inits[ii].location)
					rc = place_weights(&w, g->path, src->inits[ii].location,
					                   err);
				else
					n_inline++;
			}
		}
	for (int k = 0; k < sp->n_parts && !rc; k++) {
		uint8_t *buf;
		size_t len;
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/part%d.onnx", tmp, k);
		rc = pb_onnx_part_encode(src, g, &sp->parts[k], k, &buf, &len, err);
		if (!rc) {
			rc = pb_write_file_atomic(path, (const char *)buf, len, err);
			free(buf);
		}
	}
	if (!rc) {
		rep->weights = w.absent   ? "absent"
		               : w.copied ? "copied"
		               : w.linked ? "linked"
		               : n_inline ? "inline"
		                          : "none";
		if ((w.linked || w.copied) && n_inline)
			rep->weights = w.copied ? "inline+copied" : "inline+linked";
		rep->manifest = build_manifest(g, plan, plan_src, sp, src, w.files, rep->weights,
		                               &rep->cross_bytes);
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/manifest.json", tmp);
		rc = pb_json_save_atomic(rep->manifest, path, err);
		rep->n_parts = sp->n_parts;
		rep->n_files = sp->n_parts;
	}
	json_decref(w.files);
	return rc;
}

/* mkdtemp makes the temporary folder 0700: the folder that replaces DIR gets
 * the permission bits of the one it replaces (--force), or a new folder's
 * (0777 less the umask), as mkdir would have made it. */
static void folder_mode(const char *tmp, const char *dir, int exists)
{
	struct stat st;
	mode_t mode;
	if (exists && stat(dir, &st) == 0) {
		mode = st.st_mode & 07777;
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0777 & ~mask;
	}
	(void)chmod(tmp, mode);
}

/* Checks DIR before any work: absent, an empty folder, or (with force) a
 * folder that holds neither the model nor the plan. */
static int check_dir(const char *dir, const pb_graph *g, const char *plan_src, int force,
                     int *exists, pb_error *err)
{
	struct stat st;
	*exists = 0;
	if (!dir[0])
		return pb_err(err, PB_EUSAGE, "extract: the output folder name is empty");
	if (lstat(dir, &st) != 0)
		return errno == ENOENT ? PB_OK
		                       : pb_err(err, PB_EINPUT, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return pb_err(err, PB_EINPUT, "%s: exists and is not a folder", dir);
	if (folder_empty(dir))
		return PB_OK; /* the final rename replaces an empty folder */
	*exists = 1;
	if (!force)
		return pb_err(err, PB_EINPUT, "%s: the folder is not empty (--force replaces it)",
		              dir);
	if ((g->path && inside(dir, g->path)) || (plan_src && inside(dir, plan_src)))
		return pb_err(
		    err, PB_EINPUT,
		    "%s: holds the model or the plan being read; --force will not remove it", dir);
	return PB_OK;
}

int pb_extract_write(const pb_graph *g, const pb_plan *plan, const char *plan_src,
                     const char *dir_arg, const pb_extract_opts *o, pb_extract_report *rep,
                     pb_error *err)
{
	memset(rep, 0, sizeof *rep);
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", dir_arg);
	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
		dir[n - 1] = 0; /* "out/" names the folder out */
	if (!g->format || strcmp(g->format, "onnx") != 0 || !g->path)
		return pb_err(err, PB_EINPUT,
		              "%s: extract writes ONNX parts of an ONNX model, not of a %s graph",
		              g->path ? g->path : "model", g->format ? g->format : "generated");
	for (int i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].n_members)
			return pb_err(
			    err, PB_EINPUT,
			    "%s: the open graph has fused nodes ('%s'); extract the model "
			    "as loaded",
			    g->path, g->nodes[i].name);
	int exists;
	int rc = check_dir(dir, g, plan_src, o->force, &exists, err);
	if (rc)
		return rc;
	pb_extract_split_t *sp = NULL;
	if ((rc = pb_extract_split(g, plan, plan_src, &sp, err)) != PB_OK)
		return rc;
	pb_onnx_src *src = NULL;
	if ((rc = pb_onnx_src_open(g->path, &src, err)) != PB_OK) {
		pb_extract_split_free(sp);
		return rc;
	}
	if (src->n_sparse)
		rc = pb_err(err, PB_EINPUT, "%s: sparse initializers are not supported by extract",
		            g->path);
	else if (src->n_nodes != g->n_nodes)
		rc = pb_err(err, PB_EINPUT,
		            "%s: the file has %d nodes, the open graph %d (changed since loading?)",
		            g->path, src->n_nodes, g->n_nodes);
	char tmp[PATH_MAX] = "", old[PATH_MAX] = "";
	if (!rc) {
		snprintf(tmp, sizeof tmp, "%s.pb-tmp-XXXXXX", dir);
		if (!mkdtemp(tmp)) {
			rc = pb_err(err, PB_EINPUT,
			            "%s: cannot create a temporary folder beside it: %s", dir,
			            strerror(errno));
			tmp[0] = 0;
		}
	}
	if (!rc)
		rc = write_parts(g, plan, plan_src, sp, src, tmp, o->structure_only, rep, err);
	if (!rc)
		folder_mode(tmp, dir, exists);
	if (!rc && exists) {
		snprintf(old, sizeof old, "%s.pb-old-XXXXXX", dir);
		if (!mkdtemp(old) || rename(dir, old) != 0) {
			rc = pb_err(err, PB_EINPUT, "%s: cannot move the old folder aside: %s", dir,
			            strerror(errno));
			if (old[0])
				rmdir(old);
			old[0] = 0;
		}
	}
	if (!rc && rename(tmp, dir) != 0) {
		rc = pb_err(err, PB_EINPUT, "%s: cannot rename %s to it: %s", dir, tmp,
		            strerror(errno));
		if (old[0])
			rename(old, dir); /* put the old one back */
		old[0] = 0;
	}
	if (rc && tmp[0])
		rm_tree(tmp);
	if (!rc && old[0])
		rm_tree(old);
	if (rc)
		pb_extract_report_free(rep);
	pb_onnx_src_free(src);
	pb_extract_split_free(sp);
	return rc;
}
