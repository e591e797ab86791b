//! The human table of `sonde client --coded`: one labelled row per figure of the transfer
//! (what was sent how, whether it arrived whole, the receiver's and the sender's figures,
//! the path as the sender saw it, the CPU of both ends).

use sonde_stats::model::CpuUsage;
use sonde_stats::units::format_mbit;

use crate::coded_run::{figures, reliability, CodedMode, CodedRun, Figures};

/// One row of the result table: its label and its text.
type Row = (&'static str, String);

/// The table, without a trailing newline.
pub fn table(o: &CodedRun, mode: &CodedMode) -> String {
    let x = figures(o);
    let mut rows = transfer_rows(o, mode, &x);
    receiver_rows(&mut rows, o, mode);
    sender_rows(&mut rows, o, mode, &x);
    if let Some(path) = o.path {
        rows.push(path_row(path, o));
    }
    let cpu = |c: Option<CpuUsage>| c.map_or("-".into(), |c| format!("{:.1} %", c.total));
    rows.push((
        "cpu",
        format!("local {}, remote {}", cpu(o.cpu_local), cpu(o.cpu_remote)),
    ));
    let mut s = format!("coded transfer with {}\n", o.server);
    for (k, v) in rows {
        s.push_str(&format!("  {k:<22}{v}\n"));
    }
    s.trim_end().to_string()
}

/// "never", "once", "3 times".
fn competed(times: u64) -> String {
    match times {
        0 => "never".into(),
        1 => "once".into(),
        n => format!("{n} times"),
    }
}

/// A figure only the other end knows, when its figures did not arrive.
fn unknown() -> String {
    "unknown (the other end's figures did not arrive)".to_string()
}

/// What was sent how, whether it arrived whole, and the goodput.
fn transfer_rows(o: &CodedRun, mode: &CodedMode, x: &Figures) -> Vec<Row> {
    vec![
        (
            "mode",
            format!("{}, {} feedback", mode.scheme, mode.feedback),
        ),
        (
            "data",
            match &mode.file {
                Some(p) if o.client_sends => format!("the file {p}"),
                Some(p) => format!("the server's test data, written to {p}"),
                None => "sonde's checked test data".into(),
            },
        ),
        (
            "sha-256",
            match o.digest_ok {
                Some(true) => "verified: the receiver's digest equals the sender's".into(),
                Some(false) => "MISMATCH: the delivered bytes differ from the sent ones".into(),
                None => "not compared (the other end's digest did not arrive)".into(),
            },
        ),
        (
            "direction",
            if o.client_sends {
                "upload (this end sends)".into()
            } else {
                "reverse (the server sends)".into()
            },
        ),
        (
            "complete",
            if o.complete {
                "yes, every block decoded".into()
            } else {
                "NO".into()
            },
        ),
        ("time", format!("{:.3} s", o.elapsed_secs)),
        ("goodput", format_mbit(x.goodput_bps)),
        ("delivered", format!("{} bytes", x.delivered)),
        (
            "reliability",
            reliability(x).map_or_else(unknown, |r| {
                format!("{r:.2} % of {} bytes sent", x.sent.unwrap_or(0))
            }),
        ),
    ]
}

/// The receiver's rows, when its figures arrived: the pattern check, the decode delay, what
/// arrived.
fn receiver_rows(rows: &mut Vec<Row>, o: &CodedRun, mode: &CodedMode) {
    let Some(r) = o.receiver else {
        return;
    };
    // A file's bytes are checked by their digest only (the pattern check is for test data).
    if mode.file.is_none() || !o.client_sends {
        rows.push(("checked", format!("{} bytes wrong", r.mismatched_bytes)));
    }
    rows.push((
        "decode delay",
        format!(
            "p50 {:.2} ms, p99 {:.2} ms",
            r.decode_delay_p50_us as f64 / 1e3,
            r.decode_delay_p99_us as f64 / 1e3
        ),
    ));
    rows.push((
        "received",
        format!(
            "{} datagrams ({} useless, {} rejected), {} feedback sent",
            r.datagrams_received, r.useless_symbols, r.rejected, r.feedback_sent
        ),
    ));
}

/// The sender's rows: the wire, the repair (or with ARQ the resends), the feedback rounds;
/// one row saying they are unknown when its figures did not arrive.
fn sender_rows(rows: &mut Vec<Row>, o: &CodedRun, mode: &CodedMode, x: &Figures) {
    let Some(s) = o.sender else {
        rows.push(("sender", unknown()));
        return;
    };
    rows.push((
        "on the wire",
        format!(
            "{} datagrams, {} bytes, {}",
            s.datagrams,
            s.wire_bytes,
            format_mbit(x.wire_bps.unwrap_or(0.0))
        ),
    ));
    rows.push(if mode.scheme == "arq" {
        (
            "resent",
            format!(
                "{} datagrams on feedback = {:.1} % of {} sent once",
                s.feedback_repair,
                x.overhead.unwrap_or(0.0) * 100.0,
                s.source_symbols
            ),
        )
    } else {
        (
            "repair",
            format!(
                "{} proactive + {} on feedback = {:.1} % of {} source symbols",
                s.proactive_repair,
                s.feedback_repair,
                x.overhead.unwrap_or(0.0) * 100.0,
                s.source_symbols
            ),
        )
    });
    rows.push(("feedback rounds", s.feedback_rounds.to_string()));
}

/// The sender's last view of the path: rate, loss, RTT, its rate controller's reactions.
fn path_row((rate, loss, rtt): (f64, f64, Option<f64>), o: &CodedRun) -> Row {
    let rtt = rtt.map_or("no sample".into(), |r| format!("{r:.2} ms"));
    (
        "path (sender's view)",
        format!(
            "rate {}, loss {:.2} %, rtt {rtt}, {} back-offs, {} competed for a shared queue",
            format_mbit(rate),
            loss * 100.0,
            o.backoffs.unwrap_or(0),
            competed(o.competitions.unwrap_or(0))
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coded_run::fixtures::{mode, reverse_without_sender, upload};

    #[test]
    fn an_upload_shows_every_figure_in_labelled_rows() {
        let t = table(&upload(), &mode("coded", None));
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "coded transfer with 10.0.0.2:5201");
        assert_eq!(
            lines[1],
            "  mode                  coded, unrestricted feedback"
        );
        for row in [
            "  data                  sonde's checked test data",
            "  sha-256               verified: the receiver's digest equals the sender's",
            "  complete              yes, every block decoded",
            "  time                  2.500 s",
            "  delivered             1000000 bytes",
            "  reliability           100.00 % of 1000000 bytes sent",
            "  checked               0 bytes wrong",
            "  decode delay          p50 1.50 ms, p99 4.32 ms",
            "  received              930 datagrams (4 useless, 1 rejected), 12 feedback sent",
            "  repair                40 proactive + 5 on feedback = 5.0 % of 900 source symbols",
            "  feedback rounds       3",
            "  cpu                   local 12.5 %, remote -",
        ] {
            assert!(lines.contains(&row), "{row:?} not in\n{t}");
        }
        assert!(
            t.contains("rtt 1.75 ms, 2 back-offs, once competed for a shared queue"),
            "{t}"
        );
        assert!(!t.ends_with('\n'));
    }

    #[test]
    fn arq_counts_resends_and_missing_sender_figures_are_unknown() {
        let t = table(&upload(), &mode("arq", Some("/tmp/f")));
        assert!(
            t.contains("  resent                5 datagrams on feedback = 5.0 % of 900 sent once"),
            "{t}"
        );
        assert!(t.contains("the file /tmp/f"), "{t}");
        assert!(
            !t.contains("bytes wrong"),
            "a file upload is checked by its digest: {t}"
        );
        let t = table(&reverse_without_sender(), &mode("coded", Some("/tmp/g")));
        assert!(
            t.contains("the server's test data, written to /tmp/g"),
            "{t}"
        );
        assert!(
            t.contains("  reliability           unknown (the other end's figures did not arrive)"),
            "{t}"
        );
        assert!(t.contains("  sender                unknown"), "{t}");
        assert!(t.contains("  complete              NO"), "{t}");
        assert!(t.contains("not compared"), "{t}");
        assert!(
            t.contains("rtt no sample, 0 back-offs, 3 times competed"),
            "{t}"
        );
        assert!(t.contains("reverse (the server sends)"), "{t}");
    }
}
