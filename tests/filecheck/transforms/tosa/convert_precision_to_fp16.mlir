// RUN: nnkiln opt %s -p convert-precision-to-fp16 | filecheck %s

// conv -> max_pool -> conv -> sigmoid: the input is converted once, the weights are fp16 constants, the
// convolutions accumulate in fp32 (f32 bias and result); the pool reads the first conv's result converted to
// fp16 and gives fp16 to the second conv directly (no f16 -> f32 -> f16); the sigmoid stays float32.
// CHECK-LABEL: func.func @chain
// CHECK: %[[X:.*]] = tosa.custom %x {identifier = "math.cast", config = "math", {{.*}} : (tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf16>
// CHECK: %[[W:.*]] = tosa.const {values = dense<5.000000e-01> : tensor<1x1x1x1xf16>}
// CHECK: %[[C:.*]] = tosa.conv2d %[[X]], %[[W]], %b {{.*}} : (tensor<1x4x4x1xf16>, tensor<1x1x1x1xf16>, tensor<1xf32>) -> tensor<1x4x4x1xf32>
// CHECK: %[[C16:.*]] = tosa.custom %[[C]] {identifier = "math.cast", {{.*}} -> tensor<1x4x4x1xf16>
// CHECK: %[[P:.*]] = tosa.max_pool2d %[[C16]] {{.*}} : (tensor<1x4x4x1xf16>) -> tensor<1x2x2x1xf16>
// CHECK-NOT: tosa.custom
// CHECK: %[[D:.*]] = tosa.conv2d %[[P]], %[[W]], %b {{.*}} -> tensor<1x2x2x1xf32>
// CHECK: %[[S:.*]] = tosa.sigmoid %[[D]] : (tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
// CHECK: func.return %[[S]] : tensor<1x2x2x1xf32>
func.func @chain(%x: tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32> {
  %w = tosa.const {values = dense<0.5> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32>
  %b = tosa.const {values = dense<0.25> : tensor<1xf32>} : tensor<1xf32>
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x4x4x1xf32>
  %p = tosa.max_pool2d %c {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32>
  %d = tosa.conv2d %p, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x2x2x1xf32>
  %s = tosa.sigmoid %d : (tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  func.return %s : tensor<1x2x2x1xf32>
}

// Kept: an integer convolution, and an ADD with broadcasting (not an NCE elementwise op).
// CHECK-LABEL: func.func @int8
// CHECK-NOT: tosa.custom
// CHECK: tosa.conv2d %x, %w, %b
func.func @int8(%x: tensor<1x2x2x1xi8>) -> tensor<1x2x2x1xi32> {
  %w = tosa.const {values = dense<3> : tensor<1x1x1x1xi8>} : tensor<1x1x1x1xi8>
  %b = tosa.const {values = dense<0> : tensor<1xi32>} : tensor<1xi32>
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x2x1xi8>, tensor<1x1x1x1xi8>, tensor<1xi32>) -> tensor<1x2x2x1xi32>
  func.return %c : tensor<1x2x2x1xi32>
}

// CHECK-LABEL: func.func @broadcast_add
// CHECK-NOT: tosa.custom
// CHECK: tosa.add %x, %k : (tensor<1x2x2x3xf32>, tensor<1x1x1x3xf32>) -> tensor<1x2x2x3xf32>
func.func @broadcast_add(%x: tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32> {
  %k = tosa.const {values = dense<[[[[1.0, 2.0, 3.0]]]]> : tensor<1x1x1x3xf32>} : tensor<1x1x1x3xf32>
  %y = tosa.add %x, %k : (tensor<1x2x2x3xf32>, tensor<1x1x1x3xf32>) -> tensor<1x2x2x3xf32>
  func.return %y : tensor<1x2x2x3xf32>
}
