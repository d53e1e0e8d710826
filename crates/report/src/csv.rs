//! Reading the per-second `timeseries.csv` of any result kind by its header
//! (with the `csv` crate; the report's own CSV files are written by
//! [`crate::export::CsvExporter`]).

use std::path::Path;

/// The per-second rows of a result, read by column name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimeSeries {
    /// Column names from the header line.
    pub header: Vec<String>,
    /// The rows, as text.
    pub rows: Vec<Vec<String>>,
}

impl TimeSeries {
    /// Reads `path`; `None` when it is missing, empty or has no data rows.
    pub fn load(path: &Path) -> Option<TimeSeries> {
        let text = std::fs::read_to_string(path).ok()?;
        TimeSeries::parse(&text)
    }

    /// Parses CSV text with a header line (rows may be shorter or longer
    /// than the header; blank lines are skipped).
    pub fn parse(text: &str) -> Option<TimeSeries> {
        let mut r = ::csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .from_reader(text.as_bytes());
        let header: Vec<String> = r.headers().ok()?.iter().map(str::to_string).collect();
        let rows: Vec<Vec<String>> = r
            .records()
            .map_while(Result::ok)
            .filter(|rec| !(rec.len() == 1 && rec[0].trim().is_empty()))
            .map(|rec| rec.iter().map(str::to_string).collect())
            .collect();
        (!header.is_empty() && !rows.is_empty()).then_some(TimeSeries { header, rows })
    }

    /// The numeric values of column `name` (None where a cell is not a number).
    pub fn column(&self, name: &str) -> Option<Vec<Option<f64>>> {
        let i = self.header.iter().position(|h| h == name)?;
        Some(
            self.rows
                .iter()
                .map(|r| r.get(i).and_then(|c| c.trim().parse::<f64>().ok()))
                .collect(),
        )
    }

    /// The text of column `name`.
    pub fn text_column(&self, name: &str) -> Option<Vec<&str>> {
        let i = self.header.iter().position(|h| h == name)?;
        Some(
            self.rows
                .iter()
                .map(|r| r.get(i).map_or("", |s| s.as_str()))
                .collect(),
        )
    }

    /// The time of each row in seconds from the start: `sec` plus the
    /// row's `interval_s` (the end of the interval), or the row number.
    pub fn seconds(&self) -> Vec<f64> {
        let sec = self.column("sec");
        let iv = self.column("interval_s");
        (0..self.rows.len())
            .map(|i| {
                let s = sec.as_ref().and_then(|c| c[i]).unwrap_or(i as f64);
                s + iv.as_ref().and_then(|c| c[i]).unwrap_or(1.0)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_cells_are_read_whole() {
        let t = TimeSeries::parse("sec,note\n0,\"a,b\"\n1,\"say \"\"hi\"\"\"\n").unwrap();
        assert_eq!(t.text_column("note").unwrap(), vec!["a,b", "say \"hi\""]);
    }

    #[test]
    fn time_series_are_read_by_header() {
        let t = TimeSeries::parse(
            "sec,phase,interval_s,read_iops\n0,ramp,1,10\n1,run,1,20\n2,run,0.5,x\n",
        )
        .unwrap();
        assert_eq!(
            t.column("read_iops").unwrap(),
            vec![Some(10.0), Some(20.0), None]
        );
        assert_eq!(t.text_column("phase").unwrap(), vec!["ramp", "run", "run"]);
        assert_eq!(t.seconds(), vec![1.0, 2.0, 2.5]);
        assert!(t.column("nope").is_none());
        assert!(TimeSeries::parse("sec,read_iops\n").is_none());
    }
}
