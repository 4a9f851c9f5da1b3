/*
 * box_module.h — the module path that names a box of several nodes in an
 * export, whatever plan kind cut the box (box_module.c).
 */
#ifndef PB_RENDER_BOX_MODULE_H
#define PB_RENDER_BOX_MODULE_H

#include <stddef.h>

#include "model/graph.h"

/* Writes the name of nodes first..last of g: the module path their names
 * share ("blocks/layers.0" for /blocks/layers.0/norm1/Add and
 * /blocks/layers.0/self_attn/MatMul; '/'-separated names, else '.'), else
 * the modules of the first and last named node joined by " .. " (a box cut
 * across modules by a stage or group boundary), else "" (no node has a
 * module path). Returns buf. */
char *pb_box_module(const pb_graph *g, int first, int last, char *buf, size_t len);

#endif
