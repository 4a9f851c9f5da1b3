#!/usr/bin/env node
// run_shapes.js — the shape of every output of a model in ONNX Runtime (CPU,
// onnxruntime-node), for the shape oracle (tests/ort/shape_oracle.py).
//
//   node run_shapes.js MODEL NAME=D1,D2,... [...]
//       feeds every model input a tensor of the given dims (zeros: token ids
//       stay in range), runs the model with graph optimisation off (every
//       output is the node output of that name) and prints one JSON object
//       {output name: [dims]}. Exit 1 when ORT refuses the model or the run.
'use strict';
const ort = require('onnxruntime-node');

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
  int8: Int8Array, uint8: Uint8Array, bool: Uint8Array, float16: Uint16Array,
};

async function main() {
  const [model, ...specs] = process.argv.slice(2);
  const dims = {};
  for (const s of specs) {
    const [k, v] = s.split('=');
    dims[k] = v.split(',').map(Number);
  }
  const sess = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1,
  });
  const feeds = {};
  for (const name of sess.inputNames) {
    const meta = sess.inputMetadata.find((m) => m.name === name);
    const type = meta && meta.type ? meta.type : 'float32';
    const shape = dims[name];
    if (!shape) throw new Error(`no dims given for input ${name}`);
    const A = ARRAYS[type];
    if (!A) throw new Error(`input ${name}: element type ${type} not handled`);
    const n = shape.reduce((a, b) => a * b, 1);
    feeds[name] = new ort.Tensor(type, new A(n), shape);
  }
  const out = await sess.run(feeds);
  const shapes = {};
  for (const k of Object.keys(out)) shapes[k] = Array.from(out[k].dims);
  process.stdout.write(JSON.stringify(shapes) + '\n');
}

main().catch((e) => {
  process.stderr.write(`run_shapes: ${e.message || e}\n`);
  process.exit(1);
});
