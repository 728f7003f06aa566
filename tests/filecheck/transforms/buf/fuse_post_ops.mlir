// RUN: nnkiln opt %s -p fuse-post-ops | filecheck %s

// conv2d -> add(const, conv) -> clamp: one kernel, two post-ops in order; the add's constant is
// appended to ins and named by `operand`; the temporaries disappear.
// CHECK-LABEL: func.func @conv_add_clamp
// CHECK-NOT: buf.alloc
// CHECK: buf.kernel "tosa.conv2d" ins(%x, %w, %b, %k : memref<1x4x4x2xf32>, memref<3x1x1x2xf32>, memref<3xf32>, memref<1x1x1x3xf32>) outs(%o : memref<1x4x4x3xf32>) {attrs = {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64}, post_ops = [{kernel = "tosa.add", attrs = {}, operand = 3 : i64}, {kernel = "tosa.clamp", attrs = {min_val = 0.000000e+00 : f32, max_val = 6.000000e+00 : f32}}]} -> memref<1x4x4x3xf32>
// CHECK-NOT: buf.kernel
// CHECK: func.return
func.func @conv_add_clamp(%x: memref<1x4x4x2xf32>, %o: memref<1x4x4x3xf32>) {
  %w = buf.const {values = dense<5.0e-01> : tensor<3x1x1x2xf32>} : memref<3x1x1x2xf32>
  %b = buf.const {values = dense<0.0> : tensor<3xf32>} : memref<3xf32>
  %k = buf.const {values = dense<1.0> : tensor<1x1x1x3xf32>} : memref<1x1x1x3xf32>
  %t0 = buf.alloc : memref<1x4x4x3xf32>
  %c = buf.kernel "tosa.conv2d" ins(%x, %w, %b : memref<1x4x4x2xf32>, memref<3x1x1x2xf32>, memref<3xf32>) outs(%t0 : memref<1x4x4x3xf32>) {attrs = {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64}} -> memref<1x4x4x3xf32>
  %t1 = buf.alloc : memref<1x4x4x3xf32>
  %a = buf.kernel "tosa.add" ins(%k, %c : memref<1x1x1x3xf32>, memref<1x4x4x3xf32>) outs(%t1 : memref<1x4x4x3xf32>) {attrs = {}} -> memref<1x4x4x3xf32>
  %r = buf.kernel "tosa.clamp" ins(%a : memref<1x4x4x3xf32>) outs(%o : memref<1x4x4x3xf32>) {attrs = {min_val = 0.0 : f32, max_val = 6.0 : f32}} -> memref<1x4x4x3xf32>
  func.return
}

// Not fused: the matmul result has two users; an abs is not a post-op; an integer producer.
// CHECK-LABEL: func.func @not_fused
// CHECK: buf.alloc
// CHECK: buf.kernel "tosa.matmul"
// CHECK-NOT: post_ops
// CHECK: buf.kernel "tosa.sigmoid"
// CHECK: buf.kernel "tosa.tanh"
// CHECK: buf.alloc
// CHECK: buf.kernel "tosa.avg_pool2d"
// CHECK-NOT: post_ops
// CHECK: buf.kernel "tosa.clamp"
func.func @not_fused(%a: memref<1x2x2xf32>, %o1: memref<1x2x2xf32>, %o2: memref<1x2x2xf32>, %q: memref<1x2x2x1xi8>, %o3: memref<1x2x2x1xi8>) {
  %t = buf.alloc : memref<1x2x2xf32>
  %m = buf.kernel "tosa.matmul" ins(%a, %a : memref<1x2x2xf32>, memref<1x2x2xf32>) outs(%t : memref<1x2x2xf32>) {attrs = {a_zp = 0 : i64, b_zp = 0 : i64}} -> memref<1x2x2xf32>
  %s = buf.kernel "tosa.sigmoid" ins(%m : memref<1x2x2xf32>) outs(%o1 : memref<1x2x2xf32>) {attrs = {}} -> memref<1x2x2xf32>
  %h = buf.kernel "tosa.tanh" ins(%m : memref<1x2x2xf32>) outs(%o2 : memref<1x2x2xf32>) {attrs = {}} -> memref<1x2x2xf32>
  %t2 = buf.alloc : memref<1x2x2x1xi8>
  %p = buf.kernel "tosa.avg_pool2d" ins(%q : memref<1x2x2x1xi8>) outs(%t2 : memref<1x2x2x1xi8>) {attrs = {kernel = array<i64: 1, 1>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64}} -> memref<1x2x2x1xi8>
  %c = buf.kernel "tosa.clamp" ins(%p : memref<1x2x2x1xi8>) outs(%o3 : memref<1x2x2x1xi8>) {attrs = {min_val = 0 : i64, max_val = 6 : i64}} -> memref<1x2x2x1xi8>
  func.return
}

