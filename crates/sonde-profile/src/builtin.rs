//! The built-in profiles: the bring-up plans of a device behind a USB-to-Ethernet bridge, as
//! files users can start from (`sonde profile show NAME`).
//!
//! The plans speak of the device (the far end of the link) and the host (the PC). sonde's
//! client is the host and its server the device's end, so device-to-host is `from-server`
//! and host-to-device `to-server`. Inside a burst the datagrams are 1 ms apart from the device
//! and 100 us apart from the host, as the two sent them, not back to back.
//!
//! `monitoring`: the device's 100 B x4 and 400 B x2 every 200 ms and 800 B x25 every 5 s, for
//! 300 s. `monitoring-stress`: those three with bursts doubled from the device, the same three
//! doubled from the host, and a seventh stream from the host, 1400 B x30 every second (the
//! plan adds it "in the other direction" from the device's monitoring). Late thresholds:
//! 250 ms for the 200 ms streams, 5050 ms for the 5 s bulk bursts, 1500 ms for the 1 s stream.
//! Offsets stagger the streams over the period so that one stream's burst does not sit in a
//! queue behind another's by construction; a test that wants them to coincide sets the
//! offsets to 0.

use crate::spec::Profile;

/// (name, one-line description, file text).
const BUILTINS: &[(&str, &str, &str)] = &[
    (
        "monitoring",
        "from the device (the server): 100 B x4 and 400 B x2 every 200 ms, 800 B x25 every 5 s, 1 ms apart, 300 s",
        include_str!("builtin/monitoring.toml"),
    ),
    (
        "monitoring-stress",
        "monitoring doubled from the device (1 ms apart) and from the host (100 us apart), plus 1400 B x30 every 1 s from the host, 300 s",
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
    use crate::schedule::Schedule;
    use crate::spec::Direction::{self, FromServer, ToServer};

    /// Each stream of built-in `name` as (name, direction, size, burst, gap ns, period ms,
    /// late ms).
    fn plan(name: &str) -> Vec<(String, Direction, u32, u32, u64, f64, f64)> {
        get(name)
            .unwrap_or_else(|| panic!("{name} does not parse"))
            .streams
            .iter()
            .map(|s| {
                let (n, d) = (s.name.clone(), s.direction);
                (n, d, s.size, s.burst, s.gap_ns(), s.period_ms, s.late_ms)
            })
            .collect()
    }

    /// Datagrams each stream of built-in `name` sends in a run of `secs`, by its schedule.
    fn datagrams(name: &str, secs: f64) -> Vec<u64> {
        let p = get(name).unwrap().with_duration(secs);
        p.streams
            .iter()
            .map(|s| Schedule::new(s, p.duration_s).datagrams())
            .collect()
    }

    const MS: u64 = 1_000_000;
    const US: u64 = 1_000;

    #[test]
    fn every_builtin_parses_and_runs_300_s() {
        for (name, _) in list() {
            let p = get(name).unwrap_or_else(|| panic!("{name} does not parse"));
            assert_eq!(p.name, name);
            assert_eq!(p.duration_s, 300.0);
        }
        assert!(get("nope").is_none());
    }

    #[test]
    fn monitoring_is_the_devices_three_streams() {
        let from_device = |n: &str, size, burst, period, late| {
            (n.to_string(), FromServer, size, burst, MS, period, late)
        };
        assert_eq!(
            plan("monitoring"),
            [
                from_device("status", 100, 4, 200.0, 250.0),
                from_device("telemetry", 400, 2, 200.0, 250.0),
                from_device("bulk", 800, 25, 5000.0, 5050.0),
            ]
        );
        // 300 s: status 4 per 200 ms = 20/s, telemetry 2 per 200 ms = 10/s, bulk 25 per 5 s
        // = 5/s.
        assert_eq!(
            datagrams("monitoring", 300.0),
            [20 * 300, 10 * 300, 5 * 300]
        );
        // 12 s: status bursts at 0, 0.2, ..., 11.8 s (60), telemetry at 0.05 .. 11.85 s (60),
        // bulk at 0.1, 5.1, 10.1 s (3).
        assert_eq!(datagrams("monitoring", 12.0), [60 * 4, 60 * 2, 3 * 25]);
    }

    #[test]
    fn monitoring_stress_is_the_seven_streams_of_the_stress_plan() {
        let s = |n: &str, d, size, burst, gap, period, late| {
            (n.to_string(), d, size, burst, gap, period, late)
        };
        assert_eq!(
            plan("monitoring-stress"),
            [
                s("status", FromServer, 100, 8, MS, 200.0, 250.0),
                s("telemetry", FromServer, 400, 4, MS, 200.0, 250.0),
                s("bulk", FromServer, 800, 50, MS, 5000.0, 5050.0),
                s("host-status", ToServer, 100, 8, 100 * US, 200.0, 250.0),
                s("host-telemetry", ToServer, 400, 4, 100 * US, 200.0, 250.0),
                s("host-bulk", ToServer, 800, 50, 100 * US, 5000.0, 5050.0),
                s("host-large", ToServer, 1400, 30, 100 * US, 1000.0, 1500.0),
            ]
        );
        // 300 s: status 8 per 200 ms = 40/s, telemetry 4 per 200 ms = 20/s, bulk 50 per 5 s
        // = 10/s, each way; the seventh 30 per second.
        assert_eq!(
            datagrams("monitoring-stress", 300.0),
            [
                40 * 300,
                20 * 300,
                10 * 300,
                40 * 300,
                20 * 300,
                10 * 300,
                30 * 300
            ]
        );
        // 2.005 s (the loopback test's run): status from 0 every 200 ms has its 11th burst at
        // 2.0 s, due before the end and sent whole though its datagrams run to 2.007 s;
        // telemetry from 50 ms: 0.05 .. 1.85 s (10); host-status from 25 ms: 0.025 .. 1.825 s
        // (10); host-telemetry from 75 ms: 10; the bulk streams once (0.1 s, 0.125 s);
        // host-large at 0.15 and 1.15 s.
        assert_eq!(
            datagrams("monitoring-stress", 2.005),
            [11 * 8, 10 * 4, 50, 10 * 8, 10 * 4, 50, 2 * 30]
        );
    }
}
