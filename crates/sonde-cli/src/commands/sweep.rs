//! `sonde sweep`: phase two (the run configuration), then the steps, progress on stderr, and
//! the table or JSON document.

use super::exit;
use crate::flags::sweep::SweepArgs;
use crate::output::{self, outln};
use sonde_live::sweep::{self as report, SweepSettings};
use sonde_proto::message::TestParams;
use sonde_runtime::client::ClientConfig;
use sonde_runtime::sweep::{Progress, StepDone, SweepConfig, SweepMode, SweepRecord};
use sonde_stats::model::Protocol;
use sonde_stats::sink::FnSink;
use sonde_stats::sweep::{SearchConfig, Verdict};
use sonde_stats::sweep_record::SweepStep;
use sonde_stats::units::{format_bitrate, Size};
use std::sync::atomic::AtomicBool;

/// Default UDP datagram (as `sonde client`), and TCP write length.
const UDP_DEFAULT_LEN: u64 = 1448;
const TCP_DEFAULT_LEN: u64 = 128 * 1024;

/// Turns validated flags into the sweep's configuration.
///
/// # Errors
/// A usage message when flags contradict each other or exceed protocol limits.
pub fn config(a: &SweepArgs) -> Result<SweepConfig, String> {
    let protocol = if a.udp { Protocol::Udp } else { Protocol::Tcp };
    let search = a.rates.is_empty();
    if search && !a.udp {
        return Err(
            "a search for the highest rate within --max-loss needs UDP (-u); \
                    for TCP give rates to compare with -b LIST"
                .into(),
        );
    }
    if !search && a.lengths.len() > 1 {
        return Err("with -b LIST give one length (-l N): each rate runs once".into());
    }
    if let Some(0) = a.rates.iter().copied().find(|&r| r == 0) {
        return Err("-b 0 is unpaced: every rate of a sweep must be above 0".into());
    }
    let checked = lengths(a, protocol)?;
    let mut directions = a.directions.clone();
    directions.dedup();
    let mode = if search {
        search_mode(a, checked)?
    } else {
        SweepMode::Rates {
            rates: a.rates.clone(),
            length: checked.first().copied().unwrap_or(1448),
            tolerance: a.tolerance / 100.0,
        }
    };
    Ok(SweepConfig {
        client: client_config(a, protocol)?,
        step_secs: a.step_time,
        directions,
        mode,
    })
}

/// The lengths to sweep (`-l`, or the protocol's default), each checked as a test's.
fn lengths(a: &SweepArgs, protocol: Protocol) -> Result<Vec<u32>, String> {
    let default_len = if a.udp {
        UDP_DEFAULT_LEN
    } else {
        TCP_DEFAULT_LEN
    };
    let lengths: Vec<Size> = if a.lengths.is_empty() {
        vec![Size::from_bytes(default_len)]
    } else {
        a.lengths.clone()
    };
    let mut checked = Vec::with_capacity(lengths.len());
    for &size in &lengths {
        let l = size.bytes();
        let length = u32::try_from(l).map_err(|_| format!("-l {l} is too large"))?;
        let p = TestParams {
            protocol,
            length: size,
            duration_secs: a.step_time,
            rate: sonde_stats::units::Rate::from_bits_per_sec(1),
            ..TestParams::default()
        };
        p.validate().map_err(|e| format!("-l {l}: {e}"))?;
        checked.push(length);
    }
    Ok(checked)
}

/// The search for the highest rate within `--max-loss`, between `--min-rate` and
/// `--max-rate` (or the link's speed), per length.
fn search_mode(a: &SweepArgs, lengths: Vec<u32>) -> Result<SweepMode, String> {
    let ceiling = match a.max_rate {
        Some(r) => r,
        None => link_ceiling(a)?,
    };
    if ceiling <= a.min_rate {
        return Err(format!(
            "--max-rate {} must be above --min-rate {}",
            format_bitrate(ceiling as f64),
            format_bitrate(a.min_rate as f64)
        ));
    }
    Ok(SweepMode::Search {
        lengths,
        search: SearchConfig {
            floor_bps: a.min_rate,
            ceiling_bps: ceiling,
            max_loss_percent: a.max_loss,
            resolution: a.resolution / 100.0,
            shortfall: a.tolerance / 100.0,
            confirm: a.confirm,
            max_steps: a.max_steps,
        },
    })
}

/// Without `--max-rate`: the speed of the interface this host reaches the server by, said on
/// stderr. A speed the driver does not report (loopback, a virtio NIC), or one a virtual
/// interface reports (veth's constant 10 Gbit/s is no link's), is no ceiling.
fn link_ceiling(a: &SweepArgs) -> Result<u64, String> {
    let f = sonde_platform::link_facts::towards(&a.host, a.port, a.ip.family()).map_err(|e| {
        format!(
            "{GIVE_MAX_RATE}: the link towards {} is unknown: {e}",
            a.host
        )
    })?;
    let ceiling = ceiling_of(&f)?;
    eprintln!(
        "sonde sweep: ceiling: the link's {} ({})",
        format_bitrate(ceiling as f64),
        f.interface
    );
    Ok(ceiling)
}

