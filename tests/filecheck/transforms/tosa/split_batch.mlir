// RUN: nnkiln opt %s -p 'split-batch{threshold-bytes=1}' | filecheck %s
// RUN: nnkiln opt %s -p 'split-batch{threshold-bytes=0}' | filecheck %s --check-prefix=OFF

// A batch of 2: the conv and its clamp run once per sample (slices of the input, sample after sample),
// the reduction over the batch axis is not separable and reads the concatenation.
// CHECK-LABEL: func.func @conv_then_batch_reduce
// CHECK: %[[X0:.*]] = tosa.slice %x {start = array<i64: 0, 0, 0, 0>, size = array<i64: 1, 4, 4, 1>} : (tensor<2x4x4x1xf32>) -> tensor<1x4x4x1xf32>
// CHECK: %[[C0:.*]] = tosa.conv2d %[[X0]], %w, %b {{.*}} -> tensor<1x4x4x2xf32>
// CHECK: %[[R0:.*]] = tosa.clamp %[[C0]] {{.*}} -> tensor<1x4x4x2xf32>
// CHECK: %[[X1:.*]] = tosa.slice %x {start = array<i64: 1, 0, 0, 0>, size = array<i64: 1, 4, 4, 1>}
// CHECK: %[[C1:.*]] = tosa.conv2d %[[X1]], %w, %b
// CHECK: %[[R1:.*]] = tosa.clamp %[[C1]]
// CHECK: %[[CAT:.*]] = tosa.concat %[[R0]], %[[R1]] {axis = 0 : i64} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<2x4x4x2xf32>
// CHECK: %[[S:.*]] = tosa.reduce_sum %[[CAT]] {axis = 0 : i64}
// CHECK: func.return %[[S]]
// OFF-LABEL: func.func @conv_then_batch_reduce
// OFF-NOT: tosa.slice
// OFF-NOT: tosa.concat
func.func @conv_then_batch_reduce(%x: tensor<2x4x4x1xf32>) -> tensor<1x4x4x2xf32> {
  %w = tosa.const {values = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
  %b = tosa.const {values = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<2x4x4x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<2x4x4x2xf32>
  %r = tosa.clamp %c {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<2x4x4x2xf32>) -> tensor<2x4x4x2xf32>
  %s = tosa.reduce_sum %r {axis = 0 : i64} : (tensor<2x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  func.return %s : tensor<1x4x4x2xf32>
}

// The batch survives reshapes that merge it into the rows of a matrix ([2,3,4] -> [1,6,4]: sample s is
// rows 3s..3s+2) and a transpose; per sample the reshape's new_shape has 3 rows.
// CHECK-LABEL: func.func @rows
// CHECK: tosa.slice %x {start = array<i64: 0, 0, 0>, size = array<i64: 1, 3, 4>}
// CHECK: tosa.reshape {{.*}} {new_shape = array<i64: 1, 3, 4>} : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
// CHECK: tosa.matmul {{.*}} -> tensor<1x3x5xf32>
// CHECK: tosa.transpose {{.*}} -> tensor<5x1x3xf32>
// CHECK: tosa.slice %x {start = array<i64: 1, 0, 0>, size = array<i64: 1, 3, 4>}
// CHECK: tosa.concat {{.*}} {axis = 1 : i64} : (tensor<5x1x3xf32>, tensor<5x1x3xf32>) -> tensor<5x2x3xf32>
func.func @rows(%x: tensor<2x3x4xf32>) -> tensor<5x2x3xf32> {
  %m = tosa.const {values = dense<1.0> : tensor<1x4x5xf32>} : tensor<1x4x5xf32>
  %perm = tosa.const {values = dense<[2, 0, 1]> : tensor<3xi32>} : tensor<3xi32>
  %a = tosa.reshape %x {new_shape = array<i64: 1, 6, 4>} : (tensor<2x3x4xf32>) -> tensor<1x6x4xf32>
  %p = tosa.matmul %a, %m {A_zp = 0 : i64, B_zp = 0 : i64} : (tensor<1x6x4xf32>, tensor<1x4x5xf32>) -> tensor<1x6x5xf32>
  %q = tosa.reshape %p {new_shape = array<i64: 2, 3, 5>} : (tensor<1x6x5xf32>) -> tensor<2x3x5xf32>
  %t = tosa.transpose %q {perms = array<i64: 2, 0, 1>} : (tensor<2x3x5xf32>) -> tensor<5x2x3xf32>
  func.return %t : tensor<5x2x3xf32>
}

// A layer whose weights outweigh its activations stays batched: per sample its 100x8 weights would be
// read twice.
// CHECK-LABEL: func.func @weights_heavy
// CHECK-NOT: tosa.slice
// CHECK: tosa.fully_connected %x
func.func @weights_heavy(%x: tensor<2x8xf32>) -> tensor<2x100xf32> {
  %w = tosa.const {values = dense<1.0> : tensor<100x8xf32>} : tensor<100x8xf32>
  %b = tosa.const {values = dense<0.0> : tensor<100xf32>} : tensor<100xf32>
  %y = tosa.fully_connected %x, %w, %b {input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<2x8xf32>, tensor<100x8xf32>, tensor<100xf32>) -> tensor<2x100xf32>
  func.return %y : tensor<2x100xf32>
}

// Inputs without a common leading batch (> 1) are left alone.
// CHECK-LABEL: func.func @no_batch
// CHECK-NOT: tosa.slice
func.func @no_batch(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  %r = tosa.clamp %x {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  %e = tosa.exp %r : (tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  func.return %e : tensor<1x4x4x1xf32>
}
