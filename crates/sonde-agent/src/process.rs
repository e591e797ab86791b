//! The agent's own process in the `process_*` series every Prometheus exporter gives:
//! resident and virtual memory, CPU time, open and allowed descriptors, threads and start
//! time. An agent runs for weeks on boards with little memory; these let an operator graph
//! and alert on one that grows or holds descriptors, with the same queries as for any other
//! exporter.
//!
//! The figures are read at each scrape (a [`Collector`]): `/proc/self/status` and
//! `/proc/self/limits` through the pure parsers here, the descriptors by counting
//! `/proc/self/fd`, CPU time from `getrusage`. Where `/proc` is missing (not Linux), the
//! series it would give are left out rather than given as 0.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Unit;

/// The memory and thread figures of `/proc/PID/status`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatusFigures {
    /// `VmRSS`, bytes.
    pub resident_bytes: Option<u64>,
    /// `VmSize`, bytes.
    pub virtual_bytes: Option<u64>,
    /// `Threads`.
    pub threads: Option<u64>,
}

/// Parses the text of `/proc/PID/status` (lines `Name:\tvalue [kB]`); absent or malformed
/// fields are `None`.
pub fn parse_status(text: &str) -> StatusFigures {
    let mut f = StatusFigures::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let mut words = value.split_whitespace();
        let number = words.next().and_then(|n| n.parse::<u64>().ok());
        let in_kib = words.next() == Some("kB");
        let kib = |n: Option<u64>| n.filter(|_| in_kib).and_then(|n| n.checked_mul(1024));
        match key {
            "VmRSS" => f.resident_bytes = kib(number),
            "VmSize" => f.virtual_bytes = kib(number),
            "Threads" => f.threads = number,
            _ => {}
        }
    }
    f
}

/// The soft limit on open files from the text of `/proc/PID/limits` (its "Max open files"
/// row); `None` when the row is missing or says "unlimited".
pub fn parse_max_fds(text: &str) -> Option<u64> {
    let row = text
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))?;
    row.split_whitespace().next()?.parse().ok()
}

/// The `process_*` series of the running process, read at each scrape.
#[derive(Debug)]
pub struct ProcessCollector {
    /// When the process started (Unix seconds): the agent's start, a few milliseconds after
    /// the process's.
    started_unix: f64,
}

impl ProcessCollector {
    /// A collector for this process, which started at `started_unix`.
    pub fn new(started_unix: f64) -> Self {
        Self { started_unix }
    }
}

fn gauge<N>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<&Unit>,
    value: N,
) -> Result<(), std::fmt::Error>
where
    ConstGauge<N>: EncodeMetric,
{
    let g = ConstGauge::new(value);
    let e = encoder.encode_descriptor(name, help, unit, g.metric_type())?;
    g.encode(e)
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let cpu = sonde_platform::cpu::process_times();
        let cpu_secs = (cpu.user_us + cpu.system_us) as f64 / 1e6;
        let counter = ConstCounter::new(cpu_secs);
        let e = encoder.encode_descriptor(
            "process_cpu",
            "User and system CPU time of the agent's process",
            Some(&Unit::Seconds),
            counter.metric_type(),
        )?;
        counter.encode(e)?;
        gauge(
            &mut encoder,
            "process_start_time",
            "When the agent's process started, Unix time",
            Some(&Unit::Seconds),
            self.started_unix,
        )?;
        let status = std::fs::read_to_string("/proc/self/status")
            .map(|t| parse_status(&t))
            .unwrap_or_default();
        if let Some(b) = status.resident_bytes {
            gauge(
                &mut encoder,
                "process_resident_memory",
                "Resident memory of the agent's process (VmRSS)",
                Some(&Unit::Bytes),
                b as f64,
            )?;
        }
        if let Some(b) = status.virtual_bytes {
            gauge(
                &mut encoder,
                "process_virtual_memory",
                "Virtual memory of the agent's process (VmSize)",
                Some(&Unit::Bytes),
                b as f64,
            )?;
        }
        if let Some(n) = status.threads {
            gauge(
                &mut encoder,
                "process_threads",
                "Threads of the agent's process",
                None,
                n as i64,
            )?;
        }
        if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
            // The count includes the descriptor that reads the directory.
            let open = dir.count().saturating_sub(1);
            gauge(
                &mut encoder,
                "process_open_fds",
                "Open file descriptors of the agent's process",
                None,
                open as i64,
            )?;
        }
        if let Some(max) = std::fs::read_to_string("/proc/self/limits")
            .ok()
            .and_then(|t| parse_max_fds(&t))
        {
            gauge(
                &mut encoder,
                "process_max_fds",
                "Most file descriptors the agent's process may open (the soft limit)",
                None,
                i64::try_from(max).unwrap_or(i64::MAX),
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "Name:\tsonde\nUmask:\t0022\nState:\tS (sleeping)\nVmPeak:\t  120000 kB\n\
        VmSize:\t  110592 kB\nVmRSS:\t   15232 kB\nRssAnon:\t    5120 kB\nThreads:\t10\n\
        SigQ:\t0/95000\n";

    #[test]
    fn status_gives_resident_and_virtual_bytes_and_threads() {
        let f = parse_status(STATUS);
        assert_eq!(f.resident_bytes, Some(15232 * 1024));
        assert_eq!(f.virtual_bytes, Some(110592 * 1024));
        assert_eq!(f.threads, Some(10));
    }

    #[test]
    fn malformed_or_missing_status_fields_are_none() {
        let f = parse_status("VmRSS:\tlots kB\nVmSize:\t12\nThreads:\n");
        assert_eq!(f, StatusFigures::default());
        assert_eq!(parse_status(""), StatusFigures::default());
        // A value too large for bytes is not wrapped.
        let f = parse_status("VmRSS:\t18446744073709551615 kB\n");
        assert_eq!(f.resident_bytes, None);
    }

    #[test]
    fn max_fds_is_the_soft_limit() {
        let limits =
            "Limit                     Soft Limit           Hard Limit           Units     \n\
            Max cpu time              unlimited            unlimited            seconds   \n\
            Max open files            1024                 524288               files     \n";
        assert_eq!(parse_max_fds(limits), Some(1024));
        let unlimited =
            "Max open files            unlimited            unlimited            files\n";
        assert_eq!(parse_max_fds(unlimited), None);
        assert_eq!(parse_max_fds("Max processes 10 10 processes\n"), None);
    }

    #[test]
    fn the_collector_gives_this_process_figures_in_exposition_form() {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(ProcessCollector::new(1_700_000_000.0)));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        let value = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse::<f64>().ok())
        };
        assert_eq!(value("process_start_time_seconds"), Some(1_700_000_000.0));
        assert!(value("process_cpu_seconds_total").is_some(), "{text}");
        if cfg!(target_os = "linux") {
            let rss = value("process_resident_memory_bytes").unwrap_or(0.0);
            assert!(rss > 1e6, "{text}");
            assert!(value("process_virtual_memory_bytes").unwrap_or(0.0) >= rss);
            assert!(value("process_threads").unwrap_or(0.0) >= 1.0, "{text}");
            assert!(value("process_open_fds").unwrap_or(0.0) >= 3.0, "{text}");
            assert!(value("process_max_fds").unwrap_or(0.0) >= 3.0, "{text}");
        }
    }
}
