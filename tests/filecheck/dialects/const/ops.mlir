// RUN: nnkiln opt %s | filecheck %s
// RUN: nnkiln opt %s | nnkiln opt - | filecheck %s
// RUN: nnkiln opt --generic %s | nnkiln opt - | filecheck %s

// Round trip of const.declare and every #const transformation (architecture spec §5.2).

// CHECK-LABEL: func.func @plain
// CHECK-NEXT: %0 = const.declare tensor<2x3xf32> = #const.content<dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>>
func.func @plain() -> tensor<2x3xf32> {
  %0 = const.declare tensor<2x3xf32> = #const.content<dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @shape_chain
// CHECK-NEXT: %0 = const.declare tensor<3x2xf16> = #const.content<dense<1.000000e+00> : tensor<6xf32>, [#const.reshape<[2, 3]>, #const.transpose<[1, 0]>, #const.convert_elem_type<f16>]>
func.func @shape_chain() -> tensor<3x2xf16> {
  %0 = const.declare tensor<3x2xf16> = #const.content<dense<1.0> : tensor<6xf32>, [#const.reshape<[2, 3]>, #const.transpose<[1, 0]>, #const.convert_elem_type<f16>]>
  func.return %0 : tensor<3x2xf16>
}

// CHECK-LABEL: func.func @views
// CHECK-NEXT: %0 = const.declare tensor<3x2xi8> = #const.content<dense<{{\[\[}}1], [2]]> : tensor<2x1xi8>, [#const.broadcast<axis = 1, size = 4>, #const.pad_with_zero<[1, 0], [0, 1]>, #const.subview<[0, 1], [3, 2]>]>
func.func @views() -> tensor<3x2xi8> {
  %0 = const.declare tensor<3x2xi8> = #const.content<dense<[[1], [2]]> : tensor<2x1xi8>, [#const.broadcast<axis = 1, size = 4>, #const.pad_with_zero<[1, 0], [0, 1]>, #const.subview<[0, 1], [3, 2]>]>
  func.return %0 : tensor<3x2xi8>
}

// CHECK-LABEL: func.func @arith
// CHECK-NEXT: %0 = const.declare {note = "x"} tensor<2xf32> = #const.content<dense<[1.500000e+00, 2.500000e+00]> : tensor<2xf32>, [#const.rescale<1.000000e-01>, #const.add<-2.500000e-01>, #const.add<1.0000001e-07>]>
func.func @arith() -> tensor<2xf32> {
  %0 = const.declare {note = "x"} tensor<2xf32> = #const.content<dense<[1.5, 2.5]> : tensor<2xf32>, [#const.rescale<0.1>, #const.add<-0.25>, #const.add<1.0000001e-07>]>
  func.return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @quant
// CHECK-NEXT: %0 = const.declare tensor<2x3x!quant.uniform<u8:f32, 5.000000e-01:128>> = #const.content<dense<{{\[\[}}1, 2, 3], [4, 5, 6]]> : tensor<2x3xui8>, [#const.quant_cast<!quant.uniform<u8:f32, 5.000000e-01:128>>]>
// CHECK-NEXT: %1 = const.declare tensor<3x2xf32> = #const.content<dense<{{\[\[}}1, 2, 3], [4, 5, 6]]> : tensor<2x3xi8>, [#const.quant_cast<!quant.uniform<i8:f32:0, {5.000000e-01:1,2.500000e-01:-2}>>, #const.transpose<[1, 0]>, #const.dequantize]>
// CHECK-NEXT: %2 = const.declare tensor<2x3xi8> = #const.content<dense<{{\[\[}}1, 2, 3], [4, 5, 6]]> : tensor<2x3xi8>, [#const.quant_cast<!quant.uniform<i8:f32, 1.000000e+00>>, #const.quant_cast<i8>]>
func.func @quant() -> tensor<3x2xf32> {
  %0 = const.declare tensor<2x3x!quant.uniform<u8:f32, 0.5:128>> = #const.content<dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xui8>, [#const.quant_cast<!quant.uniform<u8:f32, 0.5:128>>]>
  %1 = const.declare tensor<3x2xf32> = #const.content<dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi8>, [#const.quant_cast<!quant.uniform<i8:f32:0, {0.5:1,0.25:-2}>>, #const.transpose<[1, 0]>, #const.dequantize]>
  %2 = const.declare tensor<2x3xi8> = #const.content<dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi8>, [#const.quant_cast<!quant.uniform<i8:f32, 1.0>>, #const.quant_cast<i8>]>
  func.return %1 : tensor<3x2xf32>
}

// A base above the resource threshold (64 elements) prints as a hex literal inside the attribute.
// CHECK-LABEL: func.func @large
// CHECK-NEXT: %0 = const.declare tensor<10x8xi8> = #const.content<dense_resource<blob0> : tensor<80xi8>, [#const.reshape<[8, 10]>, #const.transpose<[1, 0]>]>
func.func @large() -> tensor<10x8xi8> {
  %0 = const.declare tensor<10x8xi8> = #const.content<dense<"0x000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F"> : tensor<80xi8>, [#const.reshape<[8, 10]>, #const.transpose<[1, 0]>]>
  func.return %0 : tensor<10x8xi8>
}
