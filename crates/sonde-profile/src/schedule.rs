//! When each burst of a stream is due, when each datagram of it is due, and which burst a
//! sequence number belongs to.
//!
//! Times are nanoseconds since the start of the profile at the sending end. Datagrams are
//! numbered from 1 across the whole stream, `burst` per burst, so a receiver finds a datagram's
//! burst from its sequence number alone: the datagram header needs no burst field. Inside a
//! burst the datagrams are `gap` apart (0: back to back), so datagram `i` (from 0) of burst `k`
//! is due at `offset + k * period + i * gap`. A burst due before the stream's end is sent
//! whole, even when its gaps carry its last datagrams past that end.
//!
//! The plan is plain arithmetic on a stream's timing: this module knows nothing of the
//! profile model. The model (the `spec` module) builds a stream's plan with `Schedule::new`
//! and checks its size against its limits.

/// The burst plan of one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    offset_ns: u64,
    period_ns: u64,
    gap_ns: u64,
    burst: u32,
    bursts: u64,
}

/// A stream's timing, as the plan needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Milliseconds from the start of the profile to the first burst.
    pub offset_ms: f64,
    /// Milliseconds from one burst's start to the next.
    pub period_ms: f64,
    /// Datagrams per burst.
    pub burst: u32,
    /// Nanoseconds from one datagram of a burst to the next.
    pub gap_ns: u64,
    /// Seconds the stream runs from its first burst; None: to the end of the profile.
    pub duration_s: Option<f64>,
}

impl Schedule {
    /// The plan of a stream of `t.burst` datagrams `t.gap_ns` apart every `t.period_ms` from
    /// `t.offset_ms`, for `t.duration_s` from its first burst (None: to the end) in a profile
    /// of `profile_s` seconds: bursts while before the stream's end (its own or the
    /// profile's, the earlier).
    pub fn from_timing(t: Timing, profile_s: f64) -> Self {
        let ns = |ms: f64| (ms * 1e6).max(0.0) as u64;
        let offset_ns = ns(t.offset_ms);
        let period_ns = ns(t.period_ms).max(1);
        let mut end_ns = ns(profile_s * 1000.0);
        if let Some(d) = t.duration_s {
            end_ns = end_ns.min(offset_ns.saturating_add(ns(d * 1000.0)));
        }
        let bursts = end_ns.saturating_sub(offset_ns).div_ceil(period_ns);
        Self {
            offset_ns,
            period_ns,
            gap_ns: t.gap_ns,
            burst: t.burst.max(1),
            bursts,
        }
    }

    /// Bursts in the whole stream.
    pub fn bursts(&self) -> u64 {
        self.bursts
    }

    /// Datagrams in the whole stream.
    pub fn datagrams(&self) -> u64 {
        self.bursts.saturating_mul(u64::from(self.burst))
    }

    /// Datagrams per burst.
    pub fn burst_len(&self) -> u32 {
        self.burst
    }

    /// Nanoseconds from one datagram of a burst to the next.
    pub fn gap_ns(&self) -> u64 {
        self.gap_ns
    }

    /// Nanoseconds from a burst's first datagram to its last.
    pub fn burst_span_ns(&self) -> u64 {
        u64::from(self.burst - 1).saturating_mul(self.gap_ns)
    }

    /// When burst `k` (from 0) is due: when its first datagram is.
    pub fn due_ns(&self, k: u64) -> u64 {
        self.offset_ns
            .saturating_add(k.saturating_mul(self.period_ns))
    }

    /// When datagram `seq` (from 1) is due: its burst's due time plus its place in the burst
    /// times the gap. None for 0 or past the end of the stream.
    pub fn send_ns(&self, seq: u64) -> Option<u64> {
        let k = self.burst_of(seq)?;
        let place = seq - self.first_seq(k);
        Some(
            self.due_ns(k)
                .saturating_add(place.saturating_mul(self.gap_ns)),
        )
    }

