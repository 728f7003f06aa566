// RUN: nnkiln opt --split-input-file --verify-diagnostics %s | filecheck %s
// RUN: not nnkiln opt --split-input-file %s 2>&1 | filecheck %s --check-prefix=PLAIN

// A valid chunk prints; an invalid chunk with the expected message passes silently.

// CHECK: func.func @ok
// CHECK-NEXT: tosa.add
func.func @ok(%a: tensor<2x3xi32>, %b: tensor<1x3xi32>) -> tensor<2x3xi32> {
  %0 = tosa.add %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  func.return %0 : tensor<2x3xi32>
}

// -----

// PLAIN: error: @bad, op #0: 'tosa.add' [broadcast: mismatched dimension is 1] dimensions [3, 4] cannot broadcast
func.func @bad(%a: tensor<2x3xi32>, %b: tensor<2x4xi32>) -> tensor<2x4xi32> {
  // expected-error {{dimensions [3, 4] cannot broadcast}}
  %0 = tosa.add %a, %b : (tensor<2x3xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
  func.return %0 : tensor<2x4xi32>
}
