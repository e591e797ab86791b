//! `sonde sweep` output: a row per step as it ends, then per length and direction the rate
//! found (searches) or achieved against asked with the knee (rate lists); or one JSON document
//! holding every step, for charts: the typed model [`sonde_schema::sweep`], the types
//! `sonde report` reads it back with.

use serde_json::Value;
use sonde_schema::sweep as schema;
use sonde_stats::sweep::{follows, knee, Verdict};
use sonde_stats::sweep_record::{per_second, SearchResult, StepRole, SweepDirection, SweepStep};
use sonde_stats::units::format_bitrate;

/// What the document says about how the sweep was run.
#[derive(Debug, Clone)]
pub struct SweepSettings {
    pub host: String,
    /// "udp" or "tcp".
    pub protocol: &'static str,
    /// "search" or "rates".
    pub mode: &'static str,
    pub step_secs: f64,
    pub max_loss_percent: f64,
    pub resolution_percent: f64,
    pub confirm: u32,
    pub floor_bps: u64,
    pub ceiling_bps: u64,
    pub tolerance_percent: f64,
}

fn layer(protocol: &str) -> &'static str {
    if protocol == "udp" {
        "UDP payload"
    } else {
        "TCP payload"
    }
}

fn loss_text(loss: Option<f64>) -> String {
    loss.map_or_else(|| "-".into(), |l| format!("{l:.3}%"))
}

/// The step table's header.
pub fn step_header() -> String {
    format!(
        "{:>4}  {:>6}  {:<5}  {:<7}  {:>15}  {:>15}  {:>8}  {:<5}  {:>6}",
        "Step", "Length", "Dir", "Kind", "Offered", "Achieved", "Loss", "", "Time"
    )
}

/// One step's row.
pub fn step_row(s: &SweepStep) -> String {
    let kind = match s.kind {
        StepRole::Search => "search",
        StepRole::Confirm => "confirm",
        StepRole::Listed => "rate",
    };
    let verdict = match s.passed {
        _ if s.rerun => "again",
        _ if s.sender_short => "short",
        Some(true) => "pass",
        Some(false) => "FAIL",
        None => "",
    };
    format!(
        "{:>4}  {:>6}  {:<5}  {:<7}  {:>15}  {:>15}  {:>8}  {:<5}  {:>5.1}s",
        s.index,
        s.length,
        s.direction.name(),
        kind,
        format_bitrate(s.offered_bps as f64),
        format_bitrate(s.achieved_bps),
        loss_text(s.loss_percent),
        verdict,
        s.seconds
    )
}

/// The search results as lines: a header, then one row per length and direction.
pub fn search_lines(results: &[SearchResult], max_loss_percent: f64) -> Vec<String> {
    let mut out = vec![
        format!("Highest rate with loss <= {max_loss_percent}% (rates are UDP payload):"),
        format!(
            "{:>6}  {:<5}  {:>15}  {:>12}  {:>8}  {:>5}  {:>7}  {}",
            "Length", "Dir", "Found rate", "Datagrams/s", "Loss", "Steps", "Time", "Note"
        ),
    ];
    for r in results {
        let rate = r.rate_bps();
        let note = match r.verdict {
            Verdict::Found { .. } => "",
            Verdict::AtMaxRate { .. } => {
                "AT --max-rate: passed at the highest rate tried; a lower bound, not the ceiling"
            }
            Verdict::BelowFloor => "lost too much even at the floor (--min-rate)",
            Verdict::StepLimit { .. } => "step limit reached: not confirmed",
            Verdict::SenderLimited { .. } => {
                "SENDER-LIMITED: this host could not offer more; a lower bound, not the ceiling"
            }
        };
        out.push(format!(
            "{:>6}  {:<5}  {:>15}  {:>12}  {:>8}  {:>5}  {:>6.1}s  {}",
            r.length,
            r.direction.name(),
            rate.map_or_else(|| "-".into(), |b| format_bitrate(b as f64)),
            rate.map_or_else(
                || "-".into(),
                |b| format!("{:.0}", per_second(b as f64, r.length))
            ),
            loss_text(r.loss_percent),
            r.steps,
            r.seconds,
            note
        ));
    }
    out
}

