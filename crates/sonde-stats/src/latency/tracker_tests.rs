//! Fixed-timestamp tests of the probe accountant.

use super::*;

const MS: u64 = 1_000_000;

fn reply(seq: u64, sent: u64, recv: u64) -> Reply {
    Reply {
        seq,
        sent_ns: sent,
        recv_ns: recv,
        server: None,
    }
}

/// Server clock `offset` ahead; `up`/`down` ms each way; 10 µs turnaround.
fn stamped(seq: u64, sent: u64, up: u64, down: u64, offset: u64) -> Reply {
    let s_recv = sent + up + offset;
    let s_send = s_recv + 10_000;
    Reply {
        seq,
        sent_ns: sent,
        recv_ns: s_send - offset + down,
        server: Some(ServerStamps {
            recv_ns: s_recv,
            send_ns: s_send,
        }),
    }
}

fn tracker() -> ProbeTracker {
    ProbeTracker::new(TrackerConfig::default())
}

#[test]
fn rtt_percentiles_from_fixed_times() {
    let mut t = tracker();
    for seq in 1..=100u64 {
        t.on_sent(seq);
        let sent = seq * 10 * MS;
        assert_eq!(
            t.on_reply(&reply(seq, sent, sent + seq * MS)),
            Verdict::Fresh
        );
    }
    let s = t.rtt().unwrap();
    assert_eq!((s.samples, s.min_ms, s.max_ms), (100, 1.0, 100.0));
    assert!((s.mean_ms - 50.5).abs() < 1e-9);
    assert!((s.median_ms - 50.0).abs() < 0.05, "{}", s.median_ms);
    assert!((s.p90_ms - 90.0).abs() < 0.1, "{}", s.p90_ms);
    assert!((s.p99_ms - 99.0).abs() < 0.1, "{}", s.p99_ms);
    assert!((s.p999_ms - 100.0).abs() < 0.1, "{}", s.p999_ms);
    // RTT rises 1 ms per probe: every consecutive pair has |IPDV| = 1 ms.
    let ipdv = t.ipdv().unwrap();
    assert_eq!(ipdv.pairs, 99);
    assert!((ipdv.mean_abs_ms - 1.0).abs() < 1e-9);
    let l = t.loss();
    assert_eq!((l.sent, l.received, l.lost), (100, 100, 0));
}

#[test]
fn loss_split_up_and_down_from_server_count() {
    let mut t = tracker();
    for seq in 1..=10 {
        t.on_sent(seq);
    }
    // The server saw 8 of 10 requests; 6 replies came back.
    for seq in [1, 2, 3, 5, 6, 9] {
        t.on_reply(&reply(seq, 0, MS));
    }
    t.on_server_count(7);
    t.on_server_count(8);
    t.on_server_count(5); // an older reply's count never lowers it
    let l = t.loss();
    assert_eq!(l.lost, 4);
    assert_eq!(l.server_received, Some(8));
    assert_eq!((l.lost_up, l.lost_down), (Some(2), Some(2)));
    assert!((l.loss_percent - 40.0).abs() < 1e-9);
}

#[test]
fn refusals_are_counted_apart_from_the_loss_they_explain() {
    let mut t = tracker();
    for seq in 1..=3 {
        t.on_sent(seq);
    }
    t.on_reply(&reply(3, 0, MS));
    t.on_refused();
    t.on_refused();
    let l = t.loss();
    assert_eq!((l.lost, l.refused), (2, 2));
    assert_eq!(tracker().loss().refused, 0);
    // Documents of older sondes have no count: read as none.
    let old = r#"{"sent":1,"received":1,"lost":0,"loss_percent":0.0,"lost_up":null,"lost_down":null,"server_received":null,"duplicates":0,"reordered":0,"late":0,"late_percent":0.0}"#;
    let read: LossStats = serde_json::from_str(old).unwrap();
    assert_eq!(read.refused, 0);
}

