// RUN: nnkiln opt %s -p propagate-transposes | filecheck %s

// NHWC conv result -> NCHW -> clamp -> NHWC: the clamp runs in NHWC and both transposes go.
// CHECK-LABEL: func.func @through_clamp
// CHECK-NOT: tosa.transpose
// CHECK: %[[C:.*]] = tosa.clamp %x {{.*}} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
// CHECK-NOT: tosa.transpose
// CHECK: func.return %[[C]]
func.func @through_clamp(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %a = tosa.transpose %x {perms = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %b = tosa.clamp %a {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32>
  %c = tosa.transpose %b {perms = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x3xf32>) -> tensor<1x2x3x4xf32>
  func.return %c : tensor<1x2x3x4xf32>
}

// Binary op of two transposed values and a per-channel constant [1,4,1,1] (NCHW): the constant is
// transposed at compile time to [1,1,1,4] (NHWC), the add moves before the transpose; the result is
// still returned in NCHW through one transpose.
// CHECK-LABEL: func.func @binary_with_constant
// CHECK: %[[S:.*]] = tosa.add %x, %y : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
// CHECK: %[[K:.*]] = tosa.const {values = dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]]]> : tensor<1x1x1x4xf32>}
// CHECK: %[[M:.*]] = tosa.mul %[[S]], %[[K]] {{.*}} -> tensor<1x2x3x4xf32>
// CHECK: %[[T:.*]] = tosa.transpose %[[M]] {perms = array<i64: 0, 3, 1, 2>}
// CHECK: func.return %[[T]]
func.func @binary_with_constant(%x: tensor<1x2x3x4xf32>, %y: tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32> {
  %a = tosa.transpose %x {perms = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %b = tosa.transpose %y {perms = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %s = tosa.add %a, %b : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32>
  %k = tosa.const {values = dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]]> : tensor<1x4x1x1xf32>} : tensor<1x4x1x1xf32>
  %m = tosa.mul %s, %k {shift = 0 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x2x3xf32>
  func.return %m : tensor<1x4x2x3xf32>
}

// Axis attributes are remapped: reduce over NCHW axis 1 (C) is NHWC axis 3; concat on NCHW axis 1 is
// NHWC axis 3; slice start/size and pad padding move with their dimensions.
// CHECK-LABEL: func.func @axes
// CHECK: tosa.reduce_sum %x {axis = 3 : i64} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x1xf32>
// CHECK: tosa.concat %x, %x {axis = 3 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x8xf32>
// CHECK: tosa.slice %x {start = array<i64: 0, 1, 0, 2>, size = array<i64: 1, 1, 3, 2>}
// CHECK: tosa.pad %x {padding = array<i64: 0, 0, 1, 2, 3, 4, 5, 6>
func.func @axes(%x: tensor<1x2x3x4xf32>) -> (tensor<1x1x2x3xf32>, tensor<1x8x2x3xf32>, tensor<1x2x1x3xf32>, tensor<1x15x5x10xf32>) {
  %a = tosa.transpose %x {perms = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %r = tosa.reduce_sum %a {axis = 1 : i64} : (tensor<1x4x2x3xf32>) -> tensor<1x1x2x3xf32>
  %c = tosa.concat %a, %a {axis = 1 : i64} : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>) -> tensor<1x8x2x3xf32>
  %s = tosa.slice %a {start = array<i64: 0, 2, 1, 0>, size = array<i64: 1, 2, 1, 3>} : (tensor<1x4x2x3xf32>) -> tensor<1x2x1x3xf32>
  %p = tosa.pad %a {padding = array<i64: 0, 0, 5, 6, 1, 2, 3, 4>, pad_const = 0.0 : f32} : (tensor<1x4x2x3xf32>) -> tensor<1x15x5x10xf32>
  func.return %r, %c, %s, %p : tensor<1x1x2x3xf32>, tensor<1x8x2x3xf32>, tensor<1x2x1x3xf32>, tensor<1x15x5x10xf32>
}

// Reshape merging H and W after NHWC->NCHW (global pooling): becomes a reshape of x to [1, 6, 4]
// then a transpose (0, 2, 1); the reduction over the merged axis then moves too, and the final
// transpose only moves size-1 dimensions, so it becomes a reshape.
// CHECK-LABEL: func.func @reshape_merge
// CHECK: %[[R:.*]] = tosa.reshape %x {new_shape = array<i64: 1, 6, 4>}
// CHECK: %[[S:.*]] = tosa.reduce_sum %[[R]] {axis = 1 : i64} : (tensor<1x6x4xf32>) -> tensor<1x1x4xf32>
// CHECK-NOT: tosa.transpose
// CHECK: tosa.reshape %[[S]] {new_shape = array<i64: 1, 4, 1>}
func.func @reshape_merge(%x: tensor<1x2x3x4xf32>) -> tensor<1x4x1xf32> {
  %a = tosa.transpose %x {perms = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %r = tosa.reshape %a {new_shape = array<i64: 1, 4, 6>} : (tensor<1x4x2x3xf32>) -> tensor<1x4x6xf32>
  %s = tosa.reduce_sum %r {axis = 2 : i64} : (tensor<1x4x6xf32>) -> tensor<1x4x1xf32>
  func.return %s : tensor<1x4x1xf32>
}

// Not moved: an operand that is neither a transpose nor a constant; RESCALE per channel when the
// last axis moves.
// CHECK-LABEL: func.func @blocked
// CHECK: tosa.transpose %x
// CHECK-NEXT: tosa.add
func.func @blocked(%x: tensor<1x2x3x4xf32>, %y: tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32> {
  %a = tosa.transpose %x {perms = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %s = tosa.add %a, %y : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32>
  func.return %s : tensor<1x4x2x3xf32>
}

// Not moved past a RESCALE to uint8: TRANSPOSE and RESHAPE have no uint8 type mode in TOSA 0.30, so
// the transpose stays on the int8 side.
// CHECK-LABEL: func.func @not_into_uint8
// CHECK: %[[T:.*]] = tosa.transpose %x
// CHECK-NEXT: tosa.rescale %[[T]] {{.*}} -> tensor<1x3x2xui8>
func.func @not_into_uint8(%x: tensor<1x2x3xi8>) -> tensor<1x3x2xui8> {
  %a = tosa.transpose %x {perms = array<i64: 0, 2, 1>} : (tensor<1x2x3xi8>) -> tensor<1x3x2xi8>
  %r = tosa.rescale %a {input_zp = 0 : i64, output_zp = 128 : i64, multiplier = array<i64: 1073741824>, shift = array<i64: 30>, scale32 = true, double_round = false, per_channel = false} : (tensor<1x3x2xi8>) -> tensor<1x3x2xui8>
  func.return %r : tensor<1x3x2xui8>
}

// Not moved: a per-channel RESCALE when the transpose moves the last axis (its channels would change);
// a transpose that changes the quantized type (the clamp would see another type).
// CHECK-LABEL: func.func @blocked_rescale_and_requantized
// CHECK: %[[T:.*]] = tosa.transpose %x {perms = array<i64: 0, 2, 1>}
// CHECK-NEXT: tosa.rescale %[[T]]
// CHECK: %[[Q:.*]] = tosa.transpose %q {perms = array<i64: 1, 0>}
// CHECK-NEXT: tosa.clamp %[[Q]]
func.func @blocked_rescale_and_requantized(%x: tensor<1x2x3xi8>, %q: tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>) -> (tensor<1x3x2xi8>, tensor<3x2x!quant.uniform<i8:f32, 0.25>>) {
  %a = tosa.transpose %x {perms = array<i64: 0, 2, 1>} : (tensor<1x2x3xi8>) -> tensor<1x3x2xi8>
  %r = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824, 1073741824>, shift = array<i64: 30, 31>, scale32 = true, double_round = false, per_channel = true} : (tensor<1x3x2xi8>) -> tensor<1x3x2xi8>
  %t = tosa.transpose %q {perms = array<i64: 1, 0>} : (tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<3x2x!quant.uniform<i8:f32, 0.25>>
  %c = tosa.clamp %t {min_val = -3 : i64, max_val = 5 : i64} : (tensor<3x2x!quant.uniform<i8:f32, 0.25>>) -> tensor<3x2x!quant.uniform<i8:f32, 0.25>>
  func.return %r, %c : tensor<1x3x2xi8>, tensor<3x2x!quant.uniform<i8:f32, 0.25>>
}

// Moved through a per-channel RESCALE when the last axis stays: the pair then cancels.
// CHECK-LABEL: func.func @rescale_last_axis_kept
// CHECK-NOT: tosa.transpose
// CHECK: %[[R:.*]] = tosa.rescale %x {{.*}} : (tensor<2x3x2xi8>) -> tensor<2x3x2xi8>
// CHECK-NOT: tosa.transpose
// CHECK: func.return %[[R]]
func.func @rescale_last_axis_kept(%x: tensor<2x3x2xi8>) -> tensor<2x3x2xi8> {
  %a = tosa.transpose %x {perms = array<i64: 1, 0, 2>} : (tensor<2x3x2xi8>) -> tensor<3x2x2xi8>
  %r = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824, 1073741824>, shift = array<i64: 30, 31>, scale32 = true, double_round = false, per_channel = true} : (tensor<3x2x2xi8>) -> tensor<3x2x2xi8>
  %b = tosa.transpose %r {perms = array<i64: 1, 0, 2>} : (tensor<3x2x2xi8>) -> tensor<2x3x2xi8>
  func.return %b : tensor<2x3x2xi8>
}
