//! The kernel backend: tc commands for the link directions `backend::plan` gave to a qdisc,
//! and the probe that tells which qdiscs the running kernel has.
//!
//! A direction `a`→`b` is shaped on the egress of `a`'s interface, which is where a real
//! bottleneck queue sits. The argument lists are built by pure functions (unit-tested here);
//! [`apply`] runs them with `tc -n NETNS`.
//!
//! - **tbf** for a plain rate: `burst` is the scenario's, or by default [`default_burst`]:
//!   one millisecond at the rate, at least two frames; never less than one frame (MTU + 14:
//!   tbf drops a packet larger than its bucket). `limit` is the byte queue limit (at least one
//!   frame), or 1000 frames' worth, matching the engine's default of 1000 packets.
//! - **htb** with a `pfifo`/`bfifo` child when the queue limit counts packets (tbf's cannot);
//!   `burst` and `cburst` as tbf's `burst`.
//! - **netem** where the kernel has it; this machine's kernel does not, so that path is only
//!   unit-tested here.
//!
//! Why the default burst grows with the rate: tbf and htb refill their bucket only when a
//! packet arrives or their watchdog timer has fired and the softirq run, which is late by
//! whatever the timer slack and the scheduling of the core add. Tokens that would have
//! accrued beyond the bucket's depth meanwhile are lost, so a one-frame bucket loses every
//! late wakeup, and a bucket must cover the lateness at the rate. TCP over 1500-byte frames,
//! 3 s, `sonde client`, measured on a 2-core VM with the lab's offloads off, in Mbit/s
//! (ceiling `rate × 1448 / 1514`):
//!
//! | rate | one frame (before) | 2 frames | 16–32 kB | 64 kB | 1 ms at the rate |
//! |---|---|---|---|---|---|
//! | 10 Mbit/s | 9.32 (−2.5 %) | 9.57 (+0.04 %) | | | = 2 frames |
//! | 100 Mbit/s | 79.0 (−17 %) | 95.60 (−0.04 %) | | | 95.24–95.66 |
//! | 1000 Mbit/s | 397 (−58 %) | | 879 (−8 %) | 947–950 | 950–955 (−0.7 to −0.2 %) |
//!
//! One millisecond is also the `rate / HZ` rule of tc-tbf(8) at HZ = 1000. The price is that
//! an idle link may pass up to that much at the sender's speed before shaping starts, as a
//! real shaper with that bucket would. A scenario's `burst` is used as given (at least one
//! frame). The userspace engine keeps its one-frame default: it runs its schedule at the
//! instants it announced, so late wakeups cost it nothing (see `crate::forward`).

use sonde_emu::backend::{KernelCaps, Qdisc};
use sonde_emu::impair::{Distribution, QueueLimit};
use sonde_scenario::Impairments;

use crate::cmd;
use crate::error::LabError;

/// The bucket depth in bytes tbf and htb get when the scenario sets no `burst`: what `rate`
/// (bit/s) sends in one millisecond, and at least two frames of `mtu` (see the module docs).
pub fn default_burst(rate: u64, mtu: u32) -> u64 {
    let frame = u64::from(mtu) + 14;
    (rate / 8).div_ceil(1000).max(2 * frame)
}

