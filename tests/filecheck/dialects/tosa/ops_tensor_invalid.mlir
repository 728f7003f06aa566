// RUN: nnkiln opt --split-input-file --verify-diagnostics %s

// ERROR_IF cases of the TOSA 0.30 §2.3 tensor operators and §2.4 activation functions, one
// `// -----` chunk each. Each expected message names the op, the rule that must hold (the negated
// ERROR_IF, written with the spec's names) and the values. Sizes are worked out by hand from the
// spec's formulas.

func.func @e0(%a: tensor<2x3xf32>) -> tensor<2xi32> {
  // expected-error {{'tosa.argmax' [0 <= axis < rank(shape1)] axis = 2 but input has rank 2}}
  %0 = tosa.argmax %a {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// -----

func.func @e1(%a: tensor<2x3xf32>) -> tensor<2xi32> {
  // expected-error {{'tosa.argmax' [0 <= axis < rank(shape1)] axis = -1}}
  %0 = tosa.argmax %a {axis = -1 : i64} : (tensor<2x3xf32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// -----

func.func @e2(%a: tensor<1x2x3x4x5xi8>) -> tensor<1x2x3x4xi32> {
  // expected-error {{'tosa.argmax' [rank(shape1) <= 4] input has rank 5}}
  %0 = tosa.argmax %a {axis = 4 : i64} : (tensor<1x2x3x4x5xi8>) -> tensor<1x2x3x4xi32>
  func.return %0 : tensor<1x2x3x4xi32>
}

// -----

// the output drops the axis (a keep-dims output is an error)
func.func @e3(%a: tensor<2x3xi8>) -> tensor<2x1xi32> {
  // expected-error {{'tosa.argmax' [output shape] result shapes [2, 1] do not match the inferred [2]}}
  %0 = tosa.argmax %a {axis = 1 : i64} : (tensor<2x3xi8>) -> tensor<2x1xi32>
  func.return %0 : tensor<2x1xi32>
}

// -----

// no int32 ARGMAX
func.func @e4(%a: tensor<2x3xi32>) -> tensor<2xi32> {
  // expected-error {{'tosa.argmax' [supported data types] unsupported type combination (input, output) = (i32, i32)}}
  %0 = tosa.argmax %a {axis = 1 : i64} : (tensor<2x3xi32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// -----

// out_t is int32_t
func.func @e5(%a: tensor<2x3xf32>) -> tensor<2xi16> {
  // expected-error {{'tosa.argmax' [supported data types] unsupported type combination (input, output) = (f32, i16)}}
  %0 = tosa.argmax %a {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2xi16>
  func.return %0 : tensor<2xi16>
}

// -----

func.func @e6(%a: tensor<1x4x4x1xi16>) -> tensor<1x2x2x1xi16> {
  // expected-error {{'tosa.avg_pool2d' [input_zp == 0 when in_out_t != int8_t] input_zp = 1 but in_out_t is int16_t}}
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, input_zp = 1 : i64, output_zp = 0 : i64} : (tensor<1x4x4x1xi16>) -> tensor<1x2x2x1xi16>
  func.return %0 : tensor<1x2x2x1xi16>
}

// -----

func.func @e7(%a: tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32> {
  // expected-error {{'tosa.avg_pool2d' [output_zp == 0 when in_out_t != int8_t] output_zp = -2 but in_out_t is fp32_t}}
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = -2 : i64} : (tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32>
  func.return %0 : tensor<1x2x2x1xf32>
}

// -----

func.func @e8(%a: tensor<1x4x4x1xi8>) -> tensor<1x2x2x1xi8> {
  // expected-error {{'tosa.avg_pool2d' [output_zp fits i8] output_zp = 200 is outside [-128, 127]}}
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = 200 : i64} : (tensor<1x4x4x1xi8>) -> tensor<1x2x2x1xi8>
  func.return %0 : tensor<1x2x2x1xi8>
}

// -----

func.func @e9(%a: tensor<1x4x4x1xf32>) -> tensor<1x4x5x1xf32> {
  // expected-error {{'tosa.avg_pool2d' [kernel_y, kernel_x >= 1] kernel_x = 0}}
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 1, 0>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<1x4x4x1xf32>) -> tensor<1x4x5x1xf32>
  func.return %0 : tensor<1x4x5x1xf32>
}

// -----

func.func @e10(%a: tensor<1x4x4x1xf32>) -> tensor<1x3x3x1xf32> {
  // expected-error {{'tosa.avg_pool2d' [stride_y, stride_x >= 1] stride_y = 0}}
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 0, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<1x4x4x1xf32>) -> tensor<1x3x3x1xf32>
  func.return %0 : tensor<1x3x3x1xf32>
}

// -----

func.func @e11(%a: tensor<1x4x4x1xf32>) -> tensor<1x3x2x1xf32> {
  // expected-error {{'tosa.avg_pool2d' [pad_top, pad_bottom, pad_left, pad_right >= 0] pad_right = -1}}
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, -1>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<1x4x4x1xf32>) -> tensor<1x3x2x1xf32>
  func.return %0 : tensor<1x3x2x1xf32>
}

// -----

// padding must be smaller than the kernel (no window of padding only)
func.func @e12(%a: tensor<1x4x4x1xf32>) -> tensor<1x5x3x1xf32> {
  // expected-error {{'tosa.avg_pool2d' [pad_top, pad_bottom < kernel_y] pad_top = 2, pad_bottom = 0, kernel_y = 2}}
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, pad = array<i64: 2, 0, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<1x4x4x1xf32>) -> tensor<1x5x3x1xf32>
  func.return %0 : tensor<1x5x3x1xf32>
}

// -----

// inexact division is an error, not a floor
func.func @e13(%a: tensor<1x8x8x1xi8>) -> tensor<1x3x3x1xi8> {
  // expected-error {{'tosa.avg_pool2d' [OH == idiv_check(IH + pad_top + pad_bottom - kernel_y, stride_y) + 1] IH + pad_top + pad_bottom - kernel_y (IH = 8, pad_top = 0, pad_bottom = 0, kernel_y = 3, stride_y = 2) = 5 is not a multiple of stride_y = 2}}
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<1x8x8x1xi8>) -> tensor<1x3x3x1xi8>
  func.return %0 : tensor<1x3x3x1xi8>
}

// -----

// the kernel is wider than the input
func.func @e14(%a: tensor<1x4x2x1xf32>) -> tensor<1x2x0x1xf32> {
  // expected-error {{'tosa.avg_pool2d' [OW == idiv_check(IW + pad_left + pad_right - kernel_x, stride_x) + 1] OW = 0}}
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 2, 3>, stride = array<i64: 2, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<1x4x2x1xf32>) -> tensor<1x2x0x1xf32>
  func.return %0 : tensor<1x2x0x1xf32>
}

