//! The `[server]` table of `agent.toml`: the limits and the key of the agent's own server, the
//! same ones `sonde server` takes as flags (`--max-clients`, `--max-duration`,
//! `--max-bitrate`, `--max-test-rate`, `--max-conn-rate`, `--max-probe-rate`, `--psk-file`).
//!
//! Why a table of its own: an agent's server is reachable by every peer of a fleet (and often
//! by more), so an operator must be able to bound it as tightly as a standalone server. Values
//! are checked when the file is parsed (each error names its key); the key file is read when
//! the agent starts, before it listens, so a bad key stops the agent instead of leaving its
//! server open.

use crate::config_error::{parse_positive_rate, ConfigError};
use serde::Deserialize;
use sonde_runtime::auth::{load_psk, ServerAuth};
use sonde_runtime::server::source_limit::{RateCap, SourceLimits};
use sonde_runtime::server::ServerConfig;
use std::path::PathBuf;
use std::time::Duration;

/// Longest test the agent's server accepts when `max_duration_secs` is not set: above what a
/// capacity run asks for (its 360 s deadline), below an unattended hour.
pub const DEFAULT_MAX_DURATION_SECS: f64 = 600.0;

/// The `[server]` table, as written. Every key is optional; without the table the agent's
/// server accepts tests of up to ten minutes from anyone, with no other limit and no key.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    /// Concurrent tests at most (`sonde server --max-clients`).
    pub max_clients: Option<u32>,
    /// Longest test accepted, seconds (default 600; `--max-duration`).
    pub max_duration_secs: Option<f64>,
    /// Highest total target rate of a test, with SI suffixes (`"1G"`; `--max-bitrate`).
    pub max_bitrate: Option<String>,
    /// Tests started per source address per minute (`--max-test-rate`).
    pub max_test_rate: Option<u32>,
    /// TCP connections accepted per source address per second (`--max-conn-rate`).
    pub max_conn_rate: Option<u32>,
    /// Latency probes answered per source address per second (`--max-probe-rate`).
    pub max_probe_rate: Option<u32>,
    /// Require sonde clients to hold the pre-shared key in this file (`--psk-file`).
    pub psk_file: Option<PathBuf>,
}

/// Refuses a zero count, naming the key.
fn at_least_one(key: &str, v: Option<u32>) -> Result<(), ConfigError> {
    match v {
        Some(0) => Err(ConfigError::Invalid(format!(
            "server.{key} must be at least 1 (leave it out for no limit)"
        ))),
        _ => Ok(()),
    }
}

impl ServerSettings {
    /// Checks every value, naming the key of the first bad one.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] for a zero count, a duration out of 1..=86400 s or a rate
    /// that is not one.
    pub fn check(&self) -> Result<(), ConfigError> {
        at_least_one("max_clients", self.max_clients)?;
        at_least_one("max_test_rate", self.max_test_rate)?;
        at_least_one("max_conn_rate", self.max_conn_rate)?;
        at_least_one("max_probe_rate", self.max_probe_rate)?;
        if let Some(d) = self.max_duration_secs {
            if !(1.0..=86_400.0).contains(&d) {
                return Err(ConfigError::Invalid(format!(
                    "server.max_duration_secs must be 1..=86400, got {d}"
                )));
            }
        }
        self.bitrate()?;
        Ok(())
    }

    fn bitrate(&self) -> Result<Option<u64>, ConfigError> {
        self.max_bitrate
            .as_deref()
            .map(|r| {
                parse_positive_rate(r)
                    .map_err(|why| ConfigError::Invalid(format!("server.max_bitrate {r:?}: {why}")))
            })
            .transpose()
    }

