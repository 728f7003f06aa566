// RUN: nnkiln opt %s -p static-allocation | filecheck %s

// Live ranges in task order: %a [t0, t1], %b [t1, t2], %c [t2, t3] (%c: 40 bytes, rounded up to the
// 64-byte alignment of "host"). %a and %c never live together, so %c reuses %a's bytes at offset 0;
// %b sits at 256. Arena = 512 = the lower bound (at t1: %a + %b = 256 + 256).
// The reuse is made safe for parallel instances: t2 (the writer of %c) now also depends on t0 (the
// other user of %a; t1 was already a dependency).
// CHECK: builtin.module attributes {nnkiln.arena_bytes = 512 : i64, nnkiln.arena_lower_bound_bytes = 512 : i64}
// CHECK: %[[A:.*]] = buf.static_alloc {memory = "host", offset = 0 : i64} : memref<64xf32>
// CHECK-NEXT: %[[B:.*]] = buf.static_alloc {memory = "host", offset = 256 : i64} : memref<64xf32>
// CHECK-NEXT: %[[C:.*]] = buf.static_alloc {memory = "host", offset = 0 : i64} : memref<10xf32>
// CHECK: %[[T0:.*]] = async.execute []
// CHECK: %[[T1:.*]] = async.execute [%[[T0]]]
// CHECK: %[[T2:.*]] = async.execute [%[[T1]], %[[T0]]]
// CHECK: async.execute [%[[T2]]]
func.func @chain(%x: memref<64xf32>, %o: memref<10xf32>) {
  %a = buf.alloc : memref<64xf32>
  %b = buf.alloc : memref<64xf32>
  %c = buf.alloc : memref<10xf32>
  %t0 = async.execute [] {executor = "cpu", executor_index = 0 : i64} {
    %0 = buf.kernel "tosa.abs" ins(%x : memref<64xf32>) outs(%a : memref<64xf32>) {attrs = {}} -> memref<64xf32>
    async.yield
  }
  %t1 = async.execute [%t0] {executor = "cpu", executor_index = 1 : i64} {
    %1 = buf.kernel "tosa.abs" ins(%a : memref<64xf32>) outs(%b : memref<64xf32>) {attrs = {}} -> memref<64xf32>
    async.yield
  }
  %t2 = async.execute [%t1] {executor = "cpu", executor_index = 0 : i64} {
    %v = buf.subview %b {offsets = array<i64: 0>, sizes = array<i64: 10>} : memref<64xf32> -> memref<10xf32>
    %2 = buf.kernel "tosa.abs" ins(%v : memref<10xf32>) outs(%c : memref<10xf32>) {attrs = {}} -> memref<10xf32>
    async.yield
  }
  %t3 = async.execute [%t2] {executor = "cpu", executor_index = 1 : i64} {
    %3 = buf.copy ins(%c : memref<10xf32>) outs(%o : memref<10xf32>) -> memref<10xf32>
    async.yield
  }
  async.await_all %t3
  func.return
}
