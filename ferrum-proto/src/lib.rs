//! RESP2 and RESP3 for FerrumKV: the [`Frame`] type and a streaming codec.
//!
//! This crate is a leaf: it knows nothing of the store or of sockets, so it
//! can be used on its own wherever Redis's wire protocol is spoken.

mod frame;

pub use frame::{Frame, Protocol};
