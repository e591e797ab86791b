//! Value parsers of the command line (rates, sizes, times, addresses, DSCP names, ...): each
//! turns one flag's text into its typed value or a message that says what was expected.

use sonde_stats::units::{parse_rate, parse_size, Rate, Size};

/// `-A N[,M]` (either may be empty, as in iperf3's `-A ,2`): this end's core, the server's.
pub fn parse_affinity(s: &str) -> Result<(Option<u32>, Option<u32>), String> {
    let core = |v: &str| -> Result<Option<u32>, String> {
        if v.is_empty() {
            return Ok(None);
        }
        match v.parse::<u32>() {
            Ok(c) if c < 1024 => Ok(Some(c)),
            _ => Err(format!("\"{v}\" is not a CPU core number (0..1023)")),
        }
    };
    let (n, m) = s.split_once(',').unwrap_or((s, ""));
    let parsed = (core(n)?, core(m)?);
    if parsed == (None, None) {
        return Err("-A needs a core: N, N,M or ,M".into());
    }
    Ok(parsed)
}

pub fn parse_rate_unit(s: &str) -> Result<sonde_stats::units::RateUnit, String> {
    sonde_stats::units::RateUnit::parse(s).ok_or_else(|| {
        format!("\"{s}\": expected k, m, g, t (bits/sec), K, M, G, T (Bytes/sec) or a/A (adaptive)")
    })
}

/// A size as iperf3 takes it (`-l 128K`, `-n 1.5G`; powers of 1024); 0 allowed.
pub fn parse_size_arg(s: &str) -> Result<Size, String> {
    s.parse::<Size>().map_err(|e| e.to_string())
}

/// A size as [`parse_size_arg`] takes it, but refusing 0: for sizes that mean nothing empty
/// (the bytes of a BTC session, a write length).
pub fn parse_positive_size_arg(s: &str) -> Result<Size, String> {
    match parse_size_arg(s)? {
        z if z.is_zero() => Err("a size must be above 0".into()),
        v => Ok(v),
    }
}

/// A count with iperf3's size suffixes (`-k 10K` blocks; powers of 1024); 0 allowed.
pub fn parse_count_arg(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

/// A rate as iperf3 takes it (`-b 97.2m`, `100mbit`; powers of 1000); 0 allowed.
pub fn parse_rate_arg(s: &str) -> Result<u64, String> {
    parse_rate(s).map_err(|e| e.to_string())
}

/// The same, as the [`Rate`] a flag carries to the socket.
pub fn parse_rate_flag(s: &str) -> Result<Rate, String> {
    s.parse::<Rate>().map_err(|e| e.to_string())
}

/// `-b RATE` or iperf3's `-b RATE/BURST`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateBurst {
    pub rate: Rate,
    pub burst: Option<u32>,
}

pub fn parse_rate_burst(s: &str) -> Result<RateBurst, String> {
    let (rate, burst) = match s.split_once('/') {
        Some((r, b)) => (r, Some(b)),
        None => (s, None),
    };
    let burst = burst
        .map(|b| match b.parse::<u32>() {
            Ok(n) if (1..=1000).contains(&n) => Ok(n),
            _ => Err(format!(
                "\"{b}\" after the / is not a burst of 1..1000 datagrams (e.g. -b 10m/8)"
            )),
        })
        .transpose()?;
    Ok(RateBurst {
        rate: rate.parse::<Rate>().map_err(|e| e.to_string())?,
        burst,
    })
}

pub fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=86400.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "\"{s}\" is not a number of seconds between 0 and 86400"
        )),
    }
}

pub fn parse_positive_secs(s: &str) -> Result<f64, String> {
    match parse_secs(s)? {
        v if v > 0.0 => Ok(v),
        _ => Err("must be more than 0 seconds".into()),
    }
}

pub fn parse_interval(s: &str) -> Result<f64, String> {
    match parse_secs(s)? {
        v if v == 0.0 || (0.1..=60.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "interval \"{s}\" must be 0 (summary only) or 0.1..60 seconds"
        )),
    }
}

pub fn parse_tos(s: &str) -> Result<u8, String> {
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u8::from_str_radix(h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        u8::from_str_radix(&s[1..], 8)
    } else {
        s.parse::<u8>()
    };
    v.map_err(|_| format!("TOS \"{s}\" must be 0..255 (decimal, 0x hex or 0-prefixed octal)"))
}

