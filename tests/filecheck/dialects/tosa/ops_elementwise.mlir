// RUN: nnkiln opt %s | filecheck %s
// RUN: nnkiln opt %s | nnkiln opt - | filecheck %s
// RUN: nnkiln opt --generic %s | nnkiln opt - | filecheck %s

// Round trip of every TOSA 0.30 §2.5-§2.8 elementwise op, in several type modes.

// §2.5 Elementwise binary

// CHECK-LABEL: func.func @binary_arith
// CHECK-NEXT: %0 = tosa.add %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: %1 = tosa.add %x, %y : (tensor<4x1xf32>, tensor<1x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT: %2 = tosa.add %h, %h : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
// CHECK-NEXT: %3 = tosa.add %bf, %bf : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xbf16>
// CHECK-NEXT: %4 = tosa.sub %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: %5 = tosa.sub %x, %y : (tensor<4x1xf32>, tensor<1x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT: %6 = tosa.maximum %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: %7 = tosa.maximum %h, %h : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
// CHECK-NEXT: %8 = tosa.minimum %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: %9 = tosa.minimum %bf, %bf : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xbf16>
// CHECK-NEXT: %10 = tosa.intdiv %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: %11 = tosa.pow %x, %y : (tensor<4x1xf32>, tensor<1x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT: %12 = tosa.pow %h, %h : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
func.func @binary_arith(%a: tensor<2x3xi32>, %b: tensor<1x3xi32>, %x: tensor<4x1xf32>, %y: tensor<1x5xf32>,
                        %h: tensor<3xf16>, %bf: tensor<2xbf16>) {
  %0 = tosa.add %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  %1 = tosa.add %x, %y : (tensor<4x1xf32>, tensor<1x5xf32>) -> tensor<4x5xf32>
  %2 = tosa.add %h, %h : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  %3 = "tosa.add"(%bf, %bf) : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xbf16>
  %4 = tosa.sub %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  %5 = tosa.sub %x, %y : (tensor<4x1xf32>, tensor<1x5xf32>) -> tensor<4x5xf32>
  %6 = tosa.maximum %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  %7 = tosa.maximum %h, %h : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  %8 = tosa.minimum %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  %9 = tosa.minimum %bf, %bf : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xbf16>
  %10 = tosa.intdiv %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  %11 = tosa.pow %x, %y : (tensor<4x1xf32>, tensor<1x5xf32>) -> tensor<4x5xf32>
  %12 = tosa.pow %h, %h : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  func.return
}