/// Issue 34: `sent 2, refused 5` against a closed port (count queries refused too).
#[test]
fn refusals_never_exceed_the_probes_lost() {
    let mut t = tracker();
    for seq in 1..=2 {
        t.on_sent(seq);
    }
    for _ in 0..5 {
        t.on_refused();
    }
    let l = t.loss();
    assert_eq!((l.sent, l.lost, l.refused), (2, 2, 2));
}

#[test]
fn loss_split_is_never_negative_with_a_stale_count() {
    let mut t = tracker();
    for seq in 1..=4 {
        t.on_sent(seq);
        t.on_reply(&reply(seq, 0, MS));
    }
    t.on_server_count(2); // a count query answered before the last requests arrived
    let l = t.loss();
    assert_eq!((l.lost_up, l.lost_down), (Some(0), Some(0)));
}

#[test]
fn duplicates_reordering_and_invalid() {
    let mut t = tracker();
    for seq in 1..=5 {
        t.on_sent(seq);
    }
    assert_eq!(t.on_reply(&reply(2, 0, MS)), Verdict::Fresh);
    assert_eq!(t.on_reply(&reply(1, 0, MS)), Verdict::Fresh); // reordered
    assert_eq!(t.on_reply(&reply(2, 0, MS)), Verdict::Duplicate);
    assert_eq!(t.on_reply(&reply(4, 0, MS)), Verdict::Fresh);
    assert_eq!(t.on_reply(&reply(3, 0, MS)), Verdict::Fresh); // reordered
    assert_eq!(t.on_reply(&reply(9, 0, MS)), Verdict::Invalid); // never sent
    assert_eq!(t.on_reply(&reply(5, 2 * MS, MS)), Verdict::Invalid); // back in time
    let l = t.loss();
    assert_eq!((l.received, l.duplicates, l.reordered), (4, 1, 2));
    assert_eq!(l.lost, 1);
}

#[test]
fn replies_older_than_the_window_are_stale_not_duplicates() {
    let mut t = tracker();
    for seq in 1..=SEQ_WINDOW + 10 {
        t.on_sent(seq);
    }
    assert_eq!(t.on_reply(&reply(5, 0, MS)), Verdict::Stale);
    assert_eq!(t.on_reply(&reply(SEQ_WINDOW + 5, 0, MS)), Verdict::Fresh);
    assert_eq!(
        t.on_reply(&reply(SEQ_WINDOW + 5, 0, MS)),
        Verdict::Duplicate
    );
}

#[test]
fn late_beyond_threshold() {
    let mut t = ProbeTracker::new(TrackerConfig {
        late_ns: Some(50 * MS),
        clock_synced: false,
    });
    for (seq, rtt) in [(1, 10), (2, 60), (3, 50), (4, 200)] {
        t.on_sent(seq);
        t.on_reply(&reply(seq, 0, rtt * MS));
    }
    let l = t.loss();
    assert_eq!(l.late, 2);
    assert!((l.late_percent - 50.0).abs() < 1e-9);
    assert_eq!(l.received, 4, "late replies are still received");
}

#[test]
fn offset_estimated_from_the_fastest_third() {
    let offset = 3_000 * MS; // server clock 3 s ahead
    let mut t = tracker();
    // 9 probes: 3 symmetric fast ones (1 ms each way), 6 with 5 ms extra upstream queueing.
    for seq in 1..=9u64 {
        t.on_sent(seq);
        let up = if seq % 3 == 0 { MS } else { 6 * MS };
        t.on_reply(&stamped(seq, seq * 100 * MS, up, MS, offset));
    }
    let ow = t.one_way().unwrap();
    assert_eq!(ow.basis, OneWayBasis::Estimated);
    assert!((ow.clock_offset_ms.unwrap() - 3000.0).abs() < 1e-6);
    let up = ow.up.unwrap();
    let down = ow.down.unwrap();
    assert!((up.min_ms - 1.0).abs() < 0.01 && (up.max_ms - 6.0).abs() < 0.01);
    assert!((down.median_ms - 1.0).abs() < 0.01);
    // RTT excludes the 10 µs turnaround.
    let rtt = t.rtt().unwrap();
    assert!((rtt.min_ms - 2.0).abs() < 1e-9, "{}", rtt.min_ms);
    assert!((t.turnaround_us().unwrap() - 10.0).abs() < 1e-9);
    assert!(ow.note.unwrap().contains("estimates"));
}

