//! The short TCP uploads of `sonde compare-ip`, in interleaved rounds.
//!
//! Each round runs one upload a family, IPv4 first in even rounds and IPv6 first in odd ones
//! (ABBA), so that whatever else loads the hosts or the path during the run weighs on both
//! families alike. A round's goodput is one sample; the rounds are compared pair by pair
//! (`sonde_stats::dual_stack::throughput_measure`). The intervals of one long upload per
//! family would be no samples of the family: they share their run's conditions, and one busy
//! moment made one family "better" with a confidence of 0.996.

use super::probe_rounds::in_turns;
use crate::connect::ClientConfig;
use crate::rrul::{tcp_params, throughput};
use crate::sockets::ClientSockets;
use sonde_platform::resolve::Family;
use sonde_stats::model::Direction;
use std::net::IpAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Shortest round: TCP has ramped up on a short path by then.
const MIN_ROUND: Duration = Duration::from_millis(300);
/// Fewest rounds (a paired test needs at least two; three give it a chance to decide).
const MIN_ROUNDS: u32 = 3;
/// Most rounds: beyond ten, longer rounds are worth more than more of them.
const MAX_ROUNDS: u32 = 10;

/// How the upload time of each family is split: `rounds` uploads of `each`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UploadRounds {
    pub rounds: u32,
    pub each: Duration,
}

impl UploadRounds {
    /// `secs` of upload a family in rounds of at least half a second (at least
    /// `MIN_ROUNDS` rounds of at least `MIN_ROUND`, at most `MAX_ROUNDS`).
    pub fn of(secs: f64) -> Self {
        let rounds = ((secs / 0.5).floor() as u32).clamp(MIN_ROUNDS, MAX_ROUNDS);
        let each = Duration::from_secs_f64(secs / f64::from(rounds)).max(MIN_ROUND);
        Self { rounds, each }
    }
}

/// One family's uploads: the goodput of each round that ran (TCP payload bit/s at the
/// receiver), and the error that ended them.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FamilyUploads {
    pub rounds_bps: Vec<f64>,
    pub error: Option<String>,
}

impl FamilyUploads {
    /// The mean goodput over the rounds, when any ran.
    pub fn mean_bps(&self) -> Option<f64> {
        let n = self.rounds_bps.len();
        (n > 0).then(|| self.rounds_bps.iter().sum::<f64>() / n as f64)
    }
}

/// Where and how compare-ip uploads.
pub struct UploadTarget<'a> {
    pub port: u16,
    pub connect_timeout: Duration,
    pub local: &'a ClientSockets,
}

/// The rounds of uploads to `addrs` (IPv4's, IPv6's; None: that family is not measured);
/// `progress` hears each round as it starts. A failed upload ends its family's rounds; Ctrl-C
/// ends all.
pub fn run_uploads(
    plan: UploadRounds,
    addrs: [Option<IpAddr>; 2],
    to: &UploadTarget,
    interrupt: &Arc<AtomicBool>,
    progress: &mut dyn FnMut(u64, u64),
) -> [FamilyUploads; 2] {
    let mut fams: [FamilyUploads; 2] = Default::default();
    let active =
        |fams: &[FamilyUploads; 2], fi: usize| addrs[fi].is_some() && fams[fi].error.is_none();
    let rounds = u64::from(plan.rounds);
    in_turns(
        rounds,
        interrupt,
        progress,
        &mut fams,
        active,
        |fams, _, fi| {
            let (Some(addr), Some(fam)) = (addrs[fi], fams.get_mut(fi)) else {
                return;
            };
            if fam.error.is_some() {
                return;
            }
            let load = throughput(upload_to(addr, plan.each, to), interrupt.clone());
            match (load.upload_bps, load.error) {
                (_, Some(e)) => fam.error = Some(e),
                (Some(bps), None) => fam.rounds_bps.push(bps),
                (None, None) => fam.error = Some("the upload reported no goodput".into()),
            }
        },
    );
    fams
}

/// One single-stream upload of `each` to `addr`.
fn upload_to(addr: IpAddr, each: Duration, to: &UploadTarget) -> ClientConfig {
    let secs = each.as_secs_f64();
    ClientConfig {
        host: addr.to_string(),
        port: to.port,
        family: Family::Any,
        cport: None,
        params: tcp_params(Direction::Upload, 1, secs, secs.clamp(0.1, 1.0)),
        connect_timeout: to.connect_timeout,
        local: to.local.clone(),
        rcv_timeout: None,
        file: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_time_is_split_into_three_to_ten_rounds() {
        let r = UploadRounds::of(1.0);
        assert_eq!(r.rounds, 3);
        assert!((r.each.as_secs_f64() - 1.0 / 3.0).abs() < 1e-9, "{r:?}");
        assert_eq!(UploadRounds::of(3.0).rounds, 6);
        let long = UploadRounds::of(600.0);
        assert_eq!((long.rounds, long.each), (10, Duration::from_secs(60)));
        // a tiny time still gives rounds TCP can ramp in
        assert_eq!(UploadRounds::of(0.1).each, MIN_ROUND);
    }
}
