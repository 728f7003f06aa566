// RUN: nnkiln opt --split-input-file --verify-diagnostics %s

// ERROR_IF cases of CAST, RESCALE (§2.13), CONST, IDENTITY (§2.14), CUSTOM (§2.15), COND_IF and
// WHILE_LOOP (§2.16). Each chunk must fail verification with the quoted message.

func.func @cast_float_to_float(%a: tensor<2xf32>) -> tensor<2xf16> {
  // expected-error {{unsupported type combination (input, output) = (f32, f16)}}
  %0 = tosa.cast %a : (tensor<2xf32>) -> tensor<2xf16>
  func.return %0 : tensor<2xf16>
}

// -----

func.func @cast_same_type(%a: tensor<2xi8>) -> tensor<2xi8> {
  // expected-error {{unsupported type combination (input, output) = (i8, i8)}}
  %0 = tosa.cast %a : (tensor<2xi8>) -> tensor<2xi8>
  func.return %0 : tensor<2xi8>
}

// -----

func.func @cast_shape(%a: tensor<2x3xi8>) -> tensor<3x2xi32> {
  // expected-error {{result shapes [3, 2] do not match the inferred [2, 3]}}
  %0 = tosa.cast %a : (tensor<2x3xi8>) -> tensor<3x2xi32>
  func.return %0 : tensor<3x2xi32>
}

// -----

