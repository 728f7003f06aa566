// RUN: nnkiln opt %s -p fold-bias-add | filecheck %s

// conv (bias b = [1, 2]) + per-channel constant [10, 20] -> bias [11, 22]; the add disappears.
// CHECK-LABEL: func.func @add_into_bias
// CHECK: %[[B:.*]] = tosa.const {values = dense<[1.100000e+01, 2.200000e+01]> : tensor<2xf32>}
// CHECK: %[[C:.*]] = tosa.conv2d %x, %w, %[[B]]
// CHECK-NOT: tosa.add
// CHECK: func.return %[[C]]
func.func @add_into_bias(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  %w = tosa.const {values = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
  %b = tosa.const {values = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %k = tosa.const {values = dense<[[[[10.0, 20.0]]]]> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
  %a = tosa.add %c, %k : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %a : tensor<1x2x2x2xf32>
}

// Folded BatchNorm: (conv + b) * s + t with s = [2, 3], t = [0.5, 0.25]: weights [1, 2] * s = [2, 6],
// bias [1, 2] * s + t = [2.5, 6.25].
// CHECK-LABEL: func.func @batchnorm
// CHECK-DAG: %[[W:.*]] = tosa.const {values = dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}6.000000e+00]]]]> : tensor<2x1x1x1xf32>}
// CHECK-DAG: %[[B:.*]] = tosa.const {values = dense<[2.500000e+00, 6.250000e+00]> : tensor<2xf32>}
// CHECK: %[[C:.*]] = tosa.conv2d %x, %[[W]], %[[B]]
// CHECK-NOT: tosa.mul
// CHECK-NOT: tosa.add
// CHECK: func.return %[[C]]
func.func @batchnorm(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  %w = tosa.const {values = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
  %b = tosa.const {values = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %s = tosa.const {values = dense<[[[[2.0, 3.0]]]]> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
  %m = tosa.mul %c, %s {shift = 0 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x2x2x2xf32>
  %t = tosa.const {values = dense<[[[[0.5, 0.25]]]]> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
  %a = tosa.add %m, %t : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %a : tensor<1x2x2x2xf32>
}

// Not folded: the constant varies along a spatial axis; the conv result has another user.
// CHECK-LABEL: func.func @not_per_channel
// CHECK: tosa.conv2d
// CHECK: tosa.add
// CHECK: tosa.add
func.func @not_per_channel(%x: tensor<1x2x2x1xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = tosa.const {values = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
  %b = tosa.const {values = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %k = tosa.const {values = dense<[[[[1.0, 1.0]], [[2.0, 2.0]]]]> : tensor<1x2x1x2xf32>} : tensor<1x2x1x2xf32>
  %a = tosa.add %c, %k : (tensor<1x2x2x2xf32>, tensor<1x2x1x2xf32>) -> tensor<1x2x2x2xf32>
  %a2 = tosa.add %c, %c : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %a, %a2 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}
