// RUN: nnkiln opt %s | filecheck %s
// RUN: nnkiln opt %s | nnkiln opt - | filecheck %s
// RUN: nnkiln opt --generic %s | nnkiln opt - | filecheck %s

// Round trip of every one of the 69 TOSA 0.30 operators (custom form, re-parsed output, and the
// generic form), by spec chapter. Invalid cases are in ops_invalid.mlir.
// ===== ops_tensor =====
// Round trip of the TOSA 0.30 §2.3 tensor operators and §2.4 activation functions, several type
// modes each. Output shapes are worked out by hand from the spec's rules, e.g. AVG_POOL2D on
// 7x7 with kernel 3, stride 2, pad 1: OH = (7 + 1 + 1 - 3) / 2 + 1 = 4.

// CHECK-LABEL: func.func @argmax
func.func @argmax(%a: tensor<2x3x4xi8>, %b: tensor<5xf32>, %c: tensor<1x2x3x4xbf16>, %d: tensor<3x7xi16>, %e: tensor<4x2xf16>) -> tensor<2x4xi32> {
  // CHECK: tosa.argmax %{{.*}} {axis = 1 : i64} : (tensor<2x3x4xi8>) -> tensor<2x4xi32>
  %0 = tosa.argmax %a {axis = 1 : i64} : (tensor<2x3x4xi8>) -> tensor<2x4xi32>
  // CHECK: tosa.argmax %{{.*}} {axis = 0 : i64} : (tensor<5xf32>) -> tensor<i32>
  %1 = tosa.argmax %b {axis = 0 : i64} : (tensor<5xf32>) -> tensor<i32>
  // CHECK: tosa.argmax %{{.*}} {axis = 3 : i64} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3xi32>
  %2 = tosa.argmax %c {axis = 3 : i64} : (tensor<1x2x3x4xbf16>) -> tensor<1x2x3xi32>
  // CHECK: tosa.argmax %{{.*}} {axis = 0 : i64} : (tensor<3x7xi16>) -> tensor<7xi32>
  %3 = tosa.argmax %d {axis = 0 : i64} : (tensor<3x7xi16>) -> tensor<7xi32>
  // CHECK: tosa.argmax %{{.*}} {axis = 1 : i64} : (tensor<4x2xf16>) -> tensor<4xi32>
  %4 = "tosa.argmax"(%e) <{axis = 1 : i64}> : (tensor<4x2xf16>) -> tensor<4xi32>
  func.return %0 : tensor<2x4xi32>
}

// CHECK-LABEL: func.func @avg_pool2d
func.func @avg_pool2d(%a: tensor<1x7x7x8xi8>, %b: tensor<1x4x4x2xf16>, %c: tensor<1x5x5x1xi16>, %d: tensor<2x3x3x1xbf16>, %e: tensor<1x6x4x3xf32>) -> tensor<1x4x4x8xi8> {
  // OH = OW = (7 + 1 + 1 - 3) / 2 + 1 = 4
  // CHECK: tosa.avg_pool2d %{{.*}} {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, input_zp = -3 : i64, output_zp = 5 : i64} : (tensor<1x7x7x8xi8>) -> tensor<1x4x4x8xi8>
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, input_zp = -3 : i64, output_zp = 5 : i64} : (tensor<1x7x7x8xi8>) -> tensor<1x4x4x8xi8>
  // OH = OW = (4 - 2) / 2 + 1 = 2
  // CHECK: tosa.avg_pool2d %{{.*}} : (tensor<1x4x4x2xf16>) -> tensor<1x2x2x2xf16>
  %1 = tosa.avg_pool2d %b {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<1x4x4x2xf16>) -> tensor<1x2x2x2xf16>
  // global pooling: (5 - 5) / 1 + 1 = 1
  // CHECK: tosa.avg_pool2d %{{.*}} : (tensor<1x5x5x1xi16>) -> tensor<1x1x1x1xi16>
  %2 = tosa.avg_pool2d %c {kernel = array<i64: 5, 5>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<1x5x5x1xi16>) -> tensor<1x1x1x1xi16>
  // OH = OW = (3 + 1 + 1 - 3) / 1 + 1 = 3
  // CHECK: tosa.avg_pool2d %{{.*}} : (tensor<2x3x3x1xbf16>) -> tensor<2x3x3x1xbf16>
  %3 = tosa.avg_pool2d %d {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<2x3x3x1xbf16>) -> tensor<2x3x3x1xbf16>
  // OH = (6 + 0 + 1 - 3) / 2 + 1 = 3, OW = (4 - 2) / 1 + 1 = 3
  // CHECK: tosa.avg_pool2d %{{.*}} : (tensor<1x6x4x3xf32>) -> tensor<1x3x3x3xf32>
  %4 = "tosa.avg_pool2d"(%e) <{kernel = array<i64: 3, 2>, stride = array<i64: 2, 1>, pad = array<i64: 0, 1, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64}> : (tensor<1x6x4x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x4x4x8xi8>
}

// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%x8: tensor<1x8x8x4xi8>, %w8: tensor<16x3x3x4xi8>, %b32: tensor<16xi32>,
                  %x9: tensor<1x9x9x4xi8>, %w4: tensor<8x3x3x4xi4>, %b8: tensor<8xi32>,
                  %x16: tensor<1x10x10x2xi16>, %w16: tensor<4x3x3x2xi8>, %b48: tensor<4xi48>,
                  %xh: tensor<1x4x4x1xf16>, %wh: tensor<1x1x1x1xf16>, %bh: tensor<1xf16>, %bhf: tensor<1xf32>,
                  %xb: tensor<2x5x5x3xbf16>, %wb: tensor<6x2x2x3xbf16>, %bb: tensor<6xf32>,
                  %xf: tensor<1x7x7x3xf32>, %wf: tensor<8x3x3x3xf32>, %bf: tensor<8xf32>) -> tensor<1x6x6x16xi32> {
  // signed 8x8, OH = OW = (8 - 1 - 2) / 1 + 1 = 6
  // CHECK: tosa.conv2d %{{.*}}, %{{.*}}, %{{.*}} {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = -128 : i64, weight_zp = 3 : i64} : (tensor<1x8x8x4xi8>, tensor<16x3x3x4xi8>, tensor<16xi32>) -> tensor<1x6x6x16xi32>
  %0 = tosa.conv2d %x8, %w8, %b32 {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = -128 : i64, weight_zp = 3 : i64} : (tensor<1x8x8x4xi8>, tensor<16x3x3x4xi8>, tensor<16xi32>) -> tensor<1x6x6x16xi32>
  // signed 8x4, OH = OW = (9 - 1 + 2 - 2) / 2 + 1 = 5
  // CHECK: tosa.conv2d {{.*}} : (tensor<1x9x9x4xi8>, tensor<8x3x3x4xi4>, tensor<8xi32>) -> tensor<1x5x5x8xi32>
  %1 = tosa.conv2d %x9, %w4, %b8 {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x9x9x4xi8>, tensor<8x3x3x4xi4>, tensor<8xi32>) -> tensor<1x5x5x8xi32>
  // signed 16x8 with an int48 accumulator, dilation 2: OH = OW = (10 - 1 - 2 * 2) / 1 + 1 = 6
  // CHECK: tosa.conv2d {{.*}} : (tensor<1x10x10x2xi16>, tensor<4x3x3x2xi8>, tensor<4xi48>) -> tensor<1x6x6x4xi48>
  %2 = tosa.conv2d %x16, %w16, %b48 {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 2, 2>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x10x10x2xi16>, tensor<4x3x3x2xi8>, tensor<4xi48>) -> tensor<1x6x6x4xi48>
  // fp16 with fp16 accumulate
  // CHECK: tosa.conv2d {{.*}} : (tensor<1x4x4x1xf16>, tensor<1x1x1x1xf16>, tensor<1xf16>) -> tensor<1x4x4x1xf16>
  %3 = tosa.conv2d %xh, %wh, %bh {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf16>, tensor<1x1x1x1xf16>, tensor<1xf16>) -> tensor<1x4x4x1xf16>
  // fp16 with fp32 accumulate
  // CHECK: tosa.conv2d {{.*}} : (tensor<1x4x4x1xf16>, tensor<1x1x1x1xf16>, tensor<1xf32>) -> tensor<1x4x4x1xf32>
  %4 = tosa.conv2d %xh, %wh, %bhf {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf16>, tensor<1x1x1x1xf16>, tensor<1xf32>) -> tensor<1x4x4x1xf32>
  // bf16 with fp32 accumulate, asymmetric pad: OH = OW = (5 - 1 + 0 + 1 - 1) / 1 + 1 = 5
  // CHECK: tosa.conv2d {{.*}} : (tensor<2x5x5x3xbf16>, tensor<6x2x2x3xbf16>, tensor<6xf32>) -> tensor<2x5x5x6xf32>
  %5 = tosa.conv2d %xb, %wb, %bb {pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<2x5x5x3xbf16>, tensor<6x2x2x3xbf16>, tensor<6xf32>) -> tensor<2x5x5x6xf32>
  // fp32, generic form: OH = OW = (7 - 1 + 2 - 2) / 2 + 1 = 4
  // CHECK: tosa.conv2d {{.*}} : (tensor<1x7x7x3xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  %6 = "tosa.conv2d"(%xf, %wf, %bf) <{pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64}> : (tensor<1x7x7x3xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  func.return %0 : tensor<1x6x6x16xi32>
}

