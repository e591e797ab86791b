//! Jain's fairness index (R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of Fairness and
//! Discrimination for Resource Allocation in Shared Computer Systems", DEC TR-301, 1984).
//!
//! `J = (sum x)^2 / (n * sum x^2)`: 1 when every connection got the same share, `1/n` when one
//! got everything. It is why the stress view shows one number per interval: a stack that starves
//! some connections shows up at a glance, whatever the connection count.

/// Jain's index over the shares `x` (rates or bytes, any non-negative unit).
///
/// `None` when there is nothing to judge: no connections, or none of them moved a byte (all
/// idle is neither fair nor unfair). Negative or non-finite shares count as zero.
pub fn jain(x: &[f64]) -> Option<f64> {
    let clean = |v: f64| if v.is_finite() && v > 0.0 { v } else { 0.0 };
    let sum: f64 = x.iter().copied().map(clean).sum();
    let sum_sq: f64 = x.iter().copied().map(clean).map(|v| v * v).sum();
    if x.is_empty() || sum_sq <= 0.0 {
        return None;
    }
    Some((sum * sum) / (x.len() as f64 * sum_sq))
}

#[cfg(test)]
mod tests {
    use super::jain;

    #[test]
    fn equal_shares_are_fair() {
        assert_eq!(jain(&[5.0, 5.0, 5.0, 5.0]), Some(1.0));
    }

    #[test]
    fn one_takes_all_gives_one_over_n() {
        let j = jain(&[8.0, 0.0, 0.0, 0.0]).unwrap();
        assert!((j - 0.25).abs() < 1e-12, "{j}");
    }

    #[test]
    fn textbook_value() {
        // (1+2+3)^2 / (3 * (1+4+9)) = 36 / 42
        let j = jain(&[1.0, 2.0, 3.0]).unwrap();
        assert!((j - 36.0 / 42.0).abs() < 1e-12, "{j}");
    }

    #[test]
    fn nothing_to_judge() {
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
        assert_eq!(jain(&[f64::NAN, -1.0]), None);
    }
}
