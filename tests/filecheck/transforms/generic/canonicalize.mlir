// RUN: nnkiln opt %s -p canonicalize | filecheck %s

// -- tosa.transpose ------------------------------------------------------------------------------

// Not the identity: perms[j] = p1[p2[j]] = [0,2,3,1][[1,0,2,3][j]] = [2, 0, 3, 1], one transpose left.
// CHECK-LABEL: func.func @transpose_compose
// CHECK-NEXT: %[[T:.*]] = tosa.transpose %x {perms = array<i64: 2, 0, 3, 1>} : (tensor<1x2x3x4xf32>) -> tensor<3x1x4x2xf32>
// CHECK-NEXT: func.return %[[T]]
func.func @transpose_compose(%x: tensor<1x2x3x4xf32>) -> tensor<3x1x4x2xf32> {
  %a = tosa.transpose %x {perms = array<i64: 0, 2, 3, 1>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32>
  %b = tosa.transpose %a {perms = array<i64: 1, 0, 2, 3>} : (tensor<1x3x4x2xf32>) -> tensor<3x1x4x2xf32>
  func.return %b : tensor<3x1x4x2xf32>
}

// Three rotations of a rank-3 tensor compose to the identity: nothing is left.
// CHECK-LABEL: func.func @transpose_chain_to_identity
// CHECK-NEXT: func.return %x : tensor<2x3x4xi32>
func.func @transpose_chain_to_identity(%x: tensor<2x3x4xi32>) -> tensor<2x3x4xi32> {
  %a = tosa.transpose %x {perms = array<i64: 1, 2, 0>} : (tensor<2x3x4xi32>) -> tensor<3x4x2xi32>
  %b = tosa.transpose %a {perms = array<i64: 1, 2, 0>} : (tensor<3x4x2xi32>) -> tensor<4x2x3xi32>
  %c = tosa.transpose %b {perms = array<i64: 1, 2, 0>} : (tensor<4x2x3xi32>) -> tensor<2x3x4xi32>
  func.return %c : tensor<2x3x4xi32>
}

// An identity transpose is its input.
// CHECK-LABEL: func.func @transpose_identity
// CHECK-NEXT: func.return %x : tensor<2x3xf32>
func.func @transpose_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = tosa.transpose %x {perms = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %a : tensor<2x3xf32>
}

// Kept: an identity transpose that changes the quantized type is not a no-op; a pair between two
// quantized types composes into that one identity transpose, which stays.
// CHECK-LABEL: func.func @transpose_requantized
// CHECK-NEXT: %[[A:.*]] = tosa.transpose %x {perms = array<i64: 0, 1>} : (tensor<2x3x!quant.uniform<i8:f32, 5.000000e-01:3>>) -> tensor<2x3x!quant.uniform<i8:f32, 2.500000e-01>>
// CHECK-NEXT: %[[B:.*]] = tosa.transpose %x {perms = array<i64: 0, 1>} : (tensor<2x3x!quant.uniform<i8:f32, 5.000000e-01:3>>) -> tensor<2x3x!quant.uniform<i8:f32, 2.500000e-01>>
// CHECK-NEXT: func.return %[[A]], %[[B]]
func.func @transpose_requantized(%x: tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>) -> (tensor<2x3x!quant.uniform<i8:f32, 0.25>>, tensor<2x3x!quant.uniform<i8:f32, 0.25>>) {
  %a = tosa.transpose %x {perms = array<i64: 0, 1>} : (tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2x3x!quant.uniform<i8:f32, 0.25>>
  %b = tosa.transpose %x {perms = array<i64: 1, 0>} : (tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<3x2x!quant.uniform<i8:f32, 0.5:3>>
  %c = tosa.transpose %b {perms = array<i64: 1, 0>} : (tensor<3x2x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2x3x!quant.uniform<i8:f32, 0.25>>
  func.return %a, %c : tensor<2x3x!quant.uniform<i8:f32, 0.25>>, tensor<2x3x!quant.uniform<i8:f32, 0.25>>
}

// Kept: a transpose of a block argument that is not the identity.
// CHECK-LABEL: func.func @transpose_kept
// CHECK-NEXT: tosa.transpose %x {perms = array<i64: 1, 0>}
func.func @transpose_kept(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %a = tosa.transpose %x {perms = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %a : tensor<3x2xf32>
}

// -- tosa.reshape --------------------------------------------------------------------------------

// [2,3] -> [6] -> [3,2]: one reshape of %x; the inner reshape also feeds the second result, so it stays.
// CHECK-LABEL: func.func @reshape_compose
// CHECK-NEXT: %[[I:.*]] = tosa.reshape %x {new_shape = array<i64: 6>}
// CHECK-NEXT: %[[O:.*]] = tosa.reshape %x {new_shape = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: func.return %[[O]], %[[I]]
func.func @reshape_compose(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<6xf32>) {
  %a = tosa.reshape %x {new_shape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  %b = tosa.reshape %a {new_shape = array<i64: 3, 2>} : (tensor<6xf32>) -> tensor<3x2xf32>
  func.return %b, %a : tensor<3x2xf32>, tensor<6xf32>
}

// [2,3] -> [6] -> [2,3] is %x; a reshape to the input's own shape is the input.
// CHECK-LABEL: func.func @reshape_identity
// CHECK-NEXT: func.return %x, %x : tensor<2x3xi8>, tensor<2x3xi8>
func.func @reshape_identity(%x: tensor<2x3xi8>) -> (tensor<2x3xi8>, tensor<2x3xi8>) {
  %a = tosa.reshape %x {new_shape = array<i64: 6>} : (tensor<2x3xi8>) -> tensor<6xi8>
  %b = tosa.reshape %a {new_shape = array<i64: 2, 3>} : (tensor<6xi8>) -> tensor<2x3xi8>
  %c = tosa.reshape %x {new_shape = array<i64: 2, 3>} : (tensor<2x3xi8>) -> tensor<2x3xi8>
  func.return %b, %c : tensor<2x3xi8>, tensor<2x3xi8>
}

// Kept: a same-shape reshape to another quantized type; a reshape pair keeps the outer result type.
// CHECK-LABEL: func.func @reshape_requantized
// CHECK-NEXT: %[[A:.*]] = tosa.reshape %x {new_shape = array<i64: 2, 3>} : (tensor<2x3x!quant.uniform<i8:f32, 5.000000e-01:3>>) -> tensor<2x3x!quant.uniform<i8:f32, 2.500000e-01>>
// CHECK-NEXT: %[[B:.*]] = tosa.reshape %x {new_shape = array<i64: 2, 3>} : (tensor<2x3x!quant.uniform<i8:f32, 5.000000e-01:3>>) -> tensor<2x3x!quant.uniform<i8:f32, 2.500000e-01>>
// CHECK-NEXT: func.return %[[A]], %[[B]]
func.func @reshape_requantized(%x: tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>) -> (tensor<2x3x!quant.uniform<i8:f32, 0.25>>, tensor<2x3x!quant.uniform<i8:f32, 0.25>>) {
  %a = tosa.reshape %x {new_shape = array<i64: 2, 3>} : (tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2x3x!quant.uniform<i8:f32, 0.25>>
  %b = tosa.reshape %x {new_shape = array<i64: 6>} : (tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<6x!quant.uniform<i8:f32, 0.5:3>>
  %c = tosa.reshape %b {new_shape = array<i64: 2, 3>} : (tensor<6x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2x3x!quant.uniform<i8:f32, 0.25>>
  func.return %a, %c : tensor<2x3x!quant.uniform<i8:f32, 0.25>>, tensor<2x3x!quant.uniform<i8:f32, 0.25>>
}

// -- tosa.pad, tosa.slice, tosa.tile, tosa.cast ----------------------------------------------------

// All-zero padding is a no-op whatever pad_const is; any non-zero border is kept.
// CHECK-LABEL: func.func @pad
// CHECK-NEXT: %[[P:.*]] = tosa.pad %x {padding = array<i64: 0, 0, 1, 0>, pad_const = 7 : i64} : (tensor<2x3xi32>) -> tensor<2x4xi32>
// CHECK-NEXT: func.return %x, %[[P]]
func.func @pad(%x: tensor<2x3xi32>) -> (tensor<2x3xi32>, tensor<2x4xi32>) {
  %a = tosa.pad %x {padding = array<i64: 0, 0, 0, 0>, pad_const = 7 : i64} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %b = tosa.pad %x {padding = array<i64: 0, 0, 1, 0>, pad_const = 7 : i64} : (tensor<2x3xi32>) -> tensor<2x4xi32>
  func.return %a, %b : tensor<2x3xi32>, tensor<2x4xi32>
}

// A slice of the full extent is its input; a slice from the origin that is shorter is kept.
// CHECK-LABEL: func.func @slice
// CHECK-NEXT: %[[S:.*]] = tosa.slice %x {start = array<i64: 0, 0>, size = array<i64: 2, 2>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: func.return %x, %[[S]]
func.func @slice(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>) {
  %a = tosa.slice %x {start = array<i64: 0, 0>, size = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = tosa.slice %x {start = array<i64: 0, 0>, size = array<i64: 2, 2>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  func.return %a, %b : tensor<2x3xf32>, tensor<2x2xf32>
}

// Multiples all 1 is the input; multiples [1, 2] are kept.
// CHECK-LABEL: func.func @tile
// CHECK-NEXT: %[[T:.*]] = tosa.tile %x {multiples = array<i64: 1, 2>} : (tensor<2x3xi8>) -> tensor<2x6xi8>
// CHECK-NEXT: func.return %x, %[[T]]
func.func @tile(%x: tensor<2x3xi8>) -> (tensor<2x3xi8>, tensor<2x6xi8>) {
  %a = tosa.tile %x {multiples = array<i64: 1, 1>} : (tensor<2x3xi8>) -> tensor<2x3xi8>
  %b = tosa.tile %x {multiples = array<i64: 1, 2>} : (tensor<2x3xi8>) -> tensor<2x6xi8>
  func.return %a, %b : tensor<2x3xi8>, tensor<2x6xi8>
}

// Kept: a cast that converts (TOSA 0.30 has no same-type CAST; that case is a unit test).
// CHECK-LABEL: func.func @cast_kept
// CHECK-NEXT: tosa.cast %x : (tensor<2xi8>) -> tensor<2xi32>
func.func @cast_kept(%x: tensor<2xi8>) -> tensor<2xi32> {
  %a = tosa.cast %x : (tensor<2xi8>) -> tensor<2xi32>
  func.return %a : tensor<2xi32>
}

// -- constant folding ------------------------------------------------------------------------------

// [1, 2, 3] + [10, 20, 30] = [11, 22, 33]; the operand constants die with the add.
// CHECK-LABEL: func.func @fold_add
// CHECK-NEXT: %[[C:.*]] = tosa.const {values = dense<[11, 22, 33]> : tensor<3xi32>} : tensor<3xi32>
// CHECK-NEXT: func.return %[[C]]
func.func @fold_add() -> tensor<3xi32> {
  %a = tosa.const {values = dense<[1, 2, 3]> : tensor<3xi32>} : tensor<3xi32>
  %b = tosa.const {values = dense<[10, 20, 30]> : tensor<3xi32>} : tensor<3xi32>
  %c = tosa.add %a, %b : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %c : tensor<3xi32>
}

// A chain: transpose [[1,2,3],[4,5,6]] -> [[1,4],[2,5],[3,6]], reshape -> [1,4,2,5,3,6], reciprocal of
// float powers of two is exact: 1/[2, 4, 0.5] = [0.5, 0.25, 2].
// CHECK-LABEL: func.func @fold_chain
// CHECK-DAG: tosa.const {values = dense<[1, 4, 2, 5, 3, 6]> : tensor<6xi32>} : tensor<6xi32>
// CHECK-DAG: tosa.const {values = dense<[5.000000e-01, 2.500000e-01, 2.000000e+00]> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NOT: tosa.transpose
// CHECK-NOT: tosa.reshape
// CHECK-NOT: tosa.reciprocal
func.func @fold_chain() -> (tensor<6xi32>, tensor<3xf32>) {
  %a = tosa.const {values = dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>} : tensor<2x3xi32>
  %b = tosa.transpose %a {perms = array<i64: 1, 0>} : (tensor<2x3xi32>) -> tensor<3x2xi32>
  %c = tosa.reshape %b {new_shape = array<i64: 6>} : (tensor<3x2xi32>) -> tensor<6xi32>
  %f = tosa.const {values = dense<[2.0, 4.0, 0.5]> : tensor<3xf32>} : tensor<3xf32>
  %r = tosa.reciprocal %f : (tensor<3xf32>) -> tensor<3xf32>
  func.return %c, %r : tensor<6xi32>, tensor<3xf32>
}

// A quantized constant folds to a quantized constant (values hold the storage type).
// CHECK-LABEL: func.func @fold_quantized
// CHECK-NEXT: %[[C:.*]] = tosa.const {values = dense<{{\[\[}}1, 3, 5], [2, 4, 6]]> : tensor<2x3xi8>} : tensor<2x3x!quant.uniform<i8:f32, 5.000000e-01:3>>
// CHECK-NEXT: func.return %[[C]]
func.func @fold_quantized() -> tensor<2x3x!quant.uniform<i8:f32, 0.5:3>> {
  %c = tosa.const {values = dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi8>} : tensor<3x2x!quant.uniform<i8:f32, 0.5:3>>
  %t = tosa.transpose %c {perms = array<i64: 1, 0>} : (tensor<3x2x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>
  func.return %t : tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>
}

// Not folded: int32 overflow is a REQUIRE failure at run time (it must stay one); a result above the
// size limit (65537 elements > 65536); an operand that is not a constant.
// CHECK-LABEL: func.func @fold_kept
// CHECK: tosa.add %{{.*}}, %{{.*}} : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>
// CHECK: tosa.tile %{{.*}} {multiples = array<i64: 65537>} : (tensor<1xi32>) -> tensor<65537xi32>
// CHECK: tosa.add %x, %{{.*}} : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>
func.func @fold_kept(%x: tensor<1xi32>) -> (tensor<1xi32>, tensor<65537xi32>, tensor<1xi32>) {
  %m = tosa.const {values = dense<2147483647> : tensor<1xi32>} : tensor<1xi32>
  %o = tosa.const {values = dense<1> : tensor<1xi32>} : tensor<1xi32>
  %a = tosa.add %m, %o : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>
  %t = tosa.tile %o {multiples = array<i64: 65537>} : (tensor<1xi32>) -> tensor<65537xi32>
  %b = tosa.add %x, %o : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>
  func.return %a, %t, %b : tensor<1xi32>, tensor<65537xi32>, tensor<1xi32>
}
