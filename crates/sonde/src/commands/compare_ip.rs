//! `sonde compare-ip`: IPv4 against IPv6 to one sonde server.
//!
//! Exit codes for scripts: 0 both families measured and neither is significantly better;
//! 3 IPv4 significantly better (lower median latency); 4 IPv6 significantly better; 1 one or
//! both families failed; 2 usage error.

use super::exit;
use crate::cli_latency::CompareIpArgs;
use crate::output;
use sonde_report::latency_table::write_compare;
use sonde_runtime::latency::load::{run_compare, CompareConfig};
use sonde_runtime::latency::LatencyConfig;
use sonde_stats::latency::compare::Better;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// IPv4 is significantly better.
pub const IPV4_BETTER: i32 = 3;
/// IPv6 is significantly better.
pub const IPV6_BETTER: i32 = 4;

/// Runs the compare-ip command.
pub fn run(a: CompareIpArgs, interrupt: &Arc<AtomicBool>) -> i32 {
    let mut probe = LatencyConfig::udp(&a.host, a.port);
    probe.size = a.size as usize;
    probe.count = Some(a.count);
    probe.duration = None;
    probe.interval = a.interval.max(std::time::Duration::from_micros(100));
    let cfg = CompareConfig {
        probe,
        ipv4: a.ipv4_addr.map(Into::into),
        ipv6: a.ipv6_addr.map(Into::into),
        throughput_secs: a.throughput_time.as_secs_f64(),
        connect_timeout: a.connect_timeout,
    };
    let out = match output::destination(&a.output) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sonde: error - {e:#}");
            return exit::FAILED;
        }
    };
    let result = run_compare(&cfg, interrupt);
    let mut w = output::LineOut::new(out);
    let written = if a.output.json {
        serde_json::to_writer_pretty(&mut w, &result)
            .map_err(std::io::Error::from)
            .and_then(|_| w.write_all(b"\n"))
    } else if a.output.json_stream {
        serde_json::to_writer(&mut w, &serde_json::json!({"event": "end", "data": result}))
            .map_err(std::io::Error::from)
            .and_then(|_| w.write_all(b"\n"))
    } else {
        write_compare(&mut w, &result)
    };
    if let Err(e) = written.and_then(|_| w.flush()) {
        crate::output::write_failed(&e);
    }
    if result.ipv4.error.is_some() || result.ipv6.error.is_some() {
        return exit::FAILED;
    }
    match result.latency.map(|c| c.better) {
        Some(Better::A) => IPV4_BETTER,
        Some(Better::B) => IPV6_BETTER,
        _ => exit::OK,
    }
}
