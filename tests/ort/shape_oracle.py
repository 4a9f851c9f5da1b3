#!/usr/bin/python3
"""shape_oracle.py — test tool: partbench's shape of every node output against
ONNX Runtime's (issue 35.3).

Usage: shape_oracle.py PARTBENCH MODEL BATCH [--dim NAME=V] [--tmp DIR] [--save OUT]

Runs `PARTBENCH info MODEL --input ... --json` with dim 0 of every model input
set to BATCH (other symbolic dims from --dim, default 1), then writes a copy
of MODEL for ONNX Runtime: the constants partbench lists in batch_rewrites
re-encoded with their new entries (the rewrite is applied here, from the list,
not by partbench), the inputs declared at the new dims, value_info dropped,
every node output a graph output, and external weights without bytes filled
with random values (fill_weights.py). tests/ort/run_shapes.js runs it and
prints every output's dims; each must equal partbench's shape of that tensor.
--save writes the rewritten model itself (its own outputs only) to OUT.
Prints one line per model; exit 1 on any difference (each listed), when
partbench refuses the model, or when ORT refuses the rewritten one.
Needs the onnx module of /usr/bin/python3 (python3-onnx).
"""
import argparse, json, os, subprocess, sys
import numpy as np
import onnx
from onnx import numpy_helper, TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fill_weights  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def input_dims(model, batch, fixed):
    init = {i.name for i in model.graph.initializer}
    out = {}
    for i in model.graph.input:
        if i.name in init:
            continue
        dims = []
        for k, d in enumerate(i.type.tensor_type.shape.dim):
            if k == 0:
                dims.append(batch)
            elif d.HasField('dim_value'):
                dims.append(d.dim_value)
            else:
                dims.append(fixed.get(d.dim_param, 1))
        out[i.name] = dims
    return out


def rewrite(model, rewrites):
    """Applies partbench's listed rewrites: tensor name -> {entry: new}."""
    want = {}
    for r in rewrites:
        want.setdefault(r['constant'], {})[r['entry']] = (r['from'], r['to'])
    done = set()

    def patch(t, name):
        a = numpy_helper.to_array(t).copy()
        flat = a.reshape(-1)
        for e, (old, new) in want[name].items():
            if flat[e] != old:
                sys.exit(f'{name}[{e}] is {flat[e]}, partbench said {old}')
            flat[e] = new
        t.CopyFrom(numpy_helper.from_array(a, t.name))
        done.add(name)

    for t in model.graph.initializer:
        if t.name in want:
            patch(t, t.name)
    for n in model.graph.node:
        if n.op_type == 'Constant' and n.output[0] in want:
            for at in n.attribute:
                if at.name == 'value':
                    patch(at.t, n.output[0])
    missing = set(want) - done
    if missing:
        sys.exit(f'rewritten constants not found in the model: {sorted(missing)}')


def for_ort(model, dims):
    g = model.graph
    for i in g.input:
        if i.name in dims:
            shp = i.type.tensor_type.shape
            for k, d in enumerate(shp.dim):
                d.Clear()
                d.dim_value = dims[i.name][k]
    del g.value_info[:]
    have = {o.name for o in g.output}
    for o in g.output:  # outputs may state the exported batch
        o.type.tensor_type.ClearField('shape')
    for n in g.node:
        for o in n.output:
            if o and o not in have:
                g.output.append(onnx.ValueInfoProto(name=o))
                have.add(o)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('partbench')
    ap.add_argument('model')
    ap.add_argument('batch', type=int)
    ap.add_argument('--dim', action='append', default=[])
    ap.add_argument('--tmp', default='/tmp')
    ap.add_argument('--save', default=None,
                    help='also write the rewritten model (inputs at the new dims) here')
    a = ap.parse_args()
    fixed = {k: int(v) for k, v in (d.split('=') for d in a.dim)}
    model = onnx.load(a.model, load_external_data=False)
    dims = input_dims(model, a.batch, fixed)
    args = [a.partbench, 'info', a.model, '--json']
    for k, v in dims.items():
        args += ['--input', f'{k}={",".join(map(str, v))}']
    p = subprocess.run(args, capture_output=True, text=True)
    label = f'{os.path.basename(a.model)} @ batch {a.batch}'
    if p.returncode != 0:
        print(f'FAIL {label}: partbench refused it: {p.stderr.strip()}')
        return 1
    info = json.loads(p.stdout)
    if any('outputs' not in n for n in info['nodes']):
        print(f'FAIL {label}: info --json gives no shape per node output')
        return 1
    ours = {o['name']: o['shape'] for n in info['nodes'] for o in n['outputs']}

    rewrite(model, info.get('batch_rewrites', []))
    fill_weights.fill(model, np.random.default_rng(1))
    if a.save:
        saved = onnx.ModelProto()
        saved.CopyFrom(model)
        for_ort(saved, dims)
        del saved.graph.output[len(model.graph.output):]
        onnx.save_model(saved, a.save)
    for_ort(model, dims)
    path = os.path.join(a.tmp, f'oracle_{os.getpid()}.onnx')
    onnx.save_model(model, path)
    q = subprocess.run(['node', os.path.join(HERE, 'run_shapes.js'), path] +
                       [f'{k}={",".join(map(str, v))}' for k, v in dims.items()],
                       capture_output=True, text=True)
    os.unlink(path)
    if q.returncode != 0:
        print(f'FAIL {label}: ONNX Runtime refused the rewritten model: {q.stderr.strip()}')
        return 1
    theirs = json.loads(q.stdout)
    bad = []
    for name, shp in theirs.items():
        want = 'x'.join(map(str, shp)) if shp else '1'
        got = ours.get(name)
        if got is None:
            bad.append(f'{name}: partbench has no such node output')
        elif got != want and not (got == 'scalar' and not shp):
            bad.append(f'{name}: partbench {got}, ORT {want}')
    if bad:
        print(f'FAIL {label}: {len(bad)} of {len(theirs)} shapes differ:')
        for b in bad[:20]:
            print('   ', b)
        return 1
    print(f'ok {label}: {len(theirs)} node outputs agree, '
          f'{len(info.get("batch_rewrites", []))} constant entries rewritten')
    return 0


if __name__ == '__main__':
    sys.exit(main())