// CHECK-LABEL: func.func @conv3d
func.func @conv3d(%x8: tensor<1x4x8x8x2xi8>, %w8: tensor<4x2x3x3x2xi8>, %b32: tensor<4xi32>,
                  %xf: tensor<1x5x5x5x1xf32>, %wf: tensor<2x3x3x3x1xf32>, %bf: tensor<2xf32>,
                  %x16: tensor<1x3x3x3x1xi16>, %w16: tensor<1x1x1x1x1xi8>, %b48: tensor<1xi48>) -> tensor<1x3x6x6x4xi32> {
  // OD = (4 - 1 - 1) / 1 + 1 = 3, OH = OW = (8 - 1 - 2) / 1 + 1 = 6
  // CHECK: tosa.conv3d %{{.*}}, %{{.*}}, %{{.*}} {pad = array<i64: 0, 0, 0, 0, 0, 0>, stride = array<i64: 1, 1, 1>, dilation = array<i64: 1, 1, 1>, input_zp = 1 : i64, weight_zp = -1 : i64} : (tensor<1x4x8x8x2xi8>, tensor<4x2x3x3x2xi8>, tensor<4xi32>) -> tensor<1x3x6x6x4xi32>
  %0 = tosa.conv3d %x8, %w8, %b32 {pad = array<i64: 0, 0, 0, 0, 0, 0>, stride = array<i64: 1, 1, 1>, dilation = array<i64: 1, 1, 1>, input_zp = 1 : i64, weight_zp = -1 : i64} : (tensor<1x4x8x8x2xi8>, tensor<4x2x3x3x2xi8>, tensor<4xi32>) -> tensor<1x3x6x6x4xi32>
  // OD = OH = OW = (5 - 1 + 2 - 2) / 2 + 1 = 3
  // CHECK: tosa.conv3d {{.*}} : (tensor<1x5x5x5x1xf32>, tensor<2x3x3x3x1xf32>, tensor<2xf32>) -> tensor<1x3x3x3x2xf32>
  %1 = tosa.conv3d %xf, %wf, %bf {pad = array<i64: 1, 1, 1, 1, 1, 1>, stride = array<i64: 2, 2, 2>, dilation = array<i64: 1, 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x5x5x5x1xf32>, tensor<2x3x3x3x1xf32>, tensor<2xf32>) -> tensor<1x3x3x3x2xf32>
  // CHECK: tosa.conv3d {{.*}} : (tensor<1x3x3x3x1xi16>, tensor<1x1x1x1x1xi8>, tensor<1xi48>) -> tensor<1x3x3x3x1xi48>
  %2 = tosa.conv3d %x16, %w16, %b48 {pad = array<i64: 0, 0, 0, 0, 0, 0>, stride = array<i64: 1, 1, 1>, dilation = array<i64: 1, 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x3x3x3x1xi16>, tensor<1x1x1x1x1xi8>, tensor<1xi48>) -> tensor<1x3x3x3x1xi48>
  func.return %0 : tensor<1x3x6x6x4xi32>
}

