// RUN: nnkiln opt --split-input-file --verify-diagnostics %s

// Invalid uses of the TOSA 0.30 §2.5-§2.8 elementwise ops: at least one ERROR_IF or unsupported
// type combination per op (the message names the rule and the offending values).

func.func @add_rank(%a: tensor<2x3xi32>, %b: tensor<3xi32>) {
  // expected-error {{operand ranks differ: [2, 1]}}
  %0 = tosa.add %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  func.return
}

// -----

func.func @add_i8(%a: tensor<3xi8>) {
  // expected-error {{unsupported type combination (input1, input2, output) = (i8, i8, i8)}}
  %0 = tosa.add %a, %a : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @add_mixed(%a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error {{= (f32, f16, f32)}}
  %0 = tosa.add %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  func.return
}

// -----

func.func @add_output_shape(%a: tensor<1x3xi32>, %b: tensor<1x3xi32>) {
  // expected-error {{result shapes [4, 3] do not match the inferred [1, 3]}}
  %0 = tosa.add %a, %b : (tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<4x3xi32>
  func.return
}

// -----

func.func @ars_i1(%a: tensor<3xi1>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.arithmetic_right_shift %a, %a {round = false} : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return
}

// -----

func.func @ars_f32(%a: tensor<3xf32>) {
  // expected-error {{= (f32, f32, f32)}}
  %0 = tosa.arithmetic_right_shift %a, %a {round = true} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @bitwise_and_f32(%a: tensor<3xf32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.bitwise_and %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @bitwise_or_broadcast(%a: tensor<2x3xi16>, %b: tensor<2x2xi16>) {
  // expected-error {{dimensions [3, 2] cannot broadcast}}
  %0 = tosa.bitwise_or %a, %b : (tensor<2x3xi16>, tensor<2x2xi16>) -> tensor<2x3xi16>
  func.return
}

// -----

func.func @bitwise_xor_bool(%a: tensor<3xi1>) {
  // expected-error {{= (bool, bool, bool)}}
  %0 = tosa.bitwise_xor %a, %a : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return
}

// -----

func.func @intdiv_i16(%a: tensor<3xi16>) {
  // expected-error {{supported: signed 32 (i32, i32, i32)}}
  %0 = tosa.intdiv %a, %a : (tensor<3xi16>, tensor<3xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @intdiv_f32(%a: tensor<3xf32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.intdiv %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @logical_and_i8(%a: tensor<3xi8>) {
  // expected-error {{supported: Boolean (bool, bool, bool)}}
  %0 = tosa.logical_and %a, %a : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @lls_f16(%a: tensor<3xf16>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.logical_left_shift %a, %a : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  func.return
}

// -----

func.func @lrs_broadcast(%a: tensor<2x3xi32>, %b: tensor<3x3xi32>) {
  // expected-error {{dimensions [2, 3] cannot broadcast}}
  %0 = tosa.logical_right_shift %a, %b : (tensor<2x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi32>
  func.return
}

// -----

func.func @logical_or_i32(%a: tensor<3xi32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.logical_or %a, %a : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @logical_xor_out(%a: tensor<3xi1>) {
  // expected-error {{= (bool, bool, i8)}}
  %0 = tosa.logical_xor %a, %a : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi8>
  func.return
}

// -----

func.func @maximum_i16(%a: tensor<3xi16>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.maximum %a, %a : (tensor<3xi16>, tensor<3xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @minimum_rank(%a: tensor<1x3xf32>, %b: tensor<1x1x3xf32>) {
  // expected-error {{operand ranks differ}}
  %0 = tosa.minimum %a, %b : (tensor<1x3xf32>, tensor<1x1x3xf32>) -> tensor<1x1x3xf32>
  func.return
}

// -----

func.func @mul_shift_i8(%a: tensor<3xi8>) {
  // expected-error {{ERROR_IF(in_t != int32_t && shift > 0)}}
  %0 = tosa.mul %a, %a {shift = 1 : i64} : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi32>
  func.return
}

// -----

func.func @mul_shift_f32(%a: tensor<3xf32>) {
  // expected-error {{shift = 2 with in_t = f32}}
  %0 = tosa.mul %a, %a {shift = 2 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @mul_shift_range(%a: tensor<3xi32>) {
  // expected-error {{shift = 64 is outside [0, 63]}}
  %0 = tosa.mul %a, %a {shift = 64 : i64} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @mul_shift_negative(%a: tensor<3xi32>) {
  // expected-error {{[shift fits uint6]}}
  %0 = tosa.mul %a, %a {shift = -1 : i64} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @mul_i8_to_i8(%a: tensor<3xi8>) {
  // expected-error {{= (i8, i8, i8)}}
  %0 = tosa.mul %a, %a : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @mul_i16_to_i16(%a: tensor<3xi16>) {
  // expected-error {{signed 16 (i16, i16, i32)}}
  %0 = tosa.mul %a, %a : (tensor<3xi16>, tensor<3xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @pow_i32(%a: tensor<3xi32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.pow %a, %a : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @pow_rank5(%a: tensor<1x1x1x1x2xf32>) {
  // expected-error {{[1 <= rank(input1) <= 4] input1 has rank 5}}
  %0 = tosa.pow %a, %a : (tensor<1x1x1x1x2xf32>, tensor<1x1x1x1x2xf32>) -> tensor<1x1x1x1x2xf32>
  func.return
}

// -----

func.func @pow_rank0(%a: tensor<f32>) {
  // expected-error {{input1 has rank 0}}
  %0 = tosa.pow %a, %a : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return
}

// -----

func.func @sub_i8(%a: tensor<3xi8>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.sub %a, %a : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @table_i8_513(%a: tensor<3xi8>, %t: tensor<513xi8>) {
  // expected-error {{table has 513 entries but TABLE_SIZE = 256 for i8 input}}
  %0 = tosa.table %a, %t : (tensor<3xi8>, tensor<513xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @table_i16_256(%a: tensor<3xi16>, %t: tensor<256xi16>) {
  // expected-error {{TABLE_SIZE = 513 for i16 input}}
  %0 = tosa.table %a, %t : (tensor<3xi16>, tensor<256xi16>) -> tensor<3xi32>
  func.return
}

// -----

func.func @table_len(%a: tensor<3xi8>, %t: tensor<255xi8>) {
  // expected-error {{table has 255 entries}}
  %0 = tosa.table %a, %t : (tensor<3xi8>, tensor<255xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @table_rank(%a: tensor<3xi8>, %t: tensor<1x256xi8>) {
  // expected-error {{not rank 1}}
  %0 = tosa.table %a, %t : (tensor<3xi8>, tensor<1x256xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @table_i16_out(%a: tensor<3xi16>, %t: tensor<513xi16>) {
  // expected-error {{= (i16, i16, i16)}}
  %0 = tosa.table %a, %t : (tensor<3xi16>, tensor<513xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @table_shape(%a: tensor<3xi8>, %t: tensor<256xi8>) {
  // expected-error {{result shapes [4] do not match the inferred [3]}}
  %0 = tosa.table %a, %t : (tensor<3xi8>, tensor<256xi8>) -> tensor<4xi8>
  func.return
}

// -----

func.func @abs_i8(%a: tensor<3xi8>) {
  // expected-error {{unsupported type combination (input1, output) = (i8, i8)}}
  %0 = tosa.abs %a : (tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @abs_shape(%a: tensor<3xf32>) {
  // expected-error {{result shapes [1, 3] do not match the inferred [3]}}
  %0 = tosa.abs %a : (tensor<3xf32>) -> tensor<1x3xf32>
  func.return
}

// -----

func.func @bitwise_not_f32(%a: tensor<3xf32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.bitwise_not %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @ceil_i32(%a: tensor<3xi32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.ceil %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @clz_i8(%a: tensor<3xi8>) {
  // expected-error {{supported: signed 32 (i32, i32)}}
  %0 = tosa.clz %a : (tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @exp_mixed(%a: tensor<3xf32>) {
  // expected-error {{= (f32, f16)}}
  %0 = tosa.exp %a : (tensor<3xf32>) -> tensor<3xf16>
  func.return
}

// -----

func.func @floor_i32(%a: tensor<3xi32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.floor %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @log_shape(%a: tensor<2x3xf16>) {
  // expected-error {{do not match the inferred [2, 3]}}
  %0 = tosa.log %a : (tensor<2x3xf16>) -> tensor<3x2xf16>
  func.return
}

// -----

func.func @logical_not_i8(%a: tensor<3xi8>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.logical_not %a : (tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @negate_zp_i16(%a: tensor<3xi16>) {
  // expected-error {{ERROR_IF(in_out_t != int8_t && input1_zp != 0)}}
  %0 = tosa.negate %a {input1_zp = 1 : i64} : (tensor<3xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @negate_out_zp_f32(%a: tensor<3xf32>) {
  // expected-error {{output_zp = -2 with in_out_t = f32}}
  %0 = tosa.negate %a {output_zp = -2 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @negate_zp_i32(%a: tensor<3xi32>) {
  // expected-error {{ERROR_IF(in_out_t != int8_t && output_zp != 0)}}
  %0 = tosa.negate %a {input1_zp = 0 : i64, output_zp = 5 : i64} : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @negate_zp_range(%a: tensor<3xi8>) {
  // expected-error {{input1_zp = 128 is outside [-128, 127]}}
  %0 = tosa.negate %a {input1_zp = 128 : i64} : (tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @negate_out_zp_range(%a: tensor<3xi8>) {
  // expected-error {{output_zp = -129 is outside [-128, 127]}}
  %0 = tosa.negate %a {output_zp = -129 : i64} : (tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @negate_bool(%a: tensor<3xi1>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.negate %a : (tensor<3xi1>) -> tensor<3xi1>
  func.return
}

// -----

func.func @reciprocal_i32(%a: tensor<3xi32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.reciprocal %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @rsqrt_i16(%a: tensor<3xi16>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.rsqrt %a : (tensor<3xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @select_f32_selector(%c: tensor<3xf32>, %a: tensor<3xf32>) {
  // expected-error {{(input1, input2, input3, output) = (f32, f32, f32, f32)}}
  %0 = tosa.select %c, %a, %a : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @select_i8_selector(%c: tensor<3xi8>, %a: tensor<3xi8>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.select %c, %a, %a : (tensor<3xi8>, tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @select_mixed_values(%c: tensor<3xi1>, %a: tensor<3xi8>, %b: tensor<3xi16>) {
  // expected-error {{= (bool, i8, i16, i16)}}
  %0 = tosa.select %c, %a, %b : (tensor<3xi1>, tensor<3xi8>, tensor<3xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @select_broadcast(%c: tensor<2x1xi1>, %a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error {{dimensions [1, 3, 4] cannot broadcast}}
  %0 = tosa.select %c, %a, %b : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @select_rank(%c: tensor<3xi1>, %a: tensor<1x3xi32>) {
  // expected-error {{operand ranks differ: [1, 2, 2]}}
  %0 = tosa.select %c, %a, %a : (tensor<3xi1>, tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<1x3xi32>
  func.return
}

// -----

func.func @equal_out_i32(%a: tensor<3xi32>) {
  // expected-error {{= (i32, i32, i32)}}
  %0 = tosa.equal %a, %a : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @equal_i8(%a: tensor<3xi8>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.equal %a, %a : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi1>
  func.return
}

// -----

func.func @equal_bool(%a: tensor<3xi1>) {
  // expected-error {{= (bool, bool, bool)}}
  %0 = tosa.equal %a, %a : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return
}

// -----

func.func @greater_mixed(%a: tensor<3xf32>, %b: tensor<3xbf16>) {
  // expected-error {{= (f32, bf16, bool)}}
  %0 = tosa.greater %a, %b : (tensor<3xf32>, tensor<3xbf16>) -> tensor<3xi1>
  func.return
}

// -----

func.func @greater_broadcast(%a: tensor<2x3xi32>, %b: tensor<3x3xi32>) {
  // expected-error {{dimensions [2, 3] cannot broadcast}}
  %0 = tosa.greater %a, %b : (tensor<2x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi1>
  func.return
}

// -----

func.func @greater_equal_i16(%a: tensor<3xi16>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.greater_equal %a, %a : (tensor<3xi16>, tensor<3xi16>) -> tensor<3xi1>
  func.return
}

// -----

func.func @greater_equal_shape(%a: tensor<1x3xf16>, %b: tensor<2x1xf16>) {
  // expected-error {{result shapes [2, 1] do not match the inferred [2, 3]}}
  %0 = tosa.greater_equal %a, %b : (tensor<1x3xf16>, tensor<2x1xf16>) -> tensor<2x1xi1>
  func.return
}

// -----

// ARITHMETIC_RIGHT_SHIFT's `round` has no default in the spec: it is required.
func.func @ars_no_round(%a: tensor<3xi8>) {
  // expected-error {{property 'round' expected}}
  %0 = tosa.arithmetic_right_shift %a, %a : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

// The output of a broadcast must be the broadcast shape, not larger (see ops_elementwise_binary).
func.func @sub_output_larger(%a: tensor<1x1xf32>) {
  // expected-error {{result shapes [5, 1] do not match the inferred [1, 1]}}
  %0 = tosa.sub %a, %a : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<5x1xf32>
  func.return
}
