#!/usr/bin/env node
// run_parts.js — runs extracted parts in ONNX Runtime (CPU, onnxruntime-node).
//
//   node run_parts.js check MODEL DIR [--seed S] [--tol T] [--dim NAME=V]
//       runs MODEL and the chain of parts of DIR/manifest.json on the same
//       random inputs and compares every model output: the relative difference
//       max|whole - chain| / max|whole| must be <= T (default 1e-4). Prints one
//       JSON object; exit 1 when an output differs or is missing.
//   node run_parts.js profile MODEL OUT.json [--runs N] [--opt LEVEL] [--dim NAME=V]
//       runs MODEL N times (default 5) with ORT profiling on (one thread) and
//       moves the profile (Chrome trace JSON) to OUT.json. LEVEL: ORT's graph
//       optimisation (default basic: nodes keep their names; extended/all fuse
//       and rename them, so fewer nodes of the model get a measured time).
//   node run_parts.js time MODEL DIR [--runs N] [--opt LEVEL] [--dim NAME=V]
//       median time of the whole model and of every part (one thread, after a
//       warm-up run), as JSON.
// Symbolic input dims take --dim NAME=V (default 1). docs/extract.md explains
// the manifest this reads.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const a = {pos: [], seed: 1, tol: 1e-4, runs: 5, dims: {}, opt: null};
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i];
    if (v === '--seed') a.seed = Number(argv[++i]);
    else if (v === '--tol') a.tol = Number(argv[++i]);
    else if (v === '--runs') a.runs = Number(argv[++i]);
    else if (v === '--opt') a.opt = argv[++i];
    else if (v === '--dim') {
      const [k, n] = argv[++i].split('=');
      a.dims[k] = Number(n);
    } else a.pos.push(v);
  }
  return a;
}

// xorshift32: the same inputs for the same seed on every machine
function rng(seed) {
  let x = (seed >>> 0) || 1;
  return () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x / 4294967296;
  };
}

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array,
  int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
};

function randomTensor(meta, dims, r) {
  const shape = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : (dims[d] || 1)));
  const n = shape.reduce((p, d) => p * d, 1);
  const A = ARRAYS[meta.type];
  if (!A) throw new Error(`input ${meta.name}: element type ${meta.type} not handled`);
  const data = new A(n);
  for (let i = 0; i < n; i++) {
    if (meta.type === 'int64') data[i] = BigInt(Math.floor(r() * 3));
    else if (meta.type.startsWith('int') || meta.type === 'uint8' || meta.type === 'bool')
      data[i] = Math.floor(r() * 3) % (meta.type === 'bool' ? 2 : 3);
    else data[i] = 2 * r() - 1;
  }
  return new ort.Tensor(meta.type, data, shape);
}

const opts = (level) => ({intraOpNumThreads: 1, interOpNumThreads: 1,
                         graphOptimizationLevel: level || 'all'});

async function modelInputs(sess, dims, seed) {
  const r = rng(seed);
  const feeds = {};
  sess.inputNames.forEach((name, i) => {
    const meta = sess.inputMetadata[i];
    feeds[name] = randomTensor({...meta, name}, dims, r);
  });
  return feeds;
}

function relDiff(a, b) {
  let num = 0, den = 0;
  for (let i = 0; i < a.length; i++) {
    const x = Number(a[i]), y = Number(b[i]);
    num = Math.max(num, Math.abs(x - y));
    den = Math.max(den, Math.abs(x));
  }
  return den > 0 ? num / den : num;
}

async function runChain(dir, manifest, feeds) {
  const env = {...feeds};
  for (const p of manifest.parts) {
    const s = await ort.InferenceSession.create(path.join(dir, p.file), opts());
    const f = {};
    for (const n of s.inputNames) {
      if (!(n in env)) throw new Error(`${p.file}: input ${n} was produced by no earlier part`);
      f[n] = env[n];
    }
    const out = await s.run(f);
    for (const [n, t] of Object.entries(out)) env[n] = t;
    await s.release();
  }
  return env;
}

async function check(a) {
  const [model, dir] = a.pos;
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const whole = await ort.InferenceSession.create(model, opts());
  const feeds = await modelInputs(whole, a.dims, a.seed);
  const ref = await whole.run(feeds);
  const env = await runChain(dir, manifest, feeds);
  const outputs = [];
  let ok = true;
  for (const name of whole.outputNames) {
    if (!(name in env)) {
      outputs.push({name, missing: true});
      ok = false;
      continue;
    }
    const want = ref[name], got = env[name];
    const same = want.dims.length === got.dims.length && want.dims.every((d, i) => d === got.dims[i]);
    const rel = same ? relDiff(want.data, got.data) : Infinity;
    if (!(rel <= a.tol)) ok = false;
    let maxAbs = 0;
    for (const v of want.data) maxAbs = Math.max(maxAbs, Math.abs(Number(v)));
    outputs.push({name, shape: want.dims, rel_diff: rel, max_abs: maxAbs});
  }
  console.log(JSON.stringify({ok, parts: manifest.parts.length, tol: a.tol, outputs}));
  return ok ? 0 : 1;
}

async function profile(a) {
  const [model, out] = a.pos;
  const tmp = fs.mkdtempSync(path.join(path.dirname(path.resolve(out)), '.ortprof-'));
  const prefix = path.join(tmp, 'ort');
  const s = await ort.InferenceSession.create(model, {...opts(a.opt || 'basic'), enableProfiling: true,
                                                      profileFilePrefix: prefix});
  const feeds = await modelInputs(s, a.dims, a.seed);
  for (let i = 0; i < a.runs; i++) await s.run(feeds);
  s.endProfiling();
  await s.release();
  const files = fs.readdirSync(tmp).filter((f) => f.endsWith('.json'));
  if (files.length !== 1) throw new Error(`expected one profile in ${tmp}, found ${files.length}`);
  fs.renameSync(path.join(tmp, files[0]), out);
  fs.rmSync(tmp, {recursive: true});
  console.log(JSON.stringify({profile: out, runs: a.runs}));
  return 0;
}

async function timeOne(file, feeds, runs, level) {
  const s = await ort.InferenceSession.create(file, opts(level));
  const f = {};
  for (const n of s.inputNames) f[n] = feeds[n];
  const out = await s.run(f); // warm-up
  const t = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await s.run(f);
    t.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  await s.release();
  t.sort((x, y) => x - y);
  return {median: t[Math.floor(t.length / 2)], out};
}

async function time(a) {
  const [model, dir] = a.pos;
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const whole = await ort.InferenceSession.create(model, opts());
  const feeds = await modelInputs(whole, a.dims, a.seed);
  await whole.release();
  const w = await timeOne(model, feeds, a.runs, a.opt);
  const env = {...feeds};
  const parts = [];
  for (const p of manifest.parts) {
    const r = await timeOne(path.join(dir, p.file), env, a.runs, a.opt);
    for (const [n, t] of Object.entries(r.out)) env[n] = t;
    parts.push({file: p.file, label: p.place.label, predicted: p.predicted_time, measured: r.median});
  }
  console.log(JSON.stringify({model, whole: w.median, runs: a.runs, parts}));
  return 0;
}

const a = parseArgs(process.argv.slice(3));
const cmd = {check, profile, time}[process.argv[2]];
if (!cmd || a.pos.length < 2) {
  console.error('usage: run_parts.js check MODEL DIR | profile MODEL OUT.json | time MODEL DIR');
  process.exit(2);
}
cmd(a).then((rc) => process.exit(rc), (e) => { console.error(`run_parts.js: ${e.message}`); process.exit(2); });
