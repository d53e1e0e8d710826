//! Exporters: every output format of the report and of the comparison behind
//! one trait that turns a value into the bytes of one file (or of standard
//! output). One file per format:
//!
//! | format   | exporter            | serializes                  |
//! |----------|---------------------|-----------------------------|
//! | CSV      | [`CsvExporter`]     | [`Report`], [`Comparison`]  |
//! | JSON     | [`JsonExporter`]    | [`Report`]                  |
//! | HTML     | [`HtmlExporter`]    | [`Report`]                  |
//! | SVG      | [`SvgExporter`]     | [`ChartFile`]               |
//! | PNG      | [`PngExporter`]     | [`ChartFile`]               |
//! | table    | [`TableExporter`]   | [`Comparison`]              |
//! | Markdown | [`MarkdownExporter`]| [`Comparison`]              |
//!
//! [`Report`]: crate::Report
//! [`Comparison`]: crate::compare::Comparison
//! [`ChartFile`]: crate::charts::ChartFile

mod csv;
mod html;
mod json;
mod markdown;
mod png;
mod svg;
mod table;

pub use self::csv::CsvExporter;
pub use self::html::HtmlExporter;
pub use self::json::JsonExporter;
pub use self::markdown::MarkdownExporter;
pub use self::png::PngExporter;
pub use self::svg::SvgExporter;
pub use self::table::TableExporter;

use crate::ReportError;

/// Turns a `T` into the bytes of one output file.
pub trait Exporter<T: ?Sized> {
    /// The file's bytes.
    fn serialize(&self, value: &T) -> Result<Vec<u8>, ReportError>;
}

/// Writes records as RFC 4180 CSV (fields quoted only when needed, `\n`
/// line ends) with the `csv` crate.
pub(crate) fn csv_bytes<R, S>(records: R) -> Result<Vec<u8>, ReportError>
where
    R: IntoIterator,
    R::Item: IntoIterator<Item = S>,
    S: AsRef<[u8]>,
{
    let mut w = ::csv::WriterBuilder::new()
        .flexible(true)
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    for r in records {
        w.write_record(r).map_err(csv_error)?;
    }
    w.into_inner()
        .map_err(|e| ReportError::Render(e.to_string()))
}

fn csv_error(e: ::csv::Error) -> ReportError {
    ReportError::Render(e.to_string())
}

#[cfg(test)]
mod tests;
