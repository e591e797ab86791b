//! The profile model: what a profile file says, checked before anything is sent.
//!
//! A profile file is TOML:
//!
//! ```toml
//! name = "monitoring"
//! duration_s = 300
//!
//! [[stream]]
//! name = "status"
//! direction = "to-server"   # or "from-server"
//! size = 100                # bytes of UDP payload per datagram, sonde's 16-byte header included
//! burst = 4                 # datagrams per burst
//! gap = "1ms"               # optional: from one datagram of a burst to the next (default 0:
//!                           # back to back); "100us", "0.5ms"; the burst must fit its period
//! period_ms = 200           # one burst every period
//! offset_ms = 0             # first burst this long after the start
//! late_ms = 50              # a datagram delayed more than this counts as late
//! # duration_s = 60         # optional: the stream stops before the profile does
//! # dscp = 46               # optional: DiffServ code point of the stream's datagrams
//! ```
//!
//! Unknown keys are errors, so a misspelt key never silently falls back to a default. The same
//! structure travels to the server inside the test request, checked again there.

use crate::schedule::{Schedule, Timing};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use thiserror::Error;

/// Limits that keep a profile (and what a peer can make a server allocate) bounded.
pub mod limits {
    /// Streams in one profile.
    pub const MAX_STREAMS: usize = 32;
    /// Smallest datagram: sonde's datagram header (sequence number and send time).
    pub const MIN_SIZE: u32 = 16;
    /// Largest UDP payload over IPv4.
    pub const MAX_SIZE: u32 = 65507;
    /// Datagrams in one burst, as iperf3 allows for `--burst`.
    pub const MAX_BURST: u32 = 1000;
    /// Shortest period between bursts, milliseconds.
    pub const MIN_PERIOD_MS: f64 = 1.0;
    /// Longest profile, seconds (a day, as the throughput tests).
    pub const MAX_DURATION_S: f64 = 86_400.0;
    /// Bursts one stream may send over the whole profile (bounds per-burst records).
    pub const MAX_BURSTS: u64 = 2_000_000;
    /// Datagrams one stream may send over the whole profile (bounds the receive bitmap).
    pub const MAX_DATAGRAMS: u64 = 50_000_000;
    /// Longest late threshold, milliseconds.
    pub const MAX_LATE_MS: f64 = 60_000.0;
    /// Longest stream or profile name.
    pub const MAX_NAME: usize = 64;
}

/// Which end sends a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// The client sends, the server receives.
    ToServer,
    /// The server sends (the far end), the client receives.
    FromServer,
}

impl Direction {
    /// As in the profile file.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::ToServer => "to-server",
            Direction::FromServer => "from-server",
        }
    }
}

/// One stream: a train of bursts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamSpec {
    pub name: String,
    pub direction: Direction,
    /// Bytes of UDP payload per datagram.
    pub size: u32,
    /// Datagrams sent at each burst.
    pub burst: u32,
    /// Time from one datagram of a burst to the next, as written (`"1ms"`, `"100us"`; the
    /// lab's duration notation, [`sonde_stats::units::parse_scenario_duration`]); absent: 0,
    /// back to back. Checked by [`Profile::validate`]; [`StreamSpec::gap_ns`] is its value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<String>,
    /// Milliseconds from one burst's start to the next.
    pub period_ms: f64,
    /// Milliseconds from the start of the profile to the first burst.
    #[serde(default)]
    pub offset_ms: f64,
    /// Seconds the stream runs from its first burst; the profile's duration when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// DiffServ code point (0..=63) of the stream's datagrams.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dscp: u8,
    /// A datagram whose one-way delay exceeds this many milliseconds counts as late.
    pub late_ms: f64,
}

fn is_zero(v: &u8) -> bool {
    *v == 0
}

/// A profile: its streams run at once for its duration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    /// Seconds the profile runs.
    pub duration_s: f64,
    #[serde(rename = "stream")]
    pub streams: Vec<StreamSpec>,
}

/// What is wrong with a profile.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ProfileError {
    #[error("profile file is not valid TOML for a profile: {0}")]
    Toml(String),
    #[error("a profile needs 1..={max} streams, this one has {0}", max = limits::MAX_STREAMS)]
    StreamCount(usize),
    #[error("profile duration must be more than 0 and at most {max} s, got {0}", max = limits::MAX_DURATION_S)]
    Duration(f64),
    #[error("name must be 1..={max} characters: {0:?}", max = limits::MAX_NAME)]
    Name(String),
    #[error("two streams are named {0:?}; names must differ")]
    DuplicateName(String),
    #[error("stream {stream:?}: {what}")]
    Stream { stream: String, what: String },
}

