//! Checks of the settings that tie a stage to something beyond one frame's path: a device's
//! flow control towards its sender, and a half-duplex link whose two directions share one
//! rate budget (so they must agree on it).

use crate::validate::{needs, zero};
use crate::{DeviceConfig, Direction, Duplex, Settings, ValidationError};

/// Checks a device model's settings; `at` says where in the file.
///
/// # Errors
/// A zero packet rate, ring or queue; a queue without `backpressure` (without flow control
/// nothing waits upstream); a queue above [`DeviceConfig::MAX_QUEUE`].
pub(crate) fn check_device(at: &str, d: &DeviceConfig) -> Result<(), ValidationError> {
    if d.pps == 0 {
        return Err(zero(at, "device pps"));
    }
    if d.ring == 0 {
        return Err(zero(at, "device ring"));
    }
    let Some(queue) = d.queue else {
        return Ok(());
    };
    if !d.backpressure {
        return Err(needs(at, "device queue", "device backpressure = true"));
    }
    if queue == 0 {
        return Err(zero(at, "device queue"));
    }
    if queue > DeviceConfig::MAX_QUEUE {
        return Err(ValidationError::TooLarge {
            at: at.to_owned(),
            field: "device queue",
            value: u64::from(queue),
            max: u64::from(DeviceConfig::MAX_QUEUE),
        });
    }
    Ok(())
}

/// Checks that every link a setting makes half duplex is half duplex both ways with one
/// rate and one bucket: the two directions draw on a single budget, which has one size.
///
/// # Errors
/// [`ValidationError::HalfDuplex`] naming the link and what is missing.
pub(crate) fn check_half_duplex(s: &Settings) -> Result<(), ValidationError> {
    for entry in &s.links {
        if entry.impair.duplex != Some(Duplex::Half) {
            continue;
        }
        let err = |reason| ValidationError::HalfDuplex {
            setting: s.name.clone(),
            link: entry.link.clone(),
            reason,
        };
        let (Some(ab), Some(ba)) = (
            s.impairments(&entry.link, Direction::AToB),
            s.impairments(&entry.link, Direction::BToA),
        ) else {
            return Err(err("needs both directions impaired (direction = \"both\")"));
        };
        if ab.duplex != ba.duplex {
            return Err(err("must be set in both directions"));
        }
        if ab.rate != ba.rate || ab.burst != ba.burst {
            return Err(err(
                "needs the same rate and burst both ways: they share one budget",
            ));
        }
    }
    Ok(())
}
