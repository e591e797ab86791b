//! sonde's report renderer: a lab run's results database, or sonde `-J` documents, in; a
//! Markdown report, a self-contained HTML report with inline SVG charts, or the report model
//! as JSON, out.
//!
//! Why a crate of its own: reports are one more consumer of measured data (measuring code never formats), and
//! keeping rendering pure (inputs in, bytes out, no clock, no network) is what makes a report
//! reproducible: the same inputs give the same bytes, so reports can be diffed and checked in.
//! Reading happens first ([`Inputs`]), and is where bad input is refused with the file's name;
//! then [`render`] builds the report model once ([`model::Report`]) and lays it out.
//!
//! What a report holds (issue 6): a header with the run's metadata and the backend of each
//! impairment; one summary table per test kind with a row per link setting; per-test sections
//! with parameters, both ends' summaries, CPU and interface traffic; an appendix of outcomes
//! listing each failure. The HTML adds charts: goodput against link loss (every protocol on
//! one chart, markers: each loss setting is a measurement of its own), throughput over time
//! per test (both ends' intervals when the document has them), loss per stream over time, and
//! for latency results the RTT distribution (from binned samples, when the document has them)
//! and latency over time. The other `-J` kinds each bring their own charts and tables from a
//! module of their own: a traffic profile, a stress run (and its ramp, load steps, storm and
//! overload), a rate sweep, a capacity estimate and a compare-ip run ([`sections`] lists a
//! test's tables, so both formats show the same ones).
//!
//! ```
//! use sonde_report::{render, Format, Inputs};
//! let doc = r#"{"start": {"test_start": {"protocol": "TCP", "num_streams": 1}},
//!               "end": {"sum_sent": {"bytes": 1000, "bits_per_second": 8000.0},
//!                       "sum_received": {"bytes": 1000, "bits_per_second": 8000.0}}}"#;
//! let inputs = Inputs::Documents(vec![Inputs::parse_document("tcp.json", doc)?]);
//! let md = String::from_utf8(render(&inputs, Format::Markdown)?).unwrap_or_default();
//! assert!(md.contains("8.00 kbit/s"));
//! # Ok::<(), sonde_report::DocError>(())
//! ```

pub mod btc;
pub mod btc_report;
pub mod build;
pub mod capacity;
mod capacity_report;
mod charts;
mod coded;
pub mod compare_ip;
pub mod compare_ip_report;
mod compare_ip_time;
mod error;
pub mod fmt;
mod html;
mod input;
pub mod json;
mod kinds;
pub mod latency;
pub mod link;
mod markdown;
pub mod model;
pub mod profile;
pub mod result;
pub mod rrul;
pub mod rrul_report;
pub mod sections;
pub mod serial;
pub mod serial_report;
pub mod stage_tables;
pub mod stages;
pub mod stress;
mod stress_charts;
pub mod stress_end;
mod stress_tables;
pub mod svg;
pub mod sweep;
mod sweep_report;
mod switch;
pub mod table;
mod tables;
mod throughput;
pub mod view;

use std::path::{Path, PathBuf};

pub use error::DocError;
pub use input::{list_runs, Document, Inputs, RunLine};
pub use sonde_store::RunId;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// `report.md`.
    Markdown,
    /// `report.html`.
    Html,
    /// `report.json`: the report model.
    Json,
}

impl Format {
    /// Every format, in the order `write_report` writes them.
    pub const ALL: [Format; 3] = [Format::Markdown, Format::Html, Format::Json];

    /// The report's file name in this format.
    pub fn file_name(self) -> &'static str {
        match self {
            Format::Markdown => "report.md",
            Format::Html => "report.html",
            Format::Json => "report.json",
        }
    }

    /// Parses `md`, `markdown`, `html` or `json` (as `--format` takes them).
    pub fn parse(s: &str) -> Option<Format> {
        match s.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Some(Format::Markdown),
            "html" => Some(Format::Html),
            "json" => Some(Format::Json),
            _ => None,
        }
    }
}

/// The report model of `inputs`, for callers that want the figures themselves.
pub fn report(inputs: &Inputs) -> model::Report {
    build::report(inputs)
}

/// Renders the report of `inputs` in `format`.
///
/// # Errors
/// Only for [`Format::Json`], should serialisation fail ([`DocError::Json`]); Markdown and
/// HTML rendering cannot fail once the inputs are read.
pub fn render(inputs: &Inputs, format: Format) -> Result<Vec<u8>, DocError> {
    render_model(&build::report(inputs), format)
}

fn render_model(r: &model::Report, format: Format) -> Result<Vec<u8>, DocError> {
    Ok(match format {
        Format::Markdown => markdown::render(r).into_bytes(),
        Format::Html => html::render(r).into_bytes(),
        Format::Json => {
            let mut v = serde_json::to_vec_pretty(r).map_err(|source| DocError::Json {
                path: Format::Json.file_name().into(),
                source,
            })?;
            v.push(b'\n');
            v
        }
    })
}

/// Writes the report in each of `formats` into `dir` (created if needed); returns the paths
/// written, in the order of `formats`.
///
/// # Errors
/// [`DocError::Write`] naming the directory or file that could not be written.
pub fn write_report(
    inputs: &Inputs,
    dir: &Path,
    formats: &[Format],
) -> Result<Vec<PathBuf>, DocError> {
    std::fs::create_dir_all(dir).map_err(|source| DocError::Write {
        path: dir.display().to_string(),
        source,
    })?;
    let model = build::report(inputs);
    let mut written = Vec::new();
    for &f in formats {
        let path = dir.join(f.file_name());
        let bytes = render_model(&model, f)?;
        std::fs::write(&path, bytes).map_err(|source| DocError::Write {
            path: path.display().to_string(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}
