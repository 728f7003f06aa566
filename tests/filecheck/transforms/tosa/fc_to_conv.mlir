// RUN: nnkiln opt %s -p fc-to-conv | filecheck %s

// FULLY_CONNECTED [2,3] x [4,3]: the batch goes to H ([1,2,1,3]), the weights are reshaped to [4,1,1,3].
// CHECK-LABEL: func.func @fully_connected
// CHECK: %[[X:.*]] = tosa.reshape %x {new_shape = array<i64: 1, 2, 1, 3>}
// CHECK: %[[W:.*]] = tosa.const {{.*}} : tensor<4x1x1x3xf32>
// CHECK: %[[C:.*]] = tosa.conv2d %[[X]], %[[W]], %b {{.*}} -> tensor<1x2x1x4xf32>
// CHECK: %[[Y:.*]] = tosa.reshape %[[C]] {new_shape = array<i64: 2, 4>}
// CHECK-NOT: tosa.fully_connected
// CHECK: func.return %[[Y]]
func.func @fully_connected(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %w = tosa.const {values = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 0.0, -1.0]]> : tensor<4x3xf32>} : tensor<4x3xf32>
  %b = tosa.const {values = dense<[0.5, 1.0, 1.5, 2.0]> : tensor<4xf32>} : tensor<4xf32>
  %y = tosa.fully_connected %x, %w, %b {input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// int8: the zero points carry over, the result stays int32.
// CHECK-LABEL: func.func @fully_connected_int8
// CHECK: tosa.conv2d {{.*}} {input_zp = -5 : i64, weight_zp = 2 : i64, {{.*}} -> tensor<1x1x1x2xi32>
// CHECK-NOT: tosa.fully_connected
func.func @fully_connected_int8(%x: tensor<1x3xi8>) -> tensor<1x2xi32> {
  %w = tosa.const {values = dense<[[1, -2, 3], [4, 5, -6]]> : tensor<2x3xi8>} : tensor<2x3xi8>
  %b = tosa.const {values = dense<[100, -100]> : tensor<2xi32>} : tensor<2xi32>
  %y = tosa.fully_connected %x, %w, %b {input_zp = -5 : i64, weight_zp = 2 : i64} : (tensor<1x3xi8>, tensor<2x3xi8>, tensor<2xi32>) -> tensor<1x2xi32>
  func.return %y : tensor<1x2xi32>
}

// MATMUL with a constant right operand: weights B^T [N,1,1,K] made at compile time, zero bias.
// CHECK-LABEL: func.func @const_matmul
// CHECK: %[[A:.*]] = tosa.reshape %a {new_shape = array<i64: 1, 5, 1, 2>}
// CHECK: %[[W:.*]] = tosa.const {values = dense<{{\[\[\[\[}}1.000000e+00, 4.000000e+00]]], {{\[\[\[}}2.000000e+00, 5.000000e+00]]], {{\[\[\[}}3.000000e+00, 6.000000e+00]]]]> : tensor<3x1x1x2xf32>}
// CHECK: %[[B:.*]] = tosa.const {values = dense<0.000000e+00> : tensor<3xf32>}
// CHECK: %[[C:.*]] = tosa.conv2d %[[A]], %[[W]], %[[B]]
// CHECK: tosa.reshape %[[C]] {new_shape = array<i64: 1, 5, 3>}
// CHECK-NOT: tosa.matmul
func.func @const_matmul(%a: tensor<1x5x2xf32>) -> tensor<1x5x3xf32> {
  %r = tosa.const {values = dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<1x2x3xf32>} : tensor<1x2x3xf32>
  %y = tosa.matmul %a, %r {A_zp = 0 : i64, B_zp = 0 : i64} : (tensor<1x5x2xf32>, tensor<1x2x3xf32>) -> tensor<1x5x3xf32>
  func.return %y : tensor<1x5x3xf32>
}

// Not converted: both operands are activations.
// CHECK-LABEL: func.func @matmul_of_activations
// CHECK: tosa.matmul %a, %r
func.func @matmul_of_activations(%a: tensor<1x5x2xf32>, %r: tensor<1x2x3xf32>) -> tensor<1x5x3xf32> {
  %y = tosa.matmul %a, %r {A_zp = 0 : i64, B_zp = 0 : i64} : (tensor<1x5x2xf32>, tensor<1x2x3xf32>) -> tensor<1x5x3xf32>
  func.return %y : tensor<1x5x3xf32>
}