    /// The runtime's server configuration on `port`, with the key file read now.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming `server.psk_file` when the key cannot be read or is
    /// too short, or a value that [`ServerSettings::check`] refuses.
    pub fn server_config(&self, port: u16) -> Result<ServerConfig, ConfigError> {
        let psk = self
            .psk_file
            .as_deref()
            .map(load_psk)
            .transpose()
            .map_err(|e| ConfigError::Invalid(format!("server.psk_file: {e}")))?;
        Ok(ServerConfig {
            port,
            bind: None,
            max_clients: self.max_clients.map(|m| m as usize),
            max_duration_secs: Some(self.max_duration_secs.unwrap_or(DEFAULT_MAX_DURATION_SECS)),
            max_bitrate: self
                .bitrate()?
                .map(sonde_stats::units::Rate::from_bits_per_sec),
            one_off: false,
            interval_secs: None,
            ipv6_only: false,
            rcv_timeout: Some(Duration::from_secs(10)),
            mptcp: false,
            idle_timeout: None,
            source_limits: SourceLimits {
                connections: self.max_conn_rate.map(RateCap::per_second),
                tests: self.max_test_rate.map(RateCap::per_minute),
                probes: self.max_probe_rate.map(RateCap::per_second),
                ..SourceLimits::default()
            },
            auth: ServerAuth { psk, rsa: None },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AgentConfig;

    const BASE: &str = "[latency]\nevery_secs = 10\n[[peer]]\nhost = \"h\"\n";

    fn with(table: &str) -> Result<AgentConfig, ConfigError> {
        AgentConfig::parse(&format!("{BASE}[server]\n{table}\n"))
    }

    #[test]
    fn defaults_are_todays() {
        let c = AgentConfig::parse(BASE).unwrap();
        let s = c.server.server_config(0).unwrap();
        assert_eq!(s.max_duration_secs, Some(DEFAULT_MAX_DURATION_SECS));
        assert_eq!(s.max_clients, None);
        assert_eq!(s.max_bitrate, None);
        assert_eq!(s.source_limits, SourceLimits::default());
        assert!(s.auth.psk.is_none());
    }

    #[test]
    fn every_key_is_read() {
        let c = with(
            "max_clients = 2\nmax_duration_secs = 30\nmax_bitrate = \"50M\"\n\
             max_test_rate = 6\nmax_conn_rate = 20\nmax_probe_rate = 100",
        )
        .unwrap();
        let s = c.server.server_config(5201).unwrap();
        assert_eq!(s.max_clients, Some(2));
        assert_eq!(s.max_duration_secs, Some(30.0));
        assert_eq!(
            s.max_bitrate,
            Some(sonde_stats::units::Rate::from_bits_per_sec(50_000_000))
        );
        assert_eq!(s.source_limits.tests, Some(RateCap::per_minute(6)));
        assert_eq!(s.source_limits.connections, Some(RateCap::per_second(20)));
        assert_eq!(s.source_limits.probes, Some(RateCap::per_second(100)));
    }

    #[test]
    fn bad_values_name_their_key() {
        for (table, key) in [
            ("max_clients = 0", "server.max_clients"),
            ("max_test_rate = 0", "server.max_test_rate"),
            ("max_conn_rate = 0", "server.max_conn_rate"),
            ("max_probe_rate = 0", "server.max_probe_rate"),
            ("max_duration_secs = 0.5", "server.max_duration_secs"),
            ("max_bitrate = \"fast\"", "server.max_bitrate"),
            ("max_bitrate = \"0.5\"", "below 1 bit/s"),
            ("max_clients = -1", "max_clients"),
            ("max_clients = \"two\"", "max_clients"),
            ("bogus = 1", "bogus"),
        ] {
            let e = with(table).unwrap_err().to_string();
            assert!(e.contains(key), "{table}: {e}");
        }
    }

    #[test]
    fn a_missing_key_file_is_named() {
        let c = with("psk_file = \"/nonexistent/sonde.psk\"").unwrap();
        let e = c.server.server_config(0).unwrap_err().to_string();
        assert!(e.contains("server.psk_file"), "{e}");
    }
}
