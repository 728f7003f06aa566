"""Small NNEF graphs, one or a few standard operations each, for comparing our lowering with the Khronos
``nnef.Session`` executor (run in .venv-nnef by ``khronos_run.py``). Inputs are ``external`` tensors filled
with random data; ``variable``s get random ``.dat`` files."""

from __future__ import annotations

X4 = "x = external(shape = [1, 3, 8, 8]);"


def g(body: str, inputs: str = "x", outputs: str = "y", head: str = X4) -> str:
    return f"version 1.0;\nextension KHR_enable_operator_expressions;\ngraph G( {inputs} ) -> ( {outputs} )\n{{\n    {head}\n    {body}\n}}\n"


CASES: dict[str, str] = {
    # element-wise
    "unary": g("a = neg(x); b = rcp(x); c = exp(x); d = abs(x); e = sign(x); f = floor(x); h = ceil(x); "
               "i = round(x); y = a + b + c + d + e + f + h + i;"),
    "log": g("y = log(abs(x) + 0.1);"),
    "binary": g("w = external(shape = [1, 3, 1, 1]); a = x + w; b = x - w; c = x * w; d = x / (abs(w) + 1.0); "
                "e = pow(abs(x) + 0.5, w); y = a + b + c + d + e;", "x, w"),
    "broadcast_leading": g("b = variable(shape = [1, 3], label = 'b'); y = x + b;"),
    "compare_select": g("w = external(shape = [1, 3, 8, 8]); a = lt(x, w); b = gt(x, w); c = le(x, w); "
                        "d = ge(x, w); e = eq(x, x); f = ne(x, w); l = or(or(and(a, not(b)), and(c, d)), and(e, f)); "
                        "y = select(l, x, w);", "x, w"),
    "simplifiers": g("a = sqr(x); b = sqrt(abs(x)); c = rsqr(x + 3.0); d = rsqrt(abs(x) + 1.0); e = log2(abs(x) + 1.0); "
                     "f = min(x, 0.3); h = max(x, -0.2); i = clamp(x, -0.5, 0.5); y = a + b + c + d + e + f + h + i;"),
    "activations": g("a = sigmoid(x); b = relu(x); c = elu(x); d = tanh(x); e = softplus(x); "
                     "f = leaky_relu(x, alpha = 0.2); p = variable(shape = [1, 3], label = 'p'); h = prelu(x, p); "
                     "y = a + b + c + d + e + f + h;"),
    "softmax": g("y = softmax(x, axes = [1]);"),
    "softmax_spatial": g("y = softmax(x, axes = [2, 3]);"),
    # conv family
    "conv": g("w = variable(shape = [4, 3, 3, 3], label = 'w'); b = variable(shape = [1, 4], label = 'b'); "
              "y = conv(x, w, b, padding = [(1, 1), (1, 1)]);"),
    "conv_auto_stride": g("w = variable(shape = [4, 3, 3, 3], label = 'w'); y = conv(x, w, stride = [2, 2]);"),
    "conv_asym_dil": g("w = variable(shape = [5, 3, 3, 2], label = 'w'); "
                       "y = conv(x, w, padding = [(2, 0), (1, 3)], dilation = [2, 1], stride = [1, 2]);"),
    "conv_groups": g("x6 = external(shape = [1, 6, 7, 7]); w = variable(shape = [4, 3, 3, 3], label = 'w'); "
                     "y = conv(x6, w, groups = 2, padding = [(0, 0), (0, 0)]);", "x6", head=""),
    "conv_depthwise": g("w = variable(shape = [6, 1, 3, 3], label = 'w'); b = variable(shape = [1, 6], label = 'b'); "
                        "y = conv(x, w, b, groups = 0);"),
    "conv_replicate": g("w = variable(shape = [2, 3, 3, 3], label = 'w'); y = conv(x, w, border = 'replicate', "
                        "padding = [(1, 1), (2, 0)]);"),
    "conv_reflect": g("w = variable(shape = [2, 3, 3, 3], label = 'w'); y = conv(x, w, border = 'reflect', "
                      "padding = [(1, 1), (1, 1)]);"),
    "conv_reflect_even": g("w = variable(shape = [2, 3, 3, 3], label = 'w'); y = conv(x, w, border = 'reflect-even', "
                           "padding = [(1, 2), (1, 1)]);"),
    "conv1d": g("x3 = external(shape = [2, 3, 10]); w = variable(shape = [4, 3, 3], label = 'w'); "
                "y = conv(x3, w, stride = [2]);", "x3", head=""),
    "separable_conv": g("pf = variable(shape = [3, 1, 3, 3], label = 'pf'); qf = variable(shape = [5, 3, 1, 1], "
                        "label = 'qf'); y = separable_conv(x, pf, qf);"),
    "deconv": g("w = variable(shape = [3, 4, 3, 3], label = 'w'); b = variable(shape = [1, 4], label = 'b'); "
                "y = deconv(x, w, b, stride = [2, 2], padding = [(1, 1), (1, 1)]);"),
    "deconv_auto": g("w = variable(shape = [3, 2, 4, 4], label = 'w'); y = deconv(x, w, stride = [2, 2]);"),
    "deconv_output_shape": g("w = variable(shape = [3, 2, 3, 3], label = 'w'); "
                             "y = deconv(x, w, stride = [2, 2], padding = [(1, 1), (1, 1)], output_shape = [1, 2, 16, 16]);"),
    "deconv_groups": g("w = variable(shape = [3, 1, 3, 3], label = 'w'); y = deconv(x, w, groups = 0, "
                       "padding = [(0, 0), (0, 0)], dilation = [2, 1]);"),
    # pooling
    "max_pool": g("y = max_pool(x, size = [1, 1, 3, 3], stride = [1, 1, 2, 2], border = 'ignore', "
                  "padding = [(0, 0), (0, 0), (1, 1), (1, 1)]);"),
    "max_pool_auto": g("y = max_pool(x, size = [1, 1, 3, 3], stride = [1, 1, 2, 2], border = 'ignore');"),
    "max_pool_constant": g("y = max_pool(x, size = [1, 1, 2, 2], stride = [1, 1, 2, 2], border = 'constant', "
                           "padding = [(0, 0), (0, 0), (1, 1), (1, 1)]);"),
    "avg_pool_ignore": g("y = avg_pool(x, size = [1, 1, 3, 3], border = 'ignore', "
                         "padding = [(0, 0), (0, 0), (1, 1), (1, 1)]);"),
    "avg_pool_constant": g("y = avg_pool(x, size = [1, 1, 3, 3], border = 'constant', stride = [1, 1, 2, 2]);"),
    "box": g("y = box(x, size = [1, 2, 2, 2], border = 'constant', padding = [(0, 0), (0, 1), (0, 1), (1, 0)]);"),
    "box_replicate_dilated": g("y = box(x, size = [1, 1, 3, 2], border = 'replicate', dilation = [1, 1, 2, 1], "
                               "padding = [(0, 0), (0, 0), (2, 2), (1, 0)], normalize = true);"),
    "rms_pool": g("y = rms_pool(x, size = [1, 1, 2, 2], stride = [1, 1, 2, 2]);"),
    "debox": g("y = debox(x, size = [1, 1, 2, 2], stride = [1, 1, 2, 2], padding = [(0, 0), (0, 0), (0, 0), (0, 0)]);"),
    "debox_overlap": g("y = debox(x, size = [1, 1, 3, 3], stride = [1, 1, 2, 2], "
                       "padding = [(0, 0), (0, 0), (1, 1), (1, 1)]);"),
    "nearest": g("a = nearest_upsample(x, factor = [2, 2]); y = nearest_downsample(a, factor = [2, 2]); "
                 "z = area_downsample(x, factor = [2, 2]);", outputs="a, y, z"),
    "multilinear_sym": g("y = multilinear_upsample(x, factor = [2, 2], method = 'symmetric', border = 'replicate');"),
    "multilinear_sym_const": g("y = multilinear_upsample(x, factor = [2, 2], method = 'symmetric', border = 'constant');"),
    "multilinear_asym": g("y = multilinear_upsample(x, factor = [2, 2], method = 'asymmetric', border = 'replicate');"),
    "reduce": g("a = sum_reduce(x, axes = [1]); b = max_reduce(x, axes = [2, 3]); c = min_reduce(x, axes = [1, 3]); "
                "d = mean_reduce(x, axes = [2]); e = sum_reduce(x, axes = [1, 2], normalize = true);",
                outputs="a, b, c, d, e"),
    "arg_reduce": g("a = argmax_reduce(x, axes = [1]); b = argmin_reduce(x, axes = [3]);", outputs="a, b"),
    "moments": g("m, v = moments(x, axes = [2, 3]);", outputs="m, v"),
    # shape ops
    "reshape_transpose": g("a = reshape(x, shape = [1, 0, -1]); b = transpose(a, axes = [0, 2, 1]); "
                           "y = squeeze(unsqueeze(b, axes = [3]), axes = [3]);"),
    "split_concat": g("[a, b] = split(x, axis = 1, ratios = [1, 2]); y = concat([b, a, b], axis = 1);"),
    "stack_unstack": g("[a, b, c] = unstack(x, axis = 1); y = stack([c, a], axis = 2);"),
    "slice": g("y = slice(x, axes = [1, 2, 3], begin = [1, -6, 0], end = [0, 7, -2]);"),
    "matmul": g("a = external(shape = [2, 4, 5]); b = external(shape = [2, 6, 5]); y = matmul(a, b, transposeB = true); "
                "z = matmul(b, a, transposeB = true); w = matmul(a, a, transposeA = true);", "a, b", "y, z, w", head=""),
    "linear": g("a = external(shape = [2, 5]); w = variable(shape = [3, 5], label = 'w'); "
                "b = variable(shape = [1, 3], label = 'b'); y = linear(a, w, b);", "a", head=""),
    "copy_add_n": g("[a, b] = copy_n(x, times = 2); y = add_n([a, b, x]);"),
    # normalization
    "lrn": g("y = local_response_normalization(x, size = [1, 3, 1, 1], alpha = 0.1, beta = 0.75, bias = 1.0);"),
    "local_norms": g("a = local_mean_normalization(x, size = [1, 1, 3, 3]); "
                     "b = local_variance_normalization(x, size = [1, 1, 3, 3], bias = 1.0, epsilon = 0.001); "
                     "c = local_contrast_normalization(x, size = [1, 1, 3, 3], bias = 1.0, epsilon = 0.001);",
                     outputs="a, b, c"),
    "l1_l2": g("a = l1_normalization(x, axes = [1], epsilon = 0.001); b = l2_normalization(x, axes = [1, 2], bias = 0.5);",
               outputs="a, b"),
    "batch_norm": g("m = variable(shape = [1, 3], label = 'm'); v = variable(shape = [1, 3], label = 'v'); "
                    "o = variable(shape = [1, 3], label = 'o'); s = variable(shape = [1, 3], label = 's'); "
                    "y = batch_normalization(x, m, abs(v), o, s, epsilon = 0.001);"),
    # quantization ops
    "linear_quantize": g("y = linear_quantize(x, min = -0.5, max = 0.75, bits = 4);"),
    "logarithmic_quantize": g("y = logarithmic_quantize(x, max = 2.0, bits = 3);"),
}