// CHECK-LABEL: func.func @depthwise_conv2d
func.func @depthwise_conv2d(%x8: tensor<1x8x8x4xi8>, %w8: tensor<3x3x4x2xi8>, %b8: tensor<8xi32>,
                            %xf: tensor<1x9x9x3xf32>, %wf: tensor<3x3x3x1xf32>, %bf: tensor<3xf32>,
                            %x4: tensor<1x5x5x2xi8>, %w4: tensor<2x2x2x3xi4>, %b4: tensor<6xi32>,
                            %xh: tensor<1x2x2x2xf16>, %wh: tensor<1x1x2x2xf16>, %bh: tensor<4xf16>) -> tensor<1x8x8x8xi32> {
  // C * M = 8; OH = OW = (8 - 1 + 2 - 2) / 1 + 1 = 8
  // CHECK: tosa.depthwise_conv2d %{{.*}}, %{{.*}}, %{{.*}} {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x8x8x4xi8>, tensor<3x3x4x2xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi32>
  %0 = tosa.depthwise_conv2d %x8, %w8, %b8 {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x8x8x4xi8>, tensor<3x3x4x2xi8>, tensor<8xi32>) -> tensor<1x8x8x8xi32>
  // OH = OW = (9 - 1 - 2) / 2 + 1 = 4
  // CHECK: tosa.depthwise_conv2d {{.*}} : (tensor<1x9x9x3xf32>, tensor<3x3x3x1xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %1 = tosa.depthwise_conv2d %xf, %wf, %bf {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x9x9x3xf32>, tensor<3x3x3x1xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // signed 8x4, dilation 2: OH = OW = (5 - 1 - 1 * 2) / 1 + 1 = 3, C * M = 6
  // CHECK: tosa.depthwise_conv2d {{.*}} : (tensor<1x5x5x2xi8>, tensor<2x2x2x3xi4>, tensor<6xi32>) -> tensor<1x3x3x6xi32>
  %2 = tosa.depthwise_conv2d %x4, %w4, %b4 {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 2, 2>, input_zp = 7 : i64, weight_zp = 0 : i64} : (tensor<1x5x5x2xi8>, tensor<2x2x2x3xi4>, tensor<6xi32>) -> tensor<1x3x3x6xi32>
  // CHECK: tosa.depthwise_conv2d {{.*}} : (tensor<1x2x2x2xf16>, tensor<1x1x2x2xf16>, tensor<4xf16>) -> tensor<1x2x2x4xf16>
  %3 = tosa.depthwise_conv2d %xh, %wh, %bh {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x2x2xf16>, tensor<1x1x2x2xf16>, tensor<4xf16>) -> tensor<1x2x2x4xf16>
  func.return %0 : tensor<1x8x8x8xi32>
}

