// RUN: nnkiln opt %s -p avgpool-to-depthwise | filecheck %s

// 2x2 average without padding: a depthwise convolution with weights 1/4 and zero bias, same stride.
// CHECK-LABEL: func.func @unpadded
// CHECK: %[[W:.*]] = tosa.const {values = dense<2.500000e-01> : tensor<2x2x2x1xf32>}
// CHECK: %[[B:.*]] = tosa.const {values = dense<0.000000e+00> : tensor<2xf32>}
// CHECK: %[[D:.*]] = tosa.depthwise_conv2d %x, %[[W]], %[[B]] {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>
// CHECK-NOT: tosa.avg_pool2d
// CHECK: func.return %[[D]]
func.func @unpadded(%x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32> {
  %y = tosa.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}

// Kept: with padding the divisor at the borders counts only input positions; integer pools round their own way.
// CHECK-LABEL: func.func @padded
// CHECK: tosa.avg_pool2d
func.func @padded(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %y = tosa.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  func.return %y : tensor<1x4x4x2xf32>
}

// CHECK-LABEL: func.func @int8
// CHECK: tosa.avg_pool2d
func.func @int8(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %y = tosa.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, input_zp = 3 : i64, output_zp = -1 : i64} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %y : tensor<1x2x2x2xi8>
}