// -----

func.func @e15(%a: tensor<4x4x1xf32>) -> tensor<2x2x1xf32> {
  // expected-error {{'tosa.avg_pool2d' [input has shape [N,IH,IW,C]] input has rank 3}}
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<4x4x1xf32>) -> tensor<2x2x1xf32>
  func.return %0 : tensor<2x2x1xf32>
}

// -----

func.func @e16(%a: tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32> {
  // expected-error {{'tosa.avg_pool2d' [pad has 4 elements] pad = [0, 0] has 2 elements}}
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32>
  func.return %0 : tensor<1x2x2x1xf32>
}

// -----

// the output has the input's type (acc_t is internal)
func.func @e17(%a: tensor<1x4x4x1xi8>) -> tensor<1x2x2x1xi32> {
  // expected-error {{'tosa.avg_pool2d' [supported data types] unsupported type combination (input, output) = (i8, i32)}}
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<1x4x4x1xi8>) -> tensor<1x2x2x1xi32>
  func.return %0 : tensor<1x2x2x1xi32>
}

// -----

func.func @e18(%a: tensor<1x4x4x1xi8>) -> tensor<1x3x3x1xi8> {
  // expected-error {{'tosa.max_pool2d' [stride_y, stride_x >= 1] stride_x = 0}}
  %0 = tosa.max_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 1, 0>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x1xi8>) -> tensor<1x3x3x1xi8>
  func.return %0 : tensor<1x3x3x1xi8>
}

// -----

func.func @e19(%a: tensor<1x4x4x1xf32>) -> tensor<1x2x5x1xf32> {
  // expected-error {{'tosa.max_pool2d' [pad_left, pad_right < kernel_x] pad_left = 0, pad_right = 3, kernel_x = 3}}
  %0 = tosa.max_pool2d %a {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 3>} : (tensor<1x4x4x1xf32>) -> tensor<1x2x5x1xf32>
  func.return %0 : tensor<1x2x5x1xf32>
}

// -----

func.func @e20(%a: tensor<1x7x7x1xbf16>) -> tensor<1x3x3x1xbf16> {
  // expected-error {{'tosa.max_pool2d' [OH == idiv_check(IH + pad_top + pad_bottom - kernel_y, stride_y) + 1] IH + pad_top + pad_bottom - kernel_y (IH = 7, pad_top = 0, pad_bottom = 0, kernel_y = 2, stride_y = 2) = 5 is not a multiple of stride_y = 2}}
  %0 = tosa.max_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x7x7x1xbf16>) -> tensor<1x3x3x1xbf16>
  func.return %0 : tensor<1x3x3x1xbf16>
}

// -----

func.func @e21(%a: tensor<1x4x4x1xf16>) -> tensor<1x3x3x1xf16> {
  // expected-error {{'tosa.max_pool2d' [output shape] result shapes [1, 3, 3, 1] do not match the inferred [1, 2, 2, 1]}}
  %0 = tosa.max_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x1xf16>) -> tensor<1x3x3x1xf16>
  func.return %0 : tensor<1x3x3x1xf16>
}

// -----

func.func @e22(%a: tensor<1x4x4x1xi32>) -> tensor<1x2x2x1xi32> {
  // expected-error {{'tosa.max_pool2d' [supported data types] unsupported type combination (input, output) = (i32, i32)}}
  %0 = tosa.max_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x1xi32>) -> tensor<1x2x2x1xi32>
  func.return %0 : tensor<1x2x2x1xi32>
}

// -----

func.func @e23(%x: tensor<1x4x4x1xi16>, %w: tensor<1x1x1x1xi8>, %b: tensor<1xi48>) -> tensor<1x4x4x1xi48> {
  // expected-error {{'tosa.conv2d' [input_zp == 0 when in_t != int8_t] input_zp = 4 but in_t is int16_t}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 4 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xi16>, tensor<1x1x1x1xi8>, tensor<1xi48>) -> tensor<1x4x4x1xi48>
  func.return %0 : tensor<1x4x4x1xi48>
}

// -----

func.func @e24(%x: tensor<1x4x4x1xf32>, %w: tensor<1x1x1x1xf32>, %b: tensor<1xf32>) -> tensor<1x4x4x1xf32> {
  // expected-error {{'tosa.conv2d' [weight_zp == 0 when weight_t != int8_t] weight_zp = 1 but weight_t is fp32_t}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x4x4x1xf32>
  func.return %0 : tensor<1x4x4x1xf32>
}

// -----

