// RUN: nnkiln opt %s -p fuse-row-programs | filecheck %s

// exp then negate over the same rows: one row program reading x and writing y; the intermediate (arena) is never
// stored, so the new task does not touch it. The two steps form one CHAIN (code 40) written straight to y.
// CHECK-LABEL: func.func @chain
// CHECK: rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
// CHECK-NEXT: buf.kernel "fused.row_program" ins(%{{.*}} : memref<4x8xf32>) outs(%{{.*}} : memref<4x8xf32>) {attrs = {code = array<i64: 40,
// CHECK-NOT: rt.task
// CHECK: func.return
func.func @chain(%x: memref<4x8xf32> {nnkiln.name = "x", nnkiln.io = "input"}, %y: memref<4x8xf32> {nnkiln.name = "y", nnkiln.io = "output"}) {
  %xb = rt.buffer {section = "input", offset = 0 : i64} : memref<4x8xf32>
  %yb = rt.buffer {section = "output", offset = 0 : i64} : memref<4x8xf32>
  %a = rt.buffer {section = "arena", offset = 0 : i64} : memref<4x8xf32>
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %0 = buf.kernel "tosa.exp" ins(%xb : memref<4x8xf32>) outs(%a : memref<4x8xf32>) {attrs = {}} -> memref<4x8xf32>
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %1 = buf.kernel "tosa.negate" ins(%a : memref<4x8xf32>) outs(%yb : memref<4x8xf32>) {attrs = {}} -> memref<4x8xf32>
    rt.end
  }
  func.return
}

// A value the group computed that a later task (a transpose: no row form) reads is stored: the row program
// writes the arena buffer too, and the transpose stays a task of its own.
// CHECK-LABEL: func.func @read_later
// CHECK: buf.kernel "fused.row_program" ins(%{{.*}} : memref<4x8xf32>) outs(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<4x8xf32>)
// CHECK: buf.kernel "tosa.transpose"
func.func @read_later(%x: memref<4x8xf32> {nnkiln.name = "x", nnkiln.io = "input"}, %y: memref<4x8xf32> {nnkiln.name = "y", nnkiln.io = "output"}, %z: memref<8x4xf32> {nnkiln.name = "z", nnkiln.io = "output"}) {
  %xb = rt.buffer {section = "input", offset = 0 : i64} : memref<4x8xf32>
  %yb = rt.buffer {section = "output", offset = 0 : i64} : memref<4x8xf32>
  %zb = rt.buffer {section = "output", offset = 0 : i64, index = 1 : i64} : memref<8x4xf32>
  %a = rt.buffer {section = "arena", offset = 0 : i64} : memref<4x8xf32>
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %0 = buf.kernel "tosa.exp" ins(%xb : memref<4x8xf32>) outs(%a : memref<4x8xf32>) {attrs = {}} -> memref<4x8xf32>
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %1 = buf.kernel "tosa.negate" ins(%a : memref<4x8xf32>) outs(%yb : memref<4x8xf32>) {attrs = {}} -> memref<4x8xf32>
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %2 = buf.kernel "tosa.transpose" ins(%a : memref<4x8xf32>) outs(%zb : memref<8x4xf32>) {attrs = {perms = array<i64: 1, 0>}} -> memref<8x4xf32>
    rt.end
  }
  func.return
}

// Integer tasks have no row form: nothing changes.
// CHECK-LABEL: func.func @integers
// CHECK-NOT: fused.row_program
// CHECK: buf.kernel "tosa.abs"
// CHECK: func.return
func.func @integers(%x: memref<4x8xi32> {nnkiln.name = "x", nnkiln.io = "input"}, %y: memref<4x8xi32> {nnkiln.name = "y", nnkiln.io = "output"}) {
  %xb = rt.buffer {section = "input", offset = 0 : i64} : memref<4x8xi32>
  %yb = rt.buffer {section = "output", offset = 0 : i64} : memref<4x8xi32>
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %0 = buf.kernel "tosa.abs" ins(%xb : memref<4x8xi32>) outs(%yb : memref<4x8xi32>) {attrs = {}} -> memref<4x8xi32>
    rt.end
  }
  func.return
}
