// RUN: nnkiln opt --split-input-file --verify-diagnostics %s

// ERROR_IF conditions and unsupported type combinations of TOSA 0.30 §2.9-§2.12 ops.

// §2.9 Reduction

func.func @reduce_axis(%a: tensor<2x3xi32>) {
  // expected-error {{'tosa.reduce_sum' [0 <= axis < rank(shape1)] axis = 2 but rank(shape1) = 2}}
  %0 = tosa.reduce_sum %a {axis = 2 : i64} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return
}

// -----

func.func @reduce_output_axis_not_one(%a: tensor<2x3xf32>) {
  // expected-error {{'tosa.reduce_max' [shape[axis] == 1] output shape [2, 3] has shape[1] = 3}}
  %0 = tosa.reduce_max %a {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @reduce_rank_5(%a: tensor<1x1x1x1x2xi8>) {
  // expected-error {{'tosa.reduce_min' [1 <= rank(shape1) <= 4] rank(shape1) = 5}}
  %0 = tosa.reduce_min %a {axis = 4 : i64} : (tensor<1x1x1x1x2xi8>) -> tensor<1x1x1x1x1xi8>
  func.return
}

// -----

func.func @reduce_all_not_bool(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.reduce_all' [supported data types] unsupported type combination (input, output) = (i8, i8)}}
  %0 = tosa.reduce_all %a {axis = 0 : i64} : (tensor<2x3xi8>) -> tensor<1x3xi8>
  func.return
}

// -----

func.func @reduce_any_not_bool(%a: tensor<2x3xf32>) {
  // expected-error {{'tosa.reduce_any' [supported data types]}}
  %0 = tosa.reduce_any %a {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  func.return
}

// -----

func.func @reduce_product_int(%a: tensor<2x3xi32>) {
  // expected-error {{'tosa.reduce_product' [supported data types] unsupported type combination (input, output) = (i32, i32)}}
  %0 = tosa.reduce_product %a {axis = 0 : i64} : (tensor<2x3xi32>) -> tensor<1x3xi32>
  func.return
}

// -----

func.func @reduce_sum_int8(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.reduce_sum' [supported data types] unsupported type combination (input, output) = (i8, i8)}}
  %0 = tosa.reduce_sum %a {axis = 0 : i64} : (tensor<2x3xi8>) -> tensor<1x3xi8>
  func.return
}

// -----

// §2.10.1 CONCAT

func.func @concat_sum(%a: tensor<2x3xi8>, %b: tensor<2x5xi8>) {
  // expected-error {{'tosa.concat' [shape[axis] == sum(shapes1[k][axis] for all k)] shape[1] = 7 but the inputs sum to 8}}
  %0 = tosa.concat %a, %b {axis = 1 : i64} : (tensor<2x3xi8>, tensor<2x5xi8>) -> tensor<2x7xi8>
  func.return
}

// -----

func.func @concat_other_dim(%a: tensor<2x3xi8>, %b: tensor<3x5xi8>) {
  // expected-error {{[input_shape[index] == shapes1[0][index] for index != axis] input 1 has dimension 0 = 3 but input 0 has 2}}
  %0 = tosa.concat %a, %b {axis = 1 : i64} : (tensor<2x3xi8>, tensor<3x5xi8>) -> tensor<2x8xi8>
  func.return
}

// -----

func.func @concat_rank(%a: tensor<2x3xi8>, %b: tensor<2x3x1xi8>) {
  // expected-error {{[rank(input_shape) == rank(shapes1[0])] input 1 has rank 3 but input 0 has rank 2}}
  %0 = tosa.concat %a, %b {axis = 0 : i64} : (tensor<2x3xi8>, tensor<2x3x1xi8>) -> tensor<4x3xi8>
  func.return
}

// -----

func.func @concat_axis(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.concat' [0 <= axis < rank(shapes1[0])] axis = -1}}
  %0 = tosa.concat %a, %a {axis = -1 : i64} : (tensor<2x3xi8>, tensor<2x3xi8>) -> tensor<2x6xi8>
  func.return
}

// -----

func.func @concat_mixed_types(%a: tensor<2x3xi8>, %b: tensor<2x3xi16>) {
  // expected-error {{'tosa.concat' [all inputs have the same data type]}}
  %0 = tosa.concat %a, %b {axis = 0 : i64} : (tensor<2x3xi8>, tensor<2x3xi16>) -> tensor<4x3xi8>
  func.return
}

// -----

// §2.10.2 PAD

func.func @pad_negative(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.pad' [padding >= 0] padding [0, 0, -1, 2] has negative values [-1]}}
  %0 = tosa.pad %a {padding = array<i64: 0, 0, -1, 2>, pad_const = 0 : i64} : (tensor<2x3xi8>) -> tensor<2x4xi8>
  func.return
}

// -----

func.func @pad_length(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.pad' [length(padding) == 2 * rank(input1)] length(padding) = 2 but 2 * rank(input1) = 4}}
  %0 = tosa.pad %a {padding = array<i64: 1, 1>, pad_const = 0 : i64} : (tensor<2x3xi8>) -> tensor<4x3xi8>
  func.return
}

// -----

func.func @pad_const_range(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.pad' [pad_const fits i8] pad_const = 200 is outside [-128, 127]}}
  %0 = tosa.pad %a {padding = array<i64: 0, 0, 0, 0>, pad_const = 200 : i64} : (tensor<2x3xi8>) -> tensor<2x3xi8>
  func.return
}

// -----

func.func @pad_const_float_for_int(%a: tensor<2x3xi32>) {
  // expected-error {{'tosa.pad' [pad_const is in_out_t (i32)]}}
  %0 = tosa.pad %a {padding = array<i64: 0, 0, 0, 0>, pad_const = 0.0 : f32} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return
}

// -----

func.func @pad_const_int_for_float(%a: tensor<2x3xf16>) {
  // expected-error {{'tosa.pad' [pad_const is in_out_t (f16)]}}
  %0 = tosa.pad %a {padding = array<i64: 0, 0, 0, 0>, pad_const = 0 : i64} : (tensor<2x3xf16>) -> tensor<2x3xf16>
  func.return
}

// -----

func.func @pad_output(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.pad' [output shape] result shapes [2, 3] do not match the inferred [3, 3]}}
  %0 = tosa.pad %a {padding = array<i64: 0, 1, 0, 0>, pad_const = 0 : i64} : (tensor<2x3xi8>) -> tensor<2x3xi8>
  func.return
}

// -----

// §2.10.3 RESHAPE

func.func @reshape_size(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.reshape' [tensor_size(shape1) == tensor_size(shape)] input [2, 3] has 6 elements but new_shape [4, 2] has 8}}
  %0 = tosa.reshape %a {new_shape = array<i64: 4, 2>} : (tensor<2x3xi8>) -> tensor<4x2xi8>
  func.return
}

// -----

func.func @reshape_minus_one(%a: tensor<2x3xf32>) {
  // expected-error {{'tosa.reshape' [new_shape[i] >= 1]}}
  %0 = tosa.reshape %a {new_shape = array<i64: -1>} : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return
}

// -----

// §2.10.4 REVERSE

func.func @reverse_axis(%a: tensor<2x3xi1>) {
  // expected-error {{'tosa.reverse' [0 <= axis < rank(shape)] axis = 2 but rank(shape) = 2}}
  %0 = tosa.reverse %a {axis = 2 : i64} : (tensor<2x3xi1>) -> tensor<2x3xi1>
  func.return
}

// -----

func.func @reverse_type(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.reverse' [supported data types] unsupported type combination (input, output) = (i8, i32)}}
  %0 = tosa.reverse %a {axis = 0 : i64} : (tensor<2x3xi8>) -> tensor<2x3xi32>
  func.return
}

// -----

// §2.10.5 SLICE

func.func @slice_past_end(%a: tensor<5x6xi8>) {
  // expected-error {{'tosa.slice' [start[index] + size[index] <= shape1[index]] start[1] + size[1] = 2 + 5 = 7 > shape1[1] = 6}}
  %0 = tosa.slice %a {start = array<i64: 0, 2>, size = array<i64: 5, 5>} : (tensor<5x6xi8>) -> tensor<5x5xi8>
  func.return
}

// -----

func.func @slice_negative_start(%a: tensor<5x6xi8>) {
  // expected-error {{'tosa.slice' [start[index] >= 0] start[0] = -1}}
  %0 = tosa.slice %a {start = array<i64: -1, 0>, size = array<i64: 1, 1>} : (tensor<5x6xi8>) -> tensor<1x1xi8>
  func.return
}

// -----

func.func @slice_zero_size(%a: tensor<5x6xi8>) {
  // expected-error {{'tosa.slice' [size[index] > 0] size[1] = 0}}
  %0 = tosa.slice %a {start = array<i64: 0, 0>, size = array<i64: 1, 0>} : (tensor<5x6xi8>) -> tensor<1x1xi8>
  func.return
}

// -----

func.func @slice_length(%a: tensor<5x6xi8>) {
  // expected-error {{'tosa.slice' [length(start) == rank(input1)] length(start) = 1 but rank(input1) = 2}}
  %0 = tosa.slice %a {start = array<i64: 0>, size = array<i64: 1, 1>} : (tensor<5x6xi8>) -> tensor<1x1xi8>
  func.return
}

// -----

func.func @slice_output_not_size(%a: tensor<5x6xi8>) {
  // expected-error {{'tosa.slice' [output shape] result shapes [2, 2] do not match the inferred [1, 1]}}
  %0 = tosa.slice %a {start = array<i64: 0, 0>, size = array<i64: 1, 1>} : (tensor<5x6xi8>) -> tensor<2x2xi8>
  func.return
}

// -----

// §2.10.6 TILE

func.func @tile_output(%a: tensor<2x3xi16>) {
  // expected-error {{'tosa.tile' [output shape] result shapes [4, 3] do not match the inferred [4, 6]}}
  %0 = tosa.tile %a {multiples = array<i64: 2, 2>} : (tensor<2x3xi16>) -> tensor<4x3xi16>
  func.return
}

// -----

func.func @tile_multiples_length(%a: tensor<2x3xi16>) {
  // expected-error {{'tosa.tile' [length(multiples) == rank(shape1)]}}
  %0 = tosa.tile %a {multiples = array<i64: 2>} : (tensor<2x3xi16>) -> tensor<4x3xi16>
  func.return
}

// -----

// §2.10.7 TRANSPOSE

func.func @transpose_repeat(%a: tensor<2x3x4xf32>) {
  // expected-error {{'tosa.transpose' [perms values are not repeated] perms [0, 2, 0] repeats 0}}
  %0 = tosa.transpose %a {perms = array<i64: 0, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<2x4x2xf32>
  func.return
}

// -----

func.func @transpose_range(%a: tensor<2x3xf32>) {
  // expected-error {{'tosa.transpose' [0 <= perms[i] < rank(shape1)] perms [0, 2] has 2 but rank(shape1) = 2}}
  %0 = tosa.transpose %a {perms = array<i64: 0, 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @transpose_output(%a: tensor<2x3xf32>) {
  // expected-error {{'tosa.transpose' [output shape] result shapes [2, 3] do not match the inferred [3, 2]}}
  %0 = tosa.transpose %a {perms = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// §2.11 GATHER / SCATTER

func.func @gather_batch(%v: tensor<2x5x3xi8>, %i: tensor<3x4xi32>) {
  // expected-error {{'tosa.gather' [indices[N] == values[N]] indices has N = 3 but values has N = 2}}
  %0 = tosa.gather %v, %i : (tensor<2x5x3xi8>, tensor<3x4xi32>) -> tensor<2x4x3xi8>
  func.return
}

// -----

func.func @gather_index_type(%v: tensor<2x5x3xi8>, %i: tensor<2x4xi16>) {
  // expected-error {{'tosa.gather' [supported data types] unsupported type combination (values, indices, output) = (i8, i16, i8)}}
  %0 = tosa.gather %v, %i : (tensor<2x5x3xi8>, tensor<2x4xi16>) -> tensor<2x4x3xi8>
  func.return
}

// -----

func.func @gather_values_rank(%v: tensor<2x5xi8>, %i: tensor<2x4xi32>) {
  // expected-error {{'tosa.gather' [values is [N,K,C]] values has shape [2, 5]}}
  %0 = tosa.gather %v, %i : (tensor<2x5xi8>, tensor<2x4xi32>) -> tensor<2x4xi8>
  func.return
}

// -----

func.func @scatter_input_shape(%v: tensor<2x5x3xf16>, %i: tensor<2x4xi32>, %u: tensor<2x4x2xf16>) {
  // expected-error {{'tosa.scatter' [input is [N,W,C]] input has shape [2, 4, 2] but values_in/indices give [N,W,C] = [2, 4, 3]}}
  %0 = tosa.scatter %v, %i, %u : (tensor<2x5x3xf16>, tensor<2x4xi32>, tensor<2x4x2xf16>) -> tensor<2x5x3xf16>
  func.return
}

// -----

func.func @scatter_type(%v: tensor<2x5x3xi8>, %i: tensor<2x4xi32>, %u: tensor<2x4x3xi16>) {
  // expected-error {{'tosa.scatter' [supported data types] unsupported type combination (values_in, indices, input, values_out) = (i8, i32, i16, i8)}}
  %0 = tosa.scatter %v, %i, %u : (tensor<2x5x3xi8>, tensor<2x4xi32>, tensor<2x4x3xi16>) -> tensor<2x5x3xi8>
  func.return
}

// -----

// §2.12 RESIZE

func.func @resize_shift_int(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [1 <= shift <= 11 for an integer resize_t] shift = 12}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 12 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x7x3xi32>
  func.return
}

// -----

func.func @resize_stride_limit(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [stride_x < (16 << shift)] stride_x = 32 but 16 << 1 = 32}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 1>, stride = array<i64: 1, 32>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x1x3xi8>
  func.return
}

// -----

func.func @resize_offset_limit(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [(-16 << shift) < offset_y < (16 << shift)] offset_y = -32 but 16 << 1 = 32}}
  %0 = tosa.resize %a {output_size = array<i64: 23, 7>, stride = array<i64: 2, 1>, offset = array<i64: -32, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xi8>) -> tensor<1x23x7x3xi8>
  func.return
}

// -----

func.func @resize_stride_zero(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [stride_x > 0 && stride_y > 0] stride = [0, 1]}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 0, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x7x3xi8>
  func.return
}

// -----

func.func @resize_output_size(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{output_size = [8, 8] but the attributes give [OH, OW] = [7, 7]}}
  %0 = tosa.resize %a {output_size = array<i64: 8, 8>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi8>) -> tensor<1x8x8x3xi32>
  func.return
}

// -----

func.func @resize_max_dim(%a: tensor<1x4x4x3xi16>) {
  // 3 * 2^11 / 1 + 1 + 10000 = 16145 is fine for OW, but border 11000 makes OH = 17145.
  // expected-error {{'tosa.resize' [max(OH, OW, IH, IW) < 16384] [OH, OW, IH, IW] = [17145, 6145, 4, 4]}}
  %0 = tosa.resize %a {output_size = array<i64: 17145, 6145>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 11000, 0>, shift = 11 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xi16>) -> tensor<1x17145x6145x3xi16>
  func.return
}

// -----

func.func @resize_float_shift(%f: tensor<1x4x4x3xf32>) {
  // expected-error {{'tosa.resize' [shift == 0 for a float resize_t] shift = 1}}
  %0 = tosa.resize %f {output_size = array<i64: 7, 7>, stride = array<f32: 0.5, 0.5>, offset = array<f32: 0.0, 0.0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

func.func @resize_float_stride(%f: tensor<1x4x4x3xf32>) {
  // expected-error {{'tosa.resize' [stride_x <= IW && stride_y <= IH]}}
  %0 = tosa.resize %f {output_size = array<i64: 1, 1>, stride = array<f32: 5.0, 1.0>, offset = array<f32: 0.0, 3.0>, border = array<i64: 0, 0>, shift = 0 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xf32>) -> tensor<1x1x1x3xf32>
  func.return
}

// -----

func.func @resize_resize_t_int(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [stride is resize_t (int16)]}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<f32: 1.0, 1.0>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x7x3xi32>
  func.return
}

// -----

func.func @resize_resize_t_float(%f: tensor<1x4x4x3xbf16>) {
  // expected-error {{'tosa.resize' [offset is resize_t (fp32)]}}
  %0 = tosa.resize %f {output_size = array<i64: 7, 7>, stride = array<f32: 0.5, 0.5>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 0 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xbf16>) -> tensor<1x7x7x3xbf16>
  func.return
}

// -----

func.func @resize_nearest_widening(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [mode BILINEAR for signed 8, bilinear] mode = NEAREST but signed 8, bilinear needs BILINEAR}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x7x3xi32>
  func.return
}

// -----

func.func @resize_bilinear_i16_needs_i48(%a: tensor<1x4x4x3xi16>) {
  // expected-error {{'tosa.resize' [mode NEAREST for signed 16, nearest] mode = BILINEAR but signed 16, nearest needs NEAREST}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi16>) -> tensor<1x7x7x3xi16>
  func.return
}

// -----

func.func @resize_type(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [supported data types] unsupported type combination (input, output) = (i8, i16)}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x7x3xi16>
  func.return
}

// -----

func.func @resize_rank(%a: tensor<4x4x3xi8>) {
  // expected-error {{'tosa.resize' [input is [N,IH,IW,C]] input has shape [4, 4, 3]}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<4x4x3xi8>) -> tensor<7x7x3xi8>
  func.return
}