// int4 weights have no zero point
func.func @e25(%x: tensor<1x4x4x1xi8>, %w: tensor<1x1x1x1xi4>, %b: tensor<1xi32>) -> tensor<1x4x4x1xi32> {
  // expected-error {{'tosa.conv2d' [weight_zp == 0 when weight_t != int8_t] weight_zp = 1 but weight_t is int4_t}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 1 : i64} : (tensor<1x4x4x1xi8>, tensor<1x1x1x1xi4>, tensor<1xi32>) -> tensor<1x4x4x1xi32>
  func.return %0 : tensor<1x4x4x1xi32>
}

// -----

func.func @e26(%x: tensor<1x4x4x1xi8>, %w: tensor<1x1x1x1xi8>, %b: tensor<1xi32>) -> tensor<1x4x4x1xi32> {
  // expected-error {{'tosa.conv2d' [input_zp fits i8] input_zp = -129 is outside [-128, 127]}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = -129 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xi8>, tensor<1x1x1x1xi8>, tensor<1xi32>) -> tensor<1x4x4x1xi32>
  func.return %0 : tensor<1x4x4x1xi32>
}

// -----

func.func @e27(%x: tensor<1x4x4x1xf32>, %w: tensor<1x1x1x1xf32>, %b: tensor<1xf32>) -> tensor<1x3x4x1xf32> {
  // expected-error {{'tosa.conv2d' [pad_top, pad_bottom, pad_left, pad_right >= 0] pad_top = -1}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: -1, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x3x4x1xf32>
  func.return %0 : tensor<1x3x4x1xf32>
}

// -----

func.func @e28(%x: tensor<1x4x4x1xf32>, %w: tensor<1x1x1x1xf32>, %b: tensor<1xf32>) -> tensor<1x4x4x1xf32> {
  // expected-error {{'tosa.conv2d' [stride_y, stride_x >= 1] stride_y = 0, stride_x = 0}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 0, 0>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x4x4x1xf32>
  func.return %0 : tensor<1x4x4x1xf32>
}

// -----

func.func @e29(%x: tensor<1x4x4x1xf32>, %w: tensor<1x3x3x1xf32>, %b: tensor<1xf32>) -> tensor<1x2x2x1xf32> {
  // expected-error {{'tosa.conv2d' [dilation_y, dilation_x >= 1] dilation_x = 0}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 0>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf32>, tensor<1x3x3x1xf32>, tensor<1xf32>) -> tensor<1x2x2x1xf32>
  func.return %0 : tensor<1x2x2x1xf32>
}

// -----

// TF 'SAME'-style sizes that do not divide exactly must be padded or sliced by the frontend
func.func @e30(%x: tensor<1x8x8x1xi8>, %w: tensor<1x3x3x1xi8>, %b: tensor<1xi32>) -> tensor<1x3x3x1xi32> {
  // expected-error {{'tosa.conv2d' [OH == idiv_check(IH - 1 + pad_top + pad_bottom - (KH - 1) * dilation_y, stride_y) + 1] IH - 1 + pad_top + pad_bottom - (KH - 1) * dilation_y (IH = 8, pad_top = 0, pad_bottom = 0, KH = 3, dilation_y = 1, stride_y = 2) = 5 is not a multiple of stride_y = 2}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x8x8x1xi8>, tensor<1x3x3x1xi8>, tensor<1xi32>) -> tensor<1x3x3x1xi32>
  func.return %0 : tensor<1x3x3x1xi32>
}

// -----

// the dilated kernel spans 1 + (3 - 1) * 3 = 7 > 4 columns: OW = (4 - 1 - 2 * 3) / 1 + 1 = -2
func.func @e31(%x: tensor<1x4x4x1xf32>, %w: tensor<1x3x3x1xf32>, %b: tensor<1xf32>) -> tensor<1x2x1x1xf32> {
  // expected-error {{'tosa.conv2d' [OW == idiv_check(IW - 1 + pad_left + pad_right - (KW - 1) * dilation_x, stride_x) + 1] OW = -2: the dilated kernel is larger than the padded input}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 3>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf32>, tensor<1x3x3x1xf32>, tensor<1xf32>) -> tensor<1x2x1x1xf32>
  func.return %0 : tensor<1x2x1x1xf32>
}

// -----

func.func @e32(%x: tensor<1x4x4x2xf32>, %w: tensor<1x1x1x3xf32>, %b: tensor<1xf32>) -> tensor<1x4x4x1xf32> {
  // expected-error {{'tosa.conv2d' [weight IC == input IC]}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x1x3xf32>, tensor<1xf32>) -> tensor<1x4x4x1xf32>
  func.return %0 : tensor<1x4x4x1xf32>
}

// -----

// no implicit broadcast of the bias
func.func @e33(%x: tensor<1x4x4x1xf32>, %w: tensor<4x1x1x1xf32>, %b: tensor<1xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error {{'tosa.conv2d' [bias has shape [OC]] bias has shape [1], expected [4]}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf32>, tensor<4x1x1x1xf32>, tensor<1xf32>) -> tensor<1x4x4x4xf32>
  func.return %0 : tensor<1x4x4x4xf32>
}

// -----

func.func @e34(%x: tensor<1x4x4x1xi8>, %w: tensor<2x3x3x1xi8>, %b: tensor<2xi32>) -> tensor<1x4x4x2xi32> {
  // expected-error {{'tosa.conv2d' [output shape] result shapes [1, 4, 4, 2] do not match the inferred [1, 2, 2, 2]}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xi8>, tensor<2x3x3x1xi8>, tensor<2xi32>) -> tensor<1x4x4x2xi32>
  func.return %0 : tensor<1x4x4x2xi32>
}

// -----

