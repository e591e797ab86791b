//! Live output: render the typed [`sonde_stats::model::Event`] stream of a running command.
//! (Named `live` against `sonde-report`, which renders documents from results after the fact.)
//!
//! Measuring code never formats output; it hands [`Event`]s to a [`Sink`]. This crate holds the
//! consumers:
//!
//! - [`TableReporter`]: the human table, laid out like iperf3's text output;
//! - [`JsonReporter`]: one iperf3 `-J` compatible document written at [`Sink::finish`];
//! - [`JsonLinesReporter`]: one compact object per event, like iperf3's `--json-stream`;
//! - [`iperf2_csv::Iperf2CsvReporter`]: iperf 2's CSV report style (`-y C`), one line per
//!   stream per interval, for scripts written for iperf 2;
//! - [`latency_table`] and [`latency_json`]: the same three formats for latency runs
//!   (`sonde latency`, `rrul`, `compare-ip`), consuming `sonde_stats::latency::model` events;
//! - [`stress_table`] and [`stress_json`]: the same for `sonde stress`
//!   (`sonde_stats::stress::model` events), and the documents of its ramp, load steps, storm
//!   and overload; every stress document is `sonde_schema::stress`'s model
//!   ([`stress_model`] maps the events onto it);
//! - [`coded_table`] and [`coded_json`]: a `--coded` transfer's result ([`coded_run`]);
//! - [`Tee`]: fan-out to several sinks (say, the table on stdout and JSON to a log file).
//!
//! The JSON shapes (and every field sonde adds to iperf3's schema) are documented in
//! [`iperf3_json`].
//!
//! ```
//! use sonde_live::{JsonReporter, Sink};
//! use sonde_stats::model::Event;
//!
//! let mut out = Vec::new();
//! let mut sink = JsonReporter::new(&mut out);
//! sink.event(&Event::Error("connection refused".into())).unwrap();
//! sink.finish().unwrap();
//! drop(sink);
//! let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
//! assert_eq!(doc["error"], "connection refused");
//! ```

pub use sonde_stats::model::Event;

pub mod btc;
pub mod capacity;
pub mod capacity_model;
pub mod coded_json;
pub mod coded_run;
pub mod coded_table;
pub mod compare_ip_json;
pub mod dual_stack_table;
pub mod envelope;
pub mod iperf2_csv;
pub mod iperf3_json;
mod json;
mod json_lines;
pub mod latency_json;
pub mod latency_model;
pub mod latency_table;
pub mod link;
pub mod profile_report;
pub mod rrul_json;
pub mod serial;
mod sink;
#[cfg(test)]
mod snapshot;
pub mod stress_json;
pub mod stress_model;
pub mod stress_overload;
pub mod stress_ramp;
pub mod stress_steps;
pub mod stress_storm;
pub mod stress_table;
pub mod stress_udp;
pub mod sweep;
mod table;
#[cfg(test)]
mod test_fixtures;

pub use json::{JsonReporter, ServerOutputSlot};
pub use json_lines::JsonLinesReporter;
pub use sink::{Discard, FnSink, Sink, Tee};
pub use table::TableReporter;
