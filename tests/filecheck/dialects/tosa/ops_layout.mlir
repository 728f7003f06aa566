// RUN: nnkiln opt %s | filecheck %s
// RUN: nnkiln opt %s | nnkiln opt - | filecheck %s
// RUN: nnkiln opt --generic %s | nnkiln opt - | filecheck %s

// Round trip of every TOSA 0.30 §2.9 reduction, §2.10 data layout, §2.11 scatter/gather and §2.12
// image op, in several type modes.

// §2.9 Reduction: the output keeps the rank with shape[axis] = 1.

// CHECK-LABEL: func.func @reductions
// CHECK-NEXT: %0 = tosa.reduce_all %p {axis = 0 : i64} : (tensor<2x3xi1>) -> tensor<1x3xi1>
// CHECK-NEXT: %1 = tosa.reduce_any %p {axis = 1 : i64} : (tensor<2x3xi1>) -> tensor<2x1xi1>
// CHECK-NEXT: %2 = tosa.reduce_max %a {axis = 1 : i64} : (tensor<2x3xi8>) -> tensor<2x1xi8>
// CHECK-NEXT: %3 = tosa.reduce_max %h {axis = 3 : i64} : (tensor<1x2x3x4xf16>) -> tensor<1x2x3x1xf16>
// CHECK-NEXT: %4 = tosa.reduce_min %s {axis = 0 : i64} : (tensor<5xi16>) -> tensor<1xi16>
// CHECK-NEXT: %5 = tosa.reduce_min %bf {axis = 0 : i64} : (tensor<2x3xbf16>) -> tensor<1x3xbf16>
// CHECK-NEXT: %6 = tosa.reduce_product %f {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK-NEXT: %7 = tosa.reduce_product %h {axis = 0 : i64} : (tensor<1x2x3x4xf16>) -> tensor<1x2x3x4xf16>
// CHECK-NEXT: %8 = tosa.reduce_sum %w {axis = 0 : i64} : (tensor<2x3xi32>) -> tensor<1x3xi32>
// CHECK-NEXT: %9 = tosa.reduce_sum %f {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
func.func @reductions(%p: tensor<2x3xi1>, %a: tensor<2x3xi8>, %h: tensor<1x2x3x4xf16>, %s: tensor<5xi16>,
                      %bf: tensor<2x3xbf16>, %f: tensor<2x3xf32>, %w: tensor<2x3xi32>) {
  %0 = tosa.reduce_all %p {axis = 0 : i64} : (tensor<2x3xi1>) -> tensor<1x3xi1>
  %1 = tosa.reduce_any %p {axis = 1 : i64} : (tensor<2x3xi1>) -> tensor<2x1xi1>
  %2 = tosa.reduce_max %a {axis = 1 : i64} : (tensor<2x3xi8>) -> tensor<2x1xi8>
  %3 = tosa.reduce_max %h {axis = 3 : i64} : (tensor<1x2x3x4xf16>) -> tensor<1x2x3x1xf16>
  %4 = "tosa.reduce_min"(%s) <{axis = 0 : i64}> : (tensor<5xi16>) -> tensor<1xi16>
  %5 = tosa.reduce_min %bf {axis = 0 : i64} : (tensor<2x3xbf16>) -> tensor<1x3xbf16>
  %6 = tosa.reduce_product %f {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %7 = tosa.reduce_product %h {axis = 0 : i64} : (tensor<1x2x3x4xf16>) -> tensor<1x2x3x4xf16>
  %8 = tosa.reduce_sum %w {axis = 0 : i64} : (tensor<2x3xi32>) -> tensor<1x3xi32>
  %9 = tosa.reduce_sum %f {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return
}

// §2.10 Data layout

// CHECK-LABEL: func.func @data_layout
// CHECK-NEXT: %0 = tosa.concat %a, %b, %a {axis = 1 : i64} : (tensor<2x3xi8>, tensor<2x5xi8>, tensor<2x3xi8>) -> tensor<2x11xi8>
// CHECK-NEXT: %1 = tosa.concat %f {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %2 = tosa.pad %a {padding = array<i64: 1, 0, 2, 3>, pad_const = -128 : i64} : (tensor<2x3xi8>) -> tensor<3x8xi8>
// CHECK-NEXT: %3 = tosa.pad %f {padding = array<i64: 0, 0, 0, 1>, pad_const = 1.500000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %4 = tosa.pad %p {padding = array<i64: 1, 1, 0, 0>, pad_const = true} : (tensor<2x3xi1>) -> tensor<4x3xi1>
// CHECK-NEXT: %5 = tosa.reshape %a {new_shape = array<i64: 3, 1, 2>} : (tensor<2x3xi8>) -> tensor<3x1x2xi8>
// CHECK-NEXT: %6 = tosa.reshape %one {new_shape = array<i64>} : (tensor<1x1xf16>) -> tensor<f16>
// CHECK-NEXT: %7 = tosa.reverse %p {axis = 1 : i64} : (tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: %8 = tosa.slice %a {start = array<i64: 1, 1>, size = array<i64: 1, 2>} : (tensor<2x3xi8>) -> tensor<1x2xi8>
// CHECK-NEXT: %9 = tosa.tile %w {multiples = array<i64: 2, 3>} : (tensor<2x3xi32>) -> tensor<4x9xi32>
// CHECK-NEXT: %10 = tosa.transpose %h {perms = array<i64: 3, 0, 2, 1>} : (tensor<1x2x3x4xbf16>) -> tensor<4x1x3x2xbf16>
func.func @data_layout(%a: tensor<2x3xi8>, %b: tensor<2x5xi8>, %f: tensor<2x3xf32>, %p: tensor<2x3xi1>,
                       %one: tensor<1x1xf16>, %w: tensor<2x3xi32>, %h: tensor<1x2x3x4xbf16>) {
  %0 = tosa.concat %a, %b, %a {axis = 1 : i64} : (tensor<2x3xi8>, tensor<2x5xi8>, tensor<2x3xi8>) -> tensor<2x11xi8>
  %1 = tosa.concat %f {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = tosa.pad %a {padding = array<i64: 1, 0, 2, 3>, pad_const = -128 : i64} : (tensor<2x3xi8>) -> tensor<3x8xi8>
  %3 = tosa.pad %f {padding = array<i64: 0, 0, 0, 1>, pad_const = 1.5 : f32} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  %4 = tosa.pad %p {padding = array<i64: 1, 1, 0, 0>, pad_const = true} : (tensor<2x3xi1>) -> tensor<4x3xi1>
  %5 = tosa.reshape %a {new_shape = array<i64: 3, 1, 2>} : (tensor<2x3xi8>) -> tensor<3x1x2xi8>
  %6 = tosa.reshape %one {new_shape = array<i64>} : (tensor<1x1xf16>) -> tensor<f16>
  %7 = tosa.reverse %p {axis = 1 : i64} : (tensor<2x3xi1>) -> tensor<2x3xi1>
  %8 = "tosa.slice"(%a) <{start = array<i64: 1, 1>, size = array<i64: 1, 2>}> : (tensor<2x3xi8>) -> tensor<1x2xi8>
  %9 = tosa.tile %w {multiples = array<i64: 2, 3>} : (tensor<2x3xi32>) -> tensor<4x9xi32>
  %10 = tosa.transpose %h {perms = array<i64: 3, 0, 2, 1>} : (tensor<1x2x3x4xbf16>) -> tensor<4x1x3x2xbf16>
  func.return
}

// §2.11 Scatter/gather

// CHECK-LABEL: func.func @scatter_gather
// CHECK-NEXT: %0 = tosa.gather %v, %i : (tensor<2x5x3xi16>, tensor<2x4xi32>) -> tensor<2x4x3xi16>
// CHECK-NEXT: %1 = tosa.gather %fv, %i : (tensor<2x6x1xf32>, tensor<2x4xi32>) -> tensor<2x4x1xf32>
// CHECK-NEXT: %2 = tosa.scatter %v, %i, %u : (tensor<2x5x3xi16>, tensor<2x4xi32>, tensor<2x4x3xi16>) -> tensor<2x5x3xi16>
func.func @scatter_gather(%v: tensor<2x5x3xi16>, %i: tensor<2x4xi32>, %u: tensor<2x4x3xi16>, %fv: tensor<2x6x1xf32>) {
  %0 = tosa.gather %v, %i : (tensor<2x5x3xi16>, tensor<2x4xi32>) -> tensor<2x4x3xi16>
  %1 = tosa.gather %fv, %i : (tensor<2x6x1xf32>, tensor<2x4xi32>) -> tensor<2x4x1xf32>
  %2 = "tosa.scatter"(%v, %i, %u) : (tensor<2x5x3xi16>, tensor<2x4xi32>, tensor<2x4x3xi16>) -> tensor<2x5x3xi16>
  func.return
}

// §2.12 RESIZE: OH = idiv((IH-1)*(1<<shift) - offset_y, stride_y) + 1 + border_y.
// %0: 3*2/1 + 1 = 7. %1: x2 upscale shift=2, stride=2, offset=-1, border=1: 13/2 + 2 = 8.
// %2: (3 - 0)/0.5 + 1 = 7 (float resize_t). %3: nearest i8, OW with stride 3: 6/3 + 1 = 3.

// CHECK-LABEL: func.func @resize
// CHECK-NEXT: %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x7x3xi32>
// CHECK-NEXT: %1 = tosa.resize %s {output_size = array<i64: 8, 8>, stride = array<i64: 2, 2>, offset = array<i64: -1, -1>, border = array<i64: 1, 1>, shift = 2 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi16>) -> tensor<1x8x8x3xi48>
// CHECK-NEXT: %2 = tosa.resize %f {output_size = array<i64: 7, 7>, stride = array<f32: 5.000000e-01, 5.000000e-01>, offset = array<f32: 0.000000e+00, 0.000000e+00>, border = array<i64: 0, 0>, shift = 0 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xf32>) -> tensor<1x7x7x3xf32>
// CHECK-NEXT: %3 = tosa.resize %a {output_size = array<i64: 4, 3>, stride = array<i64: 2, 3>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xi8>) -> tensor<1x4x3x3xi8>
func.func @resize(%a: tensor<1x4x4x3xi8>, %s: tensor<1x4x4x3xi16>, %f: tensor<1x4x4x3xf32>) {
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x7x3xi32>
  %1 = tosa.resize %s {output_size = array<i64: 8, 8>, stride = array<i64: 2, 2>, offset = array<i64: -1, -1>, border = array<i64: 1, 1>, shift = 2 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi16>) -> tensor<1x8x8x3xi48>
  %2 = "tosa.resize"(%f) <{output_size = array<i64: 7, 7>, stride = array<f32: 0.5, 0.5>, offset = array<f32: 0.0, 0.0>, border = array<i64: 0, 0>, shift = 0 : i64, mode = #tosa<resize_mode NEAREST>}> : (tensor<1x4x4x3xf32>) -> tensor<1x7x7x3xf32>
  %3 = tosa.resize %a {output_size = array<i64: 4, 3>, stride = array<i64: 2, 3>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xi8>) -> tensor<1x4x3x3xi8>
  func.return
}
