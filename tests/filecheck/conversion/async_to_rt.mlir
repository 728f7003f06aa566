// RUN: nnkiln opt %s -p async-to-rt | filecheck %s

// Arguments become rt.buffer input/output (index among inputs/outputs), static allocations arena
// buffers, constants stay. Tokens consumed on another queue get a barrier (t0 -> t1: queue 0 -> 1,
// t1 -> t2: 1 -> 0); t2 -> t3 is on one queue: FIFO order, no barrier. await_all disappears.
// CHECK-LABEL: func.func @main
// CHECK-NEXT: %[[X:.*]] = rt.buffer {section = "input", offset = 0 : i64} : memref<64xf32>
// CHECK-NEXT: %[[O:.*]] = rt.buffer {section = "output", offset = 0 : i64} : memref<64xf32>
// CHECK-NEXT: %[[P:.*]] = rt.buffer {section = "output", offset = 0 : i64, index = 1 : i64} : memref<64xf32>
// CHECK-NEXT: %[[K:.*]] = buf.const
// CHECK-NEXT: %[[A:.*]] = rt.buffer {section = "arena", offset = 0 : i64} : memref<64xf32>
// CHECK-NEXT: %[[B:.*]] = rt.buffer {section = "arena", offset = 256 : i64} : memref<64xf32>
// CHECK-NEXT: rt.barrier {id = 0 : i64}
// CHECK-NEXT: rt.barrier {id = 1 : i64}
// CHECK-NEXT: rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64: 0>} {
// CHECK-NEXT:   buf.kernel "tosa.add" ins(%[[X]], %[[K]] : memref<64xf32>, memref<64xf32>) outs(%[[A]] : memref<64xf32>)
// CHECK-NEXT:   rt.end
// CHECK-NEXT: }
// CHECK-NEXT: rt.task {executor = "cpu", executor_index = 1 : i64, waits = array<i64: 0>, updates = array<i64: 1>} {
// CHECK-NEXT:   buf.kernel "tosa.abs" ins(%[[A]] : memref<64xf32>) outs(%[[B]] : memref<64xf32>)
// CHECK: rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64: 1>, updates = array<i64>} {
// CHECK-NEXT:   buf.copy ins(%[[B]] : memref<64xf32>) outs(%[[O]] : memref<64xf32>)
// CHECK: rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
// CHECK-NEXT:   %[[V:.*]] = buf.reshape %[[P]] : memref<64xf32> -> memref<8x8xf32>
// CHECK-NEXT:   %[[W:.*]] = buf.reshape %[[O]] : memref<64xf32> -> memref<8x8xf32>
// CHECK-NEXT:   buf.kernel "tosa.abs" ins(%[[W]] : memref<8x8xf32>) outs(%[[V]] : memref<8x8xf32>)
// CHECK-NOT: async.
// CHECK: func.return
func.func @main(%x: memref<64xf32> {nnkiln.name = "x", nnkiln.io = "input"}, %o: memref<64xf32> {nnkiln.name = "o", nnkiln.io = "output"}, %p: memref<64xf32> {nnkiln.name = "p", nnkiln.io = "output"}) {
  %k = buf.const {values = dense<1.0> : tensor<64xf32>} : memref<64xf32>
  %a = buf.static_alloc {memory = "host", offset = 0 : i64} : memref<64xf32>
  %b = buf.static_alloc {memory = "host", offset = 256 : i64} : memref<64xf32>
  %t0 = async.execute [] {executor = "cpu", executor_index = 0 : i64} {
    %0 = buf.kernel "tosa.add" ins(%x, %k : memref<64xf32>, memref<64xf32>) outs(%a : memref<64xf32>) {attrs = {}} -> memref<64xf32>
    async.yield
  }
  %t1 = async.execute [%t0] {executor = "cpu", executor_index = 1 : i64} {
    %1 = buf.kernel "tosa.abs" ins(%a : memref<64xf32>) outs(%b : memref<64xf32>) {attrs = {}} -> memref<64xf32>
    async.yield
  }
  %t2 = async.execute [%t1] {executor = "cpu", executor_index = 0 : i64} {
    %2 = buf.copy ins(%b : memref<64xf32>) outs(%o : memref<64xf32>) -> memref<64xf32>
    async.yield
  }
  %t3 = async.execute [%t2] {executor = "cpu", executor_index = 0 : i64} {
    %v = buf.reshape %p : memref<64xf32> -> memref<8x8xf32>
    %w = buf.reshape %o : memref<64xf32> -> memref<8x8xf32>
    %3 = buf.kernel "tosa.abs" ins(%w : memref<8x8xf32>) outs(%v : memref<8x8xf32>) {attrs = {}} -> memref<8x8xf32>
    async.yield
  }
  async.await_all %t3
  func.return
}
