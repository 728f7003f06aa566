// RUN: nnkiln opt %s -p fold-constants | filecheck %s
// RUN: nnkiln opt %s -p 'fold-constants{max-elements=5}' | filecheck %s --check-prefix=SMALL

// A chain folds in one pass: transpose [[1,2,3],[4,5,6]] -> [[1,4],[2,5],[3,6]], reshape -> [6],
// add [1,4,2,5,3,6] + [10,20,30,40,50,60] = [11,24,32,45,53,66]. The operand constants are dead but
// stay (dce removes them). With max-elements=5 nothing folds: every result has 6 elements.
// CHECK-LABEL: func.func @chain
// CHECK: %[[C:.*]] = tosa.const {values = dense<[11, 24, 32, 45, 53, 66]> : tensor<6xi32>} : tensor<6xi32>
// CHECK-NOT: tosa.transpose
// CHECK-NOT: tosa.reshape
// CHECK-NOT: tosa.add
// CHECK: func.return %[[C]]
// SMALL-LABEL: func.func @chain
// SMALL: tosa.transpose
// SMALL: tosa.reshape
// SMALL: tosa.add
func.func @chain() -> tensor<6xi32> {
  %a = tosa.const {values = dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>} : tensor<2x3xi32>
  %b = tosa.transpose %a {perms = array<i64: 1, 0>} : (tensor<2x3xi32>) -> tensor<3x2xi32>
  %c = tosa.reshape %b {new_shape = array<i64: 6>} : (tensor<3x2xi32>) -> tensor<6xi32>
  %d = tosa.const {values = dense<[10, 20, 30, 40, 50, 60]> : tensor<6xi32>} : tensor<6xi32>
  %e = tosa.add %c, %d : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  func.return %e : tensor<6xi32>
}

// A quantized constant folds to a quantized constant whose values hold the storage type.
// CHECK-LABEL: func.func @quantized
// CHECK: %[[C:.*]] = tosa.const {values = dense<{{\[\[}}1, 3, 5], [2, 4, 6]]> : tensor<2x3xi8>} : tensor<2x3x!quant.uniform<i8:f32, 5.000000e-01:3>>
// CHECK-NOT: tosa.transpose
// CHECK: func.return %[[C]]
func.func @quantized() -> tensor<2x3x!quant.uniform<i8:f32, 0.5:3>> {
  %c = tosa.const {values = dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi8>} : tensor<3x2x!quant.uniform<i8:f32, 0.5:3>>
  %t = tosa.transpose %c {perms = array<i64: 1, 0>} : (tensor<3x2x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>
  func.return %t : tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>
}

// Not folded: int32 overflow is a REQUIRE failure at run time (it must stay one); an operand that is
// not a constant. The small rescale folds: (100 - 0) * 2^30 >> 31 = 50.
// CHECK-LABEL: func.func @kept
// CHECK: tosa.add %{{.*}}, %{{.*}} : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>
// CHECK: tosa.add %x, %{{.*}} : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>
// CHECK: tosa.const {values = dense<50> : tensor<1xi8>}
// CHECK-NOT: tosa.rescale
func.func @kept(%x: tensor<1xi32>) -> (tensor<1xi32>, tensor<1xi32>, tensor<1xi8>) {
  %m = tosa.const {values = dense<2147483647> : tensor<1xi32>} : tensor<1xi32>
  %o = tosa.const {values = dense<1> : tensor<1xi32>} : tensor<1xi32>
  %a = tosa.add %m, %o : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>
  %b = tosa.add %x, %o : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>
  %h = tosa.const {values = dense<100> : tensor<1xi32>} : tensor<1xi32>
  %r = tosa.rescale %h {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824>, shift = array<i64: 31>, scale32 = true, double_round = false, per_channel = false} : (tensor<1xi32>) -> tensor<1xi8>
  func.return %a, %b, %r : tensor<1xi32>, tensor<1xi32>, tensor<1xi8>
}
