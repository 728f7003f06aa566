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

// conv - [10, 20] -> bias [1 - 10, 2 - 20] = [-9, -18].
// CHECK-LABEL: func.func @sub_from_bias
// CHECK: %[[B:.*]] = tosa.const {values = dense<[-9.000000e+00, -1.800000e+01]> : tensor<2xf32>}
// CHECK: %[[C:.*]] = tosa.conv2d %x, %w, %[[B]]
// CHECK-NOT: tosa.sub
// CHECK: func.return %[[C]]
func.func @sub_from_bias(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  %w = tosa.const {values = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
  %b = tosa.const {values = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %k = tosa.const {values = dense<[[[[10.0, 20.0]]]]> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
  %s = tosa.sub %c, %k : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %s : tensor<1x2x2x2xf32>
}

// Depthwise (C = 1, M = 2): output channel c*M + m scales weight [.., c, m]: weights [[1, 2]] * [3, 4]
// = [[3, 8]], bias [1, 2] * [3, 4] = [3, 8]. FULLY_CONNECTED: weights [OC, IC] scale along OC.
// CHECK-LABEL: func.func @depthwise_and_fc
// CHECK-DAG: %[[W:.*]] = tosa.const {values = dense<{{\[\[\[\[}}3.000000e+00, 8.000000e+00]]]]> : tensor<1x1x1x2xf32>}
// CHECK-DAG: %[[B:.*]] = tosa.const {values = dense<[3.000000e+00, 8.000000e+00]> : tensor<2xf32>}
// CHECK: tosa.depthwise_conv2d %x, %[[W]], %[[B]]
// CHECK-DAG: %[[FW:.*]] = tosa.const {values = dense<{{\[\[}}5.000000e-01, 1.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}
// CHECK-DAG: %[[FB:.*]] = tosa.const {values = dense<[5.000000e-01, 2.000000e+00]> : tensor<2xf32>}
// CHECK: tosa.fully_connected %f, %[[FW]], %[[FB]]
// CHECK-NOT: tosa.mul
func.func @depthwise_and_fc(%x: tensor<1x2x2x1xf32>, %f: tensor<3x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<3x2xf32>) {
  %w = tosa.const {values = dense<[[[[1.0, 2.0]]]]> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
  %b = tosa.const {values = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %c = tosa.depthwise_conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x2x1xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %s = tosa.const {values = dense<[[[[3.0, 4.0]]]]> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
  %m = tosa.mul %c, %s {shift = 0 : i64} : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x2x2x2xf32>
  %fw = tosa.const {values = dense<[[1.0, 2.0], [1.5, 2.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
  %fb = tosa.const {values = dense<[1.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
  %fc = tosa.fully_connected %f, %fw, %fb {input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %fs = tosa.const {values = dense<[[0.5, 2.0]]> : tensor<1x2xf32>} : tensor<1x2xf32>
  %fm = tosa.mul %fs, %fc {shift = 0 : i64} : (tensor<1x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %m, %fm : tensor<1x2x2x2xf32>, tensor<3x2xf32>
}

// Not folded: constant - conv (the conv result is negated, not biased); an integer convolution.
// CHECK-LABEL: func.func @not_folded
// CHECK: tosa.sub %k, %{{.*}}
// CHECK: tosa.add %{{.*}}, %ki
func.func @not_folded(%x: tensor<1x2x2x1xf32>, %q: tensor<1x2x2x1xi8>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>) {
  %w = tosa.const {values = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
  %b = tosa.const {values = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %k = tosa.const {values = dense<[[[[10.0, 20.0]]]]> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
  %s = tosa.sub %k, %c : (tensor<1x1x1x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %wi = tosa.const {values = dense<[[[[1]]], [[[2]]]]> : tensor<2x1x1x1xi8>} : tensor<2x1x1x1xi8>
  %bi = tosa.const {values = dense<[1, 2]> : tensor<2xi32>} : tensor<2xi32>
  %ci = tosa.conv2d %q, %wi, %bi {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x2x1xi8>, tensor<2x1x1x1xi8>, tensor<2xi32>) -> tensor<1x2x2x2xi32>
  %ki = tosa.const {values = dense<[[[[10, 20]]]]> : tensor<1x1x1x2xi32>} : tensor<1x1x1x2xi32>
  %ai = tosa.add %ci, %ki : (tensor<1x2x2x2xi32>, tensor<1x1x1x2xi32>) -> tensor<1x2x2x2xi32>
  func.return %s, %ai : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>
}
