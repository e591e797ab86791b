//! The built-in profiles: the bring-up plans of a 100 Mbit/s device, as files users can
//! start from (`sonde profile show NAME`).
//!
//! `monitoring`: 100 B x4 and 400 B x2 every 200 ms, 800 B x25 every 5 s, all from the client,
//! for 300 s. `monitoring-stress`: the same with bursts doubled, plus 1400 B x30 every second
//! from the far end. Offsets spread the streams over the period so that one stream's burst
//! does not sit in a queue behind another's by construction; a test that wants them to
//! coincide sets the offsets to 0. Late thresholds: 50 ms for the periodic status streams,
//! 100 ms for the bulk bursts (their last datagram waits behind the rest of the burst).

use crate::spec::Profile;

/// (name, one-line description, file text).
const BUILTINS: &[(&str, &str, &str)] = &[
    (
        "monitoring",
        "100 B x4 and 400 B x2 every 200 ms, 800 B x25 every 5 s, to the server, 300 s",
        include_str!("builtin/monitoring.toml"),
    ),
    (
        "monitoring-stress",
        "monitoring with bursts doubled, plus 1400 B x30 every 1 s from the server, 300 s",
        include_str!("builtin/monitoring-stress.toml"),
    ),
];

/// Names and descriptions of the built-in profiles.
pub fn list() -> impl Iterator<Item = (&'static str, &'static str)> {
    BUILTINS.iter().map(|(n, d, _)| (*n, *d))
}

/// The file text of built-in profile `name`.
pub fn text(name: &str) -> Option<&'static str> {
    BUILTINS.iter().find(|(n, _, _)| *n == name).map(|b| b.2)
}

/// The built-in profile `name`, parsed.
pub fn get(name: &str) -> Option<Profile> {
    text(name).and_then(|t| Profile::from_toml(t).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Direction;

    #[test]
    fn every_builtin_parses_and_matches_its_plan() {
        for (name, _) in list() {
            let p = get(name).unwrap_or_else(|| panic!("{name} does not parse"));
            assert_eq!(p.name, name);
            assert_eq!(p.duration_s, 300.0);
        }
        let m = get("monitoring").unwrap();
        let plan: Vec<_> = m
            .streams
            .iter()
            .map(|s| (s.size, s.burst, s.period_ms))
            .collect();
        assert_eq!(plan, [(100, 4, 200.0), (400, 2, 200.0), (800, 25, 5000.0)]);
        let s = get("monitoring-stress").unwrap();
        let plan: Vec<_> = s
            .streams
            .iter()
            .map(|s| (s.size, s.burst, s.period_ms, s.direction))
            .collect();
        assert_eq!(
            plan,
            [
                (100, 8, 200.0, Direction::ToServer),
                (400, 4, 200.0, Direction::ToServer),
                (800, 50, 5000.0, Direction::ToServer),
                (1400, 30, 1000.0, Direction::FromServer)
            ]
        );
        assert!(get("nope").is_none());
    }
}
