// RUN: nnkiln opt %s -p scale-shift-to-depthwise | filecheck %s

// x * s + b with per-channel s = [2, 3], b = [0.5, -1] after a ReLU: one 1x1 depthwise convolution.
// CHECK-LABEL: func.func @scale_shift
// CHECK: %[[R:.*]] = tosa.clamp
// CHECK: %[[W:.*]] = tosa.const {values = dense<{{\[\[\[\[}}2.000000e+00], [3.000000e+00]]]]> : tensor<1x1x2x1xf32>}
// CHECK: %[[B:.*]] = tosa.const {values = dense<[5.000000e-01, -1.000000e+00]> : tensor<2xf32>}
// CHECK: %[[D:.*]] = tosa.depthwise_conv2d %[[R]], %[[W]], %[[B]] {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>
// CHECK-NOT: tosa.mul
// CHECK-NOT: tosa.add
// CHECK: func.return %[[D]]
func.func @scale_shift(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %r = tosa.clamp %x {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %s = tosa.const {values = dense<[[[[2.0, 3.0]]]]> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
  %m = tosa.mul %r, %s {shift = 0 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x2x2x2xf32>
  %b = tosa.const {values = dense<[[[[0.5, -1.0]]]]> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
  %y = tosa.add %b, %m : (tensor<1x1x1x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}

// A scalar scale on a graph input, no shift: weights 0.5 for every channel, zero bias.
// CHECK-LABEL: func.func @scale_only
// CHECK: %[[W:.*]] = tosa.const {values = dense<5.000000e-01> : tensor<1x1x3x1xf32>}
// CHECK: %[[B:.*]] = tosa.const {values = dense<0.000000e+00> : tensor<3xf32>}
// CHECK: tosa.depthwise_conv2d %x, %[[W]], %[[B]]
// CHECK-NOT: tosa.mul
func.func @scale_only(%x: tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32> {
  %s = tosa.const {values = dense<0.5> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32>
  %m = tosa.mul %x, %s {shift = 0 : i64} : (tensor<1x2x2x3xf32>, tensor<1x1x1x1xf32>) -> tensor<1x2x2x3xf32>
  func.return %m : tensor<1x2x2x3xf32>
}

// Kept: a convolution's only user (fold-bias-add's case), and a scale varying along W.
// CHECK-LABEL: func.func @after_conv
// CHECK: tosa.conv2d
// CHECK: tosa.mul
// CHECK-NOT: tosa.depthwise_conv2d
func.func @after_conv(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  %w = tosa.const {values = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
  %cb = tosa.const {values = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %c = tosa.conv2d %x, %w, %cb {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %s = tosa.const {values = dense<[[[[2.0, 3.0]]]]> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
  %m = tosa.mul %c, %s {shift = 0 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %m : tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @spatial_scale
// CHECK: tosa.mul
// CHECK-NOT: tosa.depthwise_conv2d
func.func @spatial_scale(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %s = tosa.const {values = dense<[[[[2.0, 3.0]], [[4.0, 5.0]]]]> : tensor<1x2x1x2xf32>} : tensor<1x2x1x2xf32>
  %m = tosa.mul %x, %s {shift = 0 : i64} : (tensor<1x2x2x2xf32>, tensor<1x2x1x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %m : tensor<1x2x2x2xf32>
}
