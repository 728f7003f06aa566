"""Builds the small keras models of this folder, converts them to TFLite (float and full-integer int8) and
records TFLite's reference-kernel outputs as the oracle of the TFLite frontend (issue 23).

Run in a throwaway venv with TensorFlow (not a project dependency)::

    python3 -m venv /work/tfvenv && /work/tfvenv/bin/pip install tensorflow-cpu==2.21.0 numpy
    cd tests/data/tflite && /work/tfvenv/bin/python generate.py

Optionally ``--check-litert /path/to/python`` re-runs every model through ``ai_edge_litert`` (BUILTIN_REF)
in that interpreter and compares with the saved outputs (they should be bit-identical).

Files written, for each model ``<name>``:

- ``<name>.tflite``: converted with ``tf.lite.TFLiteConverter.from_keras_model`` (keras 3 as shipped with
  TF 2.21). Random weights (seed 0), BatchNorm moving statistics randomised, static batch 1. The int8 models are
  full-integer: ``optimizations=[Optimize.DEFAULT]``, a representative dataset of 16 seeded random inputs,
  ``supported_ops=[TFLITE_BUILTINS_INT8]``, int8 input and output.
- ``<name>_x<i>.npy``: seeded random inputs, in the interpreter's input order (float32 in [-1, 1) for float
  models; int8 uniform over [-128, 127] for int8 models).
- ``<name>_y<i>.npy``: the outputs of ``tf.lite.Interpreter(..., experimental_op_resolver_type=
  OpResolverType.BUILTIN_REF)``, in the interpreter's output order, with the dtypes TFLite gives.
- ``models.json``: per model its input and output details as the interpreter reports them (name, shape, dtype,
  quantization (scale, zero_point)) and the builtin operator names it contains (``_get_ops_details()``),
  plus the operators in execution order with their versions and fused activations (read from the flatbuffer).

Models: ``cnn_float``/``cnn_int8`` (conv3x3+relu, depthwise, folded BatchNorm, residual add, max pool,
average pool, 1x1 conv+relu6, global average pool, dense, softmax), ``ops_float`` (an op soup: concat,
reshape, transpose, pad, leaky relu, mul, sub, squared difference, rsqrt(abs()+1), logistic, tanh, mean,
nearest and bilinear resize, dense, transpose conv, split), ``ops_int8`` (the subset that quantizes cleanly)
and ``transformer_float`` (MultiHeadAttention with 2 heads of key_dim 8 on 1x6x16, LayerNorm, dense+gelu,
residual adds).
"""

import json, os, sys
import numpy as np

if __name__ != "__main__" or sys.argv[1:2] != ["--check-litert"]:   # the check needs no TensorFlow
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    import keras
    from keras import layers

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 0


def randomise_batchnorm(model, rng):
    for layer in model.layers:
        if isinstance(layer, layers.BatchNormalization):
            g, b, m, v = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, g.shape).astype(np.float32),
                               rng.uniform(-0.5, 0.5, b.shape).astype(np.float32),
                               rng.uniform(-0.5, 0.5, m.shape).astype(np.float32),
                               rng.uniform(0.5, 2.0, v.shape).astype(np.float32)])


def cnn():
    x = keras.Input((16, 16, 3), batch_size=1, name="image")
    h = layers.Conv2D(8, 3, padding="same", activation="relu")(x)
    d = layers.DepthwiseConv2D(3, padding="same")(h)
    d = layers.BatchNormalization()(d)
    h = layers.Add()([h, d])
    h = layers.MaxPool2D(2)(h)
    h = layers.AveragePooling2D(2)(h)
    h = layers.Conv2D(16, 1, activation="relu6")(h)
    h = layers.GlobalAveragePooling2D()(h)
    h = layers.Dense(10)(h)
    y = layers.Softmax()(h)
    return keras.Model(x, y, name="cnn")


