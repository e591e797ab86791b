//! The switch test's `-J` document: the [`sonde_schema::switch_test`] model, filled from a
//! run's [`Outcome`] and the library's switch records.

use crate::client::Outcome;
use sonde_schema::switch_test::{
    ByFamily, ClientSide, End, ServerSide, Start, SwitchRecord, SwitchTestDocument, KIND,
};
use sonde_schema::Envelope;
use sonde_switch::{Stats, SwitchKind};
use std::time::Duration;

/// The document of a run that measured (its `error` and `partial` from [`Outcome::failure`]
/// and whether it ended early); `start` is the run's parameters.
pub fn document(start: Start, o: &Outcome) -> SwitchTestDocument {
    let c = &o.client;
    let equal = o.hash_equal();
    // A partial transfer's hash covers bytes that never went: none is given.
    let hex_unless_failed = |b: &[u8]| o.error.is_none().then(|| hex(b));
    let end = End {
        bytes: o.bytes,
        seconds: o.secs,
        bits_per_second: o.bytes as f64 * 8.0 / o.secs.max(1e-9),
        switches: c.switches.len() as u64,
        sha256: hex_unless_failed(&o.sha),
        server_sha256: hex_unless_failed(&o.server_sha),
        server_bytes: o.server_bytes,
        hash_equal: equal,
        replayed: c.replayed,
        sent_by_family: by_family(c.sent_by_family),
        interrupted: o.interrupted,
    };
    SwitchTestDocument {
        test: KIND.into(),
        start,
        client: Some(ClientSide {
            switches: c.switches.iter().map(record).collect(),
        }),
        server: Some(o.server.clone()),
        policy: Some(o.policy.log()),
        end: Some(end),
        // Ended early: a signal, or a failure that cut the transfer; a hash mismatch did not.
        envelope: Envelope::new(
            KIND,
            o.interrupted || o.error.is_some(),
            o.failure().as_deref(),
        ),
    }
}

/// The document of a client that failed before it measured: its parameters and why.
pub fn failed_before_measuring(start: Start, error: &str) -> SwitchTestDocument {
    SwitchTestDocument {
        test: KIND.into(),
        start,
        client: None,
        server: None,
        policy: None,
        end: None,
        envelope: Envelope::new(KIND, true, Some(error)),
    }
}

/// A receiving end's switch records and counters (its series is added by the server).
pub fn server_side(s: &Stats) -> ServerSide {
    ServerSide {
        switches: s.switches.iter().map(record).collect(),
        received: s.received,
        received_by_family: by_family(s.received_by_family),
        duplicates: s.duplicates,
        held_ahead: s.held_ahead,
        heartbeat_failures: s.heartbeat_failures,
        received_over_time: None,
    }
}

/// Milliseconds.
pub fn ms(d: Option<Duration>) -> Option<f64> {
    d.map(|d| d.as_secs_f64() * 1e3)
}

/// One switch record of the library, as the document spells it.
pub fn record(r: &sonde_switch::SwitchRecord) -> SwitchRecord {
    SwitchRecord {
        at: r.at.as_secs_f64(),
        kind: match r.kind {
            SwitchKind::Planned => "planned",
            SwitchKind::Recovery => "recovery",
        }
        .into(),
        from: r.from.map(|f| f.name().into()),
        to: r.to.name().into(),
        setup_ms: ms(r.setup),
        first_sent_ms: ms(r.first_sent),
        first_received_ms: ms(r.first_received),
        stall_ms: ms(r.stall),
        replayed: r.replayed,
        duplicates: r.duplicates,
    }
}

fn by_family(b: [u64; 2]) -> ByFamily {
    ByFamily {
        ipv4: b[0],
        ipv6: b[1],
    }
}

/// Lower-case hex.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Chooser;
    use sonde_switch::Family;

    fn outcome(error: Option<&str>, interrupted: bool) -> Outcome {
        let mut client = Stats {
            sent_by_family: [600, 400],
            ..Stats::default()
        };
        client.switches.push(sonde_switch::SwitchRecord {
            at: Duration::from_millis(500),
            kind: SwitchKind::Recovery,
            from: None,
            to: Family::V6,
            setup: Some(Duration::from_micros(1500)),
            first_sent: None,
            first_received: None,
            stall: None,
            replayed: 7,
            duplicates: 0,
        });
        Outcome {
            bytes: 1000,
            secs: 2.0,
            sha: [0xab; 32],
            server_sha: if error.is_some() { [0; 32] } else { [0xab; 32] },
            server_bytes: if error.is_some() { 0 } else { 1000 },
            client,
            server: error.is_none().then(ServerSide::default),
            interrupted,
            policy: Chooser::Periodic,
            error: error.map(str::to_owned),
        }
    }

    #[test]
    fn a_passed_run_has_both_hashes_its_rate_and_no_error() {
        let d = document(Start::default(), &outcome(None, false));
        let end = d.end.unwrap();
        assert!(end.hash_equal);
        assert_eq!(end.sha256.as_deref(), Some("ab".repeat(32).as_str()));
        assert_eq!(end.sha256, end.server_sha256);
        assert_eq!(end.bits_per_second, 4000.0);
        assert_eq!(
            end.sent_by_family,
            ByFamily {
                ipv4: 600,
                ipv6: 400
            }
        );
        assert_eq!(end.switches, 1);
        let r = &d.client.unwrap().switches[0];
        assert_eq!(
            (r.kind.as_str(), r.to.as_str(), r.from.as_deref()),
            ("recovery", "IPv6", None)
        );
        assert_eq!(r.setup_ms, Some(1.5));
        assert_eq!(d.policy, Some(None));
        assert_eq!(d.envelope, Envelope::new(KIND, false, None));
    }

    #[test]
    fn a_cut_transfer_is_partial_with_its_error_and_no_hash() {
        let d = document(Start::default(), &outcome(Some("reset"), false));
        let end = d.end.unwrap();
        assert!(!end.hash_equal);
        assert_eq!((end.sha256, end.server_sha256), (None, None));
        assert_eq!(d.server, Some(None));
        assert_eq!(d.envelope, Envelope::new(KIND, true, Some("reset")));
    }

    #[test]
    fn an_interrupt_is_partial_and_a_mismatch_is_an_error_but_complete() {
        let d = document(Start::default(), &outcome(None, true));
        assert_eq!(d.envelope, Envelope::new(KIND, true, Some("interrupted")));
        let mut o = outcome(None, false);
        o.server_bytes = 999;
        let d = document(Start::default(), &o);
        assert!(!d.envelope.partial);
        assert_eq!(
            d.envelope.error.as_deref(),
            Some("the stream's SHA-256 or length differs at the two ends")
        );
    }

    #[test]
    fn a_run_that_never_connected_says_why_and_nothing_else() {
        let d = failed_before_measuring(Start::default(), "refused");
        assert_eq!(
            (d.client, d.server, d.policy, d.end),
            (None, None, None, None)
        );
        assert_eq!(d.envelope, Envelope::new(KIND, true, Some("refused")));
    }
}
