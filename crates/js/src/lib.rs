//! wasm-bindgen shell (to be written).
