// RUN: nnkiln opt %s -p optimize-async-deps | filecheck %s

// t2 depends on t0 and t1, t1 on t0: t2's dependency on t0 is implied (t0 -> t1 -> t2) and removed;
// await_all keeps only the token that is not an ancestor of another one.
// CHECK-LABEL: func.func @reduce
// CHECK: %[[T0:.*]] = async.execute [] {executor = "cpu", executor_index = 0 : i64}
// CHECK: %[[T1:.*]] = async.execute [%[[T0]]] {executor = "cpu", executor_index = 1 : i64}
// CHECK: %[[T2:.*]] = async.execute [%[[T1]]] {executor = "cpu", executor_index = 0 : i64}
// CHECK: %[[T3:.*]] = async.execute [%[[T0]]] {executor = "cpu", executor_index = 1 : i64}
// CHECK: async.await_all %[[T2]], %[[T3]]
func.func @reduce(%x: memref<8xf32>, %o: memref<8xf32>, %p: memref<8xf32>) {
  %a = buf.alloc : memref<8xf32>
  %b = buf.alloc : memref<8xf32>
  %t0 = async.execute [] {executor = "cpu", executor_index = 0 : i64} {
    %0 = buf.kernel "tosa.abs" ins(%x : memref<8xf32>) outs(%a : memref<8xf32>) {attrs = {}} -> memref<8xf32>
    async.yield
  }
  %t1 = async.execute [%t0] {executor = "cpu", executor_index = 1 : i64} {
    %1 = buf.kernel "tosa.abs" ins(%a : memref<8xf32>) outs(%b : memref<8xf32>) {attrs = {}} -> memref<8xf32>
    async.yield
  }
  %t2 = async.execute [%t1, %t0, %t0] {executor = "cpu", executor_index = 0 : i64} {
    %2 = buf.kernel "tosa.add" ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%o : memref<8xf32>) {attrs = {}} -> memref<8xf32>
    async.yield
  }
  %t3 = async.execute [%t0] {executor = "cpu", executor_index = 1 : i64} {
    %3 = buf.copy ins(%a : memref<8xf32>) outs(%p : memref<8xf32>) -> memref<8xf32>
    async.yield
  }
  async.await_all %t0, %t1, %t2, %t3
  func.return
}