// CHECK-LABEL: func.func @fft2d
func.func @fft2d(%re: tensor<2x8x4xf32>, %im: tensor<2x8x4xf32>, %re1: tensor<1x1x16xf32>, %im1: tensor<1x1x16xf32>) -> tensor<2x8x4xf32> {
  // CHECK: %{{.*}}, %{{.*}} = tosa.fft2d %{{.*}}, %{{.*}} {inverse = false} : (tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>)
  %0, %1 = tosa.fft2d %re, %im {inverse = false} : (tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>)
  // H = 1 = 2^0 is a power of two
  // CHECK: tosa.fft2d %{{.*}}, %{{.*}} {inverse = true} : (tensor<1x1x16xf32>, tensor<1x1x16xf32>) -> (tensor<1x1x16xf32>, tensor<1x1x16xf32>)
  %2:2 = "tosa.fft2d"(%re1, %im1) <{inverse = true}> : (tensor<1x1x16xf32>, tensor<1x1x16xf32>) -> (tensor<1x1x16xf32>, tensor<1x1x16xf32>)
  func.return %0 : tensor<2x8x4xf32>
}

// CHECK-LABEL: func.func @fully_connected
func.func @fully_connected(%x8: tensor<4x16xi8>, %w8: tensor<8x16xi8>, %b8: tensor<8xi32>,
                           %x16: tensor<2x3xi16>, %w16: tensor<5x3xi8>, %b16: tensor<5xi48>,
                           %xh: tensor<1x4xf16>, %wh: tensor<2x4xf16>, %bh: tensor<2xf32>,
                           %x4: tensor<3x2xi8>, %w4: tensor<6x2xi4>, %b4: tensor<6xi32>) -> tensor<4x8xi32> {
  // CHECK: tosa.fully_connected %{{.*}}, %{{.*}}, %{{.*}} {input_zp = -1 : i64, weight_zp = 2 : i64} : (tensor<4x16xi8>, tensor<8x16xi8>, tensor<8xi32>) -> tensor<4x8xi32>
  %0 = tosa.fully_connected %x8, %w8, %b8 {input_zp = -1 : i64, weight_zp = 2 : i64} : (tensor<4x16xi8>, tensor<8x16xi8>, tensor<8xi32>) -> tensor<4x8xi32>
  // CHECK: tosa.fully_connected {{.*}} : (tensor<2x3xi16>, tensor<5x3xi8>, tensor<5xi48>) -> tensor<2x5xi48>
  %1 = tosa.fully_connected %x16, %w16, %b16 {input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<2x3xi16>, tensor<5x3xi8>, tensor<5xi48>) -> tensor<2x5xi48>
  // CHECK: tosa.fully_connected {{.*}} : (tensor<1x4xf16>, tensor<2x4xf16>, tensor<2xf32>) -> tensor<1x2xf32>
  %2 = tosa.fully_connected %xh, %wh, %bh {input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4xf16>, tensor<2x4xf16>, tensor<2xf32>) -> tensor<1x2xf32>
  // CHECK: tosa.fully_connected {{.*}} : (tensor<3x2xi8>, tensor<6x2xi4>, tensor<6xi32>) -> tensor<3x6xi32>
  %3 = "tosa.fully_connected"(%x4, %w4, %b4) <{input_zp = 0 : i64, weight_zp = 0 : i64}> : (tensor<3x2xi8>, tensor<6x2xi4>, tensor<6xi32>) -> tensor<3x6xi32>
  func.return %0 : tensor<4x8xi32>
}