#[test]
fn clock_synced_measured_or_withheld_when_negative() {
    let synced = TrackerConfig {
        late_ns: None,
        clock_synced: true,
    };
    let mut t = ProbeTracker::new(synced);
    t.on_sent(1);
    t.on_reply(&stamped(1, 0, 2 * MS, 3 * MS, 0));
    let ow = t.one_way().unwrap();
    assert_eq!(ow.basis, OneWayBasis::Measured);
    assert!((ow.up.unwrap().median_ms - 2.0).abs() < 0.01);
    assert!((ow.down.unwrap().median_ms - 3.0).abs() < 0.01);
    let rt = t.last_round_trip().unwrap();
    assert_eq!((rt.up_ms, rt.down_ms), (Some(2.0), Some(3.0)));

    // Unsynchronised clocks: the per-probe record has no one-way figures.
    let mut t = tracker();
    t.on_sent(1);
    t.on_reply(&stamped(1, 0, 2 * MS, 3 * MS, 0));
    let rt = t.last_round_trip().unwrap();
    assert_eq!((rt.up_ms, rt.down_ms), (None, None));

    // The server's clock is 10 ms behind: its receive time precedes our send time.
    let mut t = ProbeTracker::new(synced);
    t.on_sent(1);
    let mut r = stamped(1, 100 * MS, 2 * MS, 3 * MS, 0);
    if let Some(s) = &mut r.server {
        s.recv_ns -= 10 * MS;
        s.send_ns -= 10 * MS;
    }
    t.on_reply(&r);
    let ow = t.one_way().unwrap();
    assert_eq!(ow.basis, OneWayBasis::Invalid);
    assert!(ow.up.is_none() && ow.down.is_none());
    assert!(ow.note.unwrap().contains("not synchronised"));
}

#[test]
fn one_way_ipdv_ignores_the_offset() {
    let mut t = tracker();
    for (seq, up) in [(1u64, 1u64), (2, 3), (3, 2)] {
        t.on_sent(seq);
        t.on_reply(&stamped(seq, seq * 10 * MS, up * MS, MS, 123_456_789));
    }
    let ow = t.one_way().unwrap();
    let iu = ow.ipdv_up.unwrap();
    assert_eq!(iu.pairs, 2);
    assert!((iu.mean_abs_ms - 1.5).abs() < 1e-9);
    assert!((iu.max_abs_ms - 2.0).abs() < 1e-9);
    assert!((ow.ipdv_down.unwrap().max_abs_ms).abs() < 1e-9);
}

#[test]
fn intervals_reset_and_schedule_error() {
    let mut t = tracker();
    t.on_sent(1);
    t.on_sent(2);
    t.on_reply(&reply(1, 0, 4 * MS));
    t.close_interval(1.0);
    assert_eq!(
        t.pop_interval(1.0, 0.5, false),
        None,
        "probe 2 may still be answered"
    );
    let iv = t.pop_interval(1.5, 0.5, false).unwrap();
    assert_eq!((iv.sent, iv.received, iv.lost), (2, 1, 1));
    assert_eq!(iv.rtt.unwrap().median_ms, 4.0);
    t.close_interval(2.0);
    let iv = t.pop_interval(2.0, 0.5, true).unwrap();
    assert_eq!((iv.sent, iv.received, iv.rtt), (0, 0, None));
    assert_eq!(
        t.last_round_trip().map(|r| (r.seq, r.rtt_ms)),
        Some((1, 4.0))
    );

    let mut s = ScheduleTracker::new(MS);
    for (i, late_us) in [10u64, 30, 50, 30].iter().enumerate() {
        let due = i as u64 * MS;
        s.on_send(due, due + late_us * 1000);
    }
    let st = s.stats().unwrap();
    assert!((st.mean_error_us - 30.0).abs() < 1e-9);
    assert!((st.error_percent - 3.0).abs() < 1e-9);
    assert!((st.max_error_us - 50.0).abs() < 1e-9);
}
