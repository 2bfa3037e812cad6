//! placeholder

pub mod glob;
