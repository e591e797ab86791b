//! Flags of `sonde switch-test` (phase one: parse and validate, no DNS, no sockets).

use clap::Args;

#[derive(Debug, Args)]
pub struct SwitchTestArgs {
    /// Server host (a name with IPv4 and IPv6 addresses, or one address with --v4/--v6);
    /// omit with --listen
    #[arg(required_unless_present_any = ["listen", "v4", "v6"])]
    pub host: Option<String>,
    /// Serve switch tests (IPv4 and IPv6 on the same port) instead of running one
    #[arg(long)]
    pub listen: bool,
    /// With --listen: serve one test, then exit
    #[arg(short = '1', long = "one-off", requires = "listen")]
    pub one_off: bool,
    /// Port of the switch-test server
    #[arg(short = 'p', long, default_value_t = 5211)]
    pub port: u16,
    /// The server's IPv4 address (instead of resolving HOST); with --listen --backend mptcp,
    /// the IPv4 address the server announces to clients
    #[arg(long, value_name = "ADDR")]
    pub v4: Option<std::net::Ipv4Addr>,
    /// The server's IPv6 address (instead of resolving HOST); with --listen --backend mptcp,
    /// the IPv6 address the server announces to clients
    #[arg(long, value_name = "ADDR")]
    pub v6: Option<std::net::Ipv6Addr>,
    /// framed: the library's own protocol over a TCP connection per family; mptcp: one
    /// MPTCP connection with a subflow per family, switched through the kernel's path
    /// manager (needs MPTCP and root at both ends; an error says what is missing)
    #[arg(long, value_name = "framed|mptcp", default_value = "framed", value_parser = ["framed", "mptcp"])]
    pub backend: String,
    /// Seconds to stream
    #[arg(short = 't', long, value_name = "SECS", default_value_t = 10.0, value_parser = crate::flags::values::parse_switch_secs)]
    pub time: f64,
    /// Switch family every this many seconds (0.001 and up); with --policy, read the
    /// verdict file this often instead
    #[arg(long, value_name = "SECS", default_value_t = 1.0, value_parser = crate::flags::values::parse_switch_secs)]
    pub every: f64,
    #[command(flatten)]
    pub policy: crate::flags::switch_policy::PolicyArgs,
    /// The family to start on
    #[arg(long = "start", value_name = "4|6", default_value = "4", value_parser = ["4", "6"])]
    pub start: String,
    /// One JSON document: start, switches (one per switch with both ends' view), end
    /// (bytes, seconds, bits_per_second, hash_equal, sha256, replayed, duplicates, bytes per
    /// family)
    #[arg(short = 'J', long = "json")]
    pub json: bool,
    #[command(flatten)]
    pub more: crate::flags::switch_more::SwitchMoreArgs,
}
