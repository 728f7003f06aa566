// RUN: nnkiln opt %s -p split-asymmetric-strides | filecheck %s

// Stride (2, 1): run with stride (1, 1) (5 rows), pad the rows to 6, view them as [3, 2] and keep index 0.
// CHECK-LABEL: func.func @conv_stride_2_1
// CHECK: %[[C:.*]] = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, {{.*}} -> tensor<1x5x4x2xf32>
// CHECK: %[[P:.*]] = tosa.pad %[[C]] {padding = array<i64: 0, 0, 0, 1, 0, 0, 0, 0>, {{.*}} -> tensor<1x6x4x2xf32>
// CHECK: %[[R:.*]] = tosa.reshape %[[P]] {new_shape = array<i64: 3, 2, 8>}
// CHECK: %[[S:.*]] = tosa.slice %[[R]] {start = array<i64: 0, 0, 0>, size = array<i64: 3, 1, 8>}
// CHECK: %[[Y:.*]] = tosa.reshape %[[S]] {new_shape = array<i64: 1, 3, 4, 2>}
// CHECK: func.return %[[Y]]
func.func @conv_stride_2_1(%x: tensor<1x5x4x1xf32>) -> tensor<1x3x4x2xf32> {
  %w = tosa.const {values = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
  %b = tosa.const {values = dense<[0.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
  %y = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x5x4x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x3x4x2xf32>
  func.return %y : tensor<1x3x4x2xf32>
}

// int8 max pool with stride (1, 2): the columns are subsampled.
// CHECK-LABEL: func.func @max_pool_stride_1_2
// CHECK: tosa.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, {{.*}} -> tensor<1x2x5x2xi8>
// CHECK: tosa.pad {{.*}} {padding = array<i64: 0, 0, 0, 0, 0, 1, 0, 0>, pad_const = 0 : i64}
// CHECK: tosa.reshape {{.*}} {new_shape = array<i64: 6, 2, 2>}
// CHECK: tosa.slice {{.*}} {start = array<i64: 0, 0, 0>, size = array<i64: 6, 1, 2>}
// CHECK: tosa.reshape {{.*}} {new_shape = array<i64: 1, 2, 3, 2>}
func.func @max_pool_stride_1_2(%x: tensor<1x3x6x2xi8>) -> tensor<1x2x3x2xi8> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 1, 2>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x3x6x2xi8>) -> tensor<1x2x3x2xi8>
  func.return %y : tensor<1x2x3x2xi8>
}

// A 1-D convolution as the ONNX importer gives it (H = 1, stride (1, 2)): only the stride changes.
// CHECK-LABEL: func.func @conv1d
// CHECK: tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, {{.*}} -> tensor<1x1x3x1xf32>
// CHECK-NOT: tosa.slice
func.func @conv1d(%x: tensor<1x1x6x1xf32>) -> tensor<1x1x3x1xf32> {
  %w = tosa.const {values = dense<[[[[1.0], [-1.0]]]]> : tensor<1x1x2x1xf32>} : tensor<1x1x2x1xf32>
  %b = tosa.const {values = dense<[0.0]> : tensor<1xf32>} : tensor<1xf32>
  %y = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 2>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x1x6x1xf32>, tensor<1x1x2x1xf32>, tensor<1xf32>) -> tensor<1x1x3x1xf32>
  func.return %y : tensor<1x1x3x1xf32>
}