// A same-shape add operand defined AFTER the producer: fusing would read it too early, so no fusion.
// CHECK-LABEL: func.func @late_operand
// CHECK: buf.kernel "tosa.fully_connected"
// CHECK-NOT: post_ops
// CHECK: buf.kernel "tosa.floor"
// CHECK: buf.kernel "tosa.add"
func.func @late_operand(%x: memref<1x2xf32>, %w: memref<2x2xf32>, %b: memref<2xf32>, %o: memref<1x2xf32>) {
  %t = buf.alloc : memref<1x2xf32>
  %f = buf.kernel "tosa.fully_connected" ins(%x, %w, %b : memref<1x2xf32>, memref<2x2xf32>, memref<2xf32>) outs(%t : memref<1x2xf32>) {attrs = {input_zp = 0 : i64, weight_zp = 0 : i64}} -> memref<1x2xf32>
  %t2 = buf.alloc : memref<1x2xf32>
  %g = buf.kernel "tosa.floor" ins(%x : memref<1x2xf32>) outs(%t2 : memref<1x2xf32>) {attrs = {}} -> memref<1x2xf32>
  %s = buf.kernel "tosa.add" ins(%f, %g : memref<1x2xf32>, memref<1x2xf32>) outs(%o : memref<1x2xf32>) {attrs = {}} -> memref<1x2xf32>
  func.return
}

// Elementwise chains fuse into their first op; a constant operand defined after the producer is
// moved before it; a row-broadcast operand ([2x1]) is accepted; sub fuses only with the chain value
// on the left; x*x (the value on both sides) ends the chain.
// CHECK-LABEL: func.func @elementwise_chain
// CHECK: buf.const
// CHECK: buf.kernel "tosa.mul" ins(%x, %r, %c, %x : {{.*}}) outs(%o : memref<2x3xf32>)
// CHECK-SAME: post_ops = [{kernel = "tosa.add", attrs = {}, operand = 2 : i64}, {kernel = "tosa.sub", attrs = {}, operand = 3 : i64}]
// CHECK: buf.kernel "tosa.sub" ins(%x, %{{.*}} :
// CHECK: buf.kernel "tosa.mul" ins(%{{.*}}, %{{.*}} :
// CHECK-NOT: post_ops
func.func @elementwise_chain(%x: memref<2x3xf32>, %r: memref<2x1xf32>, %o: memref<2x3xf32>, %o2: memref<2x3xf32>, %o3: memref<2x3xf32>) {
  %t = buf.alloc : memref<2x3xf32>
  %m = buf.kernel "tosa.mul" ins(%x, %r : memref<2x3xf32>, memref<2x1xf32>) outs(%t : memref<2x3xf32>) {attrs = {shift = 0 : i64}} -> memref<2x3xf32>
  %c = buf.const {values = dense<1.0> : tensor<1x3xf32>} : memref<1x3xf32>
  %t2 = buf.alloc : memref<2x3xf32>
  %a = buf.kernel "tosa.add" ins(%m, %c : memref<2x3xf32>, memref<1x3xf32>) outs(%t2 : memref<2x3xf32>) {attrs = {}} -> memref<2x3xf32>
  %s = buf.kernel "tosa.sub" ins(%a, %x : memref<2x3xf32>, memref<2x3xf32>) outs(%o : memref<2x3xf32>) {attrs = {}} -> memref<2x3xf32>
  %t3 = buf.alloc : memref<2x3xf32>
  %n = buf.kernel "tosa.negate" ins(%x : memref<2x3xf32>) outs(%t3 : memref<2x3xf32>) {attrs = {input1_zp = 0 : i64, output_zp = 0 : i64}} -> memref<2x3xf32>
  %s2 = buf.kernel "tosa.sub" ins(%x, %n : memref<2x3xf32>, memref<2x3xf32>) outs(%o2 : memref<2x3xf32>) {attrs = {}} -> memref<2x3xf32>
  %t4 = buf.alloc : memref<2x3xf32>
  %e = buf.kernel "tosa.exp" ins(%x : memref<2x3xf32>) outs(%t4 : memref<2x3xf32>) {attrs = {}} -> memref<2x3xf32>
  %sq = buf.kernel "tosa.mul" ins(%e, %e : memref<2x3xf32>, memref<2x3xf32>) outs(%o3 : memref<2x3xf32>) {attrs = {shift = 0 : i64}} -> memref<2x3xf32>
  func.return
}
