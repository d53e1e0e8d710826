//! Each exporter on fixed results (the report fixtures of the CLI tests),
//! compared with the snapshots beside this file.

use super::*;
use crate::compare::{self, Format, Group};
use crate::report::{Options, Report};
use std::path::PathBuf;

const FIXTURES: &str = "../cli/tests/fixtures/report";

fn options() -> Options {
    Options {
        latency_slo_us: 1000.0,
        title: None,
        png: false,
        tool_version: "0.0.0-test".into(),
        generated_at: "2026-01-01T00:00:00Z".into(),
    }
}

/// The report of the disk sweep and the two loose results, read through a
/// relative path so that the snapshots do not depend on the checkout.
fn report() -> Report {
    let inputs = [
        PathBuf::from(FIXTURES).join("disk-sweep"),
        PathBuf::from(FIXTURES).join("loose"),
    ];
    Report::build(&inputs, options()).expect("fixtures load")
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("UTF-8")
}

fn comparison() -> compare::Comparison {
    let groups: Vec<Group> = ["disk-sweep", "loose"]
        .iter()
        .map(|d| Group {
            label: d.to_string(),
            points: crate::load(&[PathBuf::from(FIXTURES).join(d)]).expect("fixtures load"),
        })
        .collect();
    compare::compare(&groups, Some(1000.0))
}

#[test]
fn csv_cells_are_quoted_only_when_needed() {
    let bytes = csv_bytes([["abc", "a,b", "say \"hi\"", "two\nlines", ""]]).unwrap();
    assert_eq!(
        text(bytes),
        "abc,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\n"
    );
}

#[test]
fn report_csv() {
    insta::assert_snapshot!(text(CsvExporter.serialize(&report()).unwrap()));
}

#[test]
fn report_json() {
    insta::assert_snapshot!(text(JsonExporter.serialize(&report()).unwrap()));
}

#[test]
fn report_html() {
    insta::assert_snapshot!(text(HtmlExporter.serialize(&report()).unwrap()));
}

#[test]
fn chart_svg() {
    let r = report();
    let chart = r
        .charts
        .iter()
        .find(|c| c.stem == "charts/latency-vs-iops")
        .expect("latency chart");
    insta::assert_snapshot!(text(SvgExporter.serialize(chart).unwrap()));
}

#[test]
fn chart_png() {
    // Glyphs depend on the fonts installed, so the pixels are not
    // snapshotted: the PNG signature and the size (twice the SVG's) are.
    let r = report();
    let png = PngExporter::new();
    let sizes: Vec<String> = r
        .charts
        .iter()
        .filter(|c| c.point.is_none() || c.point == Some(0))
        .map(|c| {
            let bytes = png.serialize(c).unwrap();
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", c.stem);
            let pm = resvg::tiny_skia::Pixmap::decode_png(&bytes).unwrap();
            format!("{}.png {}x{}", c.stem, pm.width(), pm.height())
        })
        .collect();
    insta::assert_snapshot!(sizes.join("\n"));
}

#[test]
fn compare_csv() {
    insta::assert_snapshot!(comparison().render(Format::Csv));
}

#[test]
fn compare_table() {
    insta::assert_snapshot!(comparison().render(Format::Table));
}

#[test]
fn compare_markdown() {
    insta::assert_snapshot!(comparison().render(Format::Markdown));
}
