#!/usr/bin/python3
"""fill_weights.py — test tool: gives a structure-only ONNX model random weights.

Usage: fill_weights.py IN.onnx OUT.onnx [--external NAME] [--seed S]

Every initializer whose bytes live in a missing external file (the bundled
models/ are structure only) gets random float values, scaled like He/LeCun
initialisation (uniform, bound sqrt(3 / fan_in)) so that activations stay of
order one through deep nets; biases get small values. The weights are written
inline, or with --external NAME into the external data file NAME beside
OUT.onnx. Needs the onnx module of /usr/bin/python3 (python3-onnx).
"""
import argparse, os, sys
import numpy as np
import onnx
from onnx import numpy_helper, TensorProto


def fill(model, rng):
    for t in model.graph.initializer:
        if t.data_location != TensorProto.EXTERNAL:
            continue
        if t.data_type not in (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16):
            sys.exit(f'fill_weights: {t.name}: external {onnx.TensorProto.DataType.Name(t.data_type)}'
                     ' data cannot be invented')
        dims = list(t.dims)
        n = int(np.prod(dims)) if dims else 1
        fan_in = n // dims[0] if len(dims) >= 2 and dims[0] else 1
        bound = np.sqrt(3.0 / max(fan_in, 1)) if len(dims) >= 2 else 0.1
        vals = rng.uniform(-bound, bound, size=dims).astype(
            {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64,
             TensorProto.FLOAT16: np.float16}[t.data_type])
        new = numpy_helper.from_array(vals, t.name)
        t.ClearField('external_data')
        t.data_location = TensorProto.DEFAULT
        t.raw_data = new.raw_data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('src')
    ap.add_argument('dst')
    ap.add_argument('--external', default=None)
    ap.add_argument('--seed', type=int, default=1)
    a = ap.parse_args()
    m = onnx.load(a.src, load_external_data=False)
    fill(m, np.random.default_rng(a.seed))
    if a.external:
        onnx.save_model(m, a.dst, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=a.external, size_threshold=0)
    else:
        onnx.save_model(m, a.dst)


if __name__ == '__main__':
    main()