# Cases the Khronos Session cannot run as written (it lacks non-constant borders, softmax over several axes,
# multilinear factors other than 2, sample/index shapes as in §4.3.3): an equivalent graph for the oracle,
# written from the spec's definitions (NNEF 1.0.5's ``pad`` for border modes, the compound bodies inline).
ORACLE: dict[str, str] = {
    "conv_replicate": g("w = variable(shape = [2, 3, 3, 3], label = 'w'); "
                        "p = pad(x, padding = [(0, 0), (0, 0), (1, 1), (2, 0)], border = 'replicate'); "
                        "y = conv(p, w, padding = [(0, 0), (0, 0)]);"),
    "conv_reflect": g("w = variable(shape = [2, 3, 3, 3], label = 'w'); "
                      "p = pad(x, padding = [(0, 0), (0, 0), (1, 1), (1, 1)], border = 'reflect'); "
                      "y = conv(p, w, padding = [(0, 0), (0, 0)]);"),
    "conv_reflect_even": g("w = variable(shape = [2, 3, 3, 3], label = 'w'); "
                           "p = pad(x, padding = [(0, 0), (0, 0), (1, 2), (1, 1)], border = 'reflect-even'); "
                           "y = conv(p, w, padding = [(0, 0), (0, 0)]);"),
    "box_replicate_dilated": g("p = pad(x, padding = [(0, 0), (0, 0), (2, 2), (1, 0)], border = 'replicate'); "
                               "b = box(p, size = [1, 1, 3, 2], dilation = [1, 1, 2, 1], "
                               "padding = [(0, 0), (0, 0), (0, 0), (0, 0)]); y = b / 6.0;"),
    "softmax_spatial": g("m = max_reduce(x, axes = [2, 3]); e = exp(x - m); y = e / sum_reduce(e, axes = [2, 3]);"),
    "linear_quantize": g("z = max(min(x, 0.75), -0.5); q = round((z - -0.5) / (0.75 - -0.5) * 15.0); "
                         "y = q / 15.0 * (0.75 - -0.5) + -0.5;"),
}