// 16x8 accumulates in int48
func.func @e35(%x: tensor<1x4x4x1xi16>, %w: tensor<1x1x1x1xi8>, %b: tensor<1xi32>) -> tensor<1x4x4x1xi32> {
  // expected-error {{'tosa.conv2d' [supported data types] unsupported type combination (input, weight, bias, output) = (i16, i8, i32, i32)}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xi16>, tensor<1x1x1x1xi8>, tensor<1xi32>) -> tensor<1x4x4x1xi32>
  func.return %0 : tensor<1x4x4x1xi32>
}

// -----

// bf16 accumulates in fp32
func.func @e36(%x: tensor<1x4x4x1xbf16>, %w: tensor<1x1x1x1xbf16>, %b: tensor<1xbf16>) -> tensor<1x4x4x1xbf16> {
  // expected-error {{'tosa.conv2d' [supported data types] unsupported type combination (input, weight, bias, output) = (bf16, bf16, bf16, bf16)}}
  %0 = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xbf16>, tensor<1x1x1x1xbf16>, tensor<1xbf16>) -> tensor<1x4x4x1xbf16>
  func.return %0 : tensor<1x4x4x1xbf16>
}

// -----

func.func @e37(%x: tensor<1x5x4x4x1xf32>, %w: tensor<1x2x1x1x1xf32>, %b: tensor<1xf32>) -> tensor<1x2x4x4x1xf32> {
  // expected-error {{'tosa.conv3d' [OD == idiv_check(ID - 1 + pad_d0 + pad_d1 - (KD - 1) * dilation_d, stride_d) + 1] ID - 1 + pad_d0 + pad_d1 - (KD - 1) * dilation_d (ID = 5, pad_d0 = 0, pad_d1 = 0, KD = 2, dilation_d = 1, stride_d = 2) = 3 is not a multiple of stride_d = 2}}
  %0 = tosa.conv3d %x, %w, %b {pad = array<i64: 0, 0, 0, 0, 0, 0>, stride = array<i64: 2, 1, 1>, dilation = array<i64: 1, 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x5x4x4x1xf32>, tensor<1x2x1x1x1xf32>, tensor<1xf32>) -> tensor<1x2x4x4x1xf32>
  func.return %0 : tensor<1x2x4x4x1xf32>
}

// -----

func.func @e38(%x: tensor<1x2x4x4x1xf32>, %w: tensor<1x1x1x1x1xf32>, %b: tensor<1xf32>) -> tensor<1x2x4x4x1xf32> {
  // expected-error {{'tosa.conv3d' [pad has 6 elements] pad = [0, 0, 0, 0] has 4 elements}}
  %0 = tosa.conv3d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1, 1>, dilation = array<i64: 1, 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x4x4x1xf32>, tensor<1x1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x2x4x4x1xf32>
  func.return %0 : tensor<1x2x4x4x1xf32>
}

// -----

func.func @e39(%x: tensor<1x2x4x4x1xf32>, %w: tensor<1x1x1x1x1xf32>, %b: tensor<1xf32>) -> tensor<1x1x4x4x1xf32> {
  // expected-error {{'tosa.conv3d' [pad_d0, pad_d1, pad_top, pad_bottom, pad_left, pad_right >= 0] pad_d1 = -1}}
  %0 = tosa.conv3d %x, %w, %b {pad = array<i64: 0, -1, 0, 0, 0, 0>, stride = array<i64: 1, 1, 1>, dilation = array<i64: 1, 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x4x4x1xf32>, tensor<1x1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x4x4x1xf32>
  func.return %0 : tensor<1x1x4x4x1xf32>
}

// -----

func.func @e40(%x: tensor<1x2x4x4x1xf32>, %w: tensor<1x1x1x1x1xf32>, %b: tensor<1xf32>) -> tensor<1x2x4x4x1xf32> {
  // expected-error {{'tosa.conv3d' [dilation_d, dilation_y, dilation_x >= 1] dilation_d = 0}}
  %0 = tosa.conv3d %x, %w, %b {pad = array<i64: 0, 0, 0, 0, 0, 0>, stride = array<i64: 1, 1, 1>, dilation = array<i64: 0, 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x4x4x1xf32>, tensor<1x1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x2x4x4x1xf32>
  func.return %0 : tensor<1x2x4x4x1xf32>
}

// -----

func.func @e41(%x: tensor<1x2x4x4x1xf32>, %w: tensor<1x1x1x1xf32>, %b: tensor<1xf32>) -> tensor<1x2x4x4x1xf32> {
  // expected-error {{'tosa.conv3d' [weight has shape [OC,KD,KH,KW,IC]] weight has rank 4}}
  %0 = tosa.conv3d %x, %w, %b {pad = array<i64: 0, 0, 0, 0, 0, 0>, stride = array<i64: 1, 1, 1>, dilation = array<i64: 1, 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x4x4x1xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x2x4x4x1xf32>
  func.return %0 : tensor<1x2x4x4x1xf32>
}

// -----

func.func @e42(%x: tensor<1x2x4x4x1xi8>, %w: tensor<1x1x1x1x1xi16>, %b: tensor<1xi32>) -> tensor<1x2x4x4x1xi32> {
  // expected-error {{'tosa.conv3d' [supported data types] unsupported type combination (input, weight, bias, output) = (i8, i16, i32, i32)}}
  %0 = tosa.conv3d %x, %w, %b {pad = array<i64: 0, 0, 0, 0, 0, 0>, stride = array<i64: 1, 1, 1>, dilation = array<i64: 1, 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x2x4x4x1xi8>, tensor<1x1x1x1x1xi16>, tensor<1xi32>) -> tensor<1x2x4x4x1xi32>
  func.return %0 : tensor<1x2x4x4x1xi32>
}

// -----

func.func @e43(%x: tensor<1x4x4x2xf32>, %w: tensor<1x1x2x3xf32>, %b: tensor<2xf32>) -> tensor<1x4x4x6xf32> {
  // expected-error {{'tosa.depthwise_conv2d' [bias has shape [C*M]] bias has shape [2], expected [6]}}
  %0 = tosa.depthwise_conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>, tensor<2xf32>) -> tensor<1x4x4x6xf32>
  func.return %0 : tensor<1x4x4x6xf32>
}

// -----

func.func @e44(%x: tensor<1x4x4x2xf32>, %w: tensor<1x1x3x1xf32>, %b: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  // expected-error {{'tosa.depthwise_conv2d' [weight C == input C]}}
  %0 = tosa.depthwise_conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x2xf32>, tensor<1x1x3x1xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  func.return %0 : tensor<1x4x4x3xf32>
}

// -----

func.func @e45(%x: tensor<1x4x5x1xi8>, %w: tensor<1x2x1x1xi8>, %b: tensor<1xi32>) -> tensor<1x4x2x1xi32> {
  // expected-error {{'tosa.depthwise_conv2d' [OW == idiv_check(IW - 1 + pad_left + pad_right - (KW - 1) * dilation_x, stride_x) + 1] IW - 1 + pad_left + pad_right - (KW - 1) * dilation_x (IW = 5, pad_left = 0, pad_right = 0, KW = 2, dilation_x = 1, stride_x = 2) = 3 is not a multiple of stride_x = 2}}
  %0 = tosa.depthwise_conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 2>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x5x1xi8>, tensor<1x2x1x1xi8>, tensor<1xi32>) -> tensor<1x4x2x1xi32>
  func.return %0 : tensor<1x4x2x1xi32>
}

// -----

func.func @e46(%x: tensor<1x4x4x1xf16>, %w: tensor<1x1x1x1xf16>, %b: tensor<1xf16>) -> tensor<1x4x4x1xf16> {
  // expected-error {{'tosa.depthwise_conv2d' [weight_zp == 0 when weight_t != int8_t] weight_zp = -5 but weight_t is fp16_t}}
  %0 = tosa.depthwise_conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = -5 : i64} : (tensor<1x4x4x1xf16>, tensor<1x1x1x1xf16>, tensor<1xf16>) -> tensor<1x4x4x1xf16>
  func.return %0 : tensor<1x4x4x1xf16>
}