/// The rate list's rows (asked, achieved, loss, whether it follows) and the knee per
/// direction, as lines.
pub fn rate_lines(steps: &[SweepStep], tolerance_percent: f64, protocol: &str) -> Vec<String> {
    let tol = tolerance_percent / 100.0;
    let mut out = vec![format!(
        "{:<5}  {:>15}  {:>15}  {:>8}  {}",
        "Dir",
        "Asked",
        format!(
            "Achieved ({})",
            if protocol == "udp" { "UDP" } else { "TCP" }
        ),
        "Loss",
        "Follows"
    )];
    for s in steps {
        out.push(format!(
            "{:<5}  {:>15}  {:>15}  {:>8}  {}",
            s.direction.name(),
            format_bitrate(s.offered_bps as f64),
            format_bitrate(s.achieved_bps),
            loss_text(s.loss_percent),
            if s.rerun {
                "again (sender short)"
            } else if s.sender_short {
                "no (sender short)"
            } else if follows(s.offered_bps, s.achieved_bps, tol) {
                "yes"
            } else {
                "no"
            }
        ));
    }
    for (dir, k) in knees(steps, tol) {
        let mut line = match k {
            Some(rate) => format!(
                "{}: achieved stops following asked at {} (the lowest rate short by more than {tolerance_percent}%)",
                dir.name(),
                format_bitrate(rate as f64)
            ),
            None => format!(
                "{}: achieved follows asked at every rate (within {tolerance_percent}%)",
                dir.name()
            ),
        };
        let short: Vec<String> = sender_short_rates(steps, dir)
            .into_iter()
            .map(|r| format_bitrate(r as f64))
            .collect();
        if !short.is_empty() {
            line.push_str(&format!(
                "; at {} the sender put out less than asked and the receiver got all of it: \
                 there this host set the rate, not the path",
                short.join(", ")
            ));
        }
        out.push(line);
    }
    out
}

/// The listed rates of direction `d` whose sender still fell short after its reruns, the
/// receiver getting what was sent: there the sending host (its CPU, or its own link) set the
/// achieved rate, which the output says beside the knee.
fn sender_short_rates(steps: &[SweepStep], d: SweepDirection) -> Vec<u64> {
    steps
        .iter()
        .filter(|s| s.direction == d && s.kind == StepRole::Listed && s.sender_short)
        .map(|s| s.offered_bps)
        .collect()
}

/// The knee of each direction's listed rates, directions in the order they ran.
fn knees(steps: &[SweepStep], tol: f64) -> Vec<(SweepDirection, Option<u64>)> {
    let mut dirs: Vec<SweepDirection> = Vec::new();
    for s in steps {
        if !dirs.contains(&s.direction) {
            dirs.push(s.direction);
        }
    }
    dirs.into_iter()
        .map(|d| {
            let pts: Vec<(u64, f64)> = steps
                .iter()
                .filter(|s| s.direction == d && s.kind == StepRole::Listed && !s.rerun)
                .map(|s| (s.offered_bps, s.achieved_bps))
                .collect();
            (d, knee(&pts, tol))
        })
        .collect()
}

/// The whole sweep as one document.
pub fn document(
    s: &SweepSettings,
    steps: &[SweepStep],
    results: &[SearchResult],
    error: Option<&str>,
) -> Value {
    let tol = s.tolerance_percent / 100.0;
    let knees = if s.mode == "rates" {
        knees(steps, tol)
            .into_iter()
            .map(|(d, k)| schema::Knee {
                direction: d,
                knee_bps: k,
                sender_short_bps: sender_short_rates(steps, d),
            })
            .collect()
    } else {
        Vec::new()
    };
    // A failed step ends the sweep: the steps after it are not run.
    sonde_schema::to_value(&schema::SweepDocument {
        sweep: settings(s),
        results: results.iter().map(search_record).collect(),
        knees,
        steps: steps.iter().map(step_record).collect(),
        envelope: sonde_schema::Envelope::new("sweep", error.is_some(), error),
    })
}

fn settings(s: &SweepSettings) -> schema::SweepSettings {
    let SweepSettings {
        host,
        protocol,
        mode,
        step_secs,
        max_loss_percent,
        resolution_percent,
        confirm,
        floor_bps,
        ceiling_bps,
        tolerance_percent,
    } = s;
    schema::SweepSettings {
        host: Some(host.clone()),
        protocol: Some((*protocol).to_owned()),
        mode: Some((*mode).to_owned()),
        layer: Some(layer(protocol).to_owned()),
        step_secs: Some(*step_secs),
        max_loss_percent: Some(*max_loss_percent),
        resolution_percent: Some(*resolution_percent),
        confirm: Some(*confirm),
        floor_bps: Some(*floor_bps),
        ceiling_bps: Some(*ceiling_bps),
        tolerance_percent: Some(*tolerance_percent),
    }
}

