// RUN: nnkiln opt %s -p cancel-transpose-pairs | filecheck %s

// NCHW -> NHWC -> NCHW: the composed perm is the identity, both transposes go.
// CHECK-LABEL: func.func @identity
// CHECK-NOT: tosa.transpose
// CHECK: func.return %x : tensor<1x2x3x4xf32>
func.func @identity(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %a = tosa.transpose %x {perms = array<i64: 0, 2, 3, 1>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32>
  %b = tosa.transpose %a {perms = array<i64: 0, 3, 1, 2>} : (tensor<1x3x4x2xf32>) -> tensor<1x2x3x4xf32>
  func.return %b : tensor<1x2x3x4xf32>
}

// Not the identity: perms[j] = p1[p2[j]] = [0,2,3,1][[1,0,2,3][j]] = [2, 0, 3, 1], one transpose left.
// CHECK-LABEL: func.func @composed
// CHECK-NEXT: %{{.*}} = tosa.transpose %x {perms = array<i64: 2, 0, 3, 1>} : (tensor<1x2x3x4xf32>) -> tensor<3x1x4x2xf32>
// CHECK-NOT: tosa.transpose
func.func @composed(%x: tensor<1x2x3x4xf32>) -> tensor<3x1x4x2xf32> {
  %a = tosa.transpose %x {perms = array<i64: 0, 2, 3, 1>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32>
  %b = tosa.transpose %a {perms = array<i64: 1, 0, 2, 3>} : (tensor<1x3x4x2xf32>) -> tensor<3x1x4x2xf32>
  func.return %b : tensor<3x1x4x2xf32>
}

// The inner transpose has another user: it stays, the outer one still cancels.
// CHECK-LABEL: func.func @shared
// CHECK-NEXT: %[[A:.*]] = tosa.transpose %x {perms = array<i64: 1, 0>}
// CHECK-NEXT: func.return %x, %[[A]]
func.func @shared(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %a = tosa.transpose %x {perms = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %b = tosa.transpose %a {perms = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  func.return %b, %a : tensor<2x3xf32>, tensor<3x2xf32>
}

// A chain of three collapses to a fixpoint: three rotations of a rank-3 tensor are the identity.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: func.return %x : tensor<2x3x4xi32>
func.func @chain(%x: tensor<2x3x4xi32>) -> tensor<2x3x4xi32> {
  %a = tosa.transpose %x {perms = array<i64: 1, 2, 0>} : (tensor<2x3x4xi32>) -> tensor<3x4x2xi32>
  %b = tosa.transpose %a {perms = array<i64: 1, 2, 0>} : (tensor<3x4x2xi32>) -> tensor<4x2x3xi32>
  %c = tosa.transpose %b {perms = array<i64: 1, 2, 0>} : (tensor<4x2x3xi32>) -> tensor<2x3x4xi32>
  func.return %c : tensor<2x3x4xi32>
}

// Kept: a pair that ends in another quantized type composes into one identity transpose that keeps
// the outer result type (x cannot replace it); a lone transpose is not this pass's business.
// CHECK-LABEL: func.func @requantized
// CHECK-NEXT: %[[T:.*]] = tosa.transpose %x {perms = array<i64: 0, 1>} : (tensor<2x3x!quant.uniform<i8:f32, 5.000000e-01:3>>) -> tensor<2x3x!quant.uniform<i8:f32, 2.500000e-01>>
// CHECK-NEXT: %[[I:.*]] = tosa.transpose %y {perms = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: func.return %[[T]], %[[I]]
func.func @requantized(%x: tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>, %y: tensor<2x3xf32>) -> (tensor<2x3x!quant.uniform<i8:f32, 0.25>>, tensor<2x3xf32>) {
  %a = tosa.transpose %x {perms = array<i64: 1, 0>} : (tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<3x2x!quant.uniform<i8:f32, 0.5:3>>
  %b = tosa.transpose %a {perms = array<i64: 1, 0>} : (tensor<3x2x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2x3x!quant.uniform<i8:f32, 0.25>>
  %i = tosa.transpose %y {perms = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %b, %i : tensor<2x3x!quant.uniform<i8:f32, 0.25>>, tensor<2x3xf32>
}
