// RUN: nnkiln opt %s | filecheck %s
// RUN: nnkiln opt %s | nnkiln opt - | filecheck %s
// RUN: nnkiln opt --generic %s | nnkiln opt - | filecheck %s

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