/// What a search without `--max-rate` is told to do when the link gives no ceiling.
const GIVE_MAX_RATE: &str =
    "give the link's nominal rate as the search's ceiling with --max-rate RATE (e.g. --max-rate 100m)";

/// The ceiling the link's facts give: the speed of an interface with a device behind it.
fn ceiling_of(f: &sonde_stats::link::LinkFacts) -> Result<u64, String> {
    let give = GIVE_MAX_RATE;
    match f.speed_bps {
        Some(speed) if !f.is_virtual() => Ok(speed.bits_per_sec()),
        Some(speed) => Err(format!(
            "{give}: {} is a virtual interface, and the {} it reports is its driver's \
             constant, not a link's speed",
            f.interface,
            format_bitrate(speed.bits_per_sec() as f64)
        )),
        None => Err(format!(
            "{give}: the link speed was not readable on {}",
            f.interface
        )),
    }
}

/// The client side of every step: the server, the family, the key, the timeouts.
fn client_config(a: &SweepArgs, protocol: Protocol) -> Result<ClientConfig, String> {
    Ok(ClientConfig {
        host: a.host.clone(),
        port: a.port,
        family: a.ip.family(),
        cport: None,
        params: TestParams {
            protocol,
            // A UDP step measures the device, not the sender's catch-up after a hold-up.
            steady_pacing: protocol == Protocol::Udp,
            ..TestParams::default()
        },
        connect_timeout: a.connect.connect_timeout,
        local: super::auth::keyed_sockets(&a.psk)?,
        rcv_timeout: Some(std::time::Duration::from_secs(
            (a.step_time.ceil() as u64).saturating_add(10),
        )),
        file: None,
    })
}

/// The progress line of a step.
fn progress_line(s: &SweepStep, p: Progress, search: bool) -> String {
    let what = if search { "search" } else { "rate" };
    let loss = s
        .loss_percent
        .map_or_else(String::new, |l| format!(", loss {l:.3}%"));
    let eta = p.eta_secs.round() as u64;
    let again = match (s.rerun, s.sent_bps) {
        (true, Some(sent)) => format!(
            " (the sender put out only {}: the host was busy, running it again)",
            format_bitrate(sent)
        ),
        _ => String::new(),
    };
    format!(
        "sonde sweep: step {} ({} B {}, {} {}): achieved {}{loss}{again}; {what} {}/{} done, about {}m{:02}s left",
        s.index,
        s.length,
        s.direction.name(),
        match s.kind {
            sonde_stats::sweep_record::StepRole::Confirm => "confirm",
            _ => "offered",
        },
        format_bitrate(s.offered_bps as f64),
        format_bitrate(s.achieved_bps),
        p.done,
        p.total,
        eta / 60,
        eta % 60
    )
}

/// Runs the sweep command.
pub fn run(a: SweepArgs, interrupt: &AtomicBool) -> i32 {
    let cfg = match config(&a) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
    };
    let search = matches!(cfg.mode, SweepMode::Search { .. });
    let settings = settings(&a, &cfg);
    let json = a.output.json;
    if !json {
        heading(&a, &settings, search);
    }
    let quiet = a.quiet;
    let mut on_step = FnSink(|done: &StepDone<'_>| {
        if !json {
            outln!("{}", report::step_row(done.step));
        }
        if !quiet {
            eprintln!("{}", progress_line(done.step, done.progress, search));
        }
    });
    let (rec, error) = sonde_runtime::sweep::run(&cfg, interrupt, &mut on_step);
    if json {
        let error_text = error.as_ref().map(ToString::to_string);
        let doc = report::document(&settings, &rec.steps, &rec.searches, error_text.as_deref());
        output::document(std::io::stdout(), &doc);
    } else {
        table_end(&a, &settings, &rec, search);
    }
    if let Some(e) = error {
        let interrupted = matches!(e.source, sonde_runtime::error::RunError::Interrupted);
        output::run_error(&e, interrupted);
        return exit::FAILED;
    }
    verdicts(&a, &rec)
}

/// The settings the report and the document name, the search's bounds among them.
fn settings(a: &SweepArgs, cfg: &SweepConfig) -> SweepSettings {
    let (search, (floor, ceiling)) = match &cfg.mode {
        SweepMode::Search { search, .. } => (true, (search.floor_bps, search.ceiling_bps)),
        SweepMode::Rates { .. } => (false, (0, 0)),
    };
    SweepSettings {
        host: a.host.clone(),
        protocol: if a.udp { "udp" } else { "tcp" },
        mode: if search { "search" } else { "rates" },
        step_secs: a.step_time,
        max_loss_percent: a.max_loss,
        resolution_percent: a.resolution,
        confirm: a.confirm,
        floor_bps: floor,
        ceiling_bps: ceiling,
        tolerance_percent: a.tolerance,
    }
}

