//! The command line's notation, iperf3's: `-b 97.2m`, `-l 128K`, `-n 1.5G`.
//!
//! iperf3 mixes two conventions and sonde keeps both so that muscle memory carries over:
//! sizes use powers of 1024, rates powers of 1000. A bare number is allowed (`-l 1400`).

use super::{looks_negative, refuse_rounded_to_zero, Notation, Quantity, UnitError};

/// Parses an iperf3-style size: a number with an optional suffix k, m, g or t (either case),
/// each a power of 1024. Decimals are allowed (`1.5M` = 1 572 864); a fractional byte is
/// truncated.
///
/// # Errors
/// [`UnitError::Invalid`] for empty or malformed text, [`UnitError::Negative`] for a minus
/// sign, [`UnitError::TooLarge`] when the value exceeds `u64::MAX`.
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    parse_suffixed(s, Quantity::Size, 1024)
}

/// Parses an iperf3-style rate in bits/s: a number with an optional suffix k, m, g or t (either
/// case), each a power of 1000 (`97.2m` = 97 200 000, `1G` = 10^9). `0` is allowed; a rate
/// that is not zero but below 1 bit/s (`0.5`) is refused (see [`refuse_rounded_to_zero`]). The lab
/// scenario's spelling works too: `100mbit`, `1gbit`, `64kbit`, `9600bit` (and `bit/s`), so one
/// rate reads the same on the command line and in a scenario file. (`mbps` stays an error: tc
/// reads it as megabytes per second.)
///
/// # Errors
/// As [`parse_size`], and [`UnitError::BelowOneBit`] for a rate that would round to 0.
pub fn parse_rate(s: &str) -> Result<u64, UnitError> {
    let bits = parse_suffixed(strip_bit_unit(s), Quantity::Rate, 1000)?;
    Ok(refuse_rounded_to_zero(bits, s)?)
}

/// [`parse_rate`] where 0 is refused: a rate to take a share of or to pace at, not "no limit".
///
/// # Errors
/// As [`parse_rate`], and [`UnitError::Zero`] for 0.
pub fn parse_positive_rate(s: &str) -> Result<u64, UnitError> {
    match parse_rate(s)? {
        0 => Err(UnitError::Zero {
            kind: Quantity::Rate,
            given: s.to_owned(),
        }),
        bits => Ok(bits),
    }
}

/// `100mbit` -> `100m`, `9600bit/s` -> `9600` (any case); other text unchanged.
fn strip_bit_unit(s: &str) -> &str {
    let lower = s.to_ascii_lowercase();
    for unit in ["bit/s", "bits/s", "bit"] {
        if lower.ends_with(unit) && s.len() > unit.len() {
            return &s[..s.len() - unit.len()];
        }
    }
    s
}

/// Most fractional digits kept; more would overflow the exact arithmetic below.
const MAX_FRACTION_DIGITS: u32 = 18;

