//! What a `--coded` transfer measured, as plain data for its two renderers (the table of
//! [`crate::coded_table`] and the `-J` document of [`crate::coded_json`]), and the figures
//! both derive from it the same way (goodput, wire rate, repair overhead, reliability).
//!
//! The runtime's outcome type lives above this crate; the command copies it into a
//! [`CodedRun`], whose sender's and receiver's figures are the coded protocol's own reports
//! (`sonde_coded::wire`), so this crate needs no runtime to render a transfer.

pub use sonde_coded::wire::{ReceiverReport, SenderReport};
use sonde_stats::model::CpuUsage;

/// One coded transfer's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CodedRun {
    /// This end sent (upload) or received (`-R`).
    pub client_sends: bool,
    pub server: String,
    /// Seconds from the first datagram to the completion (or the stop).
    pub elapsed_secs: f64,
    /// Every block decoded and the receiver said so.
    pub complete: bool,
    /// The sender's report (None: it did not arrive).
    pub sender: Option<SenderReport>,
    /// The receiver's report (None: it did not arrive).
    pub receiver: Option<ReceiverReport>,
    /// The sender's last path view: rate (bit/s), loss fraction, smoothed RTT (ms).
    pub path: Option<(f64, f64, Option<f64>)>,
    /// Times the sender's rate controller backed off (sending end).
    pub backoffs: Option<u64>,
    /// Times it competed for a shared bottleneck queue (sending end).
    pub competitions: Option<u64>,
    /// The receiver's SHA-256 equals the sender's (None: not compared).
    pub digest_ok: Option<bool>,
    pub cpu_local: Option<CpuUsage>,
    pub cpu_remote: Option<CpuUsage>,
}

/// What the transfer ran: scheme, feedback policy, the file, the target rate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CodedMode {
    /// `"coded"` or `"arq"`.
    pub scheme: &'static str,
    /// `"unrestricted"` or `"restricted"`.
    pub feedback: &'static str,
    /// `--file`, as given.
    pub file: Option<String>,
    /// `-b`, bit/s.
    pub target_bits_per_second: u64,
}

/// The figures both ends agree on, as plain numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Figures {
    pub delivered: u64,
    pub sent: Option<u64>,
    pub goodput_bps: f64,
    pub wire_bps: Option<f64>,
    pub overhead: Option<f64>,
}

pub(crate) fn figures(o: &CodedRun) -> Figures {
    let secs = o.elapsed_secs.max(1e-9);
    let delivered = o.receiver.map_or(0, |r| r.delivered_bytes);
    Figures {
        delivered,
        sent: o.sender.map(|s| s.data_bytes),
        goodput_bps: delivered as f64 * 8.0 / secs,
        wire_bps: o.sender.map(|s| s.wire_bytes as f64 * 8.0 / secs),
        overhead: o.sender.map(|s| {
            (s.proactive_repair + s.feedback_repair) as f64 / s.source_symbols.max(1) as f64
        }),
    }
}

/// Delivered over sent bytes, percent (None: the sender's figures did not arrive).
pub(crate) fn reliability(x: &Figures) -> Option<f64> {
    x.sent.map(|s| {
        if s == 0 {
            0.0
        } else {
            x.delivered as f64 / s as f64 * 100.0
        }
    })
}

/// Transfers for the renderers' tests: a complete upload with every figure, and a reverse
/// one whose sender's figures did not arrive.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    pub fn upload() -> CodedRun {
        CodedRun {
            client_sends: true,
            server: "10.0.0.2:5201".into(),
            elapsed_secs: 2.5,
            complete: true,
            sender: Some(SenderReport {
                data_bytes: 1_000_000,
                blocks: 10,
                source_symbols: 900,
                proactive_repair: 40,
                feedback_repair: 5,
                datagrams: 945,
                wire_bytes: 1_100_000,
                feedback_rounds: 3,
                sha256: None,
            }),
            receiver: Some(ReceiverReport {
                delivered_bytes: 1_000_000,
                blocks: 10,
                datagrams_received: 930,
                useless_symbols: 4,
                rejected: 1,
                feedback_sent: 12,
                decode_delay_p50_us: 1500,
                decode_delay_p99_us: 4321,
                mismatched_bytes: 0,
                sha256: None,
            }),
            path: Some((9.5e7, 0.0125, Some(1.75))),
            backoffs: Some(2),
            competitions: Some(1),
            digest_ok: Some(true),
            cpu_local: Some(CpuUsage {
                total: 12.5,
                user: 2.5,
                system: 10.0,
            }),
            cpu_remote: None,
        }
    }

    pub fn reverse_without_sender() -> CodedRun {
        CodedRun {
            client_sends: false,
            sender: None,
            path: Some((1e6, 0.5, None)),
            backoffs: None,
            competitions: Some(3),
            digest_ok: None,
            complete: false,
            ..upload()
        }
    }

    pub fn mode(scheme: &'static str, file: Option<&str>) -> CodedMode {
        CodedMode {
            scheme,
            feedback: "unrestricted",
            file: file.map(str::to_owned),
            target_bits_per_second: 100_000_000,
        }
    }
}