func.func @rescale_i16_input_zp(%a: tensor<4xi16>) -> tensor<4xi8> {
  // expected-error {{[ERROR_IF(in_t != int8_t && in_t != uint8_t && in_t != uint16_t && input_zp != 0)] input_zp = 3 but in_t is i16}}
  %0 = tosa.rescale %a {input_zp = 3 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xi16>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @rescale_i32_output_zp(%a: tensor<4xi8>) -> tensor<4xi32> {
  // expected-error {{output_zp = -1 but out_t is i32}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = -1 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xi8>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @rescale_u16_zp(%a: tensor<4xui16>) -> tensor<4xi16> {
  // expected-error {{input_zp = 1 but a uint16 zero point must be 0 or 32768}}
  %0 = tosa.rescale %a {input_zp = 1 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xui16>) -> tensor<4xi16>
  func.return %0 : tensor<4xi16>
}

// -----

func.func @rescale_i8_zp_range(%a: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error {{[input_zp fits in_t (i8)] input_zp = 128 is outside [-128, 127]}}
  %0 = tosa.rescale %a {input_zp = 128 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xi8>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @rescale_scale32_int48(%a: tensor<4xi48>) -> tensor<4xi32> {
  // expected-error {{ERROR_IF(scale32 && in_t == int48_t)}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824>, shift = array<i64: 30>, scale32 = true, double_round = false, per_channel = false} : (tensor<4xi48>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @rescale_double_round_scale16(%a: tensor<4xi32>) -> tensor<4xi8> {
  // expected-error {{ERROR_IF(!scale32 && double_round)}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = true, per_channel = false} : (tensor<4xi32>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @rescale_multiplier_int16(%a: tensor<4xi32>) -> tensor<4xi8> {
  // expected-error {{[multiplier fits mul_t (int16, scale32 = false)] multiplier values [32768] are outside [-32768, 32767]}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 32768>, shift = array<i64: 15>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xi32>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @rescale_multiplier_int32(%a: tensor<4xi32>) -> tensor<4xi8> {
  // expected-error {{multiplier values [2147483648] are outside [-2147483648, 2147483647]}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 2147483648>, shift = array<i64: 31>, scale32 = true, double_round = false, per_channel = false} : (tensor<4xi32>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @rescale_shift(%a: tensor<4xi32>) -> tensor<4xi8> {
  // expected-error {{[REQUIRE(2 <= shift && shift <= 62)] shift values [63] are outside [2, 62]}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824>, shift = array<i64: 63>, scale32 = true, double_round = false, per_channel = false} : (tensor<4xi32>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @rescale_per_channel_length(%a: tensor<2x3xi32>) -> tensor<2x3xi8> {
  // expected-error {{[length(multiplier) == NC] length(multiplier) = 2 but NC = shape[rank-1] (per_channel) = 3}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824, 1073741824>, shift = array<i64: 30, 30>, scale32 = true, double_round = false, per_channel = true} : (tensor<2x3xi32>) -> tensor<2x3xi8>
  func.return %0 : tensor<2x3xi8>
}

// -----

func.func @rescale_rank5(%a: tensor<1x1x1x1x2xi32>) -> tensor<1x1x1x1x2xi8> {
  // expected-error {{[1 <= rank(input) <= 4] rank(input) = 5}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824>, shift = array<i64: 30>, scale32 = true, double_round = false, per_channel = false} : (tensor<1x1x1x1x2xi32>) -> tensor<1x1x1x1x2xi8>
  func.return %0 : tensor<1x1x1x1x2xi8>
}

// -----

func.func @rescale_mode(%a: tensor<4xui8>) -> tensor<4xi32> {
  // expected-error {{unsupported type combination (input, output) = (u8, i32)}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xui8>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @const_type_mismatch() -> tensor<2xi16> {
  // expected-error {{[type(values) == type(output)] values has type tensor<2xi32> but the output is tensor<2xi16>}}
  %0 = tosa.const {values = dense<[1, 2]> : tensor<2xi32>} : tensor<2xi16>
  func.return %0 : tensor<2xi16>
}

// -----

func.func @const_quant_storage_mismatch() -> tensor<2x!quant.uniform<i8:f32, 0.5>> {
  // expected-error {{values has type tensor<2xi16> but the output is tensor<2x!quant.uniform<i8:f32, 5.000000e-01>>}}
  %0 = tosa.const {values = dense<[1, 2]> : tensor<2xi16>} : tensor<2x!quant.uniform<i8:f32, 0.5>>
  func.return %0 : tensor<2x!quant.uniform<i8:f32, 0.5>>
}

// -----

func.func @const_per_axis_size() -> tensor<3x!quant.uniform<i8:f32:0, {0.5, 0.25}>> {
  // expected-error {{[one scale per index of the quantized dimension] dimension 0 has size 3 but there are 2 scales}}
  %0 = tosa.const {values = dense<[1, 2, 3]> : tensor<3xi8>} : tensor<3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>
  func.return %0 : tensor<3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>
}

// -----

func.func @const_u8() -> tensor<2xui8> {
  // expected-error {{unsupported type combination (output) = (u8)}}
  %0 = tosa.const {values = dense<[1, 2]> : tensor<2xui8>} : tensor<2xui8>
  func.return %0 : tensor<2xui8>
}

// -----

func.func @identity_type(%a: tensor<2xi8>) -> tensor<2xi16> {
  // expected-error {{unsupported type combination (input1, output) = (i8, i16)}}
  %0 = tosa.identity %a : (tensor<2xi8>) -> tensor<2xi16>
  func.return %0 : tensor<2xi16>
}

// -----

func.func @identity_shape(%a: tensor<2xi8>) -> tensor<3xi8> {
  // expected-error {{result shapes [3] do not match the inferred [2]}}
  %0 = tosa.identity %a : (tensor<2xi8>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}

// -----

func.func @custom_no_identifier(%a: tensor<2xi8>) -> tensor<2xi8> {
  // expected-error {{the custom operator has an empty identifier}}
  %0 = tosa.custom %a {identifier = "", config = "", implementation_attrs = ""} : (tensor<2xi8>) -> tensor<2xi8>
  func.return %0 : tensor<2xi8>
}

// -----

func.func @cond_if_condition_not_scalar(%x: tensor<2xi32>, %c: tensor<1xi1>) -> tensor<2xi32> {
  // expected-error {{[condition is a rank-0 bool_t tensor] condition has type tensor<1xi1>}}
  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<1xi1>) -> tensor<2xi32> {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  }
  func.return %0 : tensor<2xi32>
}

// -----

func.func @cond_if_condition_not_bool(%x: tensor<2xi32>, %c: tensor<i32>) -> tensor<2xi32> {
  // expected-error {{condition has type tensor<i32>}}
  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32> {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  }
  func.return %0 : tensor<2xi32>
}

// -----

func.func @cond_if_then_inputs(%x: tensor<2xi32>, %c: tensor<i1>) -> tensor<2xi32> {
  // expected-error {{[ERROR_IF(tensor_list_shape(input_list) != tosa_input_shape(then_graph))] input_list vs then_graph arguments: position 0 is tensor<2xi32> vs tensor<3xi32>}}
  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i1>) -> tensor<2xi32> {
  ^bb0(%a: tensor<3xi32>):
    %z = tosa.const {values = dense<0> : tensor<2xi32>} : tensor<2xi32>
    tosa.yield %z : tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  }
  func.return %0 : tensor<2xi32>
}

// -----

func.func @cond_if_else_outputs(%x: tensor<2xi32>, %c: tensor<i1>) -> tensor<2xi32> {
  // expected-error {{[ERROR_IF(tensor_list_shape(output_list) != tosa_output_shape(else_graph))] output_list vs else_graph yield: 1 tensors (tensor<2xi32>) vs 2 (tensor<2xi32>, tensor<2xi32>)}}
  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i1>) -> tensor<2xi32> {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a, %a : tensor<2xi32>, tensor<2xi32>
  }
  func.return %0 : tensor<2xi32>
}

// -----

// Graphs are isolated: they see only their arguments.
func.func @cond_if_uses_outer_value(%x: tensor<2xi32>, %c: tensor<i1>) -> tensor<2xi32> {
  // expected-error {{Operation using value defined out of its IsolatedFromAbove parent}}
  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i1>) -> tensor<2xi32> {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %x : tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  }
  func.return %0 : tensor<2xi32>
}

// -----

func.func @while_output_list(%n: tensor<i32>) -> tensor<i16> {
  // expected-error {{[ERROR_IF(tensor_list_shape(input_list) != tensor_list_shape(output_list))] input_list vs output_list: position 0 is tensor<i32> vs tensor<i16>}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i16> {
  ^bb0(%i: tensor<i32>):
    %k = tosa.const {values = dense<10> : tensor<i32>} : tensor<i32>
    %p = tosa.greater %k, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
    tosa.yield %p : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>):
    tosa.yield %i : tensor<i32>
  }
  func.return %0 : tensor<i16>
}

