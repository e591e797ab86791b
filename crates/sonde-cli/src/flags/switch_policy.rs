//! Flags of `sonde switch-test --policy`: switch when `sonde compare-ip`'s verdict says the
//! other family is better (phase one: parse and validate; the file is read at run time).

use clap::Args;

#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// Switch by a verdict instead of every --every seconds: a JSON file holding the verdict
    /// of `sonde compare-ip -J` (the whole document or its "verdict" object), read at the
    /// start and again every --every seconds
    #[arg(long, value_name = "FILE.json")]
    pub policy: Option<std::path::PathBuf>,
    /// With --policy: the other family must be better by at least this much (10%, or 10)
    #[arg(long, value_name = "PCT", default_value = "10%", value_parser = parse_percent, requires = "policy")]
    pub margin: f64,
    /// With --policy: the least confidence (1 - p) of the verdict acted on
    #[arg(long = "min-confidence", value_name = "0..1", default_value_t = 0.95, value_parser = parse_fraction, requires = "policy")]
    pub min_confidence: f64,
    /// With --policy: verdicts in a row that must favour the other family
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000), requires = "policy")]
    pub confirm: u32,
    /// With --policy: no switch within this many seconds of the last one (against flapping)
    #[arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = parse_hold, requires = "policy")]
    pub hold: f64,
}

/// `10%`, `10` or `2.5 %`: a margin in percent, 0..100.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let n = t.strip_suffix('%').unwrap_or(t).trim();
    match n.parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "\"{s}\" is not a percentage between 0 and 100 (10%)"
        )),
    }
}

fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("\"{s}\" is not a number between 0 and 1")),
    }
}

fn parse_hold(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=86_400.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "\"{s}\" is not a number of seconds between 0 and 86400"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages() {
        assert_eq!(parse_percent("10%"), Ok(10.0));
        assert_eq!(parse_percent("2.5 %"), Ok(2.5));
        assert_eq!(parse_percent("7"), Ok(7.0));
        assert!(parse_percent("120%").is_err());
        assert!(parse_percent("-1").is_err());
        assert!(parse_percent("ten").is_err());
    }
}