impl Profile {
    /// Parses a profile file and checks it.
    ///
    /// # Errors
    /// [`ProfileError::Toml`] for text that is not a profile, or what [`Profile::validate`]
    /// finds.
    pub fn from_toml(text: &str) -> Result<Self, ProfileError> {
        let p: Profile = toml::from_str(text).map_err(|e| ProfileError::Toml(e.to_string()))?;
        p.validate()?;
        Ok(p)
    }

    /// The profile as a file (what `sonde profile show` prints).
    ///
    /// # Errors
    /// [`ProfileError::Toml`] if a value cannot be written (not for a validated profile).
    pub fn to_toml(&self) -> Result<String, ProfileError> {
        toml::to_string(self).map_err(|e| ProfileError::Toml(e.to_string()))
    }

    /// Checks every field against [`limits`].
    ///
    /// # Errors
    /// The first [`ProfileError`] found.
    pub fn validate(&self) -> Result<(), ProfileError> {
        check_name(&self.name)?;
        if self.streams.is_empty() || self.streams.len() > limits::MAX_STREAMS {
            return Err(ProfileError::StreamCount(self.streams.len()));
        }
        if !(self.duration_s > 0.0 && self.duration_s <= limits::MAX_DURATION_S) {
            return Err(ProfileError::Duration(self.duration_s));
        }
        for (i, s) in self.streams.iter().enumerate() {
            check_name(&s.name)?;
            if self.streams[..i].iter().any(|o| o.name == s.name) {
                return Err(ProfileError::DuplicateName(s.name.clone()));
            }
            s.validate(self.duration_s)
                .map_err(|what| ProfileError::Stream {
                    stream: s.name.clone(),
                    what,
                })?;
        }
        Ok(())
    }

    /// The same profile cut to `secs` (`-t`): streams end with it; offsets and periods stay.
    pub fn with_duration(mut self, secs: f64) -> Self {
        self.duration_s = secs;
        self
    }

    /// The stream with protocol stream id `id` (1-based, in file order).
    pub fn stream(&self, id: u32) -> Option<&StreamSpec> {
        self.streams.get((id as usize).checked_sub(1)?)
    }

    /// Whether the client sends stream `id`.
    pub fn client_sends(&self, id: u32) -> bool {
        self.stream(id)
            .is_some_and(|s| s.direction == Direction::ToServer)
    }

    /// The largest datagram of any stream.
    pub fn max_size(&self) -> u32 {
        self.streams.iter().map(|s| s.size).max().unwrap_or(0)
    }

    /// The highest average rate of one stream, bits/s (what a server's `--max-bitrate`
    /// weighs).
    pub fn max_stream_bitrate(&self) -> u64 {
        self.streams
            .iter()
            .map(|s| s.average_bitrate())
            .fold(0.0, f64::max) as u64
    }
}

impl StreamSpec {
    /// The gap between the datagrams of a burst, nanoseconds (0 when absent, and for a gap
    /// that does not parse, which [`Profile::validate`] refuses).
    pub fn gap_ns(&self) -> u64 {
        self.gap_duration()
            .ok()
            .and_then(|d| u64::try_from(d.as_nanos()).ok())
            .unwrap_or(0)
    }

    fn gap_duration(&self) -> Result<Duration, String> {
        match &self.gap {
            None => Ok(Duration::ZERO),
            Some(text) => {
                sonde_stats::units::parse_scenario_duration(text).map_err(|e| format!("gap: {e}"))
            }
        }
    }

    /// Average rate over a period, bits/s.
    pub fn average_bitrate(&self) -> f64 {
        f64::from(self.size) * 8.0 * f64::from(self.burst) / (self.period_ms / 1000.0)
    }