def ops_soup():
    a = keras.Input((8, 8, 4), batch_size=1, name="a")
    b = keras.Input((8, 8, 4), batch_size=1, name="b")
    c = layers.Concatenate(axis=-1)([a, b])                                  # 1x8x8x8
    t = layers.Lambda(lambda v: tf.transpose(v, [0, 2, 1, 3]))(c)           # TRANSPOSE
    p = layers.ZeroPadding2D(((1, 0), (0, 1)))(t)                            # PAD -> 1x9x9x8
    p = layers.Conv2D(8, 2)(p)                                               # 1x8x8x8
    l = layers.Lambda(lambda v: tf.nn.leaky_relu(v, alpha=0.1))(p)
    m = layers.Multiply()([l, c])
    s = layers.Subtract()([m, t])
    sq = layers.Lambda(lambda v: tf.math.squared_difference(v[0], v[1]))([s, c])
    r = layers.Lambda(lambda v: tf.math.rsqrt(tf.abs(v) + 1.0))(sq)
    g = layers.Lambda(lambda v: tf.sigmoid(v) * tf.tanh(v))(s)
    h = layers.Add()([r, g])
    h1, h2 = layers.Lambda(lambda v: tf.split(v, 2, axis=-1))(h)           # SPLIT
    # keras 3's UpSampling2D(nearest) lowers to TILE/reshape, not RESIZE_NEAREST_NEIGHBOR: use tf.image.resize
    up = layers.Lambda(lambda v: tf.image.resize(v[:, :4, :4, :], (8, 8), method="nearest"))(h1)  # 1x8x8x4
    bi = layers.Lambda(lambda v: tf.image.resize(v, (12, 12), method="bilinear"))(h2)
    tc = layers.Conv2DTranspose(4, 3, strides=2, padding="same")(h2)        # 1x16x16x4
    mean = layers.Lambda(lambda v: tf.reduce_mean(v, axis=[1, 2]))(tc)     # MEAN -> 1x4
    rs = layers.Reshape((8 * 8 * 4,))(up)
    d = layers.Dense(6)(rs)
    out1 = layers.Concatenate(axis=-1)([d, mean])                            # 1x10
    out2 = layers.Reshape((6, 6, 16))(bi)                                    # 1x12x12x4 -> 1x6x6x16
    return keras.Model([a, b], [out1, out2], name="ops")


def ops_int8_soup():
    a = keras.Input((8, 8, 4), batch_size=1, name="a")
    b = keras.Input((8, 8, 4), batch_size=1, name="b")
    c = layers.Concatenate(axis=-1)([a, b])                                  # 1x8x8x8
    p = layers.ZeroPadding2D(((1, 0), (1, 0)))(c)   # 1x9x9x8; asymmetric, so not folded into the conv
    h = layers.Conv2D(8, 2, activation="relu")(p)                            # 1x8x8x8
    h = layers.Add()([h, c])
    m = layers.Multiply()([h, c])
    lg = layers.Activation("sigmoid")(m)
    th = layers.Activation("tanh")(h)
    h = layers.Concatenate(axis=-1)([lg, th])                                # 1x8x8x16
    mp = layers.MaxPool2D(2)(h)                                              # 1x4x4x16
    ap = layers.AveragePooling2D(2)(h)
    up = layers.Lambda(lambda v: tf.image.resize(v, (8, 8), method="nearest"))(ap)  # 1x8x8x16
    mean = layers.Lambda(lambda v: tf.reduce_mean(v, axis=[1, 2]))(up)     # 1x16
    r = layers.Reshape((4 * 4 * 16,))(mp)
    d = layers.Dense(10)(r)
    out1 = layers.Softmax()(d)
    out2 = layers.Dense(4)(mean)
    return keras.Model([a, b], [out1, out2], name="ops_q")


def transformer():
    x = keras.Input((6, 16), batch_size=1, name="tokens")
    a = layers.MultiHeadAttention(num_heads=2, key_dim=8)(x, x)
    h = layers.LayerNormalization(epsilon=1e-5)(layers.Add()([x, a]))
    f = layers.Dense(32, activation="gelu")(h)
    f = layers.Dense(16)(f)
    y = layers.LayerNormalization(epsilon=1e-5)(layers.Add()([h, f]))
    return keras.Model(x, y, name="encoder")


def float_inputs(model, rng, n):
    return [[rng.uniform(-1, 1, (1,) + tuple(i.shape[1:])).astype(np.float32) for i in model.inputs]
            for _ in range(n)]


def convert(model, int8, rep_rng=None):
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if int8:
        reps = float_inputs(model, rep_rng, 16)
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: iter(reps)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


def interp(path):
    it = tf.lite.Interpreter(model_path=path,
                             experimental_op_resolver_type=tf.lite.experimental.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    return it


def run(path, xs):
    it = interp(path)
    for d, x in zip(it.get_input_details(), xs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]).copy() for d in it.get_output_details()]


def operators(path):
    """Per operator in execution order: builtin name, operator version and fused activation (from the flatbuffer)."""
    from tensorflow.lite.tools import flatbuffer_utils as fu
    from tensorflow.lite.python import schema_py_generated as sch
    codes = {v: k for k, v in vars(sch.BuiltinOperator).items() if not k.startswith("_")}
    acts = {v: k for k, v in vars(sch.ActivationFunctionType).items() if not k.startswith("_")}
    m = fu.read_model(path)
    out = []
    for op in m.subgraphs[0].operators:
        oc = m.operatorCodes[op.opcodeIndex]
        act = getattr(op.builtinOptions, "fusedActivationFunction", None) if op.builtinOptions else None
        out.append({"op": codes[max(oc.builtinCode, oc.deprecatedBuiltinCode)], "version": int(oc.version),
                    "fused_activation": None if act is None else acts[act]})
    return out


def details(ds):
    return [{"name": d["name"], "shape": [int(s) for s in d["shape"]], "dtype": np.dtype(d["dtype"]).name,
             "quantization": [float(d["quantization"][0]), int(d["quantization"][1])]} for d in ds]


