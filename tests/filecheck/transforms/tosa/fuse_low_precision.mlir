// RUN: nnkiln opt %s -p fuse-low-precision | filecheck %s

// int8 -> int32 with scale 1 (1 << 30, shift 30) and input_zp 5, then int32 -> int8: one int8 -> int8 RESCALE
// with input_zp 5 and the second's scale.
// CHECK-LABEL: func.func @widening_then_rescale
// CHECK: %[[Y:.*]] = tosa.rescale %x {input_zp = 5 : i64, output_zp = -3 : i64, multiplier = array<i64: 1518500250>, shift = array<i64: 33>, {{.*}} : (tensor<1x2x2x3xi8>) -> tensor<1x2x2x3xi8>
// CHECK: func.return %[[Y]]
func.func @widening_then_rescale(%x: tensor<1x2x2x3xi8>) -> tensor<1x2x2x3xi8> {
  %w = tosa.rescale %x {input_zp = 5 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824>, shift = array<i64: 30>, scale32 = true, double_round = true, per_channel = false} : (tensor<1x2x2x3xi8>) -> tensor<1x2x2x3xi32>
  %y = tosa.rescale %w {input_zp = 0 : i64, output_zp = -3 : i64, multiplier = array<i64: 1518500250>, shift = array<i64: 33>, scale32 = true, double_round = true, per_channel = false} : (tensor<1x2x2x3xi32>) -> tensor<1x2x2x3xi8>
  func.return %y : tensor<1x2x2x3xi8>
}

// Kept: the first RESCALE scales by 1.5 (two roundings are not one).
// CHECK-LABEL: func.func @two_scales
// CHECK: %[[W:.*]] = tosa.rescale %x
// CHECK: tosa.rescale %[[W]]
func.func @two_scales(%x: tensor<1x2x2x3xi8>) -> tensor<1x2x2x3xi8> {
  %w = tosa.rescale %x {input_zp = 5 : i64, output_zp = 0 : i64, multiplier = array<i64: 1610612736>, shift = array<i64: 30>, scale32 = true, double_round = true, per_channel = false} : (tensor<1x2x2x3xi8>) -> tensor<1x2x2x3xi32>
  %y = tosa.rescale %w {input_zp = 0 : i64, output_zp = -3 : i64, multiplier = array<i64: 1518500250>, shift = array<i64: 33>, scale32 = true, double_round = true, per_channel = false} : (tensor<1x2x2x3xi32>) -> tensor<1x2x2x3xi8>
  func.return %y : tensor<1x2x2x3xi8>
}
