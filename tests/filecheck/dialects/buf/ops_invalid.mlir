// RUN: nnkiln opt --split-input-file --verify-diagnostics %s

func.func @misaligned() {
  // expected-error {{offset = 32 is not a multiple of 64}}
  %s = buf.static_alloc {memory = "host", offset = 32 : i64} : memref<4xf32>
  func.return
}

// -----

func.func @negative() {
  // expected-error {{offset = -64 is negative}}
  %s = buf.static_alloc {memory = "host", offset = -64 : i64} : memref<4xf32>
  func.return
}

// -----

func.func @const_type() {
  // expected-error {{values has type tensor<3xf32> but the buffer is memref<4xf32>}}
  %w = buf.const {values = dense<1.0> : tensor<3xf32>} : memref<4xf32>
  func.return
}

// -----

func.func @alias(%x: memref<4xf32>) {
  %a = buf.alloc : memref<4xf32>
  // expected-error {{results alias outs with identical types}}
  %r = buf.kernel "tosa.abs" ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {attrs = {}} -> memref<2x2xf32>
  func.return
}

// -----

func.func @reshape_bytes(%x: memref<4xf32>) {
  // expected-error {{views preserve element type and byte size}}
  %v = buf.reshape %x : memref<4xf32> -> memref<5xf32>
  func.return
}

// -----

func.func @subview_contiguous(%x: memref<2x4x3xf32>) {
  // expected-error {{contiguous slice}}
  %v = buf.subview %x {offsets = array<i64: 0, 1, 0>, sizes = array<i64: 2, 2, 3>} : memref<2x4x3xf32> -> memref<2x2x3xf32>
  func.return
}