def main():
    keras.utils.set_random_seed(SEED)
    rng = np.random.default_rng(SEED)
    specs = [("cnn", cnn), ("ops", ops_soup), ("ops_q", ops_int8_soup), ("transformer", transformer)]
    jobs = []   # (name, keras model, int8)
    for key, build in specs:
        m = build()
        randomise_batchnorm(m, rng)
        if key == "cnn":
            jobs += [("cnn_float", m, False), ("cnn_int8", m, True)]
        elif key == "ops":
            jobs.append(("ops_float", m, False))
        elif key == "ops_q":
            jobs.append(("ops_int8", m, True))
        else:
            jobs.append(("transformer_float", m, False))
    meta = {}
    for name, model, int8 in jobs:
        try:
            blob = convert(model, int8, np.random.default_rng(SEED + 1))
        except Exception as e:  # recorded, not fatal
            print(f"{name}: conversion failed: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        path = os.path.join(HERE, name + ".tflite")
        with open(path, "wb") as f:
            f.write(blob)
        try:
            it = interp(path)
        except Exception as e:
            print(f"{name}: the reference interpreter refuses it: {e}; dropped", file=sys.stderr)
            os.remove(path)
            continue
        ops = it._get_ops_details()
        op_names = [o["op_name"] for o in ops]
        if any(n in ("FlexDelegate", "DELEGATE", "CUSTOM") or n.startswith("Flex") for n in op_names):
            print(f"{name}: non-builtin ops {op_names}; dropped", file=sys.stderr)
            os.remove(path)
            continue
        ins, outs = it.get_input_details(), it.get_output_details()
        xrng = np.random.default_rng(SEED + 2)
        xs = []
        for _ in range(2):
            if int8:
                xs.append([xrng.integers(-128, 128, d["shape"]).astype(np.int8) for d in ins])
            else:
                xs.append([xrng.uniform(-1, 1, d["shape"]).astype(np.float32) for d in ins])
        nin = len(ins)
        # sample k uses files x{k*nin + i} / y{k*nout + j}; with one input/output this is simply x<k>/y<k>
        nout = len(outs)
        for k, x in enumerate(xs):
            ys = run(path, x)
            ys2 = run(path, x)
            assert all(np.array_equal(a, b) for a, b in zip(ys, ys2)), f"{name}: not reproducible"
            for i, xi in enumerate(x):
                np.save(os.path.join(HERE, f"{name}_x{k * nin + i}.npy"), xi)
            for j, yj in enumerate(ys):
                np.save(os.path.join(HERE, f"{name}_y{k * nout + j}.npy"), yj)
        meta[name] = {"file": name + ".tflite", "bytes": len(blob), "samples": len(xs),
                      "inputs": details(ins), "outputs": details(outs),
                      "builtin_ops": sorted(set(op_names)), "ops_in_order": op_names,
                      "operators": operators(path),
                      "files": {"x": [f"{name}_x{k * nin + i}.npy" for k in range(len(xs)) for i in range(nin)],
                                "y": [f"{name}_y{k * nout + j}.npy" for k in range(len(xs)) for j in range(nout)]}}
        print(f"{name}: {len(blob)} bytes, ops {sorted(set(op_names))}")
    meta = {"generator": "generate.py", "tensorflow": tf.__version__, "keras": keras.__version__,
            "note": "sample k of a model with n inputs / m outputs is x{k*n+i} (i < n) / y{k*m+j} (j < m); "
                    "outputs are TFLite's BUILTIN_REF interpreter outputs in its output order",
            "models": meta}
    with open(os.path.join(HERE, "models.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


CHECK = r"""
import json, sys, os, numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
here = sys.argv[1]; meta = json.load(open(os.path.join(here, "models.json")))["models"]; bad = 0
for name, m in meta.items():
    nin, nout = len(m["inputs"]), len(m["outputs"])
    for k in range(m["samples"]):
        it = Interpreter(model_path=os.path.join(here, m["file"]), experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        it.allocate_tensors()
        for i, d in enumerate(it.get_input_details()):
            it.set_tensor(d["index"], np.load(os.path.join(here, f"{name}_x{k*nin+i}.npy")))
        it.invoke()
        for j, d in enumerate(it.get_output_details()):
            y = it.get_tensor(d["index"]); ref = np.load(os.path.join(here, f"{name}_y{k*nout+j}.npy"))
            same = y.dtype == ref.dtype and np.array_equal(y, ref)
            diff = 0 if same else float(np.max(np.abs(y.astype(np.float64) - ref.astype(np.float64))))
            print(name, k, j, "identical" if same else f"DIFFERENT max abs {diff}"); bad += not same
sys.exit(1 if bad else 0)
"""

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check-litert":
        import subprocess
        sys.exit(subprocess.call([sys.argv[2], "-c", CHECK, HERE]))
    main()
