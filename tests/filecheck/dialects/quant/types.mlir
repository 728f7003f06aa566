// RUN: nnkiln opt --split-input-file --verify-diagnostics %s | filecheck %s
// RUN: nnkiln opt --split-input-file --verify-diagnostics %s -o %t && nnkiln opt --split-input-file %t | filecheck %s

// The !quant.uniform types print as MLIR's quant dialect prints them: scales in %e form, the
// zero point only when non-zero, the storage range only when it is not the full range.

// CHECK-LABEL: func.func @per_tensor
// CHECK-SAME: %a: tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-3>>
// CHECK-SAME: %b: tensor<2x!quant.uniform<i8<-127:127>:f32, 1.000000e-01>>
// CHECK-SAME: %c: tensor<3x!quant.uniform<u8:f32, 2.000000e+00:128>>
// CHECK-SAME: %d: tensor<1x!quant.uniform<i16:f16, 1.220703125e-04>>
// CHECK-SAME: %e: tensor<1x!quant.uniform<i32:bf16, 2.500000e-01:-7>>
// CHECK-SAME: %f: tensor<1x!quant.uniform<i8:f32, 1.000000e+00>>
// CHECK-SAME: %g: tensor<1x!quant.uniform<u16:f32, 3.000000e+00:32768>>
func.func @per_tensor(%a: tensor<4x!quant.uniform<i8:f32, 0.5:-3>>,
                      %b: tensor<2x!quant.uniform<i8<-127:127>:f32, 0.1>>,
                      %c: tensor<3x!quant.uniform<u8:f32, 2.0:128>>,
                      %d: tensor<1x!quant.uniform<i16:f16, 1.220703125e-04>>,
                      %e: tensor<1x!quant.uniform<i32:bf16, 0.25:-7>>,
                      %f: tensor<1x!quant.uniform<i8<-128:127>:f32, 1.0:0>>,
                      %g: tensor<1x!quant.uniform<u16:f32, 3.0:32768>>) {
  func.return
}

// -----

// A full storage range written out is the default range: it is not printed.
// CHECK-LABEL: func.func @per_axis
// CHECK-SAME: %a: tensor<2x3x!quant.uniform<i8:f32:1, {1.000000e-01:2,2.000000e-01:3,5.000000e-01}>>
// CHECK-SAME: %b: tensor<4x!quant.uniform<u8<1:254>:f32:0, {1.000000e+00:128,2.000000e+00:1,3.000000e+00:254,4.000000e+00:5}>>
func.func @per_axis(%a: tensor<2x3x!quant.uniform<i8:f32:1, {0.1:2, 0.2:3, 0.5}>>,
                    %b: tensor<4x!quant.uniform<u8<1:254>:f32:0, {1.0:128, 2.0:1, 3.0:254, 4.0:5}>>) {
  func.return
}

// -----

// A scale that 6 digits do not reproduce prints with the fewest digits that give it back (lossless):
// 0.00392156862745098 is the shortest decimal of that double, 15 significant digits.
// CHECK-LABEL: func.func @precise
// CHECK-SAME: !quant.uniform<u8:f32, 3.92156862745098e-03>
func.func @precise(%a: tensor<1x!quant.uniform<u8:f32, 0.00392156862745098>>) {
  func.return
}

// -----

func.func @zero_scale(
  // expected-error {{[scale > 0 and finite] scale = 0.0}}
  %a: tensor<1x!quant.uniform<i8:f32, 0.0>>) {
  func.return
}

// -----

func.func @negative_scale(
  // expected-error {{[scale > 0 and finite] scale = -0.5}}
  %a: tensor<1x!quant.uniform<i8:f32, -0.5>>) {
  func.return
}

// -----

func.func @zp_outside_storage(
  // expected-error {{zero point = 128 is outside the storage range [-128, 127]}}
  %a: tensor<1x!quant.uniform<i8:f32, 0.5:128>>) {
  func.return
}

// -----

func.func @zp_outside_narrow_range(
  // expected-error {{zero point = -128 is outside the storage range [-127, 127]}}
  %a: tensor<1x!quant.uniform<i8<-127:127>:f32, 0.5:-128>>) {
  func.return
}

// -----

func.func @unsigned_negative_zp(
  // expected-error {{zero point = -1 is outside the storage range [0, 255]}}
  %a: tensor<1x!quant.uniform<u8:f32, 0.5:-1>>) {
  func.return
}

// -----

func.func @storage_min_too_small(
  // expected-error {{storage range [-129, 127] is not an ordered sub-range of [-128, 127] (i8)}}
  %a: tensor<1x!quant.uniform<i8<-129:127>:f32, 0.5>>) {
  func.return
}

// -----

func.func @storage_max_too_big(
  // expected-error {{storage range [0, 256] is not an ordered sub-range of [0, 255] (u8)}}
  %a: tensor<1x!quant.uniform<u8<0:256>:f32, 0.5>>) {
  func.return
}

// -----

func.func @storage_min_above_max(
  // expected-error {{storage range [5, 4] is not an ordered sub-range}}
  %a: tensor<1x!quant.uniform<i8<5:4>:f32, 0.5:4>>) {
  func.return
}

// -----

func.func @storage_too_wide(
  // expected-error {{illegal storage type size: 33}}
  %a: tensor<1x!quant.uniform<i33:f32, 0.5>>) {
  func.return
}

// -----

func.func @expressed_not_float(
  // expected-error {{expressed type is i32}}
  %a: tensor<1x!quant.uniform<i8:i32, 0.5>>) {
  func.return
}

// -----

func.func @scale_beyond_f16(
  // expected-error {{scale within the expressed type's range}}
  %a: tensor<1x!quant.uniform<i8:f16, 70000.0>>) {
  func.return
}

// -----

func.func @per_axis_bad_zp(
  // expected-error {{zero point[1] = 300 is outside the storage range [0, 255]}}
  %a: tensor<2x!quant.uniform<u8:f32:0, {0.5:1, 0.5:300}>>) {
  func.return
}
