// RUN: nnkiln opt %s -p fold-transposes-into-operands | filecheck %s

// A transpose whose result only a MATMUL reads: the MATMUL reads the transpose's input through the permutation.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: tosa.transpose
// CHECK: buf.kernel "tosa.matmul" ins(%xb, %{{.*}} : memref<2x4x6xf32>, memref<2x4x5xf32>) outs(%yb : memref<2x6x5xf32>)
// CHECK-SAME: operand_perms = [array<i64: 0, 2, 1>, array<i64>]
func.func @matmul(%x: memref<2x4x6xf32> {nnkiln.name = "x", nnkiln.io = "input"}, %y: memref<2x6x5xf32> {nnkiln.name = "y", nnkiln.io = "output"}) {
  %xb = rt.buffer {section = "input", offset = 0 : i64} : memref<2x4x6xf32>
  %yb = rt.buffer {section = "output", offset = 0 : i64} : memref<2x6x5xf32>
  %t = rt.buffer {section = "arena", offset = 0 : i64} : memref<2x6x4xf32>
  %w = buf.const {values = dense<0.5> : tensor<2x4x5xf32>} : memref<2x4x5xf32>
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %0 = buf.kernel "tosa.transpose" ins(%xb : memref<2x4x6xf32>) outs(%t : memref<2x6x4xf32>) {attrs = {perms = array<i64: 0, 2, 1>}} -> memref<2x6x4xf32>
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %1 = buf.kernel "tosa.matmul" ins(%t, %w : memref<2x6x4xf32>, memref<2x4x5xf32>) outs(%yb : memref<2x6x5xf32>) {attrs = {A_zp = 0 : i64, B_zp = 0 : i64}} -> memref<2x6x5xf32>
    rt.end
  }
  func.return
}

// The transposed tensor is an output too (read after the MATMUL): the transpose must run.
// CHECK-LABEL: func.func @read_again
// CHECK: buf.kernel "tosa.transpose"
// CHECK-NOT: operand_perms
// CHECK: func.return
func.func @read_again(%x: memref<2x4x6xf32> {nnkiln.name = "x", nnkiln.io = "input"}, %y: memref<2x6x5xf32> {nnkiln.name = "y", nnkiln.io = "output"}, %z: memref<2x6x4xf32> {nnkiln.name = "z", nnkiln.io = "output"}) {
  %xb = rt.buffer {section = "input", offset = 0 : i64} : memref<2x4x6xf32>
  %yb = rt.buffer {section = "output", offset = 0 : i64} : memref<2x6x5xf32>
  %zb = rt.buffer {section = "output", offset = 0 : i64, index = 1 : i64} : memref<2x6x4xf32>
  %t = rt.buffer {section = "arena", offset = 0 : i64} : memref<2x6x4xf32>
  %w = buf.const {values = dense<0.5> : tensor<2x4x5xf32>} : memref<2x4x5xf32>
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %0 = buf.kernel "tosa.transpose" ins(%xb : memref<2x4x6xf32>) outs(%t : memref<2x6x4xf32>) {attrs = {perms = array<i64: 0, 2, 1>}} -> memref<2x6x4xf32>
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %1 = buf.kernel "tosa.matmul" ins(%t, %w : memref<2x6x4xf32>, memref<2x4x5xf32>) outs(%yb : memref<2x6x5xf32>) {attrs = {A_zp = 0 : i64, B_zp = 0 : i64}} -> memref<2x6x5xf32>
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %2 = buf.copy ins(%t : memref<2x6x4xf32>) outs(%zb : memref<2x6x4xf32>) -> memref<2x6x4xf32>
    rt.end
  }
  func.return
}

// NCHW input -> NHWC transpose -> padded convolution: the convolution reads the NCHW input through the
// permutation and keeps the transposed buffer as a second output (its scratch).
// CHECK-LABEL: func.func @stem
// CHECK-NOT: tosa.transpose
// CHECK: buf.kernel "tosa.conv2d" ins(%xb, %{{.*}}, %{{.*}} : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>, memref<4xf32>) outs(%yb, %t : memref<1x8x8x4xf32>, memref<1x8x8x3xf32>)
// CHECK-SAME: operand_perms = [array<i64: 0, 2, 3, 1>, array<i64>, array<i64>]
func.func @stem(%x: memref<1x3x8x8xf32> {nnkiln.name = "x", nnkiln.io = "input"}, %y: memref<1x8x8x4xf32> {nnkiln.name = "y", nnkiln.io = "output"}) {
  %xb = rt.buffer {section = "input", offset = 0 : i64} : memref<1x3x8x8xf32>
  %yb = rt.buffer {section = "output", offset = 0 : i64} : memref<1x8x8x4xf32>
  %t = rt.buffer {section = "arena", offset = 0 : i64} : memref<1x8x8x3xf32>
  %w = buf.const {values = dense<0.25> : tensor<4x3x3x3xf32>} : memref<4x3x3x3xf32>
  %b = buf.const {values = dense<0.5> : tensor<4xf32>} : memref<4xf32>
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %0 = buf.kernel "tosa.transpose" ins(%xb : memref<1x3x8x8xf32>) outs(%t : memref<1x8x8x3xf32>) {attrs = {perms = array<i64: 0, 2, 3, 1>}} -> memref<1x8x8x3xf32>
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %1 = buf.kernel "tosa.conv2d" ins(%t, %w, %b : memref<1x8x8x3xf32>, memref<4x3x3x3xf32>, memref<4xf32>) outs(%yb : memref<1x8x8x4xf32>) {attrs = {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64}} -> memref<1x8x8x4xf32>
    rt.end
  }
  func.return
}
