// RUN: nnkiln opt %s -p fuse-expansion-depthwise | filecheck %s

// A 1x1 expansion (16 -> 256 channels at 64x64: 4 MiB, the smallest worth fusing) that only the depthwise
// convolution reads: one fused.conv2d_depthwise task whose outputs are the result and the expanded scratch.
// CHECK-LABEL: func.func @block
// CHECK: buf.kernel "fused.conv2d_depthwise" ins(%xb, %w1, %b1, %w2, %b2 : {{.*}}) outs(%yb, %e : memref<1x64x64x256xf32>, memref<1x64x64x256xf32>)
// CHECK-SAME: copy = false
// CHECK-SAME: pw_clamp = array<i64>
// CHECK-SAME: dw_clamp = array<f32: 0.000000e+00, 6.000000e+00>
// CHECK-NOT: tosa.depthwise_conv2d
func.func @block(%x: memref<1x64x64x16xf32> {nnkiln.name = "x", nnkiln.io = "input"}, %y: memref<1x64x64x256xf32> {nnkiln.name = "y", nnkiln.io = "output"}) {
  %xb = rt.buffer {section = "input", offset = 0 : i64} : memref<1x64x64x16xf32>
  %yb = rt.buffer {section = "output", offset = 0 : i64} : memref<1x64x64x256xf32>
  %e = rt.buffer {section = "arena", offset = 0 : i64} : memref<1x64x64x256xf32>
  %w1 = buf.const {values = dense<0.25> : tensor<256x1x1x16xf32>} : memref<256x1x1x16xf32>
  %b1 = buf.const {values = dense<0.5> : tensor<256xf32>} : memref<256xf32>
  %w2 = buf.const {values = dense<0.125> : tensor<3x3x256x1xf32>} : memref<3x3x256x1xf32>
  %b2 = buf.const {values = dense<-0.5> : tensor<256xf32>} : memref<256xf32>
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %0 = buf.kernel "tosa.conv2d" ins(%xb, %w1, %b1 : memref<1x64x64x16xf32>, memref<256x1x1x16xf32>, memref<256xf32>) outs(%e : memref<1x64x64x256xf32>) {attrs = {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64}} -> memref<1x64x64x256xf32>
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %1 = buf.kernel "tosa.depthwise_conv2d" ins(%e, %w2, %b2 : memref<1x64x64x256xf32>, memref<3x3x256x1xf32>, memref<256xf32>) outs(%yb : memref<1x64x64x256xf32>) {attrs = {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64}, post_ops = [{kernel = "tosa.clamp", attrs = {min_val = 0.000000e+00 : f32, max_val = 6.000000e+00 : f32}}]} -> memref<1x64x64x256xf32>
    rt.end
  }
  func.return
}

// Half the channels: 2 MiB expanded, below the threshold: the two convolutions stay apart.
// CHECK-LABEL: func.func @small
// CHECK-NOT: fused.conv2d_depthwise
// CHECK: func.return
func.func @small(%x: memref<1x64x64x16xf32> {nnkiln.name = "x", nnkiln.io = "input"}, %y: memref<1x64x64x128xf32> {nnkiln.name = "y", nnkiln.io = "output"}) {
  %xb = rt.buffer {section = "input", offset = 0 : i64} : memref<1x64x64x16xf32>
  %yb = rt.buffer {section = "output", offset = 0 : i64} : memref<1x64x64x128xf32>
  %e = rt.buffer {section = "arena", offset = 0 : i64} : memref<1x64x64x128xf32>
  %w1 = buf.const {values = dense<0.25> : tensor<128x1x1x16xf32>} : memref<128x1x1x16xf32>
  %b1 = buf.const {values = dense<0.5> : tensor<128xf32>} : memref<128xf32>
  %w2 = buf.const {values = dense<0.125> : tensor<3x3x128x1xf32>} : memref<3x3x128x1xf32>
  %b2 = buf.const {values = dense<-0.5> : tensor<128xf32>} : memref<128xf32>
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %0 = buf.kernel "tosa.conv2d" ins(%xb, %w1, %b1 : memref<1x64x64x16xf32>, memref<128x1x1x16xf32>, memref<128xf32>) outs(%e : memref<1x64x64x128xf32>) {attrs = {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64}} -> memref<1x64x64x128xf32>
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64>} {
    %1 = buf.kernel "tosa.depthwise_conv2d" ins(%e, %w2, %b2 : memref<1x64x64x128xf32>, memref<3x3x128x1xf32>, memref<128xf32>) outs(%yb : memref<1x64x64x128xf32>) {attrs = {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64}} -> memref<1x64x64x128xf32>
    rt.end
  }
  func.return
}
