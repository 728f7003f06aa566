// RUN: nnkiln opt %s -p expand-channels | filecheck %s
// RUN: nnkiln opt %s -p 'expand-channels{alignment=4}' | filecheck %s --check-prefix=ALIGN4

// int8 conv 3 -> 2 channels: input padded to 16 channels with input_zp = 7, weights to [16,1,1,16] with
// weight_zp = -2, bias to 16 zeros-padded values; the first 2 output channels are sliced back.
// CHECK-LABEL: func.func @conv_int8
// CHECK: %[[X:.*]] = tosa.pad %x {padding = array<i64: 0, 0, 0, 0, 0, 0, 0, 13>, pad_const = 7 : i64} : (tensor<1x2x2x3xi8>) -> tensor<1x2x2x16xi8>
// CHECK: %[[W:.*]] = tosa.const {{.*}} : tensor<16x1x1x16xi8>
// CHECK: %[[B:.*]] = tosa.const {values = dense<[10, -10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]> : tensor<16xi32>}
// CHECK: %[[C:.*]] = tosa.conv2d %[[X]], %[[W]], %[[B]] {{.*}}input_zp = 7 : i64, weight_zp = -2 : i64} {{.*}} -> tensor<1x2x2x16xi32>
// CHECK: %[[S:.*]] = tosa.slice %[[C]] {start = array<i64: 0, 0, 0, 0>, size = array<i64: 1, 2, 2, 2>}
// CHECK: func.return %[[S]]
// ALIGN4-LABEL: func.func @conv_int8
// ALIGN4: tosa.pad %x {padding = array<i64: 0, 0, 0, 0, 0, 0, 0, 1>, pad_const = 7 : i64}
// ALIGN4: tosa.conv2d {{.*}} -> tensor<1x2x2x4xi32>
func.func @conv_int8(%x: tensor<1x2x2x3xi8>) -> tensor<1x2x2x2xi32> {
  %w = tosa.const {values = dense<[[[[1, 2, 3]]], [[[-4, 5, -6]]]]> : tensor<2x1x1x3xi8>} : tensor<2x1x1x3xi8>
  %b = tosa.const {values = dense<[10, -10]> : tensor<2xi32>} : tensor<2xi32>
  %y = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 7 : i64, weight_zp = -2 : i64} : (tensor<1x2x2x3xi8>, tensor<2x1x1x3xi8>, tensor<2xi32>) -> tensor<1x2x2x2xi32>
  func.return %y : tensor<1x2x2x2xi32>
}

// Float depthwise with C = 2, M = 2: input and weights padded to 16 channels, output sliced to C * M = 4.
// CHECK-LABEL: func.func @depthwise
// CHECK: %[[X:.*]] = tosa.pad %x {padding = array<i64: 0, 0, 0, 0, 0, 0, 0, 14>, pad_const = 0.000000e+00 : f32}
// CHECK: %[[W:.*]] = tosa.const {{.*}} : tensor<3x3x16x2xf32>
// CHECK: %[[B:.*]] = tosa.const {{.*}} : tensor<32xf32>
// CHECK: %[[D:.*]] = tosa.depthwise_conv2d %[[X]], %[[W]], %[[B]] {{.*}} -> tensor<1x3x3x32xf32>
// CHECK: tosa.slice %[[D]] {start = array<i64: 0, 0, 0, 0>, size = array<i64: 1, 3, 3, 4>}
func.func @depthwise(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x4xf32> {
  %w = tosa.const {values = dense<1.0> : tensor<3x3x2x2xf32>} : tensor<3x3x2x2xf32>
  %b = tosa.const {values = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : tensor<4xf32>
  %y = tosa.depthwise_conv2d %x, %w, %b {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x3x3x2xf32>, tensor<3x3x2x2xf32>, tensor<4xf32>) -> tensor<1x3x3x4xf32>
  func.return %y : tensor<1x3x3x4xf32>
}

// Aligned channels (16 -> 16): unchanged.
// CHECK-LABEL: func.func @aligned
// CHECK-NOT: tosa.pad
// CHECK: tosa.conv2d %x, %w, %b
// CHECK-NOT: tosa.slice
// ALIGN4-LABEL: func.func @aligned
// ALIGN4-NOT: tosa.pad
func.func @aligned(%x: tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32> {
  %w = tosa.const {values = dense<1.0> : tensor<16x1x1x16xf32>} : tensor<16x1x1x16xf32>
  %b = tosa.const {values = dense<0.0> : tensor<16xf32>} : tensor<16xf32>
  %y = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x1x1x16xf32>, tensor<16x1x1x16xf32>, tensor<16xf32>) -> tensor<1x1x1x16xf32>
  func.return %y : tensor<1x1x1x16xf32>
}
