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
