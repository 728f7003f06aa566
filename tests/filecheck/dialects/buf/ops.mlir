// RUN: nnkiln opt %s | filecheck %s
// RUN: nnkiln opt %s | nnkiln opt - | filecheck %s
// RUN: nnkiln opt --generic %s | nnkiln opt - | filecheck %s

// Round trip of every buf op and of the async ops (custom and generic forms).
// CHECK-LABEL: func.func @main
// CHECK-NEXT: %w = buf.const {values = dense<1.000000e+00> : tensor<2xf32>} : memref<2xf32>
// CHECK-NEXT: %a = buf.alloc : memref<1x4x4x2xf32>
// CHECK-NEXT: %s = buf.static_alloc {memory = "host", offset = 128 : i64} : memref<1x4x4x2xf32>
// CHECK-NEXT: %t0 = async.execute [] {executor = "cpu", executor_index = 0 : i64} {
// CHECK-NEXT:   %r = buf.kernel "tosa.add" ins(%x, %w : memref<1x4x4x2xf32>, memref<2xf32>) outs(%a : memref<1x4x4x2xf32>) {attrs = {}, post_ops = [{kernel = "tosa.clamp", attrs = {min_val = 0.000000e+00 : f32, max_val = 6.000000e+00 : f32}}]} -> memref<1x4x4x2xf32>
// CHECK-NEXT:   async.yield
// CHECK-NEXT: }
// CHECK-NEXT: %t1 = async.execute [%t0] {executor = "cpu", executor_index = 1 : i64} {
// CHECK-NEXT:   %v = buf.reshape %a : memref<1x4x4x2xf32> -> memref<32xf32>
// CHECK-NEXT:   %sv = buf.subview %a {offsets = array<i64: 0, 1, 0, 0>, sizes = array<i64: 1, 2, 4, 2>} : memref<1x4x4x2xf32> -> memref<1x2x4x2xf32>
// CHECK-NEXT:   %c = buf.copy ins(%a : memref<1x4x4x2xf32>) outs(%o : memref<1x4x4x2xf32>) -> memref<1x4x4x2xf32>
// CHECK-NEXT:   %cv = buf.concat_view ins(%sv : memref<1x2x4x2xf32>) outs(%s : memref<1x4x4x2xf32>) -> memref<1x4x4x2xf32>
// CHECK-NEXT:   async.yield
// CHECK-NEXT: }
// CHECK-NEXT: async.await_all %t0, %t1
func.func @main(%x: memref<1x4x4x2xf32>, %o: memref<1x4x4x2xf32>) {
  %w = buf.const {values = dense<1.0> : tensor<2xf32>} : memref<2xf32>
  %a = buf.alloc : memref<1x4x4x2xf32>
  %s = buf.static_alloc {memory = "host", offset = 128 : i64} : memref<1x4x4x2xf32>
  %t0 = async.execute [] {executor = "cpu", executor_index = 0 : i64} {
    %r = buf.kernel "tosa.add" ins(%x, %w : memref<1x4x4x2xf32>, memref<2xf32>) outs(%a : memref<1x4x4x2xf32>) {attrs = {}, post_ops = [{kernel = "tosa.clamp", attrs = {min_val = 0.0 : f32, max_val = 6.0 : f32}}]} -> memref<1x4x4x2xf32>
    async.yield
  }
  %t1 = async.execute [%t0] {executor = "cpu", executor_index = 1 : i64} {
    %v = buf.reshape %a : memref<1x4x4x2xf32> -> memref<32xf32>
    %sv = buf.subview %a {offsets = array<i64: 0, 1, 0, 0>, sizes = array<i64: 1, 2, 4, 2>} : memref<1x4x4x2xf32> -> memref<1x2x4x2xf32>
    %c = buf.copy ins(%a : memref<1x4x4x2xf32>) outs(%o : memref<1x4x4x2xf32>) -> memref<1x4x4x2xf32>
    %cv = buf.concat_view ins(%sv : memref<1x2x4x2xf32>) outs(%s : memref<1x4x4x2xf32>) -> memref<1x4x4x2xf32>
    async.yield
  }
  async.await_all %t0, %t1
  func.return
}