    /// When the stream's last datagram is due; None for a stream that sends nothing.
    pub fn last_send_ns(&self) -> Option<u64> {
        self.send_ns(self.datagrams())
    }

    /// The burst of datagram `seq` (from 1); None for 0 or past the end of the stream.
    pub fn burst_of(&self, seq: u64) -> Option<u64> {
        if seq == 0 || seq > self.datagrams() {
            return None;
        }
        Some((seq - 1) / u64::from(self.burst))
    }

    /// The first sequence number of burst `k`.
    pub fn first_seq(&self, k: u64) -> u64 {
        k.saturating_mul(u64::from(self.burst)).saturating_add(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(
        burst: u32,
        period_ms: f64,
        offset_ms: f64,
        duration_s: Option<f64>,
        profile_s: f64,
    ) -> Schedule {
        let timing = Timing {
            offset_ms,
            period_ms,
            burst,
            gap_ns: 0,
            duration_s,
        };
        Schedule::from_timing(timing, profile_s)
    }

    #[test]
    fn monitoring_status_stream_for_300_s() {
        let s = plan(4, 200.0, 0.0, None, 300.0);
        assert_eq!(s.bursts(), 1500);
        assert_eq!(s.datagrams(), 6000);
        assert_eq!(s.due_ns(0), 0);
        assert_eq!(s.due_ns(1499), 299_800_000_000);
        assert_eq!(s.burst_of(1), Some(0));
        assert_eq!(s.burst_of(4), Some(0));
        assert_eq!(s.burst_of(5), Some(1));
        assert_eq!(s.burst_of(6000), Some(1499));
        assert_eq!(s.burst_of(6001), None);
        assert_eq!(s.burst_of(0), None);
        assert_eq!(s.first_seq(2), 9);
    }

    #[test]
    fn offsets_and_stream_durations_cut_the_train() {
        // 5 s period from 100 ms in a 12 s profile: bursts at 0.1, 5.1, 10.1 s.
        let s = plan(25, 5000.0, 100.0, None, 12.0);
        assert_eq!(s.bursts(), 3);
        assert_eq!(s.due_ns(2), 10_100_000_000);
        // Its own 6 s from the offset: bursts at 0.1 and 5.1 s only.
        let s = plan(25, 5000.0, 100.0, Some(6.0), 12.0);
        assert_eq!(s.bursts(), 2);
        // A burst due exactly at the end is not sent.
        let s = plan(1, 500.0, 0.0, None, 1.0);
        assert_eq!(s.bursts(), 2);
    }

    #[test]
    fn the_gap_spaces_the_datagrams_of_a_burst() {
        // 8 datagrams 1 ms apart every 200 ms from 0, in 0.405 s: bursts at 0, 0.2 and 0.4 s,
        // the last one sent whole although its datagrams run to 0.407 s.
        let timing = Timing {
            offset_ms: 0.0,
            period_ms: 200.0,
            burst: 8,
            gap_ns: 1_000_000,
            duration_s: None,
        };
        let s = Schedule::from_timing(timing, 0.405);
        assert_eq!((s.bursts(), s.datagrams()), (3, 24));
        assert_eq!(s.burst_span_ns(), 7_000_000);
        assert_eq!(s.send_ns(1), Some(0));
        assert_eq!(s.send_ns(2), Some(1_000_000));
        assert_eq!(s.send_ns(8), Some(7_000_000));
        assert_eq!(s.send_ns(9), Some(200_000_000));
        assert_eq!(s.send_ns(24), Some(407_000_000));
        assert_eq!(s.last_send_ns(), Some(407_000_000));
        assert_eq!(s.send_ns(25), None);
        assert_eq!(s.send_ns(0), None);
        // Back to back: every datagram of a burst is due with it.
        let s = plan(8, 200.0, 0.0, None, 0.405);
        assert_eq!(s.send_ns(8), Some(0));
        assert_eq!(s.burst_span_ns(), 0);
        assert_eq!(plan(1, 200.0, 500.0, None, 0.405).last_send_ns(), None);
    }
}
