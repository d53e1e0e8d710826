//! Small CSV helpers: quoting cells for `report.csv`, and reading the
//! per-second `timeseries.csv` of any result kind by its header.

use std::path::Path;

/// Quotes a cell when it holds a comma, a quote or a line break (RFC 4180).
pub fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One CSV line from cells (quoted as needed), without the line break.
pub fn line<S: AsRef<str>>(cells: &[S]) -> String {
    cells
        .iter()
        .map(|c| cell(c.as_ref()))
        .collect::<Vec<_>>()
        .join(",")
}

/// Splits one CSV line into cells, honouring double quotes.
pub fn split(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

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

    /// Parses CSV text with a header line.
    pub fn parse(text: &str) -> Option<TimeSeries> {
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let header = split(lines.next()?);
        let rows: Vec<Vec<String>> = lines.map(split).collect();
        (!rows.is_empty()).then_some(TimeSeries { header, rows })
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
    fn cells_are_quoted_only_when_needed() {
        assert_eq!(cell("abc"), "abc");
        assert_eq!(cell("a,b"), "\"a,b\"");
        assert_eq!(cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(
            split(&line(&["a,b", "c", "d\"e"])),
            vec!["a,b", "c", "d\"e"]
        );
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
