//! The measuring commands of this crate as library calls: typed options in,
//! a result directory written through [`iolens_core::Recorder`], the typed
//! document, its summary text and its directory out, progress through an
//! observer. The command line only parses options, draws the progress and
//! prints what comes back.

pub mod calibrate;
pub mod matrix;