// Properties equal to their default (MUL shift = 0, NEGATE zero points = 0) are not printed.
// CHECK-LABEL: func.func @binary_mul
// CHECK-NEXT: %0 = tosa.mul %a, %b : (tensor<2x3xi8>, tensor<2x1xi8>) -> tensor<2x3xi32>
// CHECK-NEXT: %1 = tosa.mul %c, %c : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi32>
// CHECK-NEXT: %2 = tosa.mul %d, %d {shift = 31 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: %3 = tosa.mul %d, %d {shift = 63 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: %4 = tosa.mul %x, %x : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT: %5 = tosa.mul %q, %q : (tensor<4x!quant.uniform<i8:f32, 5.000000e-01:3>>, tensor<4x!quant.uniform<i8:f32, 5.000000e-01:3>>) -> tensor<4xi32>
func.func @binary_mul(%a: tensor<2x3xi8>, %b: tensor<2x1xi8>, %c: tensor<4xi16>, %d: tensor<4xi32>, %x: tensor<1x2xf32>,
                      %q: tensor<4x!quant.uniform<i8:f32, 0.5:3>>) {
  %0 = tosa.mul %a, %b {shift = 0 : i64} : (tensor<2x3xi8>, tensor<2x1xi8>) -> tensor<2x3xi32>
  %1 = tosa.mul %c, %c : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi32>
  %2 = tosa.mul %d, %d {shift = 31 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %3 = "tosa.mul"(%d, %d) <{shift = 63 : i64}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %4 = tosa.mul %x, %x {shift = 0 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %5 = tosa.mul %q, %q : (tensor<4x!quant.uniform<i8:f32, 0.5:3>>, tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4xi32>
  func.return
}

// CHECK-LABEL: func.func @binary_bits
// CHECK-NEXT: %0 = tosa.arithmetic_right_shift %a, %a {round = true} : (tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<2x2xi8>
// CHECK-NEXT: %1 = tosa.arithmetic_right_shift %c, %d {round = false} : (tensor<3x1xi32>, tensor<1x4xi32>) -> tensor<3x4xi32>
// CHECK-NEXT: %2 = tosa.bitwise_and %a, %a : (tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<2x2xi8>
// CHECK-NEXT: %3 = tosa.bitwise_and %b, %b : (tensor<5xi16>, tensor<5xi16>) -> tensor<5xi16>
// CHECK-NEXT: %4 = tosa.bitwise_or %c, %d : (tensor<3x1xi32>, tensor<1x4xi32>) -> tensor<3x4xi32>
// CHECK-NEXT: %5 = tosa.bitwise_or %a, %a : (tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<2x2xi8>
// CHECK-NEXT: %6 = tosa.bitwise_xor %b, %b : (tensor<5xi16>, tensor<5xi16>) -> tensor<5xi16>
// CHECK-NEXT: %7 = tosa.bitwise_xor %c, %d : (tensor<3x1xi32>, tensor<1x4xi32>) -> tensor<3x4xi32>
// CHECK-NEXT: %8 = tosa.logical_left_shift %a, %a : (tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<2x2xi8>
// CHECK-NEXT: %9 = tosa.logical_left_shift %c, %d : (tensor<3x1xi32>, tensor<1x4xi32>) -> tensor<3x4xi32>
// CHECK-NEXT: %10 = tosa.logical_right_shift %b, %b : (tensor<5xi16>, tensor<5xi16>) -> tensor<5xi16>
// CHECK-NEXT: %11 = tosa.logical_right_shift %c, %d : (tensor<3x1xi32>, tensor<1x4xi32>) -> tensor<3x4xi32>
func.func @binary_bits(%a: tensor<2x2xi8>, %b: tensor<5xi16>, %c: tensor<3x1xi32>, %d: tensor<1x4xi32>) {
  %0 = tosa.arithmetic_right_shift %a, %a {round = true} : (tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<2x2xi8>
  %1 = "tosa.arithmetic_right_shift"(%c, %d) <{round = false}> : (tensor<3x1xi32>, tensor<1x4xi32>) -> tensor<3x4xi32>
  %2 = tosa.bitwise_and %a, %a : (tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<2x2xi8>
  %3 = tosa.bitwise_and %b, %b : (tensor<5xi16>, tensor<5xi16>) -> tensor<5xi16>
  %4 = tosa.bitwise_or %c, %d : (tensor<3x1xi32>, tensor<1x4xi32>) -> tensor<3x4xi32>
  %5 = tosa.bitwise_or %a, %a : (tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<2x2xi8>
  %6 = tosa.bitwise_xor %b, %b : (tensor<5xi16>, tensor<5xi16>) -> tensor<5xi16>
  %7 = tosa.bitwise_xor %c, %d : (tensor<3x1xi32>, tensor<1x4xi32>) -> tensor<3x4xi32>
  %8 = tosa.logical_left_shift %a, %a : (tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<2x2xi8>
  %9 = tosa.logical_left_shift %c, %d : (tensor<3x1xi32>, tensor<1x4xi32>) -> tensor<3x4xi32>
  %10 = tosa.logical_right_shift %b, %b : (tensor<5xi16>, tensor<5xi16>) -> tensor<5xi16>
  %11 = tosa.logical_right_shift %c, %d : (tensor<3x1xi32>, tensor<1x4xi32>) -> tensor<3x4xi32>
  func.return
}

// CHECK-LABEL: func.func @binary_logical
// CHECK-NEXT: %0 = tosa.logical_and %p, %q : (tensor<2x1xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: %1 = tosa.logical_or %p, %q : (tensor<2x1xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: %2 = tosa.logical_xor %q, %q : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
func.func @binary_logical(%p: tensor<2x1xi1>, %q: tensor<2x3xi1>) {
  %0 = tosa.logical_and %p, %q : (tensor<2x1xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %1 = tosa.logical_or %p, %q : (tensor<2x1xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %2 = tosa.logical_xor %q, %q : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  func.return
}

// The table is an operand (usually a tosa.const; a function argument here).
// CHECK-LABEL: func.func @table
// CHECK-NEXT: %0 = tosa.table %a, %t8 : (tensor<2x3xi8>, tensor<256xi8>) -> tensor<2x3xi8>
// CHECK-NEXT: %1 = tosa.table %b, %t16 : (tensor<7xi16>, tensor<513xi16>) -> tensor<7xi32>
// CHECK-NEXT: %2 = tosa.table %q, %t8 : (tensor<1x4x!quant.uniform<i8:f32, 1.250000e-01:-1>>, tensor<256xi8>) -> tensor<1x4xi8>
func.func @table(%a: tensor<2x3xi8>, %b: tensor<7xi16>, %t8: tensor<256xi8>, %t16: tensor<513xi16>,
                 %q: tensor<1x4x!quant.uniform<i8:f32, 0.125:-1>>) {
  %0 = tosa.table %a, %t8 : (tensor<2x3xi8>, tensor<256xi8>) -> tensor<2x3xi8>
  %1 = tosa.table %b, %t16 : (tensor<7xi16>, tensor<513xi16>) -> tensor<7xi32>
  %2 = "tosa.table"(%q, %t8) : (tensor<1x4x!quant.uniform<i8:f32, 0.125:-1>>, tensor<256xi8>) -> tensor<1x4xi8>
  func.return
}

// §2.6 Elementwise unary

// CHECK-LABEL: func.func @unary
// CHECK-NEXT: %0 = tosa.abs %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: %1 = tosa.abs %f : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %2 = tosa.abs %h : (tensor<1x1x2xf16>) -> tensor<1x1x2xf16>
// CHECK-NEXT: %3 = tosa.bitwise_not %i8 : (tensor<5xi8>) -> tensor<5xi8>
// CHECK-NEXT: %4 = tosa.bitwise_not %i16 : (tensor<5xi16>) -> tensor<5xi16>
// CHECK-NEXT: %5 = tosa.bitwise_not %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: %6 = tosa.ceil %f : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %7 = tosa.ceil %bf : (tensor<3xbf16>) -> tensor<3xbf16>
// CHECK-NEXT: %8 = tosa.clz %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: %9 = tosa.exp %f : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %10 = tosa.exp %h : (tensor<1x1x2xf16>) -> tensor<1x1x2xf16>
// CHECK-NEXT: %11 = tosa.floor %f : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %12 = tosa.floor %bf : (tensor<3xbf16>) -> tensor<3xbf16>
// CHECK-NEXT: %13 = tosa.log %f : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %14 = tosa.logical_not %p : (tensor<2x2xi1>) -> tensor<2x2xi1>
// CHECK-NEXT: %15 = tosa.reciprocal %f : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %16 = tosa.reciprocal %h : (tensor<1x1x2xf16>) -> tensor<1x1x2xf16>
// CHECK-NEXT: %17 = tosa.rsqrt %f : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %18 = tosa.rsqrt %bf : (tensor<3xbf16>) -> tensor<3xbf16>
func.func @unary(%i: tensor<2x3xi32>, %f: tensor<4xf32>, %h: tensor<1x1x2xf16>, %bf: tensor<3xbf16>,
                 %i8: tensor<5xi8>, %i16: tensor<5xi16>, %p: tensor<2x2xi1>) {
  %0 = tosa.abs %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %1 = tosa.abs %f : (tensor<4xf32>) -> tensor<4xf32>
  %2 = tosa.abs %h : (tensor<1x1x2xf16>) -> tensor<1x1x2xf16>
  %3 = tosa.bitwise_not %i8 : (tensor<5xi8>) -> tensor<5xi8>
  %4 = tosa.bitwise_not %i16 : (tensor<5xi16>) -> tensor<5xi16>
  %5 = tosa.bitwise_not %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %6 = tosa.ceil %f : (tensor<4xf32>) -> tensor<4xf32>
  %7 = tosa.ceil %bf : (tensor<3xbf16>) -> tensor<3xbf16>
  %8 = tosa.clz %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %9 = tosa.exp %f : (tensor<4xf32>) -> tensor<4xf32>
  %10 = tosa.exp %h : (tensor<1x1x2xf16>) -> tensor<1x1x2xf16>
  %11 = tosa.floor %f : (tensor<4xf32>) -> tensor<4xf32>
  %12 = tosa.floor %bf : (tensor<3xbf16>) -> tensor<3xbf16>
  %13 = tosa.log %f : (tensor<4xf32>) -> tensor<4xf32>
  %14 = tosa.logical_not %p : (tensor<2x2xi1>) -> tensor<2x2xi1>
  %15 = tosa.reciprocal %f : (tensor<4xf32>) -> tensor<4xf32>
  %16 = tosa.reciprocal %h : (tensor<1x1x2xf16>) -> tensor<1x1x2xf16>
  %17 = tosa.rsqrt %f : (tensor<4xf32>) -> tensor<4xf32>
  %18 = "tosa.rsqrt"(%bf) : (tensor<3xbf16>) -> tensor<3xbf16>
  func.return
}

// CHECK-LABEL: func.func @negate
// CHECK-NEXT: %0 = tosa.negate %a {input1_zp = -128 : i64, output_zp = 127 : i64} : (tensor<2x3xi8>) -> tensor<2x3xi8>
// CHECK-NEXT: %1 = tosa.negate %a : (tensor<2x3xi8>) -> tensor<2x3xi8>
// CHECK-NEXT: %2 = tosa.negate %b : (tensor<4xi16>) -> tensor<4xi16>
// CHECK-NEXT: %3 = tosa.negate %c : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: %4 = tosa.negate %f : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %5 = tosa.negate %q {input1_zp = 3 : i64, output_zp = -3 : i64} : (tensor<4x!quant.uniform<i8:f32, 2.500000e-01:3>>) -> tensor<4x!quant.uniform<i8:f32, 2.500000e-01:-3>>
func.func @negate(%a: tensor<2x3xi8>, %b: tensor<4xi16>, %c: tensor<4xi32>, %f: tensor<4xf32>,
                  %q: tensor<4x!quant.uniform<i8:f32, 0.25:3>>) {
  %0 = tosa.negate %a {input1_zp = -128 : i64, output_zp = 127 : i64} : (tensor<2x3xi8>) -> tensor<2x3xi8>
  %1 = tosa.negate %a : (tensor<2x3xi8>) -> tensor<2x3xi8>
  %2 = tosa.negate %b {input1_zp = 0 : i64, output_zp = 0 : i64} : (tensor<4xi16>) -> tensor<4xi16>
  %3 = tosa.negate %c : (tensor<4xi32>) -> tensor<4xi32>
  %4 = tosa.negate %f : (tensor<4xf32>) -> tensor<4xf32>
  %5 = tosa.negate %q {input1_zp = 3 : i64, output_zp = -3 : i64} : (tensor<4x!quant.uniform<i8:f32, 0.25:3>>) -> tensor<4x!quant.uniform<i8:f32, 0.25:-3>>
  func.return
}

// §2.7 Elementwise ternary

// CHECK-LABEL: func.func @select
// CHECK-NEXT: %0 = tosa.select %p, %a, %b : (tensor<2x1xi1>, tensor<1x3xi8>, tensor<2x3xi8>) -> tensor<2x3xi8>
// CHECK-NEXT: %1 = tosa.select %p, %p, %p : (tensor<2x1xi1>, tensor<2x1xi1>, tensor<2x1xi1>) -> tensor<2x1xi1>
// CHECK-NEXT: %2 = tosa.select %p, %c, %c : (tensor<2x1xi1>, tensor<1x4xi16>, tensor<1x4xi16>) -> tensor<2x4xi16>
// CHECK-NEXT: %3 = tosa.select %p, %d, %d : (tensor<2x1xi1>, tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
// CHECK-NEXT: %4 = tosa.select %p, %f, %f : (tensor<2x1xi1>, tensor<1x5xf32>, tensor<1x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT: %5 = tosa.select %p, %bf, %bf : (tensor<2x1xi1>, tensor<2x5xbf16>, tensor<2x5xbf16>) -> tensor<2x5xbf16>
func.func @select(%p: tensor<2x1xi1>, %a: tensor<1x3xi8>, %b: tensor<2x3xi8>, %c: tensor<1x4xi16>, %d: tensor<2x1xi32>,
                  %f: tensor<1x5xf32>, %bf: tensor<2x5xbf16>) {
  %0 = tosa.select %p, %a, %b : (tensor<2x1xi1>, tensor<1x3xi8>, tensor<2x3xi8>) -> tensor<2x3xi8>
  %1 = tosa.select %p, %p, %p : (tensor<2x1xi1>, tensor<2x1xi1>, tensor<2x1xi1>) -> tensor<2x1xi1>
  %2 = tosa.select %p, %c, %c : (tensor<2x1xi1>, tensor<1x4xi16>, tensor<1x4xi16>) -> tensor<2x4xi16>
  %3 = tosa.select %p, %d, %d : (tensor<2x1xi1>, tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi32>
  %4 = "tosa.select"(%p, %f, %f) : (tensor<2x1xi1>, tensor<1x5xf32>, tensor<1x5xf32>) -> tensor<2x5xf32>
  %5 = tosa.select %p, %bf, %bf : (tensor<2x1xi1>, tensor<2x5xbf16>, tensor<2x5xbf16>) -> tensor<2x5xbf16>
  func.return
}

// §2.8 Comparison

// CHECK-LABEL: func.func @comparison
// CHECK-NEXT: %0 = tosa.equal %a, %b : (tensor<2x1xi32>, tensor<1x3xi32>) -> tensor<2x3xi1>
// CHECK-NEXT: %1 = tosa.equal %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK-NEXT: %2 = tosa.greater %a, %b : (tensor<2x1xi32>, tensor<1x3xi32>) -> tensor<2x3xi1>
// CHECK-NEXT: %3 = tosa.greater %h, %h : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xi1>
// CHECK-NEXT: %4 = tosa.greater_equal %a, %b : (tensor<2x1xi32>, tensor<1x3xi32>) -> tensor<2x3xi1>
// CHECK-NEXT: %5 = tosa.greater_equal %bf, %bf : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xi1>
func.func @comparison(%a: tensor<2x1xi32>, %b: tensor<1x3xi32>, %f: tensor<4xf32>, %h: tensor<3xf16>, %bf: tensor<2xbf16>) {
  %0 = tosa.equal %a, %b : (tensor<2x1xi32>, tensor<1x3xi32>) -> tensor<2x3xi1>
  %1 = tosa.equal %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = tosa.greater %a, %b : (tensor<2x1xi32>, tensor<1x3xi32>) -> tensor<2x3xi1>
  %3 = tosa.greater %h, %h : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xi1>
  %4 = tosa.greater_equal %a, %b : (tensor<2x1xi32>, tensor<1x3xi32>) -> tensor<2x3xi1>
  %5 = "tosa.greater_equal"(%bf, %bf) : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xi1>
  func.return
}