/// The table's first lines: what the sweep does, then the steps' header.
fn heading(a: &SweepArgs, settings: &SweepSettings, search: bool) {
    outln!(
        "Sweep to {} port {}: {}, {} s per step; rates are {} per direction",
        a.host,
        a.port,
        if search {
            format!(
                "highest rate with loss <= {}% between {} and {}",
                a.max_loss,
                format_bitrate(settings.floor_bps as f64),
                format_bitrate(settings.ceiling_bps as f64)
            )
        } else {
            format!("{} rate(s), achieved against asked", a.rates.len())
        },
        a.step_time,
        if a.udp { "UDP payload" } else { "TCP payload" }
    );
    outln!("{}", report::step_header());
}

/// The table's last lines, under the steps: the searches' or the rates' outcome.
fn table_end(a: &SweepArgs, settings: &SweepSettings, rec: &SweepRecord, search: bool) {
    outln!("");
    let lines = if search {
        report::search_lines(&rec.searches, a.max_loss)
    } else {
        report::rate_lines(&rec.steps, a.tolerance, settings.protocol)
    };
    for line in lines {
        outln!("{line}");
    }
    let at_max = rec
        .searches
        .iter()
        .any(|r| matches!(r.verdict, Verdict::AtMaxRate { .. }));
    if at_max {
        outln!(
            "A rate marked AT --max-rate passed at {}, the highest rate tried: the path \
             carries at least that, and its ceiling is higher or there; raise --max-rate to \
             find it",
            format_bitrate(settings.ceiling_bps as f64)
        );
    }
}

/// The exit code of a sweep that ran to its end: a search that ran out of steps, or whose
/// sender could not offer the rate, found no ceiling; each is said once on stderr.
fn verdicts(a: &SweepArgs, rec: &SweepRecord) -> i32 {
    let limited: Vec<String> = rec
        .searches
        .iter()
        .filter_map(|r| match r.verdict {
            Verdict::SenderLimited { limited_at_bps, .. } => Some(format!(
                "{} B {} at {}",
                r.length,
                r.direction.name(),
                format_bitrate(limited_at_bps as f64)
            )),
            _ => None,
        })
        .collect();
    let out_of_steps: Vec<String> = rec
        .searches
        .iter()
        .filter_map(|r| match r.verdict {
            Verdict::StepLimit { best_bps } => Some(format!(
                "{} B {} (best passing rate {})",
                r.length,
                r.direction.name(),
                best_bps.map_or("none".into(), |b| format_bitrate(b as f64))
            )),
            _ => None,
        })
        .collect();
    if !out_of_steps.is_empty() {
        // A search that ran out of steps found no ceiling: say so and exit non-zero, the
        // rows above still show every step.
        output::final_error(format_args!(
            "sonde: error - the search ran out of steps before it converged ({}): that rate \
             is unconfirmed and only a lower bound; raise --max-steps (now {}), coarsen \
             --resolution or narrow --min-rate/--max-rate",
            out_of_steps.join("; "),
            a.max_steps
        ));
    }
    if !limited.is_empty() {
        output::final_error(format_args!(
            "sonde: error - the sender could not offer the rate on this host ({}): every run \
             put out less than offered with no loss to explain it (the CPU was busy \
             elsewhere), so the rate shown is a lower bound, not the path's ceiling; run again \
             on a quieter host",
            limited.join("; ")
        ));
    }
    if !out_of_steps.is_empty() || !limited.is_empty() {
        return exit::FAILED;
    }
    exit::OK
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::link::{LinkFacts, VIRTUAL_DRIVER};
    use sonde_stats::units::Rate;

    #[test]
    fn only_a_device_s_reported_speed_is_a_ceiling() {
        let gigabit = Some(Rate::from_bits_per_sec(1_000_000_000));
        let nic = LinkFacts {
            interface: "eth0".into(),
            speed_bps: gigabit,
            driver: Some("igb".into()),
            ..LinkFacts::default()
        };
        assert_eq!(ceiling_of(&nic), Ok(1_000_000_000));
        let veth = LinkFacts {
            interface: "veth0".into(),
            driver: Some(VIRTUAL_DRIVER.into()),
            ..nic.clone()
        };
        let e = ceiling_of(&veth).unwrap_err();
        assert!(
            e.contains("veth0 is a virtual interface") && e.contains("--max-rate"),
            "{e}"
        );
        let silent = LinkFacts {
            speed_bps: None,
            ..nic
        };
        let e = ceiling_of(&silent).unwrap_err();
        assert!(e.contains("the link speed was not readable on eth0"), "{e}");
    }
}