// -----

func.func @while_cond_inputs(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{[ERROR_IF(tensor_list_shape(input_list) != tosa_input_shape(cond_graph))]}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i32> {
  ^bb0(%i: tensor<1xi32>):
    %p = tosa.const {values = dense<true> : tensor<i1>} : tensor<i1>
    tosa.yield %p : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>):
    tosa.yield %i : tensor<i32>
  }
  func.return %0 : tensor<i32>
}

// -----

func.func @while_body_inputs(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{[ERROR_IF(tensor_list_shape(input_list) != tosa_input_shape(body_graph))]}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i32> {
  ^bb0(%i: tensor<i32>):
    %p = tosa.const {values = dense<true> : tensor<i1>} : tensor<i1>
    tosa.yield %p : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>, %j: tensor<i32>):
    tosa.yield %i : tensor<i32>
  }
  func.return %0 : tensor<i32>
}

// -----

func.func @while_body_outputs(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{[ERROR_IF(tensor_list_shape(input_list) != tosa_output_shape(body_graph))] input_list vs body_graph yield: position 0 is tensor<i32> vs tensor<1xi32>}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i32> {
  ^bb0(%i: tensor<i32>):
    %p = tosa.const {values = dense<true> : tensor<i1>} : tensor<i1>
    tosa.yield %p : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>):
    %o = tosa.const {values = dense<1> : tensor<1xi32>} : tensor<1xi32>
    tosa.yield %o : tensor<1xi32>
  }
  func.return %0 : tensor<i32>
}

// -----

func.func @while_cond_not_bool(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{[ERROR_IF(tosa_output_shape(cond_graph) != tosa_list_shape([bool_t]))] cond_graph yields (tensor<i32>), not one tensor<i1>}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i32> {
  ^bb0(%i: tensor<i32>):
    tosa.yield %i : tensor<i32>
  } do {
  ^bb0(%i: tensor<i32>):
    tosa.yield %i : tensor<i32>
  }
  func.return %0 : tensor<i32>
}

// -----

func.func @while_cond_two_results(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{cond_graph yields (tensor<i1>, tensor<i1>), not one tensor<i1>}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i32> {
  ^bb0(%i: tensor<i32>):
    %p = tosa.const {values = dense<true> : tensor<i1>} : tensor<i1>
    tosa.yield %p, %p : tensor<i1>, tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>):
    tosa.yield %i : tensor<i32>
  }
  func.return %0 : tensor<i32>
}

// -----

func.func @while_cond_rank1_bool(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{cond_graph yields (tensor<1xi1>), not one tensor<i1>}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i32> {
  ^bb0(%i: tensor<i32>):
    %p = tosa.const {values = dense<true> : tensor<1xi1>} : tensor<1xi1>
    tosa.yield %p : tensor<1xi1>
  } do {
  ^bb0(%i: tensor<i32>):
    tosa.yield %i : tensor<i32>
  }
  func.return %0 : tensor<i32>
}

// -----

func.func @yield_outside_graph(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{'tosa.yield' expects parent op to be one of 'tosa.cond_if', 'tosa.while_loop'}}
  tosa.yield %n : tensor<i32>
}

// -----

func.func @cond_if_no_yield(%x: tensor<2xi32>, %c: tensor<i1>) -> tensor<2xi32> {
  // expected-error {{Operation tosa.identity terminates block in single-block region but is not a terminator}}
  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i1>) -> tensor<2xi32> {
  ^bb0(%a: tensor<2xi32>):
    %b = tosa.identity %a : (tensor<2xi32>) -> tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  }
  func.return %0 : tensor<2xi32>
}