    fn validate(&self, profile_s: f64) -> Result<(), String> {
        if !(limits::MIN_SIZE..=limits::MAX_SIZE).contains(&self.size) {
            return Err(format!(
                "size must be {}..={} bytes, got {}",
                limits::MIN_SIZE,
                limits::MAX_SIZE,
                self.size
            ));
        }
        if !(1..=limits::MAX_BURST).contains(&self.burst) {
            return Err(format!(
                "burst must be 1..={} datagrams, got {}",
                limits::MAX_BURST,
                self.burst
            ));
        }
        let max_period = limits::MAX_DURATION_S * 1000.0;
        if !(limits::MIN_PERIOD_MS..=max_period).contains(&self.period_ms) {
            return Err(format!(
                "period_ms must be {}..={max_period}, got {}",
                limits::MIN_PERIOD_MS,
                self.period_ms
            ));
        }
        self.check_gap()?;
        if !(0.0..profile_s * 1000.0).contains(&self.offset_ms) {
            return Err(format!(
                "offset_ms must be 0 or more and start within the profile's {profile_s} s, got {}",
                self.offset_ms
            ));
        }
        if let Some(d) = self.duration_s {
            if !(d > 0.0 && d <= limits::MAX_DURATION_S) {
                return Err(format!("duration_s must be more than 0, got {d}"));
            }
        }
        if self.dscp > 63 {
            return Err(format!("dscp must be 0..=63, got {}", self.dscp));
        }
        if !(self.late_ms > 0.0 && self.late_ms <= limits::MAX_LATE_MS) {
            return Err(format!(
                "late_ms must be more than 0 and at most {}, got {}",
                limits::MAX_LATE_MS,
                self.late_ms
            ));
        }
        let plan = Schedule::new(self, profile_s);
        if plan.bursts() > limits::MAX_BURSTS || plan.datagrams() > limits::MAX_DATAGRAMS {
            return Err(format!(
                "{} bursts of {} datagrams exceed the limits of {} bursts and {} datagrams per stream",
                plan.bursts(),
                self.burst,
                limits::MAX_BURSTS,
                limits::MAX_DATAGRAMS
            ));
        }
        Ok(())
    }
}

impl Schedule {
    /// The plan of `s` in a profile of `profile_s` seconds: bursts from its offset, every
    /// period, while before the stream's end (its own duration or the profile's, the earlier).
    /// Here rather than in [`crate::schedule`], so that the plan's arithmetic does not depend
    /// on the model that uses it to check a profile's size.
    pub fn new(s: &StreamSpec, profile_s: f64) -> Self {
        let timing = Timing {
            offset_ms: s.offset_ms,
            period_ms: s.period_ms,
            burst: s.burst,
            gap_ns: s.gap_ns(),
            duration_s: s.duration_s,
        };
        Self::from_timing(timing, profile_s)
    }
}

impl StreamSpec {
    /// The gap parses, and a burst with its gaps fits its period: `burst` datagrams `gap`
    /// apart take `burst x gap` (the last one's own slot included), at most the period, so
    /// one burst ends before the next begins.
    fn check_gap(&self) -> Result<(), String> {
        let gap = self.gap_duration()?;
        let span_ns = gap.as_nanos().saturating_mul(u128::from(self.burst));
        let period_ns = (self.period_ms * 1e6) as u128;
        if span_ns > period_ns {
            return Err(format!(
                "{} datagrams {} apart take {} ms, longer than the period of {} ms",
                self.burst,
                self.gap.as_deref().unwrap_or("0"),
                span_ns as f64 / 1e6,
                self.period_ms
            ));
        }
        Ok(())
    }
}

