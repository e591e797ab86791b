//! Probe sizes varied across a run (`sonde capacity --sizes 600..1488`): the UDP payload of
//! each short train, as pathrate's first phase varies them. A dispersion estimate that moves
//! with the size points at a path whose per-packet cost (not its bit rate) sets the pace, or
//! at a layer that splits or batches some sizes.
//!
//! The list travels in the plan, so it is small and fixed (at most [`MAX_SIZES`]); on the
//! wire a plain JSON array. Short train `i` carries size `i mod n`, so every size gets
//! short trains spread over the whole phase; long trains keep the run's datagram length.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Most sizes in one plan.
pub const MAX_SIZES: usize = 32;
/// Least and most UDP payload of a probe: room for its header and more, and the largest
/// IPv4 UDP payload.
pub const SIZE: core::ops::RangeInclusive<u32> = 64..=65_507;
/// Sizes a range without a step is cut into (600..1488 gives a step of 111).
const DEFAULT_STEPS: u32 = 8;

/// The probe sizes of a plan, UDP payload bytes, in the order the short trains take them;
/// empty: every train has the run's datagram length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "Vec<u32>", into = "Vec<u32>")]
pub struct ProbeSizes {
    len: u8,
    values: [u32; MAX_SIZES],
}

/// Why a `--sizes` value or a plan's sizes cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SizesError {
    #[error("probe size {0} B is outside {lo}..={hi} B (UDP payload)", lo = SIZE.start(), hi = SIZE.end())]
    OutOfRange(u32),
    #[error("at most {MAX_SIZES} probe sizes, got {0}")]
    TooMany(usize),
    #[error("no probe sizes given")]
    Empty,
    #[error("'{0}' is not a size in bytes")]
    NotASize(String),
    #[error("range {0}..{1} ends below its start")]
    Backwards(u32, u32),
    #[error("step '{0}' must be a size of at least 1 B")]
    BadStep(String),
}

fn size(s: &str) -> Result<u32, SizesError> {
    let bad = || SizesError::NotASize(s.trim().to_owned());
    let n = sonde_stats::units::parse_size(s.trim()).map_err(|_| bad())?;
    let n = u32::try_from(n).map_err(|_| bad())?;
    if !SIZE.contains(&n) {
        return Err(SizesError::OutOfRange(n));
    }
    Ok(n)
}

impl ProbeSizes {
    /// Parses `A..B` (inclusive, cut into 8 steps), `A..B:STEP` (B included even when off
    /// the step), or a comma list `A,B,C`; each a size in bytes within [`SIZE`].
    ///
    /// # Errors
    /// A size that does not parse or is out of range, a backward range, a zero step, more
    /// than [`MAX_SIZES`] sizes.
    pub fn parse(s: &str) -> Result<Self, SizesError> {
        let Some((first, rest)) = s.split_once("..") else {
            let v = s.split(',').map(size).collect::<Result<Vec<_>, _>>()?;
            return Self::try_from(v);
        };
        let (last, step) = match rest.split_once(':') {
            Some((l, st)) => (l, Some(st)),
            None => (rest, None),
        };
        let (a, b) = (size(first)?, size(last)?);
        if b < a {
            return Err(SizesError::Backwards(a, b));
        }
        let step = match step {
            Some(st) => sonde_stats::units::parse_size(st.trim())
                .ok()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|&n| n > 0)
                .ok_or_else(|| SizesError::BadStep(st.trim().to_owned()))?,
            None => (b - a).div_ceil(DEFAULT_STEPS).max(1),
        };
        let count = (b - a) / step + 1 + u32::from((b - a) % step != 0);
        if count as usize > MAX_SIZES {
            return Err(SizesError::TooMany(count as usize));
        }
        let mut v: Vec<u32> = (0..count).map(|i| a + i * step).collect();
        if let Some(l) = v.last_mut() {
            *l = (*l).min(b);
        }
        Self::try_from(v)
    }

    /// The sizes, in order.
    pub fn as_slice(&self) -> &[u32] {
        self.values.get(..usize::from(self.len)).unwrap_or_default()
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The size of short train `i`, None without sizes.
    pub fn of_short_train(&self, i: u32) -> Option<u32> {
        let s = self.as_slice();
        s.get(i as usize % s.len().max(1)).copied()
    }

    /// Checks every size against [`SIZE`].
    ///
    /// # Errors
    /// The first size out of range.
    pub fn validate(&self) -> Result<(), SizesError> {
        match self.as_slice().iter().find(|s| !SIZE.contains(s)) {
            Some(&s) => Err(SizesError::OutOfRange(s)),
            None => Ok(()),
        }
    }
}