/// A positive number of milliseconds.
pub fn parse_ms_arg(s: &str) -> Result<std::time::Duration, String> {
    match s.parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(std::time::Duration::from_millis(ms)),
        _ => Err(format!("\"{s}\" is not a number of milliseconds above 0")),
    }
}

/// `--cntl-ka IDLE/INTERVAL/COUNT` (seconds, seconds, probes); parts may be left empty for
/// the defaults 10/5/3.
pub fn parse_keepalive(s: &str) -> Result<(std::time::Duration, std::time::Duration, u32), String> {
    let mut parts = s.split('/');
    let mut next = |default: u64| -> Result<u64, String> {
        match parts.next().map(str::trim) {
            None | Some("") => Ok(default),
            Some(v) => v
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=86_400).contains(n))
                .ok_or_else(|| format!("--cntl-ka \"{s}\": IDLE/INTERVAL/COUNT are whole numbers of seconds, seconds and probes (e.g. 10/5/3)")),
        }
    };
    let idle = next(10)?;
    let intv = next(5)?;
    let cnt = next(3)?;
    Ok((
        std::time::Duration::from_secs(idle),
        std::time::Duration::from_secs(intv),
        u32::try_from(cnt).unwrap_or(u32::MAX),
    ))
}

/// Client `-B ADDR[%DEV]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindArg {
    pub addr: Option<std::net::IpAddr>,
    pub device: Option<String>,
}

pub fn parse_bind(s: &str) -> Result<BindArg, String> {
    let (addr, dev) = match s.split_once('%') {
        Some((a, d)) if !d.is_empty() => (a, Some(d.to_string())),
        Some(_) => return Err(format!("\"{s}\": a device name must follow the %")),
        None => (s, None),
    };
    let addr = if addr.is_empty() {
        None
    } else {
        Some(
            addr.trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .map_err(|_| format!("-B \"{addr}\" is not an IP address (ADDR or ADDR%DEV)"))?,
        )
    };
    Ok(BindArg { addr, device: dev })
}

/// Every subcommand's default `--connect-timeout`.
pub const CONNECT_TIMEOUT_DEFAULT: &str = "30s";
/// `--rcv-timeout`'s default, iperf3's.
pub const RCV_TIMEOUT_DEFAULT: &str = "120000";

/// `--connect-timeout` and `--rcv-timeout`: a bare number is milliseconds, as in iperf3
/// (`--connect-timeout 1000` is one second); `ms`, `s` or `us` say the unit. Above 0, at most
/// a day.
pub fn parse_connect_timeout(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let with_unit = t.ends_with('s');
    let d = if with_unit {
        parse_duration_arg(t)?
    } else {
        match t.parse::<f64>() {
            Ok(ms) if (0.0..=86_400_000.0).contains(&ms) => {
                std::time::Duration::from_secs_f64(ms / 1000.0)
            }
            _ => {
                return Err(format!(
                    "\"{s}\" is not a timeout: milliseconds as in iperf3 (5000) or a time with a unit (5s, 500ms)"
                ))
            }
        }
    };
    if d.is_zero() {
        return Err("a timeout must be above 0".into());
    }
    Ok(d)
}

/// A DSCP codepoint: 0..63 (decimal or 0x hex) or its name (RFC 2474, 2597, 3246, 5865, 8622).
pub fn parse_dscp(s: &str) -> Result<u8, String> {
    let lower = s.to_ascii_lowercase();
    let named = match lower.as_str() {
        "ef" => Some(46),
        "va" | "voice-admit" => Some(44),
        "le" => Some(1),
        _ => None,
    };
    let af = || {
        let d = lower.strip_prefix("af")?.as_bytes();
        match d {
            [c @ b'1'..=b'4', p @ b'1'..=b'3'] => Some((c - b'0') * 8 + (p - b'0') * 2),
            _ => None,
        }
    };
    let cs = || match lower.strip_prefix("cs")?.as_bytes() {
        [n @ b'0'..=b'7'] => Some((n - b'0') * 8),
        _ => None,
    };
    let number = || match lower.strip_prefix("0x") {
        Some(h) => u8::from_str_radix(h, 16).ok(),
        None => lower.parse::<u8>().ok(),
    };
    named
        .or_else(af)
        .or_else(cs)
        .or_else(number)
        .filter(|v| *v <= 63)
        .ok_or_else(|| {
            format!("DSCP \"{s}\" must be 0..63 or a name such as ef, af41, cs1, le, va")
        })
}

