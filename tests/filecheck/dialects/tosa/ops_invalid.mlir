// RUN: nnkiln opt --split-input-file --verify-diagnostics %s

// At least one ERROR_IF case (or unsupported type combination) per TOSA 0.30 operator, one
// `// -----` chunk each; every expected message names the rule and the offending values.
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

// -----

// Invalid uses of the TOSA 0.30 §2.5-§2.8 elementwise ops: at least one ERROR_IF or unsupported
// type combination per op (the message names the rule and the offending values).

func.func @add_rank(%a: tensor<2x3xi32>, %b: tensor<3xi32>) {
  // expected-error {{operand ranks differ: [2, 1]}}
  %0 = tosa.add %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  func.return
}

// -----

func.func @add_i8(%a: tensor<3xi8>) {
  // expected-error {{unsupported type combination (input1, input2, output) = (i8, i8, i8)}}
  %0 = tosa.add %a, %a : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @add_mixed(%a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error {{= (f32, f16, f32)}}
  %0 = tosa.add %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  func.return
}

// -----

func.func @add_output_shape(%a: tensor<1x3xi32>, %b: tensor<1x3xi32>) {
  // expected-error {{result shapes [4, 3] do not match the inferred [1, 3]}}
  %0 = tosa.add %a, %b : (tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<4x3xi32>
  func.return
}

// -----

func.func @ars_i1(%a: tensor<3xi1>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.arithmetic_right_shift %a, %a {round = false} : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return
}

// -----

func.func @ars_f32(%a: tensor<3xf32>) {
  // expected-error {{= (f32, f32, f32)}}
  %0 = tosa.arithmetic_right_shift %a, %a {round = true} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @bitwise_and_f32(%a: tensor<3xf32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.bitwise_and %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @bitwise_or_broadcast(%a: tensor<2x3xi16>, %b: tensor<2x2xi16>) {
  // expected-error {{dimensions [3, 2] cannot broadcast}}
  %0 = tosa.bitwise_or %a, %b : (tensor<2x3xi16>, tensor<2x2xi16>) -> tensor<2x3xi16>
  func.return
}

// -----

func.func @bitwise_xor_bool(%a: tensor<3xi1>) {
  // expected-error {{= (bool, bool, bool)}}
  %0 = tosa.bitwise_xor %a, %a : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return
}

// -----

func.func @intdiv_i16(%a: tensor<3xi16>) {
  // expected-error {{supported: signed 32 (i32, i32, i32)}}
  %0 = tosa.intdiv %a, %a : (tensor<3xi16>, tensor<3xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @intdiv_f32(%a: tensor<3xf32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.intdiv %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @logical_and_i8(%a: tensor<3xi8>) {
  // expected-error {{supported: Boolean (bool, bool, bool)}}
  %0 = tosa.logical_and %a, %a : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @lls_f16(%a: tensor<3xf16>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.logical_left_shift %a, %a : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  func.return
}

// -----

func.func @lrs_broadcast(%a: tensor<2x3xi32>, %b: tensor<3x3xi32>) {
  // expected-error {{dimensions [2, 3] cannot broadcast}}
  %0 = tosa.logical_right_shift %a, %b : (tensor<2x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi32>
  func.return
}

// -----

func.func @logical_or_i32(%a: tensor<3xi32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.logical_or %a, %a : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @logical_xor_out(%a: tensor<3xi1>) {
  // expected-error {{= (bool, bool, i8)}}
  %0 = tosa.logical_xor %a, %a : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi8>
  func.return
}

// -----

func.func @maximum_i16(%a: tensor<3xi16>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.maximum %a, %a : (tensor<3xi16>, tensor<3xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @minimum_rank(%a: tensor<1x3xf32>, %b: tensor<1x1x3xf32>) {
  // expected-error {{operand ranks differ}}
  %0 = tosa.minimum %a, %b : (tensor<1x3xf32>, tensor<1x1x3xf32>) -> tensor<1x1x3xf32>
  func.return
}

// -----

func.func @mul_shift_i8(%a: tensor<3xi8>) {
  // expected-error {{ERROR_IF(in_t != int32_t && shift > 0)}}
  %0 = tosa.mul %a, %a {shift = 1 : i64} : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi32>
  func.return
}

// -----

func.func @mul_shift_f32(%a: tensor<3xf32>) {
  // expected-error {{shift = 2 with in_t = f32}}
  %0 = tosa.mul %a, %a {shift = 2 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @mul_shift_range(%a: tensor<3xi32>) {
  // expected-error {{shift = 64 is outside [0, 63]}}
  %0 = tosa.mul %a, %a {shift = 64 : i64} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @mul_shift_negative(%a: tensor<3xi32>) {
  // expected-error {{[shift fits uint6]}}
  %0 = tosa.mul %a, %a {shift = -1 : i64} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @mul_i8_to_i8(%a: tensor<3xi8>) {
  // expected-error {{= (i8, i8, i8)}}
  %0 = tosa.mul %a, %a : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @mul_i16_to_i16(%a: tensor<3xi16>) {
  // expected-error {{signed 16 (i16, i16, i32)}}
  %0 = tosa.mul %a, %a : (tensor<3xi16>, tensor<3xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @pow_i32(%a: tensor<3xi32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.pow %a, %a : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @pow_rank5(%a: tensor<1x1x1x1x2xf32>) {
  // expected-error {{[1 <= rank(input1) <= 4] input1 has rank 5}}
  %0 = tosa.pow %a, %a : (tensor<1x1x1x1x2xf32>, tensor<1x1x1x1x2xf32>) -> tensor<1x1x1x1x2xf32>
  func.return
}

// -----

func.func @pow_rank0(%a: tensor<f32>) {
  // expected-error {{input1 has rank 0}}
  %0 = tosa.pow %a, %a : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return
}

// -----

func.func @sub_i8(%a: tensor<3xi8>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.sub %a, %a : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @table_i8_513(%a: tensor<3xi8>, %t: tensor<513xi8>) {
  // expected-error {{table has 513 entries but TABLE_SIZE = 256 for i8 input}}
  %0 = tosa.table %a, %t : (tensor<3xi8>, tensor<513xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @table_i16_256(%a: tensor<3xi16>, %t: tensor<256xi16>) {
  // expected-error {{TABLE_SIZE = 513 for i16 input}}
  %0 = tosa.table %a, %t : (tensor<3xi16>, tensor<256xi16>) -> tensor<3xi32>
  func.return
}

// -----

func.func @table_len(%a: tensor<3xi8>, %t: tensor<255xi8>) {
  // expected-error {{table has 255 entries}}
  %0 = tosa.table %a, %t : (tensor<3xi8>, tensor<255xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @table_rank(%a: tensor<3xi8>, %t: tensor<1x256xi8>) {
  // expected-error {{not rank 1}}
  %0 = tosa.table %a, %t : (tensor<3xi8>, tensor<1x256xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @table_i16_out(%a: tensor<3xi16>, %t: tensor<513xi16>) {
  // expected-error {{= (i16, i16, i16)}}
  %0 = tosa.table %a, %t : (tensor<3xi16>, tensor<513xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @table_shape(%a: tensor<3xi8>, %t: tensor<256xi8>) {
  // expected-error {{result shapes [4] do not match the inferred [3]}}
  %0 = tosa.table %a, %t : (tensor<3xi8>, tensor<256xi8>) -> tensor<4xi8>
  func.return
}

// -----

func.func @abs_i8(%a: tensor<3xi8>) {
  // expected-error {{unsupported type combination (input1, output) = (i8, i8)}}
  %0 = tosa.abs %a : (tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @abs_shape(%a: tensor<3xf32>) {
  // expected-error {{result shapes [1, 3] do not match the inferred [3]}}
  %0 = tosa.abs %a : (tensor<3xf32>) -> tensor<1x3xf32>
  func.return
}

// -----

func.func @bitwise_not_f32(%a: tensor<3xf32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.bitwise_not %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @ceil_i32(%a: tensor<3xi32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.ceil %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @clz_i8(%a: tensor<3xi8>) {
  // expected-error {{supported: signed 32 (i32, i32)}}
  %0 = tosa.clz %a : (tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @exp_mixed(%a: tensor<3xf32>) {
  // expected-error {{= (f32, f16)}}
  %0 = tosa.exp %a : (tensor<3xf32>) -> tensor<3xf16>
  func.return
}

// -----

func.func @floor_i32(%a: tensor<3xi32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.floor %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @log_shape(%a: tensor<2x3xf16>) {
  // expected-error {{do not match the inferred [2, 3]}}
  %0 = tosa.log %a : (tensor<2x3xf16>) -> tensor<3x2xf16>
  func.return
}

// -----

func.func @logical_not_i8(%a: tensor<3xi8>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.logical_not %a : (tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @negate_zp_i16(%a: tensor<3xi16>) {
  // expected-error {{ERROR_IF(in_out_t != int8_t && input1_zp != 0)}}
  %0 = tosa.negate %a {input1_zp = 1 : i64} : (tensor<3xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @negate_out_zp_f32(%a: tensor<3xf32>) {
  // expected-error {{output_zp = -2 with in_out_t = f32}}
  %0 = tosa.negate %a {output_zp = -2 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @negate_zp_i32(%a: tensor<3xi32>) {
  // expected-error {{ERROR_IF(in_out_t != int8_t && output_zp != 0)}}
  %0 = tosa.negate %a {input1_zp = 0 : i64, output_zp = 5 : i64} : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @negate_zp_range(%a: tensor<3xi8>) {
  // expected-error {{input1_zp = 128 is outside [-128, 127]}}
  %0 = tosa.negate %a {input1_zp = 128 : i64} : (tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @negate_out_zp_range(%a: tensor<3xi8>) {
  // expected-error {{output_zp = -129 is outside [-128, 127]}}
  %0 = tosa.negate %a {output_zp = -129 : i64} : (tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @negate_bool(%a: tensor<3xi1>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.negate %a : (tensor<3xi1>) -> tensor<3xi1>
  func.return
}

// -----

func.func @reciprocal_i32(%a: tensor<3xi32>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.reciprocal %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @rsqrt_i16(%a: tensor<3xi16>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.rsqrt %a : (tensor<3xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @select_f32_selector(%c: tensor<3xf32>, %a: tensor<3xf32>) {
  // expected-error {{(input1, input2, input3, output) = (f32, f32, f32, f32)}}
  %0 = tosa.select %c, %a, %a : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @select_i8_selector(%c: tensor<3xi8>, %a: tensor<3xi8>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.select %c, %a, %a : (tensor<3xi8>, tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

func.func @select_mixed_values(%c: tensor<3xi1>, %a: tensor<3xi8>, %b: tensor<3xi16>) {
  // expected-error {{= (bool, i8, i16, i16)}}
  %0 = tosa.select %c, %a, %b : (tensor<3xi1>, tensor<3xi8>, tensor<3xi16>) -> tensor<3xi16>
  func.return
}

// -----

func.func @select_broadcast(%c: tensor<2x1xi1>, %a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error {{dimensions [1, 3, 4] cannot broadcast}}
  %0 = tosa.select %c, %a, %b : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @select_rank(%c: tensor<3xi1>, %a: tensor<1x3xi32>) {
  // expected-error {{operand ranks differ: [1, 2, 2]}}
  %0 = tosa.select %c, %a, %a : (tensor<3xi1>, tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<1x3xi32>
  func.return
}

// -----

func.func @equal_out_i32(%a: tensor<3xi32>) {
  // expected-error {{= (i32, i32, i32)}}
  %0 = tosa.equal %a, %a : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @equal_i8(%a: tensor<3xi8>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.equal %a, %a : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi1>
  func.return
}

// -----

func.func @equal_bool(%a: tensor<3xi1>) {
  // expected-error {{= (bool, bool, bool)}}
  %0 = tosa.equal %a, %a : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return
}

// -----

func.func @greater_mixed(%a: tensor<3xf32>, %b: tensor<3xbf16>) {
  // expected-error {{= (f32, bf16, bool)}}
  %0 = tosa.greater %a, %b : (tensor<3xf32>, tensor<3xbf16>) -> tensor<3xi1>
  func.return
}

// -----

func.func @greater_broadcast(%a: tensor<2x3xi32>, %b: tensor<3x3xi32>) {
  // expected-error {{dimensions [2, 3] cannot broadcast}}
  %0 = tosa.greater %a, %b : (tensor<2x3xi32>, tensor<3x3xi32>) -> tensor<3x3xi1>
  func.return
}

// -----

func.func @greater_equal_i16(%a: tensor<3xi16>) {
  // expected-error {{unsupported type combination}}
  %0 = tosa.greater_equal %a, %a : (tensor<3xi16>, tensor<3xi16>) -> tensor<3xi1>
  func.return
}

// -----

func.func @greater_equal_shape(%a: tensor<1x3xf16>, %b: tensor<2x1xf16>) {
  // expected-error {{result shapes [2, 1] do not match the inferred [2, 3]}}
  %0 = tosa.greater_equal %a, %b : (tensor<1x3xf16>, tensor<2x1xf16>) -> tensor<2x1xi1>
  func.return
}

// -----

// ARITHMETIC_RIGHT_SHIFT's `round` has no default in the spec: it is required.
func.func @ars_no_round(%a: tensor<3xi8>) {
  // expected-error {{property 'round' expected}}
  %0 = tosa.arithmetic_right_shift %a, %a : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return
}

// -----

// The output of a broadcast must be the broadcast shape, not larger (see ops_elementwise_binary).
func.func @sub_output_larger(%a: tensor<1x1xf32>) {
  // expected-error {{result shapes [5, 1] do not match the inferred [1, 1]}}
  %0 = tosa.sub %a, %a : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<5x1xf32>
  func.return
}

// -----

// ERROR_IF conditions and unsupported type combinations of TOSA 0.30 §2.9-§2.12 ops.

// §2.9 Reduction

func.func @reduce_axis(%a: tensor<2x3xi32>) {
  // expected-error {{'tosa.reduce_sum' [0 <= axis < rank(shape1)] axis = 2 but rank(shape1) = 2}}
  %0 = tosa.reduce_sum %a {axis = 2 : i64} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return
}

// -----

func.func @reduce_output_axis_not_one(%a: tensor<2x3xf32>) {
  // expected-error {{'tosa.reduce_max' [shape[axis] == 1] output shape [2, 3] has shape[1] = 3}}
  %0 = tosa.reduce_max %a {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @reduce_rank_5(%a: tensor<1x1x1x1x2xi8>) {
  // expected-error {{'tosa.reduce_min' [1 <= rank(shape1) <= 4] rank(shape1) = 5}}
  %0 = tosa.reduce_min %a {axis = 4 : i64} : (tensor<1x1x1x1x2xi8>) -> tensor<1x1x1x1x1xi8>
  func.return
}

// -----

func.func @reduce_all_not_bool(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.reduce_all' [supported data types] unsupported type combination (input, output) = (i8, i8)}}
  %0 = tosa.reduce_all %a {axis = 0 : i64} : (tensor<2x3xi8>) -> tensor<1x3xi8>
  func.return
}

// -----

func.func @reduce_any_not_bool(%a: tensor<2x3xf32>) {
  // expected-error {{'tosa.reduce_any' [supported data types]}}
  %0 = tosa.reduce_any %a {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  func.return
}

// -----

func.func @reduce_product_int(%a: tensor<2x3xi32>) {
  // expected-error {{'tosa.reduce_product' [supported data types] unsupported type combination (input, output) = (i32, i32)}}
  %0 = tosa.reduce_product %a {axis = 0 : i64} : (tensor<2x3xi32>) -> tensor<1x3xi32>
  func.return
}

// -----

func.func @reduce_sum_int8(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.reduce_sum' [supported data types] unsupported type combination (input, output) = (i8, i8)}}
  %0 = tosa.reduce_sum %a {axis = 0 : i64} : (tensor<2x3xi8>) -> tensor<1x3xi8>
  func.return
}

// -----

// §2.10.1 CONCAT

func.func @concat_sum(%a: tensor<2x3xi8>, %b: tensor<2x5xi8>) {
  // expected-error {{'tosa.concat' [shape[axis] == sum(shapes1[k][axis] for all k)] shape[1] = 7 but the inputs sum to 8}}
  %0 = tosa.concat %a, %b {axis = 1 : i64} : (tensor<2x3xi8>, tensor<2x5xi8>) -> tensor<2x7xi8>
  func.return
}

// -----

func.func @concat_other_dim(%a: tensor<2x3xi8>, %b: tensor<3x5xi8>) {
  // expected-error {{[input_shape[index] == shapes1[0][index] for index != axis] input 1 has dimension 0 = 3 but input 0 has 2}}
  %0 = tosa.concat %a, %b {axis = 1 : i64} : (tensor<2x3xi8>, tensor<3x5xi8>) -> tensor<2x8xi8>
  func.return
}

// -----

func.func @concat_rank(%a: tensor<2x3xi8>, %b: tensor<2x3x1xi8>) {
  // expected-error {{[rank(input_shape) == rank(shapes1[0])] input 1 has rank 3 but input 0 has rank 2}}
  %0 = tosa.concat %a, %b {axis = 0 : i64} : (tensor<2x3xi8>, tensor<2x3x1xi8>) -> tensor<4x3xi8>
  func.return
}

// -----

func.func @concat_axis(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.concat' [0 <= axis < rank(shapes1[0])] axis = -1}}
  %0 = tosa.concat %a, %a {axis = -1 : i64} : (tensor<2x3xi8>, tensor<2x3xi8>) -> tensor<2x6xi8>
  func.return
}

// -----

func.func @concat_mixed_types(%a: tensor<2x3xi8>, %b: tensor<2x3xi16>) {
  // expected-error {{'tosa.concat' [all inputs have the same data type]}}
  %0 = tosa.concat %a, %b {axis = 0 : i64} : (tensor<2x3xi8>, tensor<2x3xi16>) -> tensor<4x3xi8>
  func.return
}

// -----

// §2.10.2 PAD

func.func @pad_negative(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.pad' [padding >= 0] padding [0, 0, -1, 2] has negative values [-1]}}
  %0 = tosa.pad %a {padding = array<i64: 0, 0, -1, 2>, pad_const = 0 : i64} : (tensor<2x3xi8>) -> tensor<2x4xi8>
  func.return
}

// -----

func.func @pad_length(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.pad' [length(padding) == 2 * rank(input1)] length(padding) = 2 but 2 * rank(input1) = 4}}
  %0 = tosa.pad %a {padding = array<i64: 1, 1>, pad_const = 0 : i64} : (tensor<2x3xi8>) -> tensor<4x3xi8>
  func.return
}

// -----

func.func @pad_const_range(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.pad' [pad_const fits i8] pad_const = 200 is outside [-128, 127]}}
  %0 = tosa.pad %a {padding = array<i64: 0, 0, 0, 0>, pad_const = 200 : i64} : (tensor<2x3xi8>) -> tensor<2x3xi8>
  func.return
}

// -----

func.func @pad_const_float_for_int(%a: tensor<2x3xi32>) {
  // expected-error {{'tosa.pad' [pad_const is in_out_t (i32)]}}
  %0 = tosa.pad %a {padding = array<i64: 0, 0, 0, 0>, pad_const = 0.0 : f32} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return
}

// -----

func.func @pad_const_int_for_float(%a: tensor<2x3xf16>) {
  // expected-error {{'tosa.pad' [pad_const is in_out_t (f16)]}}
  %0 = tosa.pad %a {padding = array<i64: 0, 0, 0, 0>, pad_const = 0 : i64} : (tensor<2x3xf16>) -> tensor<2x3xf16>
  func.return
}

// -----

func.func @pad_output(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.pad' [output shape] result shapes [2, 3] do not match the inferred [3, 3]}}
  %0 = tosa.pad %a {padding = array<i64: 0, 1, 0, 0>, pad_const = 0 : i64} : (tensor<2x3xi8>) -> tensor<2x3xi8>
  func.return
}

// -----

// §2.10.3 RESHAPE

func.func @reshape_size(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.reshape' [tensor_size(shape1) == tensor_size(shape)] input [2, 3] has 6 elements but new_shape [4, 2] has 8}}
  %0 = tosa.reshape %a {new_shape = array<i64: 4, 2>} : (tensor<2x3xi8>) -> tensor<4x2xi8>
  func.return
}

// -----

func.func @reshape_minus_one(%a: tensor<2x3xf32>) {
  // expected-error {{'tosa.reshape' [new_shape[i] >= 1]}}
  %0 = tosa.reshape %a {new_shape = array<i64: -1>} : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return
}

// -----

// §2.10.4 REVERSE

func.func @reverse_axis(%a: tensor<2x3xi1>) {
  // expected-error {{'tosa.reverse' [0 <= axis < rank(shape)] axis = 2 but rank(shape) = 2}}
  %0 = tosa.reverse %a {axis = 2 : i64} : (tensor<2x3xi1>) -> tensor<2x3xi1>
  func.return
}

// -----

func.func @reverse_type(%a: tensor<2x3xi8>) {
  // expected-error {{'tosa.reverse' [supported data types] unsupported type combination (input, output) = (i8, i32)}}
  %0 = tosa.reverse %a {axis = 0 : i64} : (tensor<2x3xi8>) -> tensor<2x3xi32>
  func.return
}

// -----

// §2.10.5 SLICE

func.func @slice_past_end(%a: tensor<5x6xi8>) {
  // expected-error {{'tosa.slice' [start[index] + size[index] <= shape1[index]] start[1] + size[1] = 2 + 5 = 7 > shape1[1] = 6}}
  %0 = tosa.slice %a {start = array<i64: 0, 2>, size = array<i64: 5, 5>} : (tensor<5x6xi8>) -> tensor<5x5xi8>
  func.return
}

// -----

func.func @slice_negative_start(%a: tensor<5x6xi8>) {
  // expected-error {{'tosa.slice' [start[index] >= 0] start[0] = -1}}
  %0 = tosa.slice %a {start = array<i64: -1, 0>, size = array<i64: 1, 1>} : (tensor<5x6xi8>) -> tensor<1x1xi8>
  func.return
}

// -----

func.func @slice_zero_size(%a: tensor<5x6xi8>) {
  // expected-error {{'tosa.slice' [size[index] > 0] size[1] = 0}}
  %0 = tosa.slice %a {start = array<i64: 0, 0>, size = array<i64: 1, 0>} : (tensor<5x6xi8>) -> tensor<1x1xi8>
  func.return
}

// -----

func.func @slice_length(%a: tensor<5x6xi8>) {
  // expected-error {{'tosa.slice' [length(start) == rank(input1)] length(start) = 1 but rank(input1) = 2}}
  %0 = tosa.slice %a {start = array<i64: 0>, size = array<i64: 1, 1>} : (tensor<5x6xi8>) -> tensor<1x1xi8>
  func.return
}

// -----

func.func @slice_output_not_size(%a: tensor<5x6xi8>) {
  // expected-error {{'tosa.slice' [output shape] result shapes [2, 2] do not match the inferred [1, 1]}}
  %0 = tosa.slice %a {start = array<i64: 0, 0>, size = array<i64: 1, 1>} : (tensor<5x6xi8>) -> tensor<2x2xi8>
  func.return
}

// -----

// §2.10.6 TILE

func.func @tile_output(%a: tensor<2x3xi16>) {
  // expected-error {{'tosa.tile' [output shape] result shapes [4, 3] do not match the inferred [4, 6]}}
  %0 = tosa.tile %a {multiples = array<i64: 2, 2>} : (tensor<2x3xi16>) -> tensor<4x3xi16>
  func.return
}

// -----

func.func @tile_multiples_length(%a: tensor<2x3xi16>) {
  // expected-error {{'tosa.tile' [length(multiples) == rank(shape1)]}}
  %0 = tosa.tile %a {multiples = array<i64: 2>} : (tensor<2x3xi16>) -> tensor<4x3xi16>
  func.return
}

// -----

// §2.10.7 TRANSPOSE

func.func @transpose_repeat(%a: tensor<2x3x4xf32>) {
  // expected-error {{'tosa.transpose' [perms values are not repeated] perms [0, 2, 0] repeats 0}}
  %0 = tosa.transpose %a {perms = array<i64: 0, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<2x4x2xf32>
  func.return
}

// -----

func.func @transpose_range(%a: tensor<2x3xf32>) {
  // expected-error {{'tosa.transpose' [0 <= perms[i] < rank(shape1)] perms [0, 2] has 2 but rank(shape1) = 2}}
  %0 = tosa.transpose %a {perms = array<i64: 0, 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @transpose_output(%a: tensor<2x3xf32>) {
  // expected-error {{'tosa.transpose' [output shape] result shapes [2, 3] do not match the inferred [3, 2]}}
  %0 = tosa.transpose %a {perms = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// §2.11 GATHER / SCATTER

func.func @gather_batch(%v: tensor<2x5x3xi8>, %i: tensor<3x4xi32>) {
  // expected-error {{'tosa.gather' [indices[N] == values[N]] indices has N = 3 but values has N = 2}}
  %0 = tosa.gather %v, %i : (tensor<2x5x3xi8>, tensor<3x4xi32>) -> tensor<2x4x3xi8>
  func.return
}

// -----

func.func @gather_index_type(%v: tensor<2x5x3xi8>, %i: tensor<2x4xi16>) {
  // expected-error {{'tosa.gather' [supported data types] unsupported type combination (values, indices, output) = (i8, i16, i8)}}
  %0 = tosa.gather %v, %i : (tensor<2x5x3xi8>, tensor<2x4xi16>) -> tensor<2x4x3xi8>
  func.return
}

// -----

func.func @gather_values_rank(%v: tensor<2x5xi8>, %i: tensor<2x4xi32>) {
  // expected-error {{'tosa.gather' [values is [N,K,C]] values has shape [2, 5]}}
  %0 = tosa.gather %v, %i : (tensor<2x5xi8>, tensor<2x4xi32>) -> tensor<2x4xi8>
  func.return
}

// -----

func.func @scatter_input_shape(%v: tensor<2x5x3xf16>, %i: tensor<2x4xi32>, %u: tensor<2x4x2xf16>) {
  // expected-error {{'tosa.scatter' [input is [N,W,C]] input has shape [2, 4, 2] but values_in/indices give [N,W,C] = [2, 4, 3]}}
  %0 = tosa.scatter %v, %i, %u : (tensor<2x5x3xf16>, tensor<2x4xi32>, tensor<2x4x2xf16>) -> tensor<2x5x3xf16>
  func.return
}

// -----

func.func @scatter_type(%v: tensor<2x5x3xi8>, %i: tensor<2x4xi32>, %u: tensor<2x4x3xi16>) {
  // expected-error {{'tosa.scatter' [supported data types] unsupported type combination (values_in, indices, input, values_out) = (i8, i32, i16, i8)}}
  %0 = tosa.scatter %v, %i, %u : (tensor<2x5x3xi8>, tensor<2x4xi32>, tensor<2x4x3xi16>) -> tensor<2x5x3xi8>
  func.return
}

// -----

// §2.12 RESIZE

func.func @resize_shift_int(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [1 <= shift <= 11 for an integer resize_t] shift = 12}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 12 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x7x3xi32>
  func.return
}

// -----

func.func @resize_stride_limit(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [stride_x < (16 << shift)] stride_x = 32 but 16 << 1 = 32}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 1>, stride = array<i64: 1, 32>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x1x3xi8>
  func.return
}

// -----

func.func @resize_offset_limit(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [(-16 << shift) < offset_y < (16 << shift)] offset_y = -32 but 16 << 1 = 32}}
  %0 = tosa.resize %a {output_size = array<i64: 23, 7>, stride = array<i64: 2, 1>, offset = array<i64: -32, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xi8>) -> tensor<1x23x7x3xi8>
  func.return
}

// -----

func.func @resize_stride_zero(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [stride_x > 0 && stride_y > 0] stride = [0, 1]}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 0, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x7x3xi8>
  func.return
}

// -----

func.func @resize_output_size(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{output_size = [8, 8] but the attributes give [OH, OW] = [7, 7]}}
  %0 = tosa.resize %a {output_size = array<i64: 8, 8>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi8>) -> tensor<1x8x8x3xi32>
  func.return
}

// -----

func.func @resize_max_dim(%a: tensor<1x4x4x3xi16>) {
  // 3 * 2^11 / 1 + 1 + 10000 = 16145 is fine for OW, but border 11000 makes OH = 17145.
  // expected-error {{'tosa.resize' [max(OH, OW, IH, IW) < 16384] [OH, OW, IH, IW] = [17145, 6145, 4, 4]}}
  %0 = tosa.resize %a {output_size = array<i64: 17145, 6145>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 11000, 0>, shift = 11 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xi16>) -> tensor<1x17145x6145x3xi16>
  func.return
}

// -----

func.func @resize_float_shift(%f: tensor<1x4x4x3xf32>) {
  // expected-error {{'tosa.resize' [shift == 0 for a float resize_t] shift = 1}}
  %0 = tosa.resize %f {output_size = array<i64: 7, 7>, stride = array<f32: 0.5, 0.5>, offset = array<f32: 0.0, 0.0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

func.func @resize_float_stride(%f: tensor<1x4x4x3xf32>) {
  // expected-error {{'tosa.resize' [stride_x <= IW && stride_y <= IH]}}
  %0 = tosa.resize %f {output_size = array<i64: 1, 1>, stride = array<f32: 5.0, 1.0>, offset = array<f32: 0.0, 3.0>, border = array<i64: 0, 0>, shift = 0 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xf32>) -> tensor<1x1x1x3xf32>
  func.return
}

// -----

func.func @resize_resize_t_int(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [stride is resize_t (int16)]}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<f32: 1.0, 1.0>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x7x3xi32>
  func.return
}

// -----

func.func @resize_resize_t_float(%f: tensor<1x4x4x3xbf16>) {
  // expected-error {{'tosa.resize' [offset is resize_t (fp32)]}}
  %0 = tosa.resize %f {output_size = array<i64: 7, 7>, stride = array<f32: 0.5, 0.5>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 0 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xbf16>) -> tensor<1x7x7x3xbf16>
  func.return
}

// -----

func.func @resize_nearest_widening(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [mode BILINEAR for signed 8, bilinear] mode = NEAREST but signed 8, bilinear needs BILINEAR}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x7x3xi32>
  func.return
}

// -----

func.func @resize_bilinear_i16_needs_i48(%a: tensor<1x4x4x3xi16>) {
  // expected-error {{'tosa.resize' [mode NEAREST for signed 16, nearest] mode = BILINEAR but signed 16, nearest needs NEAREST}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi16>) -> tensor<1x7x7x3xi16>
  func.return
}

// -----

func.func @resize_type(%a: tensor<1x4x4x3xi8>) {
  // expected-error {{'tosa.resize' [supported data types] unsupported type combination (input, output) = (i8, i16)}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x3xi8>) -> tensor<1x7x7x3xi16>
  func.return
}

// -----

func.func @resize_rank(%a: tensor<4x4x3xi8>) {
  // expected-error {{'tosa.resize' [input is [N,IH,IW,C]] input has shape [4, 4, 3]}}
  %0 = tosa.resize %a {output_size = array<i64: 7, 7>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode NEAREST>} : (tensor<4x4x3xi8>) -> tensor<7x7x3xi8>
  func.return
}

// -----

// ERROR_IF cases of CAST, RESCALE (§2.13), CONST, IDENTITY (§2.14), CUSTOM (§2.15), COND_IF and
// WHILE_LOOP (§2.16). Each chunk must fail verification with the quoted message.

func.func @cast_float_to_float(%a: tensor<2xf32>) -> tensor<2xf16> {
  // expected-error {{unsupported type combination (input, output) = (f32, f16)}}
  %0 = tosa.cast %a : (tensor<2xf32>) -> tensor<2xf16>
  func.return %0 : tensor<2xf16>
}

// -----

func.func @cast_same_type(%a: tensor<2xi8>) -> tensor<2xi8> {
  // expected-error {{unsupported type combination (input, output) = (i8, i8)}}
  %0 = tosa.cast %a : (tensor<2xi8>) -> tensor<2xi8>
  func.return %0 : tensor<2xi8>
}

// -----

func.func @cast_shape(%a: tensor<2x3xi8>) -> tensor<3x2xi32> {
  // expected-error {{result shapes [3, 2] do not match the inferred [2, 3]}}
  %0 = tosa.cast %a : (tensor<2x3xi8>) -> tensor<3x2xi32>
  func.return %0 : tensor<3x2xi32>
}

// -----

func.func @rescale_i16_input_zp(%a: tensor<4xi16>) -> tensor<4xi8> {
  // expected-error {{[ERROR_IF(in_t != int8_t && in_t != uint8_t && in_t != uint16_t && input_zp != 0)] input_zp = 3 but in_t is i16}}
  %0 = tosa.rescale %a {input_zp = 3 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xi16>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @rescale_i32_output_zp(%a: tensor<4xi8>) -> tensor<4xi32> {
  // expected-error {{output_zp = -1 but out_t is i32}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = -1 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xi8>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @rescale_u16_zp(%a: tensor<4xui16>) -> tensor<4xi16> {
  // expected-error {{input_zp = 1 but a uint16 zero point must be 0 or 32768}}
  %0 = tosa.rescale %a {input_zp = 1 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xui16>) -> tensor<4xi16>
  func.return %0 : tensor<4xi16>
}

// -----

func.func @rescale_i8_zp_range(%a: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error {{[input_zp fits in_t (i8)] input_zp = 128 is outside [-128, 127]}}
  %0 = tosa.rescale %a {input_zp = 128 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xi8>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @rescale_scale32_int48(%a: tensor<4xi48>) -> tensor<4xi32> {
  // expected-error {{ERROR_IF(scale32 && in_t == int48_t)}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824>, shift = array<i64: 30>, scale32 = true, double_round = false, per_channel = false} : (tensor<4xi48>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @rescale_double_round_scale16(%a: tensor<4xi32>) -> tensor<4xi8> {
  // expected-error {{ERROR_IF(!scale32 && double_round)}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = true, per_channel = false} : (tensor<4xi32>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @rescale_multiplier_int16(%a: tensor<4xi32>) -> tensor<4xi8> {
  // expected-error {{[multiplier fits mul_t (int16, scale32 = false)] multiplier values [32768] are outside [-32768, 32767]}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 32768>, shift = array<i64: 15>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xi32>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @rescale_multiplier_int32(%a: tensor<4xi32>) -> tensor<4xi8> {
  // expected-error {{multiplier values [2147483648] are outside [-2147483648, 2147483647]}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 2147483648>, shift = array<i64: 31>, scale32 = true, double_round = false, per_channel = false} : (tensor<4xi32>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @rescale_shift(%a: tensor<4xi32>) -> tensor<4xi8> {
  // expected-error {{[REQUIRE(2 <= shift && shift <= 62)] shift values [63] are outside [2, 62]}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824>, shift = array<i64: 63>, scale32 = true, double_round = false, per_channel = false} : (tensor<4xi32>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @rescale_per_channel_length(%a: tensor<2x3xi32>) -> tensor<2x3xi8> {
  // expected-error {{[length(multiplier) == NC] length(multiplier) = 2 but NC = shape[rank-1] (per_channel) = 3}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824, 1073741824>, shift = array<i64: 30, 30>, scale32 = true, double_round = false, per_channel = true} : (tensor<2x3xi32>) -> tensor<2x3xi8>
  func.return %0 : tensor<2x3xi8>
}

// -----

func.func @rescale_rank5(%a: tensor<1x1x1x1x2xi32>) -> tensor<1x1x1x1x2xi8> {
  // expected-error {{[1 <= rank(input) <= 4] rank(input) = 5}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824>, shift = array<i64: 30>, scale32 = true, double_round = false, per_channel = false} : (tensor<1x1x1x1x2xi32>) -> tensor<1x1x1x1x2xi8>
  func.return %0 : tensor<1x1x1x1x2xi8>
}

// -----

func.func @rescale_mode(%a: tensor<4xui8>) -> tensor<4xi32> {
  // expected-error {{unsupported type combination (input, output) = (u8, i32)}}
  %0 = tosa.rescale %a {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xui8>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @const_type_mismatch() -> tensor<2xi16> {
  // expected-error {{[type(values) == type(output)] values has type tensor<2xi32> but the output is tensor<2xi16>}}
  %0 = tosa.const {values = dense<[1, 2]> : tensor<2xi32>} : tensor<2xi16>
  func.return %0 : tensor<2xi16>
}

// -----

func.func @const_quant_storage_mismatch() -> tensor<2x!quant.uniform<i8:f32, 0.5>> {
  // expected-error {{values has type tensor<2xi16> but the output is tensor<2x!quant.uniform<i8:f32, 5.000000e-01>>}}
  %0 = tosa.const {values = dense<[1, 2]> : tensor<2xi16>} : tensor<2x!quant.uniform<i8:f32, 0.5>>
  func.return %0 : tensor<2x!quant.uniform<i8:f32, 0.5>>
}

// -----

func.func @const_per_axis_size() -> tensor<3x!quant.uniform<i8:f32:0, {0.5, 0.25}>> {
  // expected-error {{[one scale per index of the quantized dimension] dimension 0 has size 3 but there are 2 scales}}
  %0 = tosa.const {values = dense<[1, 2, 3]> : tensor<3xi8>} : tensor<3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>
  func.return %0 : tensor<3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>
}

// -----

func.func @const_u8() -> tensor<2xui8> {
  // expected-error {{unsupported type combination (output) = (u8)}}
  %0 = tosa.const {values = dense<[1, 2]> : tensor<2xui8>} : tensor<2xui8>
  func.return %0 : tensor<2xui8>
}

// -----

func.func @identity_type(%a: tensor<2xi8>) -> tensor<2xi16> {
  // expected-error {{unsupported type combination (input1, output) = (i8, i16)}}
  %0 = tosa.identity %a : (tensor<2xi8>) -> tensor<2xi16>
  func.return %0 : tensor<2xi16>
}

// -----

func.func @identity_shape(%a: tensor<2xi8>) -> tensor<3xi8> {
  // expected-error {{result shapes [3] do not match the inferred [2]}}
  %0 = tosa.identity %a : (tensor<2xi8>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}

// -----

func.func @custom_no_identifier(%a: tensor<2xi8>) -> tensor<2xi8> {
  // expected-error {{the custom operator has an empty identifier}}
  %0 = tosa.custom %a {identifier = "", config = "", implementation_attrs = ""} : (tensor<2xi8>) -> tensor<2xi8>
  func.return %0 : tensor<2xi8>
}

// -----

func.func @cond_if_condition_not_scalar(%x: tensor<2xi32>, %c: tensor<1xi1>) -> tensor<2xi32> {
  // expected-error {{[condition is a rank-0 bool_t tensor] condition has type tensor<1xi1>}}
  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<1xi1>) -> tensor<2xi32> {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  }
  func.return %0 : tensor<2xi32>
}

// -----

func.func @cond_if_condition_not_bool(%x: tensor<2xi32>, %c: tensor<i32>) -> tensor<2xi32> {
  // expected-error {{condition has type tensor<i32>}}
  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32> {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  }
  func.return %0 : tensor<2xi32>
}

// -----

func.func @cond_if_then_inputs(%x: tensor<2xi32>, %c: tensor<i1>) -> tensor<2xi32> {
  // expected-error {{[ERROR_IF(tensor_list_shape(input_list) != tosa_input_shape(then_graph))] input_list vs then_graph arguments: position 0 is tensor<2xi32> vs tensor<3xi32>}}
  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i1>) -> tensor<2xi32> {
  ^bb0(%a: tensor<3xi32>):
    %z = tosa.const {values = dense<0> : tensor<2xi32>} : tensor<2xi32>
    tosa.yield %z : tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  }
  func.return %0 : tensor<2xi32>
}

// -----

func.func @cond_if_else_outputs(%x: tensor<2xi32>, %c: tensor<i1>) -> tensor<2xi32> {
  // expected-error {{[ERROR_IF(tensor_list_shape(output_list) != tosa_output_shape(else_graph))] output_list vs else_graph yield: 1 tensors (tensor<2xi32>) vs 2 (tensor<2xi32>, tensor<2xi32>)}}
  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i1>) -> tensor<2xi32> {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a, %a : tensor<2xi32>, tensor<2xi32>
  }
  func.return %0 : tensor<2xi32>
}

// -----

// Graphs are isolated: they see only their arguments.
func.func @cond_if_uses_outer_value(%x: tensor<2xi32>, %c: tensor<i1>) -> tensor<2xi32> {
  // expected-error {{Operation using value defined out of its IsolatedFromAbove parent}}
  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i1>) -> tensor<2xi32> {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %x : tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  }
  func.return %0 : tensor<2xi32>
}

// -----

func.func @while_output_list(%n: tensor<i32>) -> tensor<i16> {
  // expected-error {{[ERROR_IF(tensor_list_shape(input_list) != tensor_list_shape(output_list))] input_list vs output_list: position 0 is tensor<i32> vs tensor<i16>}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i16> {
  ^bb0(%i: tensor<i32>):
    %k = tosa.const {values = dense<10> : tensor<i32>} : tensor<i32>
    %p = tosa.greater %k, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
    tosa.yield %p : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>):
    tosa.yield %i : tensor<i32>
  }
  func.return %0 : tensor<i16>
}

// -----

func.func @while_cond_inputs(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{[ERROR_IF(tensor_list_shape(input_list) != tosa_input_shape(cond_graph))]}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i32> {
  ^bb0(%i: tensor<1xi32>):
    %p = tosa.const {values = dense<true> : tensor<i1>} : tensor<i1>
    tosa.yield %p : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>):
    tosa.yield %i : tensor<i32>
  }
  func.return %0 : tensor<i32>
}

// -----

func.func @while_body_inputs(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{[ERROR_IF(tensor_list_shape(input_list) != tosa_input_shape(body_graph))]}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i32> {
  ^bb0(%i: tensor<i32>):
    %p = tosa.const {values = dense<true> : tensor<i1>} : tensor<i1>
    tosa.yield %p : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>, %j: tensor<i32>):
    tosa.yield %i : tensor<i32>
  }
  func.return %0 : tensor<i32>
}

// -----

func.func @while_body_outputs(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{[ERROR_IF(tensor_list_shape(input_list) != tosa_output_shape(body_graph))] input_list vs body_graph yield: position 0 is tensor<i32> vs tensor<1xi32>}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i32> {
  ^bb0(%i: tensor<i32>):
    %p = tosa.const {values = dense<true> : tensor<i1>} : tensor<i1>
    tosa.yield %p : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>):
    %o = tosa.const {values = dense<1> : tensor<1xi32>} : tensor<1xi32>
    tosa.yield %o : tensor<1xi32>
  }
  func.return %0 : tensor<i32>
}

// -----

func.func @while_cond_not_bool(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{[ERROR_IF(tosa_output_shape(cond_graph) != tosa_list_shape([bool_t]))] cond_graph yields (tensor<i32>), not one tensor<i1>}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i32> {
  ^bb0(%i: tensor<i32>):
    tosa.yield %i : tensor<i32>
  } do {
  ^bb0(%i: tensor<i32>):
    tosa.yield %i : tensor<i32>
  }
  func.return %0 : tensor<i32>
}

// -----

func.func @while_cond_two_results(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{cond_graph yields (tensor<i1>, tensor<i1>), not one tensor<i1>}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i32> {
  ^bb0(%i: tensor<i32>):
    %p = tosa.const {values = dense<true> : tensor<i1>} : tensor<i1>
    tosa.yield %p, %p : tensor<i1>, tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>):
    tosa.yield %i : tensor<i32>
  }
  func.return %0 : tensor<i32>
}

// -----

func.func @while_cond_rank1_bool(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{cond_graph yields (tensor<1xi1>), not one tensor<i1>}}
  %0 = tosa.while_loop %n : (tensor<i32>) -> tensor<i32> {
  ^bb0(%i: tensor<i32>):
    %p = tosa.const {values = dense<true> : tensor<1xi1>} : tensor<1xi1>
    tosa.yield %p : tensor<1xi1>
  } do {
  ^bb0(%i: tensor<i32>):
    tosa.yield %i : tensor<i32>
  }
  func.return %0 : tensor<i32>
}

// -----

func.func @yield_outside_graph(%n: tensor<i32>) -> tensor<i32> {
  // expected-error {{'tosa.yield' expects parent op to be one of 'tosa.cond_if', 'tosa.while_loop'}}
  tosa.yield %n : tensor<i32>
}

// -----

func.func @cond_if_no_yield(%x: tensor<2xi32>, %c: tensor<i1>) -> tensor<2xi32> {
  // expected-error {{Operation tosa.identity terminates block in single-block region but is not a terminator}}
  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i1>) -> tensor<2xi32> {
  ^bb0(%a: tensor<2xi32>):
    %b = tosa.identity %a : (tensor<2xi32>) -> tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    tosa.yield %a : tensor<2xi32>
  }
  func.return %0 : tensor<2xi32>
}