// -----

func.func @e47(%x: tensor<1x4x4x1xf32>, %w: tensor<1x1x1x1xf16>, %b: tensor<1xf32>) -> tensor<1x4x4x1xf32> {
  // expected-error {{'tosa.depthwise_conv2d' [supported data types] unsupported type combination (input, weight, bias, output) = (f32, f16, f32, f32)}}
  %0 = tosa.depthwise_conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf16>, tensor<1xf32>) -> tensor<1x4x4x1xf32>
  func.return %0 : tensor<1x4x4x1xf32>
}

// -----

func.func @e48(%re: tensor<1x6x8xf32>, %im: tensor<1x6x8xf32>) -> tensor<1x6x8xf32> {
  // expected-error {{'tosa.fft2d' [power_of_two(H)] H = 6 is not a power of two}}
  %0, %1 = tosa.fft2d %re, %im {inverse = false} : (tensor<1x6x8xf32>, tensor<1x6x8xf32>) -> (tensor<1x6x8xf32>, tensor<1x6x8xf32>)
  func.return %0 : tensor<1x6x8xf32>
}

// -----

func.func @e49(%re: tensor<1x4x3xf32>, %im: tensor<1x4x3xf32>) -> tensor<1x4x3xf32> {
  // expected-error {{'tosa.fft2d' [power_of_two(W)] W = 3 is not a power of two}}
  %0, %1 = tosa.fft2d %re, %im {inverse = true} : (tensor<1x4x3xf32>, tensor<1x4x3xf32>) -> (tensor<1x4x3xf32>, tensor<1x4x3xf32>)
  func.return %0 : tensor<1x4x3xf32>
}

// -----

func.func @e50(%re: tensor<1x4x4xf32>, %im: tensor<2x4x4xf32>) -> tensor<1x4x4xf32> {
  // expected-error {{'tosa.fft2d' [input_imag has the shape of input_real]}}
  %0, %1 = tosa.fft2d %re, %im {inverse = false} : (tensor<1x4x4xf32>, tensor<2x4x4xf32>) -> (tensor<1x4x4xf32>, tensor<1x4x4xf32>)
  func.return %0 : tensor<1x4x4xf32>
}

// -----

// FFT2D is fp32 only
func.func @e51(%re: tensor<1x4x4xf16>, %im: tensor<1x4x4xf16>) -> tensor<1x4x4xf16> {
  // expected-error {{'tosa.fft2d' [supported data types] unsupported type combination (input_real, input_imag, output_real, output_imag) = (f16, f16, f16, f16)}}
  %0, %1 = tosa.fft2d %re, %im {inverse = false} : (tensor<1x4x4xf16>, tensor<1x4x4xf16>) -> (tensor<1x4x4xf16>, tensor<1x4x4xf16>)
  func.return %0 : tensor<1x4x4xf16>
}

// -----

func.func @e52(%x: tensor<2x3xi16>, %w: tensor<4x3xi8>, %b: tensor<4xi48>) -> tensor<2x4xi48> {
  // expected-error {{'tosa.fully_connected' [input_zp == 0 when in_t != int8_t] input_zp = 3 but in_t is int16_t}}
  %0 = tosa.fully_connected %x, %w, %b {input_zp = 3 : i64, weight_zp = 0 : i64} : (tensor<2x3xi16>, tensor<4x3xi8>, tensor<4xi48>) -> tensor<2x4xi48>
  func.return %0 : tensor<2x4xi48>
}

// -----