impl TryFrom<Vec<u32>> for ProbeSizes {
    type Error = SizesError;

    fn try_from(v: Vec<u32>) -> Result<Self, SizesError> {
        if v.len() > MAX_SIZES {
            return Err(SizesError::TooMany(v.len()));
        }
        let mut values = [0; MAX_SIZES];
        for (slot, s) in values.iter_mut().zip(&v) {
            *slot = *s;
        }
        Ok(Self {
            len: v.len() as u8,
            values,
        })
    }
}

impl From<ProbeSizes> for Vec<u32> {
    fn from(s: ProbeSizes) -> Self {
        s.as_slice().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_steps_and_lists() {
        let nine: Vec<u32> = (0..9).map(|i| 600 + 111 * i).collect();
        assert_eq!(
            ProbeSizes::parse("600..1488").unwrap().as_slice(),
            &nine[..]
        );
        assert_eq!(
            ProbeSizes::parse("600..1488:111").unwrap().as_slice(),
            &nine[..]
        );
        // The end is kept when the step does not land on it.
        assert_eq!(
            ProbeSizes::parse("600..1000:300").unwrap().as_slice(),
            &[600, 900, 1000]
        );
        assert_eq!(ProbeSizes::parse("700..700").unwrap().as_slice(), &[700]);
        assert_eq!(
            ProbeSizes::parse("1472, 600,1k").unwrap().as_slice(),
            &[1472, 600, 1024]
        );
        let s = ProbeSizes::parse("600,900").unwrap();
        assert_eq!(
            (0..4).map(|i| s.of_short_train(i)).collect::<Vec<_>>(),
            [Some(600), Some(900), Some(600), Some(900)]
        );
        assert_eq!(ProbeSizes::default().of_short_train(3), None);
    }

    #[test]
    fn bad_sizes_are_refused_saying_why() {
        let e = |s: &str| ProbeSizes::parse(s).unwrap_err();
        assert_eq!(e("10..1488"), SizesError::OutOfRange(10));
        assert_eq!(e("600..70000"), SizesError::OutOfRange(70_000));
        assert_eq!(e("1488..600"), SizesError::Backwards(1488, 600));
        assert_eq!(e("600..1488:0"), SizesError::BadStep("0".into()));
        assert_eq!(e("64..65507:1"), SizesError::TooMany(65_444));
        assert_eq!(e("600,big"), SizesError::NotASize("big".into()));
        assert!(e("600..1488:1").to_string().contains("at most 32"));
        assert!(e("10").to_string().contains("64..=65507"));
    }

    #[test]
    fn the_wire_form_is_a_plain_array_and_checked_on_the_way_in() {
        let s = ProbeSizes::parse("600,900").unwrap();
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(j, "[600,900]");
        assert_eq!(serde_json::from_str::<ProbeSizes>(&j).unwrap(), s);
        let many = format!("[{}]", vec!["600"; 33].join(","));
        assert!(serde_json::from_str::<ProbeSizes>(&many).is_err());
        let low: ProbeSizes = serde_json::from_str("[10]").unwrap();
        assert_eq!(low.validate(), Err(SizesError::OutOfRange(10)));
    }
}
