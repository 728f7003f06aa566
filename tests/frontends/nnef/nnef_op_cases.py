"""Small NNEF graphs, one or a few standard operations each, for comparing our lowering with the Khronos
``nnef.Session`` executor (run in .venv-nnef by ``khronos_run.py``). Inputs are ``external`` tensors filled
with random data; ``variable``s get random ``.dat`` files."""

from __future__ import annotations

X4 = "x = external(shape = [1, 3, 8, 8]);"
X7 = "x = external(shape = [1, 2, 7, 9]);"


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
    # audit additions: windows with strides, dilations, asymmetric/negative/automatic padding on odd extents
    "max_pool_ignore_dilated": g("y = max_pool(x, size = [1, 1, 3, 2], stride = [1, 1, 2, 3], dilation = [1, 1, 2, 1], "
                                 "border = 'ignore', padding = [(0, 0), (0, 0), (2, 1), (1, 1)]);", head=X7),
    "max_pool_negative_padding": g("y = max_pool(x, size = [1, 1, 2, 2], stride = [1, 1, 2, 2], border = 'ignore', "
                                   "padding = [(0, 0), (0, 0), (-1, 0), (0, -1)]);", head=X7),
    "avg_pool_ignore_asym": g("y = avg_pool(x, size = [1, 1, 3, 3], stride = [1, 1, 3, 2], border = 'ignore', "
                              "padding = [(0, 0), (0, 0), (2, 0), (0, 2)]);", head=X7),
    "avg_pool_ignore_auto": g("y = avg_pool(x, size = [1, 1, 2, 3], stride = [1, 1, 3, 2], border = 'ignore');", head=X7),
    "avg_pool_ignore_negative": g("y = avg_pool(x, size = [1, 1, 3, 3], border = 'ignore', "
                                  "padding = [(0, 0), (0, 0), (-1, 1), (1, -1)]);", head=X7),
    "avg_pool_ignore_channels": g("y = avg_pool(x, size = [1, 2, 3, 1], border = 'ignore', "
                                  "padding = [(0, 0), (1, 0), (1, 1), (0, 0)]);", head=X7),
    "avg_pool_constant_dilated": g("y = avg_pool(x, size = [1, 1, 2, 2], dilation = [1, 1, 3, 2], border = 'constant', "
                                   "padding = [(0, 0), (0, 0), (1, 2), (2, 1)]);", head=X7),
    "avg_pool_stride_over_size": g("y = avg_pool(x, size = [1, 1, 2, 2], stride = [1, 1, 3, 4], border = 'ignore');", head=X7),
    "rms_pool_ignore": g("y = rms_pool(x, size = [1, 1, 3, 3], border = 'ignore', stride = [1, 1, 2, 2]);", head=X7),
    # box without normalize is a sum: padded zeros must not shrink TOSA's average divisor
    "box_sum_ignore": g("y = box(x, size = [1, 1, 3, 3], border = 'ignore', padding = [(0, 0), (0, 0), (1, 1), (1, 1)]);",
                        head=X7),
    "box_sum_constant": g("y = box(x, size = [1, 1, 3, 2], stride = [1, 1, 2, 2], "
                          "padding = [(0, 0), (0, 0), (2, 1), (1, 1)]);", head=X7),
    "box_sum_auto": g("y = box(x, size = [1, 1, 3, 3], stride = [1, 1, 2, 2]);", head=X7),
    "box_dilated_strided": g("y = box(x, size = [1, 1, 3, 2], stride = [1, 1, 2, 2], dilation = [1, 1, 2, 3], "
                             "padding = [(0, 0), (0, 0), (1, 1), (2, 2)]);", head=X7),
    "deconv_dilated_output_shape": g("w = variable(shape = [2, 3, 3, 3], label = 'w'); y = deconv(x, w, stride = [2, 2], "
                                     "dilation = [2, 2], padding = [(1, 2), (0, 1)], output_shape = [1, 3, 15, 21]);",
                                     head=X7),
    "deconv_groups_negative_auto": g("w = variable(shape = [2, 2, 2, 3], label = 'w'); b = variable(shape = [1, 4], "
                                     "label = 'b'); y = deconv(x, w, b, groups = 2, stride = [3, 2], "
                                     "output_shape = [1, 4, 21, 18]);", head=X7),
    "deconv_dilated_negative_auto": g("w = variable(shape = [2, 3, 3, 2], label = 'w'); "
                                      "y = deconv(x, w, stride = [2, 3], dilation = [2, 1]);", head=X7),
    "deconv_auto_output_shape": g("w = variable(shape = [2, 3, 3, 3], label = 'w'); "
                                  "y = deconv(x, w, stride = [2, 2], output_shape = [1, 3, 14, 17]);", head=X7),
    "deconv1d_output_shape": g("x3 = external(shape = [2, 3, 5]); w = variable(shape = [3, 2, 4], label = 'w'); "
                               "y = deconv(x3, w, stride = [3], padding = [(2, 1)], output_shape = [2, 2, 14]);",
                               "x3", head=""),
    "debox_output_shape": g("y = debox(x, size = [1, 1, 3, 2], stride = [1, 1, 2, 2], "
                            "padding = [(0, 0), (0, 0), (1, 1), (0, 0)], output_shape = [1, 2, 14, 18]);", head=X7),
    "separable_deconv": g("pf = variable(shape = [4, 1, 3, 3], label = 'pf'); qf = variable(shape = [2, 4, 1, 1], "
                          "label = 'qf'); y = separable_deconv(x, pf, qf, stride = [2, 2]);", head=X7),
    "arg_reduce_two_axes": g("a = argmax_reduce(x, axes = [2, 3]); b = argmin_reduce(x, axes = [1, 2]);",
                             outputs="a, b", head=X7),
    "argmax_nonadjacent_axes": g("a = argmax_reduce(x, axes = [1, 3]);", outputs="a", head=X7),
    "matmul_2d_transpose_a": g("a = external(shape = [4, 3]); b = external(shape = [4, 2]); "
                               "y = matmul(a, b, transposeA = true);", "a, b", head=""),
    "split_uneven_concat": g("x12 = external(shape = [2, 12, 3]); [a, b, c] = split(x12, axis = 1, ratios = [3, 1, 2]); "
                             "y = concat([c, a, b], axis = 1);", "x12", head=""),
    "concat_single_stack_last": g("y = concat([x], axis = 2); z = stack([x, relu(x), x], axis = 4);", outputs="y, z",
                                  head=X7),
    "unstack_first_axis": g("x3 = external(shape = [3, 2, 4]); [a, b, c] = unstack(x3, axis = 0); y = a - c * b;",
                            "x3", head=""),
    "slice_negative_end_zero": g("y = slice(x, axes = [3, 2], begin = [-4, 1], end = [0, -2]);", head=X7),
    "moments_several_axes": g("m, v = moments(x, axes = [0, 2, 3]); m2, v2 = moments(x, axes = [1]);",
                              outputs="m, v, m2, v2", head=X7),
    "lrn_spatial": g("y = local_response_normalization(x, size = [1, 3, 3, 1], alpha = 0.5, beta = 0.6, bias = 2.0);",
                     head=X7),
    "local_contrast_channels": g("y = local_contrast_normalization(x, size = [1, 2, 3, 3], bias = 0.5, epsilon = 0.01);",
                                 head=X7),
    "multilinear_asym_constant": g("y = multilinear_upsample(x, factor = [2, 2], method = 'asymmetric', "
                                   "border = 'constant');", head=X7),
    "area_nearest_factors": g("x6 = external(shape = [1, 2, 6, 6]); y = area_downsample(x6, factor = [3, 2]); "
                              "z = nearest_downsample(x6, factor = [2, 3]); u = nearest_upsample(x6, factor = [1, 3]);",
                              "x6", "y, z, u", head=""),
    "softmax_batch_axis": g("y = softmax(x, axes = [0]);", head="x = external(shape = [3, 2, 2, 2]);"),
    "l2_normalization_epsilon": g("y = l2_normalization(x, axes = [1, 3], bias = 0.0, epsilon = 0.5);", head=X7),
    # §4.5.1: unsqueeze's axes are output positions in any order (the spec's recursive helper needs them sorted)
    "unsqueeze_unsorted_axes": g("y = unsqueeze(x, axes = [4, 1]);", head="x = external(shape = [2, 3, 4]);"),
    "multilinear_1d_symmetric": g("y = multilinear_upsample(x, factor = [2], method = 'symmetric', border = 'replicate');",
                                  head="x = external(shape = [1, 2, 5]);"),
    "multilinear_1d_asymmetric": g("y = multilinear_upsample(x, factor = [2], method = 'asymmetric', border = 'constant');",
                                   head="x = external(shape = [2, 3, 4]);"),
    "clamp_tensor_bounds": g("lo = external(shape = [1, 2, 1, 1]); y = clamp(x, lo, lo + 0.5);", "x, lo", head=X7),
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
    # automatic padding with t < 0: §4.3 gives p = floor(t/2), q = ceil(t/2) (here p = -1, q = 0); the Khronos
    # executor truncates t/2 towards zero (p = 0, q = -1), so the oracle gets the spec's padding explicitly
    "deconv_groups_negative_auto": g("w = variable(shape = [2, 2, 2, 3], label = 'w'); b = variable(shape = [1, 4], "
                                     "label = 'b'); y = deconv(x, w, b, groups = 2, stride = [3, 2], "
                                     "padding = [(-1, 0), (0, 1)], output_shape = [1, 4, 21, 18]);", head=X7),
    "deconv_dilated_negative_auto": g("w = variable(shape = [2, 3, 3, 2], label = 'w'); y = deconv(x, w, stride = [2, 3], "
                                      "dilation = [2, 1], padding = [(1, 2), (-1, 0)]);", head=X7),
    # arg-reductions over several axes (inventory [D]: row-major flat index over the reduced axes, first
    # occurrence); Khronos reduces one axis only, so the oracle moves the axes together and flattens them
    "arg_reduce_two_axes": g("t = reshape(x, shape = [1, 2, 63]); a0 = argmax_reduce(t, axes = [2]); "
                             "a = reshape(a0, shape = [1, 2, 1, 1]); "
                             "u = reshape(transpose(x, axes = [0, 3, 1, 2]), shape = [1, 9, 14]); "
                             "b0 = argmin_reduce(u, axes = [2]); b = reshape(transpose(b0, axes = [0, 2, 1]), "
                             "shape = [1, 1, 1, 9]);", outputs="a, b", head=X7),
    "argmax_nonadjacent_axes": g("t = reshape(transpose(x, axes = [0, 2, 1, 3]), shape = [1, 7, 18]); "
                                 "a0 = argmax_reduce(t, axes = [2]); a = reshape(a0, shape = [1, 1, 7, 1]);",
                                 outputs="a", head=X7),
}
