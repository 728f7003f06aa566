// RUN: nnkiln opt %s -p "wrap-into-async-regions{threads=2}" | filecheck %s

// A diamond on two cpu instances: the two independent kernels run in parallel, the add waits for
// both (RAW); views are cloned into the task that uses them; the sink token is awaited.
// CHECK-LABEL: func.func @diamond
// CHECK-NEXT: %[[A:.*]] = buf.alloc : memref<8xf32>
// CHECK-NEXT: %[[B:.*]] = buf.alloc : memref<8xf32>
// CHECK-NEXT: %[[T0:.*]] = async.execute [] {executor = "cpu", executor_index = 0 : i64} {
// CHECK-NEXT:   buf.kernel "tosa.abs" ins(%x : memref<8xf32>) outs(%[[A]] : memref<8xf32>)
// CHECK-NEXT:   async.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[T1:.*]] = async.execute [] {executor = "cpu", executor_index = 1 : i64} {
// CHECK-NEXT:   buf.kernel "tosa.floor" ins(%x : memref<8xf32>) outs(%[[B]] : memref<8xf32>)
// CHECK-NEXT:   async.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[T2:.*]] = async.execute [%[[T0]], %[[T1]]] {executor = "cpu", executor_index = {{[01]}} : i64} {
// CHECK-NEXT:   %[[V:.*]] = buf.reshape %o : memref<2x4xf32> -> memref<8xf32>
// CHECK-NEXT:   buf.kernel "tosa.add" ins(%[[A]], %[[B]] : memref<8xf32>, memref<8xf32>) outs(%[[V]] : memref<8xf32>)
// CHECK-NEXT:   async.yield
// CHECK-NEXT: }
// CHECK-NEXT: async.await_all %[[T2]]
// CHECK-NEXT: func.return
func.func @diamond(%x: memref<8xf32>, %o: memref<2x4xf32>) {
  %a0 = buf.alloc : memref<8xf32>
  %a = buf.kernel "tosa.abs" ins(%x : memref<8xf32>) outs(%a0 : memref<8xf32>) {attrs = {}} -> memref<8xf32>
  %b0 = buf.alloc : memref<8xf32>
  %b = buf.kernel "tosa.floor" ins(%x : memref<8xf32>) outs(%b0 : memref<8xf32>) {attrs = {}} -> memref<8xf32>
  %v = buf.reshape %o : memref<2x4xf32> -> memref<8xf32>
  %c = buf.kernel "tosa.add" ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%v : memref<8xf32>) {attrs = {}} -> memref<8xf32>
  func.return
}

// WAW and WAR: the floor overwrites %t, which the abs wrote and the copy read, so it depends on both.
// A task whose dependencies ran on instance 0 stays there when that costs no time (no barrier needed).
// CHECK-LABEL: func.func @war
// CHECK: %[[C0:.*]] = async.execute [] {executor = "cpu", executor_index = 0 : i64} {
// CHECK-NEXT: buf.kernel "tosa.abs"
// CHECK: %[[C1:.*]] = async.execute [%[[C0]]] {executor = "cpu", executor_index = 0 : i64} {
// CHECK-NEXT: buf.copy
// CHECK: %[[C2:.*]] = async.execute [%[[C0]], %[[C1]]] {executor = "cpu", executor_index = 0 : i64} {
// CHECK-NEXT: buf.kernel "tosa.floor"
func.func @war(%x: memref<8xf32>, %o: memref<8xf32>) {
  %t = buf.alloc : memref<8xf32>
  %a = buf.kernel "tosa.abs" ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {attrs = {}} -> memref<8xf32>
  %c = buf.copy ins(%a : memref<8xf32>) outs(%o : memref<8xf32>) -> memref<8xf32>
  %f = buf.kernel "tosa.floor" ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {attrs = {}} -> memref<8xf32>
  func.return
}