// CHECK-LABEL: func.func @matmul
func.func @matmul(%a8: tensor<2x3x4xi8>, %b8: tensor<2x4x5xi8>, %a16: tensor<1x2x2xi16>, %b16: tensor<1x2x3xi16>,
                  %ah: tensor<1x3x3xf16>, %bh: tensor<1x3x1xf16>, %ab: tensor<3x1x2xbf16>, %bb: tensor<3x2x2xbf16>,
                  %af: tensor<1x2x3xf32>, %bf: tensor<1x3x4xf32>) -> tensor<2x3x5xi32> {
  // CHECK: tosa.matmul %{{.*}}, %{{.*}} {A_zp = -3 : i64, B_zp = 7 : i64} : (tensor<2x3x4xi8>, tensor<2x4x5xi8>) -> tensor<2x3x5xi32>
  %0 = tosa.matmul %a8, %b8 {A_zp = -3 : i64, B_zp = 7 : i64} : (tensor<2x3x4xi8>, tensor<2x4x5xi8>) -> tensor<2x3x5xi32>
  // CHECK: tosa.matmul {{.*}} : (tensor<1x2x2xi16>, tensor<1x2x3xi16>) -> tensor<1x2x3xi48>
  %1 = tosa.matmul %a16, %b16 {A_zp = 0 : i64, B_zp = 0 : i64} : (tensor<1x2x2xi16>, tensor<1x2x3xi16>) -> tensor<1x2x3xi48>
  // CHECK: tosa.matmul {{.*}} : (tensor<1x3x3xf16>, tensor<1x3x1xf16>) -> tensor<1x3x1xf16>
  %2 = tosa.matmul %ah, %bh {A_zp = 0 : i64, B_zp = 0 : i64} : (tensor<1x3x3xf16>, tensor<1x3x1xf16>) -> tensor<1x3x1xf16>
  // CHECK: tosa.matmul {{.*}} : (tensor<1x3x3xf16>, tensor<1x3x1xf16>) -> tensor<1x3x1xf32>
  %3 = tosa.matmul %ah, %bh {A_zp = 0 : i64, B_zp = 0 : i64} : (tensor<1x3x3xf16>, tensor<1x3x1xf16>) -> tensor<1x3x1xf32>
  // CHECK: tosa.matmul {{.*}} : (tensor<3x1x2xbf16>, tensor<3x2x2xbf16>) -> tensor<3x1x2xf32>
  %4 = tosa.matmul %ab, %bb {A_zp = 0 : i64, B_zp = 0 : i64} : (tensor<3x1x2xbf16>, tensor<3x2x2xbf16>) -> tensor<3x1x2xf32>
  // CHECK: tosa.matmul {{.*}} : (tensor<1x2x3xf32>, tensor<1x3x4xf32>) -> tensor<1x2x4xf32>
  %5 = "tosa.matmul"(%af, %bf) <{A_zp = 0 : i64, B_zp = 0 : i64}> : (tensor<1x2x3xf32>, tensor<1x3x4xf32>) -> tensor<1x2x4xf32>
  func.return %0 : tensor<2x3x5xi32>
}

// CHECK-LABEL: func.func @max_pool2d
func.func @max_pool2d(%a: tensor<1x6x6x3xi8>, %b: tensor<2x5x5x4xf32>, %c: tensor<1x4x6x1xbf16>, %d: tensor<1x3x3x2xi16>, %e: tensor<1x2x2x1xf16>) -> tensor<1x3x3x3xi8> {
  // OH = OW = (6 - 2) / 2 + 1 = 3
  // CHECK: tosa.max_pool2d %{{.*}} {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x6x6x3xi8>) -> tensor<1x3x3x3xi8>
  %0 = tosa.max_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x6x6x3xi8>) -> tensor<1x3x3x3xi8>
  // "same" padding: (5 + 1 + 1 - 3) / 1 + 1 = 5
  // CHECK: tosa.max_pool2d {{.*}} : (tensor<2x5x5x4xf32>) -> tensor<2x5x5x4xf32>
  %1 = tosa.max_pool2d %b {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : (tensor<2x5x5x4xf32>) -> tensor<2x5x5x4xf32>
  // OH = (4 - 2) / 2 + 1 = 2, OW = (6 - 3) / 3 + 1 = 2
  // CHECK: tosa.max_pool2d {{.*}} : (tensor<1x4x6x1xbf16>) -> tensor<1x2x2x1xbf16>
  %2 = tosa.max_pool2d %c {kernel = array<i64: 2, 3>, stride = array<i64: 2, 3>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x4x6x1xbf16>) -> tensor<1x2x2x1xbf16>
  // CHECK: tosa.max_pool2d {{.*}} : (tensor<1x3x3x2xi16>) -> tensor<1x1x1x2xi16>
  %3 = tosa.max_pool2d %d {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x3x3x2xi16>) -> tensor<1x1x1x2xi16>
  // CHECK: tosa.max_pool2d {{.*}} : (tensor<1x2x2x1xf16>) -> tensor<1x2x2x1xf16>
  %4 = "tosa.max_pool2d"(%e) <{kernel = array<i64: 1, 1>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>}> : (tensor<1x2x2x1xf16>) -> tensor<1x2x2x1xf16>
  func.return %0 : tensor<1x3x3x3xi8>
}