fn check_name(name: &str) -> Result<(), ProfileError> {
    if name.is_empty() || name.chars().count() > limits::MAX_NAME {
        return Err(ProfileError::Name(name.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
name = "small"
duration_s = 10

[[stream]]
name = "status"
direction = "to-server"
size = 100
burst = 4
period_ms = 200
late_ms = 50

[[stream]]
name = "reply"
direction = "from-server"
size = 1400
burst = 30
period_ms = 1000
offset_ms = 150
dscp = 46
late_ms = 100
"#;

    #[test]
    fn parses_a_file_and_writes_it_back() {
        let p = Profile::from_toml(FILE).unwrap();
        assert_eq!(p.streams.len(), 2);
        assert_eq!(p.streams[1].direction, Direction::FromServer);
        assert_eq!(p.streams[1].dscp, 46);
        assert_eq!(p.streams[0].offset_ms, 0.0);
        assert!(p.client_sends(1));
        assert!(!p.client_sends(2));
        assert!(!p.client_sends(3));
        assert!(!p.client_sends(0));
        let again = Profile::from_toml(&p.to_toml().unwrap()).unwrap();
        assert_eq!(again, p);
    }

    #[test]
    fn misspelt_keys_and_bad_values_are_refused() {
        let typo = FILE.replace("period_ms = 200", "periodms = 200");
        assert!(matches!(
            Profile::from_toml(&typo),
            Err(ProfileError::Toml(_))
        ));
        let cases = [
            ("size = 100", "size = 8", "size must be"),
            ("burst = 4", "burst = 0", "burst must be"),
            ("burst = 4", "burst = 1001", "burst must be"),
            ("period_ms = 200", "period_ms = 0.5", "period_ms must be"),
            ("dscp = 46", "dscp = 64", "dscp must be"),
            ("late_ms = 50", "late_ms = 0", "late_ms must be"),
            ("offset_ms = 150", "offset_ms = 10000", "offset_ms must be"),
        ];
        for (from, to, says) in cases {
            let e = Profile::from_toml(&FILE.replace(from, to)).unwrap_err();
            assert!(e.to_string().contains(says), "{to}: {e}");
        }
        let dup = FILE.replace("name = \"reply\"", "name = \"status\"");
        assert_eq!(
            Profile::from_toml(&dup),
            Err(ProfileError::DuplicateName("status".into()))
        );
        let long = FILE.replace("duration_s = 10", "duration_s = 86401");
        assert!(matches!(
            Profile::from_toml(&long),
            Err(ProfileError::Duration(_))
        ));
    }

    #[test]
    fn a_gap_parses_and_must_let_the_burst_fit_its_period() {
        let gapped = FILE.replace("burst = 30", "burst = 30\ngap = \"100us\"");
        let p = Profile::from_toml(&gapped).unwrap();
        assert_eq!(p.streams[1].gap_ns(), 100_000);
        assert_eq!(p.streams[0].gap_ns(), 0);
        assert_eq!(
            Schedule::new(&p.streams[1], 10.0).send_ns(2),
            Some(150_100_000)
        );
        // Written back as written, and read back the same.
        let text = p.to_toml().unwrap();
        assert!(text.contains("gap = \"100us\""), "{text}");
        assert_eq!(Profile::from_toml(&text).unwrap(), p);
        // 30 datagrams 1 ms apart fill 30 ms: at most the period.
        let fits = FILE
            .replace("burst = 30", "burst = 30\ngap = \"1ms\"")
            .replace("period_ms = 1000", "period_ms = 30");
        assert!(Profile::from_toml(&fits).is_ok());
        let cases = [
            (
                "gap = \"1ms\"",
                "period_ms = 29",
                "longer than the period of 29 ms",
            ),
            ("gap = \"1\"", "period_ms = 1000", "has no unit"),
            ("gap = \"1 parsec\"", "period_ms = 1000", "gap"),
            ("gap = \"-1ms\"", "period_ms = 1000", "gap"),
        ];
        for (gap, period, says) in cases {
            let bad = FILE
                .replace("burst = 30", &format!("burst = 30\n{gap}"))
                .replace("period_ms = 1000", period);
            let e = Profile::from_toml(&bad).unwrap_err();
            assert!(
                matches!(&e, ProfileError::Stream { stream, .. } if stream == "reply"),
                "{gap}: {e:?}"
            );
            assert!(e.to_string().contains(says), "{gap}: {e}");
        }
        // Not a string: the file is not a profile.
        let number = FILE.replace("burst = 30", "burst = 30\ngap = 1");
        assert!(matches!(
            Profile::from_toml(&number),
            Err(ProfileError::Toml(_))
        ));
    }

    #[test]
    fn a_profile_too_big_to_account_is_refused() {
        // 1 ms period, 1000-datagram bursts for a day: 86.4 M bursts.
        let huge = FILE
            .replace("duration_s = 10", "duration_s = 86400")
            .replace("burst = 4", "burst = 1000")
            .replace("period_ms = 200", "period_ms = 1");
        let e = Profile::from_toml(&huge).unwrap_err();
        assert!(e.to_string().contains("exceed the limits"), "{e}");
    }

    #[test]
    fn a_streams_plan_is_its_timing_in_the_profile() {
        let p = Profile::from_toml(FILE).unwrap();
        let reply = &p.streams[1];
        let timing = Timing {
            offset_ms: 150.0,
            period_ms: 1000.0,
            burst: 30,
            gap_ns: 0,
            duration_s: None,
        };
        assert_eq!(
            Schedule::new(reply, p.duration_s),
            Schedule::from_timing(timing, 10.0)
        );
        // 1 s period from 150 ms in a 10 s profile: bursts at 0.15 .. 9.15 s.
        assert_eq!(Schedule::new(reply, p.duration_s).bursts(), 10);
    }

    #[test]
    fn rates() {
        let p = Profile::from_toml(FILE).unwrap();
        // 100 B x4 every 200 ms = 16 kbit/s; 1400 B x30 every 1 s = 336 kbit/s.
        assert_eq!(p.streams[0].average_bitrate(), 16_000.0);
        assert_eq!(p.max_stream_bitrate(), 336_000);
        assert_eq!(p.max_size(), 1400);
    }
}