/// `1.5` (seconds), `10ms`, `500us`, `2s`; 0 .. 1 day.
pub fn parse_duration_arg(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * scale <= 86_400.0 => {
            Ok(std::time::Duration::from_secs_f64(v * scale))
        }
        _ => Err(format!(
            "\"{s}\" is not a time: give seconds (1.5) or a unit (10ms, 500us), up to one day"
        )),
    }
}

/// Seconds, 0.001 to one day (`switch-test`'s `-t`, `--every`, `--at`).
pub(crate) fn parse_switch_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.001..=86_400.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "'{s}' is not a number of seconds between 0.001 and 86400"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_takes_iperf3s_forms() {
        assert_eq!(parse_affinity("1"), Ok((Some(1), None)));
        assert_eq!(parse_affinity("1,0"), Ok((Some(1), Some(0))));
        assert_eq!(parse_affinity(",2"), Ok((None, Some(2))));
        assert!(parse_affinity(",").is_err());
        assert!(parse_affinity("1024").is_err());
        assert!(parse_affinity("a,1").is_err());
    }

    #[test]
    fn sizes_with_and_without_zero() {
        assert_eq!(parse_size_arg("128K"), Ok(Size::from_bytes(131_072)));
        assert_eq!(parse_size_arg("0"), Ok(Size::ZERO));
        assert_eq!(parse_count_arg("10K"), Ok(10_240));
        assert_eq!(
            parse_positive_size_arg("6M"),
            Ok(Size::from_bytes(6_291_456))
        );
        assert_eq!(
            parse_positive_size_arg("0"),
            Err("a size must be above 0".into())
        );
        assert!(parse_positive_size_arg("6x").unwrap_err().contains("1.5M"));
    }

    #[test]
    fn value_parsers() {
        assert_eq!(parse_tos("0x10"), Ok(16));
        assert_eq!(parse_tos("020"), Ok(16));
        assert!(parse_tos("300").is_err());
        assert!(parse_interval("0.05").is_err());
        assert!(parse_secs("-1").is_err());
        assert!(parse_rate_arg("12x").unwrap_err().contains("97.2m"));
        assert_eq!(
            parse_rate_burst("4.1m/8"),
            Ok(RateBurst {
                rate: Rate::from_bits_per_sec(4_100_000),
                burst: Some(8)
            })
        );
        assert_eq!(parse_rate_burst("1g").map(|r| r.burst), Ok(None));
        assert!(parse_rate_burst("1m/0").unwrap_err().contains("1..1000"));
        assert!(parse_rate_burst("1m/x").is_err());
        use std::time::Duration;
        assert_eq!(parse_connect_timeout("1000"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_connect_timeout("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(
            parse_connect_timeout("250ms"),
            Ok(Duration::from_millis(250))
        );
        assert!(parse_connect_timeout("0").is_err());
        assert!(parse_connect_timeout("soon").unwrap_err().contains("5000"));
        assert_eq!(
            parse_bind("192.0.2.7%eth1"),
            Ok(BindArg {
                addr: Some("192.0.2.7".parse().unwrap()),
                device: Some("eth1".into())
            })
        );
        assert_eq!(parse_bind("::1").map(|b| b.device), Ok(None));
        assert!(parse_bind("board")
            .unwrap_err()
            .contains("not an IP address"));
        assert!(parse_bind("10.0.0.1%").is_err());
        let ka = parse_keepalive("20//4").unwrap();
        assert_eq!((ka.0.as_secs(), ka.1.as_secs(), ka.2), (20, 5, 4));
        assert!(parse_keepalive("x/1/1").is_err());
        assert_eq!(
            parse_ms_arg("1500"),
            Ok(std::time::Duration::from_millis(1500))
        );
        assert!(parse_ms_arg("0").is_err());
        assert_eq!(parse_dscp("ef"), Ok(46));
        assert_eq!(parse_dscp("AF41"), Ok(34));
        assert_eq!(parse_dscp("af11"), Ok(10));
        assert_eq!(parse_dscp("cs7"), Ok(56));
        assert_eq!(parse_dscp("le"), Ok(1));
        assert_eq!(parse_dscp("0x2e"), Ok(46));
        assert_eq!(parse_dscp("63"), Ok(63));
        assert!(parse_dscp("64").is_err());
        assert!(parse_dscp("af51").unwrap_err().contains("af41"));
    }
}
