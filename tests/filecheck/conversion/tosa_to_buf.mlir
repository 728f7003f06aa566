// RUN: nnkiln opt %s -p tosa-to-buf | filecheck %s
// RUN: nnkiln opt %s -p 'tosa-to-buf{views=false}' | filecheck %s --check-prefix=PLAIN

// Inputs first, then one output buffer per result (nnkiln.name / nnkiln.io); no results.
// Each op: buf.alloc + buf.kernel with the op's properties in attrs; the kernel producing an output
// writes the output argument directly (also through a reshape view of it); tosa.identity is an alias;
// an output that is an input gets an explicit copy.
// CHECK-LABEL: func.func @main(%x: memref<1x4x4x2xf32> {nnkiln.name = "x", nnkiln.io = "input"}, %out0: memref<1x4x4x2xf32> {nnkiln.name = "output0", nnkiln.io = "output"}, %out1: memref<32xf32> {nnkiln.name = "output1", nnkiln.io = "output"}, %out2: memref<1x4x4x2xf32> {nnkiln.name = "output2", nnkiln.io = "output"}) {
// CHECK-NEXT: %[[W:.*]] = buf.const {values = dense<1.000000e+00> : tensor<1x1x1x2xf32>} : memref<1x1x1x2xf32>
// CHECK-NEXT: %[[T:.*]] = buf.alloc : memref<1x4x4x2xf32>
// CHECK-NEXT: %[[A:.*]] = buf.kernel "tosa.add" ins(%x, %[[W]] : memref<1x4x4x2xf32>, memref<1x1x1x2xf32>) outs(%[[T]] : memref<1x4x4x2xf32>) {attrs = {}} -> memref<1x4x4x2xf32>
// CHECK-NEXT: %[[B:.*]] = buf.kernel "tosa.clamp" ins(%[[A]] : memref<1x4x4x2xf32>) outs(%out0 : memref<1x4x4x2xf32>) {attrs = {min_val = 0.000000e+00 : f32, max_val = 6.000000e+00 : f32}} -> memref<1x4x4x2xf32>
// CHECK-NEXT: %[[V:.*]] = buf.reshape %out1 : memref<32xf32> -> memref<1x4x4x2xf32>
// CHECK-NEXT: %[[C:.*]] = buf.kernel "tosa.abs" ins(%[[B]] : memref<1x4x4x2xf32>) outs(%[[V]] : memref<1x4x4x2xf32>) {attrs = {}} -> memref<1x4x4x2xf32>
// CHECK-NEXT: %{{.*}} = buf.reshape %[[C]] : memref<1x4x4x2xf32> -> memref<32xf32>
// CHECK-NEXT: %{{.*}} = buf.copy ins(%x : memref<1x4x4x2xf32>) outs(%out2 : memref<1x4x4x2xf32>) -> memref<1x4x4x2xf32>
// CHECK-NEXT: func.return
// CHECK-NEXT: }
func.func @main(%x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<32xf32>, tensor<1x4x4x2xf32>) {
  %w = tosa.const {values = dense<1.0> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
  %a = tosa.add %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x4x4x2xf32>
  %b = tosa.clamp %a {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %c = tosa.abs %b : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %r = tosa.reshape %c {new_shape = array<i64: 32>} : (tensor<1x4x4x2xf32>) -> tensor<32xf32>
  %i = tosa.identity %x : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  func.return %b, %r, %i : tensor<1x4x4x2xf32>, tensor<32xf32>, tensor<1x4x4x2xf32>
}

// A constant output is copied into its buffer; a value returned twice is written once and copied once;
// defaults of absent optional properties are spelled out in attrs.
// CHECK-LABEL: func.func @twice
// CHECK: %[[K:.*]] = buf.const {values = dense<[1, 2]> : tensor<2xi32>} : memref<2xi32>
// CHECK-NEXT: %[[N:.*]] = buf.kernel "tosa.negate" ins(%a : memref<2xi32>) outs(%out0 : memref<2xi32>) {attrs = {input1_zp = 0 : i64, output_zp = 0 : i64}} -> memref<2xi32>
// CHECK-NEXT: buf.copy ins(%[[N]] : memref<2xi32>) outs(%out1 : memref<2xi32>)
// CHECK-NEXT: buf.copy ins(%[[K]] : memref<2xi32>) outs(%out2 : memref<2xi32>)
func.func @twice(%a: tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) {
  %k = tosa.const {values = dense<[1, 2]> : tensor<2xi32>} : tensor<2xi32>
  %n = tosa.negate %a : (tensor<2xi32>) -> tensor<2xi32>
  func.return %n, %n, %k : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>
}

// Control flow: each region becomes a program of its own (its compiled blob is an i8 constant operand);
// the op is one kernel: programs, condition, input list; its result is written into the output directly.
// CHECK-LABEL: func.func @control_flow(%x: memref<2xi32> {nnkiln.name = "x", nnkiln.io = "input"}, %c: memref<i1> {nnkiln.name = "c", nnkiln.io = "input"}, %out0: memref<2xi32> {nnkiln.name = "output0", nnkiln.io = "output"}) {
// CHECK-NEXT: %[[THEN:.*]] = buf.const {values = dense_resource<{{.*}}> : tensor<[[N:[0-9]+]]xi8>} : memref<[[N]]xi8>
// CHECK-NEXT: %[[ELSE:.*]] = buf.const {values = dense_resource<{{.*}}> : tensor<[[M:[0-9]+]]xi8>} : memref<[[M]]xi8>
// CHECK-NEXT: %{{.*}} = buf.kernel "tosa.cond_if" ins(%[[THEN]], %[[ELSE]], %c, %x : memref<[[N]]xi8>, memref<[[M]]xi8>, memref<i1>, memref<2xi32>) outs(%out0 : memref<2xi32>) {attrs = {num_inputs = 1 : i64, region_inputs = array<i64: 1, 1>}} -> memref<2xi32>
// CHECK-NEXT: func.return
func.func @control_flow(%x: tensor<2xi32>, %c: tensor<i1>) -> tensor<2xi32> {
  %r = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i1>) -> tensor<2xi32> {
  ^bb0(%a : tensor<2xi32>):
    %b = tosa.add %a, %a : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    tosa.yield %b : tensor<2xi32>
  } else {
  ^bb0(%a : tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  }
  func.return %r : tensor<2xi32>
}

// Views instead of copies: a SLICE of one contiguous range becomes a buf.subview (the one across the
// rows is not contiguous and stays a kernel); a CONCAT along axis 0 allocates its result first, the
// kernel producing a piece used only there writes into its subview of it, the input x (not a kernel
// result) is copied into its slot, and buf.concat_view orders those writes before the result's use.
// CHECK-LABEL: func.func @views
// CHECK-NEXT: %[[S0:.*]] = buf.subview %x {offsets = array<i64: 1, 0, 0>, sizes = array<i64: 1, 2, 3>} : memref<2x2x3xf32> -> memref<1x2x3xf32>
// CHECK-NEXT: %{{.*}} = buf.kernel "tosa.slice" ins(%x : memref<2x2x3xf32>) outs(%out1 : memref<2x2x1xf32>)
// CHECK-NEXT: %[[CAT:.*]] = buf.alloc : memref<3x2x3xf32>
// CHECK-NEXT: %[[SLOT0:.*]] = buf.subview %[[CAT]] {offsets = array<i64: 0, 0, 0>, sizes = array<i64: 1, 2, 3>} : memref<3x2x3xf32> -> memref<1x2x3xf32>
// CHECK-NEXT: %[[E:.*]] = buf.kernel "tosa.exp" ins(%[[S0]] : memref<1x2x3xf32>) outs(%[[SLOT0]] : memref<1x2x3xf32>)
// CHECK-NEXT: %[[SLOT1:.*]] = buf.subview %[[CAT]] {offsets = array<i64: 1, 0, 0>, sizes = array<i64: 2, 2, 3>} : memref<3x2x3xf32> -> memref<2x2x3xf32>
// CHECK-NEXT: %[[CP:.*]] = buf.copy ins(%x : memref<2x2x3xf32>) outs(%[[SLOT1]] : memref<2x2x3xf32>)
// CHECK-NEXT: %[[V:.*]] = buf.concat_view ins(%[[E]], %[[CP]] : memref<1x2x3xf32>, memref<2x2x3xf32>) outs(%[[CAT]] : memref<3x2x3xf32>)
// CHECK-NEXT: %{{.*}} = buf.kernel "tosa.abs" ins(%[[V]] : memref<3x2x3xf32>) outs(%out0 : memref<3x2x3xf32>)
// With views=false (the reference pipeline's lowering) the same SLICEs and CONCAT are kernels writing buffers
// of their own.
// PLAIN-LABEL: func.func @views
// PLAIN-NEXT: %[[A:.*]] = buf.alloc : memref<1x2x3xf32>
// PLAIN-NEXT: %[[S0:.*]] = buf.kernel "tosa.slice" ins(%x : memref<2x2x3xf32>) outs(%[[A]] : memref<1x2x3xf32>)
// PLAIN-NEXT: %{{.*}} = buf.kernel "tosa.slice" ins(%x : memref<2x2x3xf32>) outs(%out1 : memref<2x2x1xf32>)
// PLAIN-NEXT: %[[B:.*]] = buf.alloc : memref<1x2x3xf32>
// PLAIN-NEXT: %[[E:.*]] = buf.kernel "tosa.exp" ins(%[[S0]] : memref<1x2x3xf32>) outs(%[[B]] : memref<1x2x3xf32>)
// PLAIN-NEXT: %[[CAT:.*]] = buf.alloc : memref<3x2x3xf32>
// PLAIN-NEXT: %[[C:.*]] = buf.kernel "tosa.concat" ins(%[[E]], %x : memref<1x2x3xf32>, memref<2x2x3xf32>) outs(%[[CAT]] : memref<3x2x3xf32>)
// PLAIN-NEXT: %{{.*}} = buf.kernel "tosa.abs" ins(%[[C]] : memref<3x2x3xf32>) outs(%out0 : memref<3x2x3xf32>)
// PLAIN-NEXT: func.return
func.func @views(%x: tensor<2x2x3xf32>) -> (tensor<3x2x3xf32>, tensor<2x2x1xf32>) {
  %s0 = tosa.slice %x {start = array<i64: 1, 0, 0>, size = array<i64: 1, 2, 3>} : (tensor<2x2x3xf32>) -> tensor<1x2x3xf32>
  %s1 = tosa.slice %x {start = array<i64: 0, 0, 1>, size = array<i64: 2, 2, 1>} : (tensor<2x2x3xf32>) -> tensor<2x2x1xf32>
  %e = tosa.exp %s0 : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %c = tosa.concat %e, %x {axis = 0 : i64} : (tensor<1x2x3xf32>, tensor<2x2x3xf32>) -> tensor<3x2x3xf32>
  %a = tosa.abs %c : (tensor<3x2x3xf32>) -> tensor<3x2x3xf32>
  func.return %a, %s1 : tensor<3x2x3xf32>, tensor<2x2x1xf32>
}

// A CONCAT along an inner axis (pieces interleave in memory) stays a kernel.
// CHECK-LABEL: func.func @inner_concat
// CHECK-NOT: buf.subview
// CHECK: buf.kernel "tosa.concat"
func.func @inner_concat(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %e = tosa.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = tosa.concat %e, %x {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  func.return %c : tensor<2x6xf32>
}