/// The tc commands (argument lists after `tc -n NETNS`) shaping `dev` with `qdisc`.
pub fn commands(qdisc: Qdisc, dev: &str, imp: &Impairments, mtu: u32) -> Vec<Vec<String>> {
    let frame = u64::from(mtu) + 14;
    let rate = imp.rate.map(|r| r.0);
    let burst = imp
        .burst
        .map_or_else(|| default_burst(rate.unwrap_or(0), mtu), |b| b.0)
        .max(frame);
    let overhead = imp.overhead.map(|o| o.to_string());
    let mut head: Vec<String> = ["qdisc", "replace", "dev", dev, "root"]
        .map(str::to_owned)
        .to_vec();
    let push =
        |v: &mut Vec<String>, items: &[&str]| v.extend(items.iter().map(|s| (*s).to_owned()));
    match qdisc {
        Qdisc::Tbf => {
            let limit = match imp.queue_limit.map(|l| l.at_rate(rate.unwrap_or(0))) {
                Some(QueueLimit::Bytes(b)) => b.max(frame),
                _ => 1000 * frame,
            };
            push(&mut head, &["tbf", "rate"]);
            head.push(format!("{}bit", rate.unwrap_or(0)));
            head.extend([
                "burst".into(),
                burst.to_string(),
                "limit".into(),
                limit.to_string(),
            ]);
            if let Some(o) = overhead {
                head.extend(["overhead".into(), o]);
            }
            vec![head]
        }
        Qdisc::Htb => {
            push(&mut head, &["handle", "1:", "htb", "default", "1"]);
            let r = format!("{}bit", rate.unwrap_or(0));
            let mut class: Vec<String> = [
                "class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb",
            ]
            .map(str::to_owned)
            .to_vec();
            class.extend(["rate".into(), r.clone(), "ceil".into(), r]);
            class.extend([
                "burst".into(),
                burst.to_string(),
                "cburst".into(),
                burst.to_string(),
            ]);
            if let Some(o) = overhead {
                class.extend(["overhead".into(), o]);
            }
            let (fifo, limit) = match imp.queue_limit.map(|l| l.at_rate(rate.unwrap_or(0))) {
                Some(QueueLimit::Bytes(b)) => ("bfifo", b),
                Some(QueueLimit::Packets(p)) => ("pfifo", p),
                Some(QueueLimit::Time(_)) | None => ("pfifo", 1000),
            };
            let mut child: Vec<String> = [
                "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", fifo, "limit",
            ]
            .map(str::to_owned)
            .to_vec();
            child.push(limit.to_string());
            vec![head, class, child]
        }
        Qdisc::Netem => {
            head.push("netem".into());
            netem_args(&mut head, imp);
            vec![head]
        }
    }
}

fn pct(p: f64) -> String {
    format!("{}%", p * 100.0)
}

fn netem_args(v: &mut Vec<String>, imp: &Impairments) {
    if let Some(QueueLimit::Packets(p)) = imp.queue_limit {
        v.extend(["limit".into(), p.to_string()]);
    }
    if imp.delay.is_some() || imp.jitter.is_some() {
        let us = |d: std::time::Duration| format!("{}us", d.as_micros());
        v.extend([
            "delay".into(),
            us(imp.delay.map(|d| d.0).unwrap_or_default()),
        ]);
        if let Some(j) = imp.jitter {
            v.push(us(j.0));
            let dist = match imp.distribution.unwrap_or_default() {
                Distribution::Uniform => None,
                Distribution::Normal => Some("normal"),
                Distribution::Pareto => Some("pareto"),
                Distribution::ParetoNormal => Some("paretonormal"),
            };
            if let Some(d) = dist {
                v.extend(["distribution".into(), d.into()]);
            }
        }
    }
    if let Some(r) = imp.reorder {
        v.extend([
            "reorder".into(),
            pct(r.probability.0),
            "gap".into(),
            r.gap.to_string(),
        ]);
    }
    if let Some(p) = imp.loss {
        v.extend(["loss".into(), "random".into(), pct(p.0)]);
    }
    if let Some(ge) = imp.gemodel {
        let g = ge.params();
        v.extend(["loss".into(), "gemodel".into()]);
        v.extend([g.p, g.r, g.loss_bad, g.loss_good].map(pct));
    }
    if let Some(p) = imp.duplicate {
        v.extend(["duplicate".into(), pct(p.0)]);
    }
    if let Some(p) = imp.corrupt {
        v.extend(["corrupt".into(), pct(p.0)]);
    }
    if let Some(r) = imp.rate {
        v.extend(["rate".into(), format!("{}bit", r.0)]);
        if let Some(o) = imp.overhead {
            v.push(o.to_string());
        }
    }
}

/// Shapes `dev` in `netns` with `qdisc`.
///
/// # Errors
/// The first tc command that fails, with its stderr.
pub fn apply(
    netns: &str,
    qdisc: Qdisc,
    dev: &str,
    imp: &Impairments,
    mtu: u32,
) -> Result<(), LabError> {
    for args in commands(qdisc, dev, imp, mtu) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cmd::tc_in(netns, &args)?;
    }
    Ok(())
}

