//! The measuring commands of this crate as library calls: typed options in,
//! a result directory written through [`iolens_core::Recorder`], the typed
//! document out.

pub mod calibrate;
pub mod matrix;
