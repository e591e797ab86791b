//! When each burst of a stream is due, and which burst a sequence number belongs to.
//!
//! Times are nanoseconds since the start of the profile at the sending end. Datagrams are
//! numbered from 1 across the whole stream, `burst` per burst, so a receiver finds a datagram's
//! burst from its sequence number alone: the datagram header needs no burst field.
//!
//! The plan is plain arithmetic on a stream's timing: this module knows nothing of the
//! profile model. The model (the `spec` module) builds a stream's plan with `Schedule::new`
//! and checks its size against its limits.

/// The burst plan of one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    offset_ns: u64,
    period_ns: u64,
    burst: u32,
    bursts: u64,
}

impl Schedule {
    /// The plan of a stream of `burst` datagrams every `period_ms` from `offset_ms`, for
    /// `duration_s` from its first burst (None: to the end) in a profile of `profile_s`
    /// seconds: bursts while before the stream's end (its own or the profile's, the earlier).
    pub fn from_timing(
        offset_ms: f64,
        period_ms: f64,
        burst: u32,
        duration_s: Option<f64>,
        profile_s: f64,
    ) -> Self {
        let ns = |ms: f64| (ms * 1e6).max(0.0) as u64;
        let offset_ns = ns(offset_ms);
        let period_ns = ns(period_ms).max(1);
        let mut end_ns = ns(profile_s * 1000.0);
        if let Some(d) = duration_s {
            end_ns = end_ns.min(offset_ns.saturating_add(ns(d * 1000.0)));
        }
        let bursts = end_ns.saturating_sub(offset_ns).div_ceil(period_ns);
        Self {
            offset_ns,
            period_ns,
            burst: burst.max(1),
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

    /// When burst `k` (from 0) is due.
    pub fn due_ns(&self, k: u64) -> u64 {
        self.offset_ns
            .saturating_add(k.saturating_mul(self.period_ns))
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
        Schedule::from_timing(offset_ms, period_ms, burst, duration_s, profile_s)
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
}
