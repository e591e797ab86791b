//! What the emulator's virtual-clock tests share: impairments read from TOML keys, and the
//! driver that feeds a stage timed arrivals and wakes it exactly when it asks, so that every
//! test measures a stage the same way.

use sonde_emu::impair::Stage;
use sonde_emu::{Instant, Packet};
use sonde_scenario::Impairments;

/// Most steps one drive takes: a stage that never settles fails its test instead of hanging.
const MAX_STEPS: u64 = 1_000_000;

/// One direction's impairments from TOML keys (`rate = "10mbit"\naqm = "codel"`).
pub fn impairments(text: &str) -> Impairments {
    toml::from_str(text).unwrap_or_else(|e| panic!("{e}"))
}

/// Drives `stage` with `arrivals` (put in time order, ties by sequence number), waking
/// exactly when the stage asks, and returns every packet with the instant it came out.
pub fn drive(
    stage: &mut dyn Stage,
    mut arrivals: Vec<(Instant, Packet)>,
) -> Vec<(Instant, Packet)> {
    arrivals.sort_by_key(|(t, p)| (*t, p.meta.seq));
    let mut out = Vec::new();
    let mut arrivals = arrivals.into_iter().peekable();
    let mut now = Instant::ZERO;
    let mut steps = 0u64;
    loop {
        let next = match (arrivals.peek().map(|(t, _)| *t), stage.next_wakeup()) {
            (None, None) => break,
            (a, w) => a.into_iter().chain(w).min().unwrap_or(now),
        };
        now = now.max(next);
        while let Some((_, pkt)) = arrivals.next_if(|(t, _)| *t <= now) {
            stage.push(pkt, now);
        }
        while let Some(pkt) = stage.poll(now) {
            out.push((now, pkt));
        }
        steps += 1;
        assert!(steps < MAX_STEPS, "driver does not progress at {now:?}");
    }
    out
}