func.func @e53(%x: tensor<2x3xf32>, %w: tensor<4x5xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error {{'tosa.fully_connected' [weight IC == input IC]}}
  %0 = tosa.fully_connected %x, %w, %b {input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<2x3xf32>, tensor<4x5xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

// 8x8 accumulates in int32
func.func @e54(%x: tensor<2x3xi8>, %w: tensor<4x3xi8>, %b: tensor<4xi48>) -> tensor<2x4xi48> {
  // expected-error {{'tosa.fully_connected' [supported data types] unsupported type combination (input, weight, bias, output) = (i8, i8, i48, i48)}}
  %0 = tosa.fully_connected %x, %w, %b {input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<2x3xi8>, tensor<4x3xi8>, tensor<4xi48>) -> tensor<2x4xi48>
  func.return %0 : tensor<2x4xi48>
}

// -----

func.func @e55(%a: tensor<1x2x3xf32>, %b: tensor<1x3x4xf32>) -> tensor<1x2x4xf32> {
  // expected-error {{'tosa.matmul' [A_zp == 0 when in_t != int8_t] A_zp = 1 but in_t is fp32_t}}
  %0 = tosa.matmul %a, %b {A_zp = 1 : i64, B_zp = 0 : i64} : (tensor<1x2x3xf32>, tensor<1x3x4xf32>) -> tensor<1x2x4xf32>
  func.return %0 : tensor<1x2x4xf32>
}

// -----

func.func @e56(%a: tensor<1x2x3xi16>, %b: tensor<1x3x4xi16>) -> tensor<1x2x4xi48> {
  // expected-error {{'tosa.matmul' [B_zp == 0 when in_t != int8_t] B_zp = -7 but in_t is int16_t}}
  %0 = tosa.matmul %a, %b {A_zp = 0 : i64, B_zp = -7 : i64} : (tensor<1x2x3xi16>, tensor<1x3x4xi16>) -> tensor<1x2x4xi48>
  func.return %0 : tensor<1x2x4xi48>
}

// -----

func.func @e57(%a: tensor<1x2x3xf32>, %b: tensor<1x4x4xf32>) -> tensor<1x2x4xf32> {
  // expected-error {{'tosa.matmul' [B has shape [N,C,W] with N, C of A [N,H,C]] A has shape [1, 2, 3], B has shape [1, 4, 4]}}
  %0 = tosa.matmul %a, %b {A_zp = 0 : i64, B_zp = 0 : i64} : (tensor<1x2x3xf32>, tensor<1x4x4xf32>) -> tensor<1x2x4xf32>
  func.return %0 : tensor<1x2x4xf32>
}

// -----

// MATMUL is batched rank 3 only
func.func @e58(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error {{'tosa.matmul' [A has shape [N,H,C]] A has rank 2}}
  %0 = tosa.matmul %a, %b {A_zp = 0 : i64, B_zp = 0 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

// 16x16 accumulates in int48
func.func @e59(%a: tensor<1x2x3xi16>, %b: tensor<1x3x4xi16>) -> tensor<1x2x4xi32> {
  // expected-error {{'tosa.matmul' [supported data types] unsupported type combination (A, B, output) = (i16, i16, i32)}}
  %0 = tosa.matmul %a, %b {A_zp = 0 : i64, B_zp = 0 : i64} : (tensor<1x2x3xi16>, tensor<1x3x4xi16>) -> tensor<1x2x4xi32>
  func.return %0 : tensor<1x2x4xi32>
}

// -----

// A and B share in_t
func.func @e60(%a: tensor<1x2x3xi8>, %b: tensor<1x3x4xi16>) -> tensor<1x2x4xi48> {
  // expected-error {{'tosa.matmul' [supported data types] unsupported type combination (A, B, output) = (i8, i16, i48)}}
  %0 = tosa.matmul %a, %b {A_zp = 0 : i64, B_zp = 0 : i64} : (tensor<1x2x3xi8>, tensor<1x3x4xi16>) -> tensor<1x2x4xi48>
  func.return %0 : tensor<1x2x4xi48>
}

// -----

func.func @e61(%a: tensor<1x4x12xf32>) -> tensor<1x3x7xf32> {
  // expected-error {{'tosa.rfft2d' [power_of_two(W)] W = 12 is not a power of two}}
  %0, %1 = tosa.rfft2d %a : (tensor<1x4x12xf32>) -> (tensor<1x3x7xf32>, tensor<1x3x7xf32>)
  func.return %0 : tensor<1x3x7xf32>
}

// -----

func.func @e62(%a: tensor<1x6x4xf32>) -> tensor<1x4x3xf32> {
  // expected-error {{'tosa.rfft2d' [power_of_two(H)] H = 6 is not a power of two}}
  %0, %1 = tosa.rfft2d %a : (tensor<1x6x4xf32>) -> (tensor<1x4x3xf32>, tensor<1x4x3xf32>)
  func.return %0 : tensor<1x4x3xf32>
}

// -----

// every dimension is >= 1 (spec 1.8.1), so H = 0 is rejected before power_of_two
func.func @e63(%a: tensor<1x0x4xf32>) -> tensor<1x1x3xf32> {
  // expected-error {{'tosa.rfft2d' [tensor dimensions >= 1] input has shape [1, 0, 4]}}
  %0, %1 = tosa.rfft2d %a : (tensor<1x0x4xf32>) -> (tensor<1x1x3xf32>, tensor<1x1x3xf32>)
  func.return %0 : tensor<1x1x3xf32>
}

// -----

// the outputs are [N,H/2+1,W/2+1], not the [N,H,W] of the spec's pseudocode
func.func @e64(%a: tensor<1x8x8xf32>) -> tensor<1x8x8xf32> {
  // expected-error {{'tosa.rfft2d' [output shape] result shapes [1, 8, 8], [1, 8, 8] do not match the inferred [1, 5, 5], [1, 5, 5]}}
  %0, %1 = tosa.rfft2d %a : (tensor<1x8x8xf32>) -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>)
  func.return %0 : tensor<1x8x8xf32>
}

// -----

// both spatial axes are halved (numpy's rfft2 halves only the last)
func.func @e65(%a: tensor<1x8x8xf32>) -> tensor<1x8x5xf32> {
  // expected-error {{'tosa.rfft2d' [output shape] result shapes [1, 8, 5], [1, 8, 5] do not match the inferred [1, 5, 5], [1, 5, 5]}}
  %0, %1 = tosa.rfft2d %a : (tensor<1x8x8xf32>) -> (tensor<1x8x5xf32>, tensor<1x8x5xf32>)
  func.return %0 : tensor<1x8x5xf32>
}

// -----

func.func @e66(%a: tensor<1x8x8xbf16>) -> tensor<1x5x5xbf16> {
  // expected-error {{'tosa.rfft2d' [supported data types] unsupported type combination (input, output_real, output_imag) = (bf16, bf16, bf16)}}
  %0, %1 = tosa.rfft2d %a : (tensor<1x8x8xbf16>) -> (tensor<1x5x5xbf16>, tensor<1x5x5xbf16>)
  func.return %0 : tensor<1x5x5xbf16>
}

// -----

func.func @e67(%x: tensor<1x4x4x1xf32>, %w: tensor<1x3x3x1xf32>, %b: tensor<1xf32>) -> tensor<1x7x6x1xf32> {
  // expected-error {{'tosa.transpose_conv2d' [out_pad_top, out_pad_bottom >= 0] out_pad_bottom = -1}}
  %0 = tosa.transpose_conv2d %x, %w, %b {out_pad = array<i64: 0, -1, 0, 0>, stride = array<i64: 1, 1>, out_shape = array<i64: 1, 7, 6, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf32>, tensor<1x3x3x1xf32>, tensor<1xf32>) -> tensor<1x7x6x1xf32>
  func.return %0 : tensor<1x7x6x1xf32>
}

// -----

func.func @e68(%x: tensor<1x4x4x1xf32>, %w: tensor<1x3x3x1xf32>, %b: tensor<1xf32>) -> tensor<1x6x8x1xf32> {
  // expected-error {{'tosa.transpose_conv2d' [out_pad_left, out_pad_right >= 0] out_pad_left = -2}}
  %0 = tosa.transpose_conv2d %x, %w, %b {out_pad = array<i64: 0, 0, -2, 0>, stride = array<i64: 1, 1>, out_shape = array<i64: 1, 6, 8, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf32>, tensor<1x3x3x1xf32>, tensor<1xf32>) -> tensor<1x6x8x1xf32>
  func.return %0 : tensor<1x6x8x1xf32>
}

// -----

func.func @e69(%x: tensor<1x4x4x1xf32>, %w: tensor<1x3x3x1xf32>, %b: tensor<1xf32>) -> tensor<1x6x3x1xf32> {
  // expected-error {{'tosa.transpose_conv2d' [stride_y, stride_x >= 1] stride_x = 0}}
  %0 = tosa.transpose_conv2d %x, %w, %b {out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 0>, out_shape = array<i64: 1, 6, 3, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf32>, tensor<1x3x3x1xf32>, tensor<1xf32>) -> tensor<1x6x3x1xf32>
  func.return %0 : tensor<1x6x3x1xf32>
}

// -----

// OH = (4 - 1) * 2 + 3 = 9
func.func @e70(%x: tensor<1x4x4x1xi8>, %w: tensor<1x3x3x1xi8>, %b: tensor<1xi32>) -> tensor<1x8x9x1xi32> {
  // expected-error {{'tosa.transpose_conv2d' [OH == (IH - 1) * stride_y - out_pad_top - out_pad_bottom + KH] out_shape gives OH = 8 but the input gives 9}}
  %0 = tosa.transpose_conv2d %x, %w, %b {out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, out_shape = array<i64: 1, 8, 9, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xi8>, tensor<1x3x3x1xi8>, tensor<1xi32>) -> tensor<1x8x9x1xi32>
  func.return %0 : tensor<1x8x9x1xi32>
}

// -----

// out_pad crops: OW = (4 - 1) * 1 - 1 + 3 = 5
func.func @e71(%x: tensor<1x4x4x1xf32>, %w: tensor<1x3x3x1xf32>, %b: tensor<1xf32>) -> tensor<1x6x6x1xf32> {
  // expected-error {{'tosa.transpose_conv2d' [OW == (IW - 1) * stride_x - out_pad_left - out_pad_right + KW] out_shape gives OW = 6 but the input gives 5}}
  %0 = tosa.transpose_conv2d %x, %w, %b {out_pad = array<i64: 0, 0, 1, 0>, stride = array<i64: 1, 1>, out_shape = array<i64: 1, 6, 6, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf32>, tensor<1x3x3x1xf32>, tensor<1xf32>) -> tensor<1x6x6x1xf32>
  func.return %0 : tensor<1x6x6x1xf32>
}

// -----

func.func @e72(%x: tensor<1x4x4x1xf32>, %w: tensor<1x3x3x1xf32>, %b: tensor<1xf32>) -> tensor<1x6x6x2xf32> {
  // expected-error {{'tosa.transpose_conv2d' [out_shape[3] == OC] out_shape = [1, 6, 6, 2] but OC = 1}}
  %0 = tosa.transpose_conv2d %x, %w, %b {out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, out_shape = array<i64: 1, 6, 6, 2>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xf32>, tensor<1x3x3x1xf32>, tensor<1xf32>) -> tensor<1x6x6x2xf32>
  func.return %0 : tensor<1x6x6x2xf32>
}

// -----

// out_shape is consistent with the input but not with the result type
func.func @e73(%x: tensor<1x4x5x1xf32>, %w: tensor<1x3x3x1xf32>, %b: tensor<1xf32>) -> tensor<1x6x6x1xf32> {
  // expected-error {{'tosa.transpose_conv2d' [output shape] result shapes [1, 6, 6, 1] do not match the inferred [1, 6, 7, 1]}}
  %0 = tosa.transpose_conv2d %x, %w, %b {out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, out_shape = array<i64: 1, 6, 7, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x5x1xf32>, tensor<1x3x3x1xf32>, tensor<1xf32>) -> tensor<1x6x6x1xf32>
  func.return %0 : tensor<1x6x6x1xf32>
}

// -----

func.func @e74(%x: tensor<1x4x4x1xbf16>, %w: tensor<1x1x1x1xbf16>, %b: tensor<1xf32>) -> tensor<1x4x4x1xf32> {
  // expected-error {{'tosa.transpose_conv2d' [weight_zp == 0 when weight_t != int8_t] weight_zp = 2 but weight_t is bf16_t}}
  %0 = tosa.transpose_conv2d %x, %w, %b {out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, out_shape = array<i64: 1, 4, 4, 1>, input_zp = 0 : i64, weight_zp = 2 : i64} : (tensor<1x4x4x1xbf16>, tensor<1x1x1x1xbf16>, tensor<1xf32>) -> tensor<1x4x4x1xf32>
  func.return %0 : tensor<1x4x4x1xf32>
}

// -----

func.func @e75(%x: tensor<1x4x4x1xi8>, %w: tensor<1x1x1x1xi8>, %b: tensor<1xf32>) -> tensor<1x4x4x1xf32> {
  // expected-error {{'tosa.transpose_conv2d' [supported data types] unsupported type combination (input, weight, bias, output) = (i8, i8, f32, f32)}}
  %0 = tosa.transpose_conv2d %x, %w, %b {out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, out_shape = array<i64: 1, 4, 4, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x1xi8>, tensor<1x1x1x1xi8>, tensor<1xf32>) -> tensor<1x4x4x1xf32>
  func.return %0 : tensor<1x4x4x1xf32>
}

// -----

func.func @e76(%a: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error {{'tosa.clamp' [min_val <= max_val] min_val = 5 > max_val = 4}}
  %0 = tosa.clamp %a {min_val = 5 : i64, max_val = 4 : i64} : (tensor<4xi8>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @e77(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error {{'tosa.clamp' [min_val <= max_val] min_val = 1.0 > max_val = -1.0}}
  %0 = tosa.clamp %a {min_val = 1.0 : f32, max_val = -1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// the bounds are in_out_t values
func.func @e78(%a: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error {{'tosa.clamp' [max_val fits i8] max_val = 255 is outside [-128, 127]}}
  %0 = tosa.clamp %a {min_val = 0 : i64, max_val = 255 : i64} : (tensor<4xi8>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @e79(%a: tensor<4xi16>) -> tensor<4xi16> {
  // expected-error {{'tosa.clamp' [min_val is an integer attribute for an integer in_out_t]}}
  %0 = tosa.clamp %a {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<4xi16>) -> tensor<4xi16>
  func.return %0 : tensor<4xi16>
}

// -----

func.func @e80(%a: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error {{'tosa.clamp' [max_val is a float attribute for a float in_out_t]}}
  %0 = tosa.clamp %a {min_val = 0.0 : f32, max_val = 6 : i64} : (tensor<4xf16>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// -----

// there is no int32 CLAMP
func.func @e81(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error {{'tosa.clamp' [supported data types] unsupported type combination (input, output) = (i32, i32)}}
  %0 = tosa.clamp %a {min_val = 0 : i64, max_val = 6 : i64} : (tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @e82(%a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error {{'tosa.clamp' [supported data types] unsupported type combination (input, output) = (f32, f16)}}
  %0 = tosa.clamp %a {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<4xf32>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// -----

func.func @e83(%a: tensor<4xi8>) -> tensor<2x2xi8> {
  // expected-error {{'tosa.clamp' [output shape] result shapes [2, 2] do not match the inferred [4]}}
  %0 = tosa.clamp %a {min_val = 0 : i64, max_val = 6 : i64} : (tensor<4xi8>) -> tensor<2x2xi8>
  func.return %0 : tensor<2x2xi8>
}

// -----

// integer sigmoid is a TABLE
func.func @e84(%a: tensor<4xi16>) -> tensor<4xi16> {
  // expected-error {{'tosa.sigmoid' [supported data types] unsupported type combination (input, output) = (i16, i16)}}
  %0 = tosa.sigmoid %a : (tensor<4xi16>) -> tensor<4xi16>
  func.return %0 : tensor<4xi16>
}

// -----

func.func @e85(%a: tensor<4xf32>) -> tensor<1x4xf32> {
  // expected-error {{'tosa.sigmoid' [output shape] result shapes [1, 4] do not match the inferred [4]}}
  %0 = tosa.sigmoid %a : (tensor<4xf32>) -> tensor<1x4xf32>
  func.return %0 : tensor<1x4xf32>
}

// -----

// integer tanh is a TABLE
func.func @e86(%a: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error {{'tosa.tanh' [supported data types] unsupported type combination (input, output) = (i8, i8)}}
  %0 = tosa.tanh %a : (tensor<4xi8>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

// TOSA 0.30 shapes are static
func.func @e87(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error {{'tosa.tanh' [tensor dimensions >= 1] input has shape [?, 4]}}
  %0 = tosa.tanh %a : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}