fn step_record(s: &SweepStep) -> schema::SweepStep {
    let SweepStep {
        index,
        length,
        direction: d,
        kind,
        offered_bps,
        achieved_bps,
        loss_percent,
        packets,
        lost,
        sent_bps,
        passed,
        rerun,
        sender_short,
        seconds,
    } = s;
    schema::SweepStep {
        index: *index,
        length: *length,
        direction: Some(*d),
        kind: Some(*kind),
        offered_bps: Some(*offered_bps),
        achieved_bps: Some(*achieved_bps),
        loss_percent: *loss_percent,
        packets: *packets,
        lost: *lost,
        sent_bps: *sent_bps,
        passed: *passed,
        rerun: *rerun,
        sender_short: *sender_short,
        seconds: Some(*seconds),
    }
}

/// A search's result: its verdict's own figures (`best_bps`, `limited_at_bps`) beside the
/// rate to show and its datagrams per second.
fn search_record(r: &SearchResult) -> schema::SearchResult {
    let SearchResult {
        length,
        direction: d,
        verdict,
        loss_percent,
        steps,
        seconds,
    } = r;
    use schema::SearchVerdict as V;
    let (verdict, best_bps, limited_at_bps) = match *verdict {
        Verdict::Found { .. } => (V::Found, None, None),
        Verdict::AtMaxRate { .. } => (V::AtMaxRate, None, None),
        Verdict::BelowFloor => (V::BelowFloor, None, None),
        Verdict::StepLimit { best_bps } => (V::StepLimit, Some(best_bps), None),
        Verdict::SenderLimited {
            limited_at_bps,
            best_bps,
        } => (V::SenderLimited, Some(best_bps), Some(limited_at_bps)),
    };
    let rate = r.rate_bps();
    schema::SearchResult {
        length: *length,
        direction: *d,
        verdict,
        rate_bps: rate,
        datagrams_per_sec: rate.map(|rate| per_second(rate as f64, *length)),
        best_bps,
        limited_at_bps,
        loss_percent: *loss_percent,
        steps: Some(*steps),
        seconds: Some(*seconds),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(index: u32, asked: u64, achieved: f64) -> SweepStep {
        SweepStep {
            index,
            length: 1448,
            direction: SweepDirection::Up,
            kind: StepRole::Listed,
            offered_bps: asked,
            achieved_bps: achieved,
            sent_bps: Some(asked as f64),
            loss_percent: Some(0.0),
            packets: Some(100),
            lost: Some(0),
            passed: None,
            rerun: false,
            sender_short: false,
            seconds: 2.1,
        }
    }

    #[test]
    fn rate_lines_have_one_row_per_rate_and_name_the_knee() {
        let steps = [
            step(1, 1_000_000_000, 95e6),
            step(2, 100_000_000, 95e6),
            step(3, 10_000_000, 10e6),
        ];
        let lines = rate_lines(&steps, 2.0, "udp");
        assert_eq!(lines.len(), 5, "{lines:#?}");
        // A step its sender fell short in runs again; only the rerun counts for the knee.
        let mut short = step(2, 10_000_000, 9e6);
        short.rerun = true;
        let again = [steps[0].clone(), steps[1].clone(), short, steps[2].clone()];
        let again_lines = rate_lines(&again, 2.0, "udp");
        assert!(
            again_lines[3].ends_with("again (sender short)"),
            "{again_lines:#?}"
        );
        assert_eq!(again_lines.last(), lines.last());
        // A rate whose sender stayed short after its reruns is marked so, and the knee's line
        // says that there the host set the rate.
        let mut stuck = step(3, 10_000_000, 6e6);
        stuck.sent_bps = Some(6e6);
        stuck.sender_short = true;
        let short = [steps[0].clone(), steps[1].clone(), stuck.clone()];
        let short_lines = rate_lines(&short, 2.0, "udp");
        assert!(
            short_lines[3].ends_with("no (sender short)"),
            "{short_lines:#?}"
        );
        let knee_line = short_lines.last().unwrap();
        assert!(
            knee_line.contains("stops following asked at 10.0 Mbits/sec")
                && knee_line.contains("at 10.0 Mbits/sec the sender put out less"),
            "{knee_line}"
        );
        assert_eq!(
            sender_short_rates(&short, SweepDirection::Up),
            vec![10_000_000]
        );
        assert!(sender_short_rates(&steps, SweepDirection::Up).is_empty());
        assert!(lines[2].ends_with("no"), "{}", lines[2]);
        assert!(lines[3].ends_with("yes"), "{}", lines[3]);
        assert!(
            lines[4].contains("stops following asked at 100 Mbits/sec"),
            "{}",
            lines[4]
        );
        let h = step_header();
        let r = step_row(&steps[0]);
        assert_eq!(
            h.find("Offered").map(|i| i + 7),
            r.find("Gbits/sec").map(|i| i + 9)
        );
    }

    #[test]
    fn document_holds_every_step_and_the_rate_found() {
        let s = SweepSettings {
            host: "h".into(),
            protocol: "udp",
            mode: "search",
            step_secs: 2.0,
            max_loss_percent: 0.1,
            resolution_percent: 1.0,
            confirm: 2,
            floor_bps: 100_000,
            ceiling_bps: 100_000_000,
            tolerance_percent: 2.0,
        };
        let r = SearchResult {
            length: 1448,
            direction: SweepDirection::Up,
            verdict: Verdict::Found {
                rate_bps: 92_672_000,
            },
            loss_percent: Some(0.0),
            steps: 5,
            seconds: 11.0,
        };
        let doc = document(&s, &[step(1, 1, 1.0)], std::slice::from_ref(&r), None);
        crate::snapshot::check("sweep_1", &doc);
        assert_eq!(doc["results"][0]["verdict"], "found");
        assert_eq!(doc["results"][0]["rate_bps"], 92_672_000);
        assert_eq!(doc["results"][0]["datagrams_per_sec"], 8000.0);
        assert_eq!(doc["steps"][0]["kind"], "listed");
        assert_eq!(doc["sweep"]["layer"], "UDP payload");
        let limited = SearchResult {
            verdict: Verdict::SenderLimited {
                limited_at_bps: 50_000_000,
                best_bps: Some(49_000_000),
            },
            ..r.clone()
        };
        let lines = search_lines(&[r.clone(), limited.clone()], 0.1);
        assert!(
            lines[2].contains("92.7 Mbits/sec") && lines[2].contains("8000"),
            "{lines:?}"
        );
        // A search only the sender bounded: its best rate, marked as a lower bound, and the
        // rate the host could not offer in the document.
        assert!(
            lines[3].contains("49.0 Mbits/sec") && lines[3].contains("SENDER-LIMITED"),
            "{lines:?}"
        );
        let doc = document(&s, &[], &[limited], None);
        crate::snapshot::check("sweep_2", &doc);
        assert_eq!(doc["results"][0]["verdict"], "sender_limited");
        assert_eq!(doc["results"][0]["limited_at_bps"], 50_000_000);
        assert_eq!(doc["results"][0]["rate_bps"], 49_000_000);
        // The ceiling itself passed: the rate is shown, marked as a lower bound.
        let at_max = SearchResult {
            verdict: Verdict::AtMaxRate {
                rate_bps: 100_000_000,
            },
            ..r.clone()
        };
        let lines = search_lines(std::slice::from_ref(&at_max), 0.1);
        assert!(
            lines[2].contains("100 Mbits/sec") && lines[2].contains("AT --max-rate"),
            "{lines:?}"
        );
        let doc = document(&s, &[], &[at_max], None);
        crate::snapshot::check("sweep_3", &doc);
        assert_eq!(doc["results"][0]["verdict"], "at_max_rate");
        assert_eq!(doc["results"][0]["rate_bps"], 100_000_000);
    }

    #[test]
    fn each_result_and_step_is_the_runtime_record_key_for_key() {
        let unconfirmed = |best_bps| SearchResult {
            length: 1448,
            direction: SweepDirection::Down,
            verdict: Verdict::StepLimit { best_bps },
            loss_percent: None,
            steps: 20,
            seconds: 30.0,
        };
        for r in [unconfirmed(None), unconfirmed(Some(5_000_000))] {
            let mut want = serde_json::to_value(&r).unwrap();
            if let (Some(obj), Some(rate)) = (want.as_object_mut(), r.rate_bps()) {
                obj.insert("rate_bps".into(), rate.into());
                obj.insert(
                    "datagrams_per_sec".into(),
                    per_second(rate as f64, 1448).into(),
                );
            }
            let name = format!("sweep_record_{:?}", r.verdict)
                .replace(|c: char| !c.is_alphanumeric(), "_");
            crate::snapshot::check(&name, &search_record(&r));
            assert_eq!(sonde_schema::to_value(&search_record(&r)), want);
        }
        let mut s = step(1, 10_000_000, 9e6);
        s.rerun = true;
        let st = sonde_schema::to_value(&step_record(&s));
        crate::snapshot::check("sweep_step_record", &st);
        assert_eq!(st, serde_json::to_value(&s).unwrap());
    }
}
