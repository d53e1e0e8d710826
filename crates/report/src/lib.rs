//! iolens analysis: reading result directories of any kind (single results,
//! sweeps, trees of them), the report table (`report.csv`, `report.json`),
//! knee detection, charts (SVG, PNG), a self-contained `report.html`, and the
//! side-by-side comparison of systems or configurations. Every output format
//! is an [`export::Exporter`].
//!
//! Results are read through the typed documents of `iolens-core`
//! ([`iolens_core::result::load`]); a kind this version does not know still
//! loads as the plain envelope and gives whatever common figures it has.

pub mod analysis;
pub mod charts;
pub mod compare;
pub mod csv;
pub mod export;
pub mod figures;
pub mod fmt;
pub mod html;
pub mod load;
pub mod raster;
pub mod report;
pub mod svg;

pub use analysis::Analysis;
pub use figures::Figures;
pub use load::{load, Point};
pub use report::{Options, Report};

use std::path::{Path, PathBuf};

/// Errors while reading results or writing a report. All of them are
/// something the user can fix (a wrong path, a foreign directory).
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// An input directory does not exist.
    #[error("{0}: no such directory")]
    NotFound(PathBuf),
    /// An input directory holds no result.
    #[error("{0}: no iolens result found (no result.json or sweep.json in it or below it)")]
    NoResults(PathBuf),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file is not what iolens writes.
    #[error("{path}: {msg}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
    /// The output path is a file.
    #[error("{0}: not a directory; choose another --out")]
    OutNotDir(PathBuf),
    /// The output directory holds other files.
    #[error("{0} is not empty and holds no earlier report; choose another --out")]
    OutNotEmpty(PathBuf),
    /// A chart could not be rasterized.
    #[error("rendering a chart: {0}")]
    Render(String),
}

impl ReportError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> ReportError {
        ReportError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

impl iolens_core::Classify for ReportError {
    /// Every report error names an input or output path the user gave:
    /// a missing or foreign directory, an unreadable or unwritable file.
    fn kind(&self) -> iolens_core::ErrorKind {
        iolens_core::ErrorKind::BadInput
    }
}
