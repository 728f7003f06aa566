// RUN: nnkiln opt %s | filecheck %s
// RUN: nnkiln opt %s -o %t && nnkiln opt %t | filecheck %s
// RUN: nnkiln opt --generic %s -o %t.generic && nnkiln opt %t.generic | filecheck %s

// CAST, RESCALE (§2.13), CONST, IDENTITY (§2.14), CUSTOM (§2.15), COND_IF, WHILE_LOOP (§2.16):
// valid forms print in their custom syntax and survive print -> parse -> print (custom and generic).

// CHECK-LABEL: func.func @casts
// CHECK-NEXT: %0 = tosa.cast %b : (tensor<2x3xi1>) -> tensor<2x3xi8>
// CHECK-NEXT: %1 = tosa.cast %i : (tensor<2x3xi32>) -> tensor<2x3xi1>
// CHECK-NEXT: %2 = tosa.cast %i : (tensor<2x3xi32>) -> tensor<2x3xi16>
// CHECK-NEXT: %3 = tosa.cast %i : (tensor<2x3xi32>) -> tensor<2x3xbf16>
// CHECK-NEXT: %4 = tosa.cast %f : (tensor<2x3xf32>) -> tensor<2x3xi8>
// CHECK-NEXT: %5 = tosa.cast %h : (tensor<2x3xf16>) -> tensor<2x3xi32>
// CHECK-NEXT: %6 = tosa.cast %q : (tensor<2x3x!quant.uniform<i8:f32, 5.000000e-01:-3>>) -> tensor<2x3xf32>
func.func @casts(%b: tensor<2x3xi1>, %i: tensor<2x3xi32>, %f: tensor<2x3xf32>, %h: tensor<2x3xf16>,
                 %q: tensor<2x3x!quant.uniform<i8:f32, 0.5:-3>>) {
  %0 = tosa.cast %b : (tensor<2x3xi1>) -> tensor<2x3xi8>
  %1 = tosa.cast %i : (tensor<2x3xi32>) -> tensor<2x3xi1>
  %2 = tosa.cast %i : (tensor<2x3xi32>) -> tensor<2x3xi16>
  %3 = tosa.cast %i : (tensor<2x3xi32>) -> tensor<2x3xbf16>
  %4 = tosa.cast %f : (tensor<2x3xf32>) -> tensor<2x3xi8>
  %5 = tosa.cast %h : (tensor<2x3xf16>) -> tensor<2x3xi32>
  %6 = tosa.cast %q : (tensor<2x3x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<2x3xf32>
  func.return
}

// CHECK-LABEL: func.func @rescales
// CHECK-NEXT: %0 = tosa.rescale %q {input_zp = -3 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824>, shift = array<i64: 30>, scale32 = true, double_round = false, per_channel = false} : (tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-3>>) -> tensor<4xi32>
// CHECK-NEXT: %1 = tosa.rescale %a {input_zp = 0 : i64, output_zp = -128 : i64, multiplier = array<i64: 1073741824, 1518500250, 2147483647>, shift = array<i64: 30, 31, 62>, scale32 = true, double_round = true, per_channel = true} : (tensor<2x3xi32>) -> tensor<2x3xi8>
// CHECK-NEXT: %2 = tosa.rescale %u {input_zp = 32768 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xui16>) -> tensor<4xi16>
// CHECK-NEXT: %3 = tosa.rescale %s {input_zp = 0 : i64, output_zp = 32768 : i64, multiplier = array<i64: 32767>, shift = array<i64: 2>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xi16>) -> tensor<4xui16>
// CHECK-NEXT: %4 = tosa.rescale %w {input_zp = 0 : i64, output_zp = 255 : i64, multiplier = array<i64: 0>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<1x1x1x4xi8>) -> tensor<1x1x1x4xui8>
// CHECK-NEXT: %5 = tosa.rescale %acc {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xi48>) -> tensor<4xi16>
func.func @rescales(%q: tensor<4x!quant.uniform<i8:f32, 0.5:-3>>, %a: tensor<2x3xi32>, %u: tensor<4xui16>,
                    %s: tensor<4xi16>, %w: tensor<1x1x1x4xi8>, %acc: tensor<4xi48>) {
  %0 = tosa.rescale %q {input_zp = -3 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824>, shift = array<i64: 30>, scale32 = true, double_round = false, per_channel = false} : (tensor<4x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<4xi32>
  %1 = tosa.rescale %a {input_zp = 0 : i64, output_zp = -128 : i64, multiplier = array<i64: 1073741824, 1518500250, 2147483647>, shift = array<i64: 30, 31, 62>, scale32 = true, double_round = true, per_channel = true} : (tensor<2x3xi32>) -> tensor<2x3xi8>
  %2 = tosa.rescale %u {input_zp = 32768 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xui16>) -> tensor<4xi16>
  %3 = tosa.rescale %s {input_zp = 0 : i64, output_zp = 32768 : i64, multiplier = array<i64: 32767>, shift = array<i64: 2>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xi16>) -> tensor<4xui16>
  %4 = tosa.rescale %w {input_zp = 0 : i64, output_zp = 255 : i64, multiplier = array<i64: 0>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<1x1x1x4xi8>) -> tensor<1x1x1x4xui8>
  %5 = tosa.rescale %acc {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xi48>) -> tensor<4xi16>
  func.return
}

// CHECK-LABEL: func.func @data_nodes
// CHECK-NEXT: %0 = tosa.const {values = dense<[true, false]> : tensor<2xi1>} : tensor<2xi1>
// CHECK-NEXT: %1 = tosa.const {values = dense<{{\[}}[1, -2], [3, -4]]> : tensor<2x2xi8>} : tensor<2x2xi8>
// CHECK-NEXT: %2 = tosa.const {values = dense<[-7, 7]> : tensor<2xi4>} : tensor<2xi4>
// CHECK-NEXT: %3 = tosa.const {values = dense<140737488355327> : tensor<1xi48>} : tensor<1xi48>
// CHECK-NEXT: %4 = tosa.const {values = dense<[1.500000e+00, -2.000000e+00]> : tensor<2xbf16>} : tensor<2xbf16>
// CHECK-NEXT: %5 = tosa.const {values = dense<[5, -3, 0]> : tensor<3xi8>} : tensor<3x!quant.uniform<i8:f32, 5.000000e-01:-3>>
// CHECK-NEXT: %6 = tosa.const {values = dense<0.000000e+00> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %7 = tosa.identity %1 : (tensor<2x2xi8>) -> tensor<2x2xi8>
// CHECK-NEXT: %8 = tosa.identity %5 : (tensor<3x!quant.uniform<i8:f32, 5.000000e-01:-3>>) -> tensor<3x!quant.uniform<i8:f32, 5.000000e-01:-3>>
// CHECK-NEXT: %9 = tosa.identity %6 : (tensor<f32>) -> tensor<f32>
func.func @data_nodes() {
  %0 = tosa.const {values = dense<[true, false]> : tensor<2xi1>} : tensor<2xi1>
  %1 = "tosa.const"() <{values = dense<[[1, -2], [3, -4]]> : tensor<2x2xi8>}> : () -> tensor<2x2xi8>
  %2 = tosa.const {values = dense<[-7, 7]> : tensor<2xi4>} : tensor<2xi4>
  %3 = tosa.const {values = dense<140737488355327> : tensor<1xi48>} : tensor<1xi48>
  %4 = tosa.const {values = dense<[1.5, -2.0]> : tensor<2xbf16>} : tensor<2xbf16>
  %5 = tosa.const {values = dense<[5, -3, 0]> : tensor<3xi8>} : tensor<3x!quant.uniform<i8:f32, 0.5:-3>>
  %6 = tosa.const {values = dense<0.0> : tensor<f32>} : tensor<f32>
  %7 = tosa.identity %1 : (tensor<2x2xi8>) -> tensor<2x2xi8>
  %8 = tosa.identity %5 : (tensor<3x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<3x!quant.uniform<i8:f32, 0.5:-3>>
  %9 = tosa.identity %6 : (tensor<f32>) -> tensor<f32>
  func.return
}

// CHECK-LABEL: func.func @customs
// CHECK-NEXT: %0, %1 = tosa.custom %a, %b {identifier = "vendor.topk", config = "acme", implementation_attrs = "k=2"} : (tensor<8xf32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)
// CHECK-NEXT: %2 = tosa.custom {identifier = "rng", config = "", implementation_attrs = ""} : () -> tensor<4xf32>
// CHECK-NEXT: tosa.custom %a {identifier = "sink", config = "", implementation_attrs = ""} : (tensor<8xf32>) -> ()
func.func @customs(%a: tensor<8xf32>, %b: tensor<i32>) {
  %0:2 = tosa.custom %a, %b {identifier = "vendor.topk", config = "acme", implementation_attrs = "k=2"} : (tensor<8xf32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)
  %1 = tosa.custom {identifier = "rng", config = "", implementation_attrs = ""} : () -> tensor<4xf32>
  tosa.custom %a {identifier = "sink", config = "", implementation_attrs = ""} : (tensor<8xf32>) -> ()
  func.return
}

// The condition is the LAST operand (spec argument order: input_list, condition).
// CHECK-LABEL: func.func @cond_if
// CHECK-NEXT: %0, %1 = tosa.cond_if %x, %y, %c : (tensor<2xi32>, tensor<2xi32>, tensor<i1>) -> (tensor<2xi32>, tensor<2xi32>) {
// CHECK-NEXT: ^bb{{[0-9]+}}(%a: tensor<2xi32>, %b: tensor<2xi32>):
// CHECK-NEXT: %s = tosa.add %a, %b : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
// CHECK-NEXT: tosa.yield %s, %a : tensor<2xi32>, tensor<2xi32>
// CHECK-NEXT: } else {
// CHECK-NEXT: ^bb{{[0-9]+}}(%a_1: tensor<2xi32>, %b_1: tensor<2xi32>):
// CHECK-NEXT: tosa.yield %b_1, %a_1 : tensor<2xi32>, tensor<2xi32>
// CHECK-NEXT: }
// CHECK-NEXT: %2 = tosa.cond_if %c : (tensor<i1>) -> tensor<3xf32> {
// CHECK-NEXT: %k = tosa.const {values = dense<1.000000e+00> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: tosa.yield %k : tensor<3xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %k_1 = tosa.const {values = dense<2.000000e+00> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: tosa.yield %k_1 : tensor<3xf32>
// CHECK-NEXT: }
// CHECK-NEXT: tosa.cond_if %c : (tensor<i1>) -> () {
// CHECK-NEXT: tosa.yield
// CHECK-NEXT: } else {
// CHECK-NEXT: tosa.yield
// CHECK-NEXT: }
func.func @cond_if(%x: tensor<2xi32>, %y: tensor<2xi32>, %c: tensor<i1>) {
  %0:2 = tosa.cond_if %x, %y, %c : (tensor<2xi32>, tensor<2xi32>, tensor<i1>) -> (tensor<2xi32>, tensor<2xi32>) {
  ^bb0(%a: tensor<2xi32>, %b: tensor<2xi32>):
    %s = tosa.add %a, %b : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    tosa.yield %s, %a : tensor<2xi32>, tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>, %b: tensor<2xi32>):
    tosa.yield %b, %a : tensor<2xi32>, tensor<2xi32>
  }
  %1 = tosa.cond_if %c : (tensor<i1>) -> tensor<3xf32> {
    %k = tosa.const {values = dense<1.0> : tensor<3xf32>} : tensor<3xf32>
    tosa.yield %k : tensor<3xf32>
  } else {
    %k = tosa.const {values = dense<2.0> : tensor<3xf32>} : tensor<3xf32>
    tosa.yield %k : tensor<3xf32>
  }
  tosa.cond_if %c : (tensor<i1>) -> () {
    tosa.yield
  } else {
    tosa.yield
  }
  func.return
}

// CHECK-LABEL: func.func @while_loop
// CHECK-NEXT: %0, %1 = tosa.while_loop %n, %acc : (tensor<i32>, tensor<2x2xf32>) -> (tensor<i32>, tensor<2x2xf32>) {
// CHECK-NEXT: ^bb{{[0-9]+}}(%i: tensor<i32>, %v: tensor<2x2xf32>):
// CHECK-NEXT: %limit = tosa.const {values = dense<10> : tensor<i32>} : tensor<i32>
// CHECK-NEXT: %p = tosa.greater %limit, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK-NEXT: tosa.yield %p : tensor<i1>
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb{{[0-9]+}}(%i_1: tensor<i32>, %v_1: tensor<2x2xf32>):
// CHECK-NEXT: %one = tosa.const {values = dense<1> : tensor<i32>} : tensor<i32>
// CHECK-NEXT: %next = tosa.add %i_1, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
// CHECK-NEXT: %w = tosa.add %v_1, %v_1 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: tosa.yield %next, %w : tensor<i32>, tensor<2x2xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %1 : tensor<2x2xf32>
func.func @while_loop(%n: tensor<i32>, %acc: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0:2 = tosa.while_loop %n, %acc : (tensor<i32>, tensor<2x2xf32>) -> (tensor<i32>, tensor<2x2xf32>) {
  ^bb0(%i: tensor<i32>, %v: tensor<2x2xf32>):
    %limit = tosa.const {values = dense<10> : tensor<i32>} : tensor<i32>
    %p = tosa.greater %limit, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
    tosa.yield %p : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>, %v: tensor<2x2xf32>):
    %one = tosa.const {values = dense<1> : tensor<i32>} : tensor<i32>
    %next = tosa.add %i, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %w = tosa.add %v, %v : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    tosa.yield %next, %w : tensor<i32>, tensor<2x2xf32>
  }
  func.return %0#1 : tensor<2x2xf32>
}

// The generic form parses too.
// CHECK-LABEL: func.func @generic
// CHECK-NEXT: %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i32> {
// CHECK-NEXT: ^bb{{[0-9]+}}(%i: tensor<i32>):
// CHECK-NEXT: %p = tosa.const {values = dense<false> : tensor<i1>} : tensor<i1>
// CHECK-NEXT: tosa.yield %p : tensor<i1>
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb{{[0-9]+}}(%i_1: tensor<i32>):
// CHECK-NEXT: tosa.yield %i_1 : tensor<i32>
// CHECK-NEXT: }
func.func @generic(%n: tensor<i32>) -> tensor<i32> {
  %0 = "tosa.while_loop"(%n) ({
  ^bb0(%i: tensor<i32>):
    %p = "tosa.const"() <{values = dense<false> : tensor<i1>}> : () -> tensor<i1>
    "tosa.yield"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>):
    "tosa.yield"(%i) : (tensor<i32>) -> ()
  }) : (tensor<i32>) -> tensor<i32>
  func.return %0 : tensor<i32>
}
