//! Connection flags several commands share word for word, defined once and flattened into
//! each: `-4` / `-6` (the address family of the server's address) and `--connect-timeout`.

use clap::Args;

/// `-4` / `-6` of `client`, `latency`, `rrul`, `capacity`, `sweep`, `stress` and
/// `profile run`.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct FamilyArgs {
    /// IPv4 only
    #[arg(short = '4', long = "version4", conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// IPv6 only
    #[arg(short = '6', long = "version6")]
    pub ipv6: bool,
}

impl FamilyArgs {
    /// The family to resolve the host in (clap already refuses both flags at once).
    pub fn family(&self) -> sonde_platform::resolve::Family {
        use sonde_platform::resolve::Family;
        match (self.ipv4, self.ipv6) {
            (true, _) => Family::V4,
            (_, true) => Family::V6,
            _ => Family::Any,
        }
    }
}

/// `--connect-timeout` of `btc`, `capacity` and `sweep` (the other commands say their wait in
/// words of their own, with the same default and syntax from [`crate::flags::values`]).
#[derive(Debug, Clone, Copy, Args)]
pub struct ConnectTimeoutArgs {
    /// How long to wait for the server to answer: milliseconds, or with a unit (5s)
    #[arg(long, value_name = "MS|TIME", default_value = crate::flags::values::CONNECT_TIMEOUT_DEFAULT, value_parser = crate::flags::values::parse_connect_timeout)]
    pub connect_timeout: std::time::Duration,
}