// CHECK-LABEL: func.func @rfft2d
func.func @rfft2d(%a: tensor<1x8x16xf32>, %b: tensor<3x1x2xf32>) -> tensor<1x5x9xf32> {
  // [N, H/2 + 1, W/2 + 1] = [1, 5, 9]
  // CHECK: %{{.*}}, %{{.*}} = tosa.rfft2d %{{.*}} : (tensor<1x8x16xf32>) -> (tensor<1x5x9xf32>, tensor<1x5x9xf32>)
  %0, %1 = tosa.rfft2d %a : (tensor<1x8x16xf32>) -> (tensor<1x5x9xf32>, tensor<1x5x9xf32>)
  // [3, 1/2 + 1, 2/2 + 1] = [3, 1, 2]
  // CHECK: tosa.rfft2d %{{.*}} : (tensor<3x1x2xf32>) -> (tensor<3x1x2xf32>, tensor<3x1x2xf32>)
  %2:2 = "tosa.rfft2d"(%b) : (tensor<3x1x2xf32>) -> (tensor<3x1x2xf32>, tensor<3x1x2xf32>)
  func.return %0 : tensor<1x5x9xf32>
}

// CHECK-LABEL: func.func @transpose_conv2d
func.func @transpose_conv2d(%x8: tensor<1x4x4x2xi8>, %w8: tensor<3x3x3x2xi8>, %b8: tensor<3xi32>,
                            %xf: tensor<1x4x4x2xf32>, %wf: tensor<3x3x3x2xf32>, %bf: tensor<3xf32>,
                            %x16: tensor<2x3x5x1xi16>, %w16: tensor<1x2x2x1xi8>, %b16: tensor<1xi48>,
                            %xb: tensor<1x2x2x1xbf16>, %wb: tensor<2x2x2x1xbf16>, %bb: tensor<2xf32>) -> tensor<1x9x9x3xi32> {
  // OH = OW = (4 - 1) * 2 - 0 - 0 + 3 = 9
  // CHECK: tosa.transpose_conv2d %{{.*}}, %{{.*}}, %{{.*}} {out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, out_shape = array<i64: 1, 9, 9, 3>, input_zp = 5 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x2xi8>, tensor<3x3x3x2xi8>, tensor<3xi32>) -> tensor<1x9x9x3xi32>
  %0 = tosa.transpose_conv2d %x8, %w8, %b8 {out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, out_shape = array<i64: 1, 9, 9, 3>, input_zp = 5 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x2xi8>, tensor<3x3x3x2xi8>, tensor<3xi32>) -> tensor<1x9x9x3xi32>
  // out_pad crops: OH = OW = (4 - 1) * 2 - 1 - 0 + 3 = 8
  // CHECK: tosa.transpose_conv2d {{.*}} : (tensor<1x4x4x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>) -> tensor<1x8x8x3xf32>
  %1 = tosa.transpose_conv2d %xf, %wf, %bf {out_pad = array<i64: 1, 0, 1, 0>, stride = array<i64: 2, 2>, out_shape = array<i64: 1, 8, 8, 3>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>) -> tensor<1x8x8x3xf32>
  // OH = (3 - 1) * 1 + 2 = 4, OW = (5 - 1) * 1 + 2 = 6
  // CHECK: tosa.transpose_conv2d {{.*}} : (tensor<2x3x5x1xi16>, tensor<1x2x2x1xi8>, tensor<1xi48>) -> tensor<2x4x6x1xi48>
  %2 = tosa.transpose_conv2d %x16, %w16, %b16 {out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, out_shape = array<i64: 2, 4, 6, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<2x3x5x1xi16>, tensor<1x2x2x1xi8>, tensor<1xi48>) -> tensor<2x4x6x1xi48>
  // OH = OW = (2 - 1) * 3 + 2 = 5
  // CHECK: tosa.transpose_conv2d {{.*}} : (tensor<1x2x2x1xbf16>, tensor<2x2x2x1xbf16>, tensor<2xf32>) -> tensor<1x5x5x2xf32>
  %3 = "tosa.transpose_conv2d"(%xb, %wb, %bb) <{out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 3, 3>, out_shape = array<i64: 1, 5, 5, 2>, input_zp = 0 : i64, weight_zp = 0 : i64}> : (tensor<1x2x2x1xbf16>, tensor<2x2x2x1xbf16>, tensor<2xf32>) -> tensor<1x5x5x2xf32>
  func.return %0 : tensor<1x9x9x3xi32>
}

