//! `sonde profile run` as the user runs it: a suite of two kinds, the latency prober for the
//! clocks' offset and then the profile itself ([`crate::profile`]) with that offset.
//!
//! The clock offset between client and server is measured just before a profile runs.
//! A profile's datagrams carry the sender's wall-clock stamp and the receiver subtracts it
//! from its own receive time: that is a one-way delay only when both clocks agree. Without
//! `--clock-synced` the client first sends a short burst of round-trip probes to the server's
//! latency responder (the same port every sonde server answers on) and takes the offset from
//! the fastest of them, as `sonde latency` does. The estimate assumes the path is as fast one
//! way as the other; it is right to within half the fastest round trip whatever the path, and
//! the result says so. When no estimate can be made (the responder does not answer, Ctrl-C),
//! the run goes on with delays above each stream's fastest datagram, labelled as such.

use crate::latency::{self, LatencyConfig};
use crate::profile::{run_as_requested, ProfileConfig, ProfileOutcome};
use sonde_platform::resolve::Family;
use sonde_profile::result::ClockOffset;
use sonde_stats::latency::model::OneWayBasis;
use sonde_stats::sink::{deliver, Discard, ProgressNote, Sink};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Probes sent: the estimate uses the fastest third.
const PROBES: u64 = 30;
/// Time between probes: the burst takes about a third of a second.
const SPACING: Duration = Duration::from_millis(10);

/// Runs the profile; `note` receives progress lines for the user. Without `--clock-synced`
/// the clocks' offset is measured first (see `measure`) and sent with the request, so
/// both ends correct their one-way delays by it.
pub fn run(
    cfg: &ProfileConfig,
    interrupt: &AtomicBool,
    note: &mut dyn Sink<ProgressNote>,
) -> ProfileOutcome {
    let mut measured;
    let mut cfg = cfg;
    if !cfg.request.clock_synced && cfg.request.clock_offset.is_none() {
        measured = cfg.clone();
        match measure(
            &cfg.host,
            cfg.port,
            cfg.family,
            cfg.local.psk.as_ref(),
            interrupt,
        ) {
            Ok(o) => {
                let line = format!(
                    "clock offset (server - client) {:+.3} ms +- {:.3} ms from {} probes",
                    o.offset_ns as f64 / 1e6,
                    o.uncertainty_ns as f64 / 1e6,
                    o.probes
                );
                deliver(note, &ProgressNote(line));
                measured.request.clock_offset = Some(o);
            }
            Err(e) => deliver(
                note,
                &ProgressNote(format!(
                    "{e}; one-way delays will be given above each stream's fastest datagram"
                )),
            ),
        }
        cfg = &measured;
    }
    run_as_requested(cfg, interrupt, note)
}

/// Estimates the offset of `host:port`'s clock from this host's; an error says why not.
fn measure(
    host: &str,
    port: u16,
    family: Family,
    psk: Option<&sonde_proto::psk::Psk>,
    interrupt: &AtomicBool,
) -> Result<ClockOffset, String> {
    let mut cfg = LatencyConfig::udp(host, port);
    cfg.family = family;
    cfg.psk = psk.cloned();
    cfg.count = Some(PROBES);
    cfg.duration = None;
    cfg.interval = SPACING;
    cfg.report_interval = None;
    cfg.wait = Some(Duration::from_millis(500));
    let outcome = latency::run(&cfg, interrupt, &mut Discard);
    if let Some(e) = outcome.error {
        return Err(format!("the clock-offset probes failed: {e}"));
    }
    let summary = outcome
        .summary
        .ok_or_else(|| "the clock-offset probes gave no result".to_string())?;
    let answered = summary.loss.received;
    let one_way = summary
        .one_way
        .filter(|o| o.basis == OneWayBasis::Estimated)
        .ok_or_else(|| format!("no clock offset from {answered} answered probes"))?;
    let offset_ms = one_way
        .clock_offset_ms
        .ok_or_else(|| "the probes gave no clock offset".to_string())?;
    let min_rtt_ms = summary.rtt.map_or(0.0, |r| r.min_ms);
    Ok(ClockOffset {
        offset_ns: (offset_ms * 1e6).round() as i64,
        uncertainty_ns: (min_rtt_ms * 1e6 / 2.0).round() as i64,
        probes: u32::try_from(answered).unwrap_or(u32::MAX),
    })
}
