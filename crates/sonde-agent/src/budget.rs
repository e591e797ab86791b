//! How hard a scheduled throughput test may push: a stated share of what the path can carry.
//!
//! The reference is the peer's measured capacity when one is known, else its configured link
//! rate; the smaller of the two when both are (a measurement above the link rate is not
//! believed). The test is paced to that share with the client's `-b`, so a schedule never
//! saturates the link it measures and other traffic keeps the rest.

/// The pacing rate (bits/s) of a scheduled throughput test, or None when neither a capacity
/// nor a link rate is known (the configuration refuses that case for throughput).
pub fn throughput_bitrate(
    link_rate: Option<u64>,
    measured: Option<u64>,
    share: f64,
) -> Option<u64> {
    let reference = match (link_rate, measured) {
        (Some(l), Some(m)) => l.min(m),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => return None,
    };
    let share = if share.is_finite() {
        share.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let rate = (reference as f64 * share).floor() as u64;
    // A zero rate would mean "unlimited" to the client: never ask for it.
    (rate > 0).then_some(rate)
}

/// The write size (bytes) of a TCP test paced to `bitrate`: what the pace sends in 10 ms,
/// from 1 KiB up to the usual 128 KiB. A paced sender is ahead by up to one write at any
/// moment, so with 128 KiB writes a 2 s test at 10 Mbit/s would send 20 writes where the pace
/// allows 19.1 (5 % over its share); with writes of 10 ms the excess stays near 0.5 %.
pub fn paced_write_len(bitrate: u64) -> u32 {
    let ten_ms = bitrate / 8 / 100;
    ten_ms.clamp(1024, 128 * 1024) as u32
}

/// The average rate (bits/s) of a profile's heavier direction: what must fit in the share.
pub fn profile_load(profile: &sonde_profile::Profile) -> f64 {
    use sonde_profile::spec::Direction;
    let sum = |d: Direction| -> f64 {
        profile
            .streams
            .iter()
            .filter(|s| s.direction == d)
            .map(|s| s.average_bitrate())
            .sum()
    };
    sum(Direction::ToServer).max(sum(Direction::FromServer))
}

/// Whether a profile of `load` bits/s fits in `share` of the reference (see
/// [`throughput_bitrate`]); the error says by how much it does not.
///
/// # Errors
/// A sentence naming the load and the allowance when it does not fit or nothing is known.
pub fn profile_fits(
    load: f64,
    link_rate: Option<u64>,
    measured: Option<u64>,
    share: f64,
) -> Result<(), String> {
    let Some(allowed) = throughput_bitrate(link_rate, measured, share) else {
        return Err(
            "no link rate configured and no capacity measured yet to take the profile's share of"
                .into(),
        );
    };
    if load <= allowed as f64 {
        return Ok(());
    }
    Err(format!(
        "the profile averages {:.0} bit/s in its heavier direction, above its share of the path ({allowed} bit/s): not run",
        load
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_what_the_pace_sends_in_10_ms() {
        assert_eq!(paced_write_len(10_000_000), 12_500);
        assert_eq!(paced_write_len(1_000), 1024, "never tiny");
        assert_eq!(
            paced_write_len(10_000_000_000),
            131_072,
            "never above the usual"
        );
    }

    #[test]
    fn a_profile_runs_only_within_its_share() {
        let p = sonde_profile::builtin::get("monitoring").unwrap();
        let load = profile_load(&p);
        assert!(load > 0.0);
        let link = (load * 20.0) as u64;
        assert!(profile_fits(load, Some(link), None, 0.1).is_ok());
        let e = profile_fits(load, Some(link), None, 0.01).unwrap_err();
        assert!(e.contains("not run"), "{e}");
        assert!(profile_fits(load, None, None, 0.1).is_err());
    }

    #[test]
    fn takes_the_share_of_the_smaller_reference() {
        assert_eq!(
            throughput_bitrate(Some(1_000_000_000), None, 0.1),
            Some(100_000_000)
        );
        assert_eq!(
            throughput_bitrate(Some(1_000_000_000), Some(400_000_000), 0.1),
            Some(40_000_000)
        );
        assert_eq!(
            throughput_bitrate(None, Some(50_000_000), 0.2),
            Some(10_000_000)
        );
    }

    #[test]
    fn never_asks_for_an_unlimited_test() {
        assert_eq!(throughput_bitrate(None, None, 0.1), None);
        assert_eq!(throughput_bitrate(Some(5), None, 0.1), None);
        assert_eq!(throughput_bitrate(Some(1000), None, f64::NAN), None);
    }
}