/// A decimal number with an optional suffix k, m, g or t, scaled by `base` per suffix step.
fn parse_suffixed(s: &str, kind: Quantity, base: u128) -> Result<u64, UnitError> {
    let invalid = || UnitError::Invalid {
        kind,
        given: s.to_owned(),
    };
    let too_large = || UnitError::TooLarge {
        kind,
        given: s.to_owned(),
        notation: Notation::Flag,
    };
    if looks_negative(s) {
        return Err(UnitError::Negative {
            kind,
            given: s.to_owned(),
        });
    }
    let (number, power) = match s.as_bytes().last() {
        Some(b'k' | b'K') => (&s[..s.len() - 1], 1),
        Some(b'm' | b'M') => (&s[..s.len() - 1], 2),
        Some(b'g' | b'G') => (&s[..s.len() - 1], 3),
        Some(b't' | b'T') => (&s[..s.len() - 1], 4),
        _ => (s, 0),
    };
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if (int_part.is_empty() && frac_part.is_empty())
        || !all_digits(int_part)
        || !all_digits(frac_part)
    {
        return Err(invalid());
    }
    // Extra fractional digits beyond 18 cannot change the truncated result for any suffix.
    let frac_part = &frac_part[..frac_part.len().min(MAX_FRACTION_DIGITS as usize)];
    let digits = int_part.bytes().chain(frac_part.bytes());
    let mut mantissa: u128 = 0;
    for d in digits {
        mantissa = mantissa
            .checked_mul(10)
            .and_then(|m| m.checked_add(u128::from(d - b'0')))
            .ok_or_else(too_large)?;
    }
    let scale = 10u128.pow(frac_part.len() as u32);
    let value = mantissa
        .checked_mul(base.pow(power))
        .ok_or_else(too_large)?
        / scale;
    u64::try_from(value).map_err(|_| too_large())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::BelowOneBit;

    #[test]
    fn sizes_use_powers_of_1024() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("1400"), Ok(1400));
        assert_eq!(parse_size("128K"), Ok(131_072));
        assert_eq!(parse_size("128k"), Ok(131_072));
        assert_eq!(parse_size("1M"), Ok(1_048_576));
        assert_eq!(parse_size("1.5M"), Ok(1_572_864));
        assert_eq!(parse_size("2g"), Ok(2_147_483_648));
        assert_eq!(parse_size("1T"), Ok(1_099_511_627_776));
        assert_eq!(parse_size(".5K"), Ok(512));
        assert_eq!(parse_size("3."), Ok(3));
    }

    #[test]
    fn fractional_bytes_truncate() {
        assert_eq!(parse_size("1.9"), Ok(1));
        assert_eq!(parse_size("0.0001K"), Ok(0));
        assert_eq!(parse_size("1.0000000000000000000009K"), Ok(1024));
    }

    #[test]
    fn a_positive_rate_refuses_zero_and_says_so() {
        assert_eq!(parse_positive_rate("100M"), Ok(100_000_000));
        let e = parse_positive_rate("0").unwrap_err();
        assert!(matches!(e, UnitError::Zero { .. }), "{e:?}");
        assert!(e.to_string().contains("must be above 0"), "{e}");
        assert!(matches!(
            parse_positive_rate("0.5"),
            Err(UnitError::BelowOneBit(_))
        ));
    }

    #[test]
    fn rates_use_powers_of_1000() {
        assert_eq!(parse_rate("0"), Ok(0));
        assert_eq!(parse_rate("97.2m"), Ok(97_200_000));
        assert_eq!(parse_rate("97.2M"), Ok(97_200_000));
        assert_eq!(parse_rate("1G"), Ok(1_000_000_000));
        assert_eq!(parse_rate("128K"), Ok(128_000));
        assert_eq!(parse_rate("2t"), Ok(2_000_000_000_000));
        assert_eq!(parse_rate("1000"), Ok(1000));
        // The scenario files' spelling.
        assert_eq!(parse_rate("100mbit"), Ok(100_000_000));
        assert_eq!(parse_rate("1Gbit/s"), Ok(1_000_000_000));
        assert_eq!(parse_rate("64kbit"), Ok(64_000));
        assert!(parse_rate("64kbps").is_err(), "tc's kbps is kilobytes/s");
        assert_eq!(parse_rate("9600bit"), Ok(9600));
        assert!(parse_rate("bit").is_err());
        assert!(parse_rate("100mbyte").is_err());
    }

    #[test]
    fn junk_is_rejected() {
        for bad in [
            "", "-", "-x", "+1", "12x", "x", "K", ".", ".K", "1.2.3", " 1", "1 ", "1KK", "1e3", "١",
        ] {
            assert!(
                matches!(parse_size(bad), Err(UnitError::Invalid { .. })),
                "size {bad:?}"
            );
            assert!(
                matches!(parse_rate(bad), Err(UnitError::Invalid { .. })),
                "rate {bad:?}"
            );
        }
    }

    #[test]
    fn a_negative_size_or_rate_says_it_must_not_be_negative() {
        for bad in ["-1", "-5m", "-0.5", "-.5K"] {
            assert!(
                matches!(parse_size(bad), Err(UnitError::Negative { .. })),
                "size {bad:?}"
            );
            assert!(
                matches!(parse_rate(bad), Err(UnitError::Negative { .. })),
                "rate {bad:?}"
            );
        }
        assert_eq!(
            parse_rate("-5m").unwrap_err().to_string(),
            "rate \"-5m\" must not be negative"
        );
    }

    #[test]
    fn a_rate_that_rounds_to_zero_is_refused() {
        for bad in [
            "0.5",
            "0.0000001k",
            "0.9",
            "0.0000000009g",
            "0.5bit",
            "0.0001kbit/s",
        ] {
            assert!(
                matches!(parse_rate(bad), Err(UnitError::BelowOneBit(_))),
                "rate {bad:?}"
            );
        }
        assert!(parse_rate("0.5")
            .unwrap_err()
            .to_string()
            .contains("below 1 bit/s"));
        // Only a written zero means "no limit"; anything from 1 bit/s up still truncates.
        for zero in ["0", "0.0", "00", "0k", "0.000M", "0bit", ".0"] {
            assert_eq!(parse_rate(zero), Ok(0), "{zero:?}");
        }
        assert_eq!(parse_rate("1"), Ok(1));
        assert_eq!(parse_rate("1.9"), Ok(1));
        assert_eq!(parse_rate("0.001k"), Ok(1));
        assert_eq!(
            refuse_rounded_to_zero(0, "0.5"),
            Err(BelowOneBit {
                given: "0.5".into()
            })
        );
        assert_eq!(refuse_rounded_to_zero(0, "0mbit"), Ok(0));
        assert_eq!(refuse_rounded_to_zero(7, "7"), Ok(7));
    }

    #[test]
    fn overflow_is_rejected() {
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert!(matches!(
            parse_size("18446744073709551616"),
            Err(UnitError::TooLarge { .. })
        ));
        assert!(matches!(
            parse_size("16777216T"),
            Err(UnitError::TooLarge { .. })
        ));
        assert!(matches!(
            parse_rate("99999999999999999999999999999999999999999"),
            Err(UnitError::TooLarge { .. })
        ));
    }

    #[test]
    fn errors_say_what_was_given_and_what_is_accepted() {
        assert_eq!(
            parse_rate("12x").unwrap_err().to_string(),
            "invalid rate \"12x\": expected a number with an optional suffix k, m, g or t \
             (for example 97.2m, 1G, 128K)"
        );
        assert_eq!(
            parse_size("").unwrap_err().to_string(),
            "invalid size \"\": expected a number with an optional suffix k, m, g or t \
             (powers of 1024, for example 1.5M, 128K, 1G)"
        );
        assert_eq!(
            parse_size("20000000T").unwrap_err().to_string(),
            "size \"20000000T\" is too large: the maximum is 18446744073709551615"
        );
    }
}
