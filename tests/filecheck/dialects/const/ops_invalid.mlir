// RUN: nnkiln opt --split-input-file --verify-diagnostics %s

// Result type vs the content's final type (architecture spec §2 rule 5, §5.2).

func.func @shape_mismatch() -> tensor<2x3xf32> {
  // expected-error {{result type tensor<2x3xf32> does not match the content's final type tensor<3x2xf32>}}
  %0 = const.declare tensor<2x3xf32> = #const.content<dense<1.0> : tensor<6xf32>, [#const.reshape<[3, 2]>]>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @element_mismatch() -> tensor<6xf32> {
  // expected-error {{result type tensor<6xf32> does not match the content's final type tensor<6xf16>}}
  %0 = const.declare tensor<6xf32> = #const.content<dense<1.0> : tensor<6xf32>, [#const.convert_elem_type<f16>]>
  func.return %0 : tensor<6xf32>
}

// -----

func.func @no_transform_mismatch() -> tensor<6xi32> {
  // expected-error {{[result type == content final type] result type tensor<6xi32> does not match the content's final type tensor<6xi8>}}
  %0 = const.declare tensor<6xi32> = #const.content<dense<1> : tensor<6xi8>>
  func.return %0 : tensor<6xi32>
}

// -----

func.func @quant_mismatch() -> tensor<4xi8> {
  // expected-error {{does not match the content's final type tensor<4x!quant.uniform<i8:f32, 5.000000e-01>>}}
  %0 = const.declare tensor<4xi8> = #const.content<dense<1> : tensor<4xi8>, [#const.quant_cast<!quant.uniform<i8:f32, 0.5>>]>
  func.return %0 : tensor<4xi8>
}

// -----

// Ill-typed transformation chains.

func.func @reshape_count() -> tensor<4x2xf32> {
  // expected-error {{transformation 0 on tensor<6xf32>: #const.reshape: shape [4, 2] has 8 elements but the input [6] has 6}}
  %0 = const.declare tensor<4x2xf32> = #const.content<dense<1.0> : tensor<6xf32>, [#const.reshape<[4, 2]>]>
  func.return %0 : tensor<4x2xf32>
}

// -----

func.func @transpose_perm() -> tensor<2x3xf32> {
  // expected-error {{[perm is a permutation of [0, rank)] transformation 1 on tensor<2x3xf32>: #const.transpose: perm [0, 0] is not a permutation}}
  %0 = const.declare tensor<2x3xf32> = #const.content<dense<1.0> : tensor<6xf32>, [#const.reshape<[2, 3]>, #const.transpose<[0, 0]>]>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @subview_bounds() -> tensor<2x2xi8> {
  // expected-error {{#const.subview: dimension 1: offset 2 + size 2 does not fit in 3}}
  %0 = const.declare tensor<2x2xi8> = #const.content<dense<1> : tensor<2x3xi8>, [#const.subview<[0, 2], [2, 2]>]>
  func.return %0 : tensor<2x2xi8>
}

// -----

func.func @broadcast_dim() -> tensor<4x3xi8> {
  // expected-error {{#const.broadcast: dimension 0 of [2, 3] is 2, cannot broadcast to 4}}
  %0 = const.declare tensor<4x3xi8> = #const.content<dense<1> : tensor<2x3xi8>, [#const.broadcast<axis = 0, size = 4>]>
  func.return %0 : tensor<4x3xi8>
}

// -----

func.func @pad_rank() -> tensor<3x3xi8> {
  // expected-error {{[len(pad_after) == rank] transformation 0 on tensor<2x3xi8>: #const.pad_with_zero: pad_after [1] has 1 entries but the input has rank 2}}
  %0 = const.declare tensor<3x3xi8> = #const.content<dense<1> : tensor<2x3xi8>, [#const.pad_with_zero<[0, 0], [1]>]>
  func.return %0 : tensor<3x3xi8>
}

// -----

func.func @rescale_int() -> tensor<3xi8> {
  // expected-error {{#const.rescale: input element type i8 is not a float type}}
  %0 = const.declare tensor<3xi8> = #const.content<dense<1> : tensor<3xi8>, [#const.rescale<2.0>]>
  func.return %0 : tensor<3xi8>
}

// -----

func.func @quant_cast_storage() -> tensor<4x!quant.uniform<u8:f32, 0.5>> {
  // expected-error {{#const.quant_cast: input element type i8 does not have the storage type ui8}}
  %0 = const.declare tensor<4x!quant.uniform<u8:f32, 0.5>> = #const.content<dense<1> : tensor<4xi8>, [#const.quant_cast<!quant.uniform<u8:f32, 0.5>>]>
  func.return %0 : tensor<4x!quant.uniform<u8:f32, 0.5>>
}

// -----

func.func @convert_quantized() -> tensor<4xf32> {
  // expected-error {{#const.convert_elem_type: the input element type !quant.uniform<i8:f32, 5.000000e-01> is not a plain integer or float type}}
  %0 = const.declare tensor<4xf32> = #const.content<dense<1> : tensor<4xi8>, [#const.quant_cast<!quant.uniform<i8:f32, 0.5>>, #const.convert_elem_type<f32>]>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @dequantize_plain() -> tensor<4xf32> {
  // expected-error {{#const.dequantize: input element type f32 is not quantized}}
  %0 = const.declare tensor<4xf32> = #const.content<dense<1.0> : tensor<4xf32>, [#const.dequantize]>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @per_axis_pad() -> tensor<3x2xi8> {
  // expected-error {{#const.pad_with_zero: cannot pad quantized dimension 0 of a per-axis type (pads 0, 1)}}
  %0 = const.declare tensor<3x2xi8> = #const.content<dense<1> : tensor<2x2xi8>, [#const.quant_cast<!quant.uniform<i8:f32:0, {0.5,0.25}>>, #const.pad_with_zero<[0, 0], [1, 0]>, #const.quant_cast<i8>]>
  func.return %0 : tensor<3x2xi8>
}

// -----

func.func @per_axis_reshape() -> tensor<4xi8> {
  // expected-error {{no dimension of [4] corresponds to quantized dimension 0 of [2, 2]}}
  %0 = const.declare tensor<4xi8> = #const.content<dense<1> : tensor<2x2xi8>, [#const.quant_cast<!quant.uniform<i8:f32:0, {0.5,0.25}>>, #const.reshape<[4]>, #const.quant_cast<i8>]>
  func.return %0 : tensor<4xi8>
}

// -----

// Syntax errors inside the attribute.

func.func @not_a_transform() -> tensor<4xi8> {
  // expected-error {{#const.content: 1 : i64 is not a const transformation}}
  %0 = const.declare tensor<4xi8> = #const.content<dense<1> : tensor<4xi8>, [1 : i64]>
  func.return %0 : tensor<4xi8>
}
