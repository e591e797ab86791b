//! The output flags every measuring command shares (`-J`, `--json-stream`, `-y C`, `-f`, `-V`,
//! `--logfile`, `-T`, `--timestamps`), in a file of their own so that each command's flags can
//! flatten them without importing the whole command line (`cli.rs`), which imports them all.

use crate::flags::values::parse_rate_unit;
use clap::Args;

/// Output selection shared by client and server.
#[derive(Debug, Args, Clone, Default)]
pub struct OutputArgs {
    /// One JSON document: for client and server iperf3's -J schema plus sonde's fields; for
    /// latency, rrul and compare-ip sonde's own (see docs/latency.md)
    #[arg(short = 'J', long = "json", conflicts_with = "json_stream")]
    pub json: bool,
    /// One JSON object per line per event
    #[arg(long = "json-stream")]
    pub json_stream: bool,
    /// iperf 2's report style: C (or c) for its CSV lines, one per stream per interval and at
    /// the end (client and server throughput tests only)
    #[arg(short = 'y', long = "reportstyle", value_name = "STYLE", value_parser = parse_report_style,
        conflicts_with_all = ["json", "json_stream"])]
    pub report_style: Option<ReportStyle>,
    /// With --json-stream, also write the whole -J document at the end (as iperf3 3.21)
    #[arg(long = "json-stream-full-output")]
    pub json_stream_full_output: bool,
    /// Rates in the table: k m g t (bits), K M G T (bytes), a/A adaptive (iperf3's -f)
    #[arg(short = 'f', long = "format", value_name = "UNIT", value_parser = parse_rate_unit)]
    pub rate_unit: Option<sonde_stats::units::RateUnit>,
    /// More detail in the table: version, host, time, cookie and MSS (iperf3's -V), and a
    /// client's links at both ends
    #[arg(short = 'V', long = "verbose")]
    pub verbose: bool,
    /// Write the output to FILE instead of standard output
    #[arg(long = "logfile", value_name = "FILE")]
    pub logfile: Option<std::path::PathBuf>,
    /// Accepted for iperf3 command lines: sonde writes every line as soon as it is complete
    #[arg(long = "forceflush", hide = true)]
    pub forceflush: bool,
    /// Prefix every line of the table with "TITLE:  " (and add "title" to -J), as iperf3's -T
    #[arg(short = 'T', long = "title", value_name = "TITLE")]
    pub title: Option<String>,
    /// Prefix every line of the table with the time, in strftime FORMAT (default "%c ")
    #[arg(long = "timestamps", value_name = "FORMAT", num_args = 0..=1, require_equals = true, default_missing_value = "%c ")]
    pub timestamps: Option<String>,
}

/// iperf 2's `-y` report styles: it has one, CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportStyle {
    /// `-y C`: comma-separated lines (`sonde_live::iperf2_csv`).
    Csv,
}

/// `C` or `c`, as iperf 2 takes them.
fn parse_report_style(s: &str) -> Result<ReportStyle, String> {
    match s {
        "C" | "c" => Ok(ReportStyle::Csv),
        _ => Err(format!(
            "unknown report style '{s}': iperf 2's only report style is C (CSV)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_c_in_either_case_is_a_report_style() {
        assert_eq!(parse_report_style("C"), Ok(ReportStyle::Csv));
        assert_eq!(parse_report_style("c"), Ok(ReportStyle::Csv));
        let e = parse_report_style("J").unwrap_err();
        assert!(e.contains("only report style is C"), "{e}");
    }
}