/// Which qdiscs the kernel has, tried on `dev` in `netns` (a veth the lab just made, before
/// any qdisc is applied to it). Each probe is removed again.
pub fn probe(netns: &str, dev: &str) -> KernelCaps {
    let try_qdisc = |args: &[&str]| {
        let mut full = vec!["qdisc", "add", "dev", dev, "root"];
        full.extend_from_slice(args);
        let ok = cmd::tc_in(netns, &full).is_ok();
        if ok {
            let _ = cmd::tc_in(netns, &["qdisc", "del", "dev", dev, "root"]);
        }
        ok
    };
    KernelCaps {
        has_netem: try_qdisc(&["netem", "delay", "1ms"]),
        has_tbf: try_qdisc(&["tbf", "rate", "1mbit", "burst", "10k", "limit", "10k"]),
        has_htb: try_qdisc(&["htb"]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_scenario::{Dur, Percent, Rate, Size};
    use std::time::Duration;

    fn line(v: &[String]) -> String {
        v.join(" ")
    }

    #[test]
    fn tbf_takes_a_millisecond_of_burst_and_a_1000_frame_limit() {
        let imp = Impairments {
            rate: Some(Rate(100_000_000)),
            ..Impairments::default()
        };
        let c = commands(Qdisc::Tbf, "s-wan", &imp, 1500);
        assert_eq!(
            c.iter().map(|v| line(v)).collect::<Vec<_>>(),
            ["qdisc replace dev s-wan root tbf rate 100000000bit burst 12500 limit 1514000"]
        );
    }

    #[test]
    fn the_default_burst_is_a_millisecond_and_at_least_two_frames() {
        assert_eq!(default_burst(1_000_000_000, 1500), 125_000);
        assert_eq!(default_burst(100_000_000, 1500), 12_500);
        assert_eq!(default_burst(10_000_000, 1500), 3_028);
        assert_eq!(default_burst(10_000_000, 9000), 18_028);
        assert_eq!(default_burst(123_456_789, 1500), 15_433);
        assert_eq!(default_burst(0, 1500), 3_028);
    }

    #[test]
    fn an_explicit_burst_is_kept_and_a_byte_limit_too() {
        let imp = Impairments {
            rate: Some(Rate(1_000_000_000)),
            burst: Some(Size(64_000)),
            queue_limit: Some(QueueLimit::Bytes(20_000)),
            ..Impairments::default()
        };
        let c = commands(Qdisc::Tbf, "s-wan", &imp, 1500);
        assert_eq!(
            line(&c[0]),
            "qdisc replace dev s-wan root tbf rate 1000000000bit burst 64000 limit 20000"
        );
        // Never below one frame: tbf would drop every full-sized packet.
        let tiny = Impairments {
            burst: Some(Size(100)),
            ..imp
        };
        assert!(line(&commands(Qdisc::Tbf, "s", &tiny, 1500)[0]).contains("burst 1514 "));
    }

    #[test]
    fn a_time_limit_is_the_bytes_at_the_rate() {
        // 100 ms at 20 Mbit/s: 250 000 bytes, in tbf's limit and in htb's bfifo.
        let imp = Impairments {
            rate: Some(Rate(20_000_000)),
            queue_limit: Some(QueueLimit::Time(Duration::from_millis(100))),
            ..Impairments::default()
        };
        assert!(line(&commands(Qdisc::Tbf, "s", &imp, 1500)[0]).ends_with("limit 250000"));
        let htb = commands(Qdisc::Htb, "s", &imp, 1500);
        assert!(line(&htb[2]).ends_with("bfifo limit 250000"));
    }

    #[test]
    fn htb_holds_a_packet_limit_in_its_fifo() {
        let imp = Impairments {
            rate: Some(Rate(10_000_000)),
            queue_limit: Some(QueueLimit::Packets(20)),
            ..Impairments::default()
        };
        let c = commands(Qdisc::Htb, "s-l", &imp, 1500);
        assert_eq!(c.len(), 3);
        assert_eq!(
            line(&c[2]),
            "qdisc add dev s-l parent 1:1 handle 10: pfifo limit 20"
        );
        assert!(line(&c[1]).contains("rate 10000000bit ceil 10000000bit burst 3028 cburst 3028"));
    }

    #[test]
    fn netem_gets_every_impairment() {
        let imp = Impairments {
            delay: Some(Dur(Duration::from_millis(10))),
            jitter: Some(Dur(Duration::from_millis(1))),
            loss: Some(Percent(0.05)),
            ..Impairments::default()
        };
        let c = commands(Qdisc::Netem, "s-l", &imp, 1500);
        assert_eq!(
            line(&c[0]),
            "qdisc replace dev s-l root netem delay 10000us 1000us loss random 5%"
        );
    }
}