// CHECK-LABEL: func.func @clamp
func.func @clamp(%a: tensor<2x3xi8>, %b: tensor<4xi16>, %c: tensor<1x2x3xf32>, %d: tensor<5xf16>, %e: tensor<5xbf16>) -> tensor<2x3xi8> {
  // CHECK: tosa.clamp %{{.*}} {min_val = -128 : i64, max_val = 127 : i64} : (tensor<2x3xi8>) -> tensor<2x3xi8>
  %0 = tosa.clamp %a {min_val = -128 : i64, max_val = 127 : i64} : (tensor<2x3xi8>) -> tensor<2x3xi8>
  // CHECK: tosa.clamp %{{.*}} {min_val = 0 : i64, max_val = 0 : i64} : (tensor<4xi16>) -> tensor<4xi16>
  %1 = tosa.clamp %b {min_val = 0 : i64, max_val = 0 : i64} : (tensor<4xi16>) -> tensor<4xi16>
  // CHECK: tosa.clamp %{{.*}} {min_val = 0.000000e+00 : f32, max_val = 6.000000e+00 : f32} : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %2 = tosa.clamp %c {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  // CHECK: tosa.clamp %{{.*}} {min_val = -1.000000e+00 : f32, max_val = 1.000000e+00 : f32} : (tensor<5xf16>) -> tensor<5xf16>
  %3 = tosa.clamp %d {min_val = -1.0 : f32, max_val = 1.0 : f32} : (tensor<5xf16>) -> tensor<5xf16>
  // CHECK: tosa.clamp %{{.*}} : (tensor<5xbf16>) -> tensor<5xbf16>
  %4 = "tosa.clamp"(%e) <{min_val = -3.5 : f32, max_val = 3.5 : f32}> : (tensor<5xbf16>) -> tensor<5xbf16>
  func.return %0 : tensor<2x3xi8>
}

// CHECK-LABEL: func.func @sigmoid_tanh
func.func @sigmoid_tanh(%a: tensor<2x3xf32>, %b: tensor<4xf16>, %c: tensor<1x1xbf16>) -> tensor<2x3xf32> {
  // CHECK: tosa.sigmoid %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = tosa.sigmoid %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: tosa.sigmoid %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %1 = tosa.sigmoid %b : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: tosa.sigmoid %{{.*}} : (tensor<1x1xbf16>) -> tensor<1x1xbf16>
  %2 = "tosa.sigmoid"(%c) : (tensor<1x1xbf16>) -> tensor<1x1xbf16>
  // CHECK: tosa.tanh %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = tosa.tanh %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: tosa.tanh %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %4 = tosa.tanh %b : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK: tosa.tanh %{{.*}} : (tensor<1x1xbf16>) -> tensor<1x1xbf16>
  %5 = "tosa.tanh"(%c) : (tensor<1x1xbf16>) -> tensor<1x1xbf16>
  func.return %0 : tensor<2x3xf32>
}

// ===== ops_elementwise =====
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

// ===== ops_layout =====
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

// ===== ops_misc =====
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
