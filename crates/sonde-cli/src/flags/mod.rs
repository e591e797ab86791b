//! Command-line flags, phase one: parse and validate, no DNS and no sockets.
//!
//! Flag names and short letters follow iperf3 so its users feel at home; `sonde -s` and
//! `sonde -c HOST` are rewritten to the `server` / `client HOST` subcommands before parsing.

pub mod agent;
pub mod auth;
pub mod btc;
pub mod capacity;
pub mod coded;
pub mod compare_ip;
pub mod connection;
pub mod latency;
pub mod mesh;
pub mod output;
pub mod parse;
pub mod profile;
pub mod report_style;
pub mod serial;
pub mod store;
pub mod stress;
pub mod sweep;
pub mod switch;
pub mod switch_more;
pub mod switch_policy;
pub mod values;

pub use crate::flags::output::OutputArgs;
use crate::flags::values::*;
pub use crate::flags::values::{
    parse_connect_timeout, BindArg, RateBurst, CONNECT_TIMEOUT_DEFAULT, RCV_TIMEOUT_DEFAULT,
};
use clap::{Args, Parser, Subcommand};
use sonde_stats::units::{Rate, Size};

#[derive(Debug, Parser)]
#[command(name = "sonde", version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("SONDE_COMMIT"), ")"), disable_version_flag = true, about = "Network measurement and lab: throughput, latency, loss, jitter, reports; iperf3-compatible", long_about = None, after_help = "iperf3 spellings work too: `sonde -s` is `sonde server`, `sonde -c HOST` is `sonde client HOST`.")]
pub struct Cli {
    /// Print the version (as iperf3's -v)
    #[arg(short = 'v', long = "version", action = clap::ArgAction::Version)]
    pub version: Option<bool>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve tests (many clients at once) on TCP and UDP port 5201
    #[command(visible_alias = "s")]
    Server(ServerArgs),
    /// Run a throughput test against a sonde server
    #[command(visible_alias = "c")]
    Client(Box<ClientArgs>),
    /// The built-in demo: the `quick` lab scenario as root, else short loopback tests; writes a report
    Demo(DemoArgs),
    /// Latency: UDP probes to a sonde server, ICMP echo, TCP connect or TCP request/response
    Latency(crate::flags::latency::LatencyArgs),
    /// Latency under load (RRUL): idle, then download, upload and both saturated by TCP
    Rrul(crate::flags::latency::RrulArgs),
    /// IPv4 against IPv6 to one sonde server: latency (per probe size), throughput, BTC, capacity, and which is better
    #[command(name = "compare-ip")]
    CompareIp(crate::flags::compare_ip::CompareIpArgs),
    /// Bulk transfer capacity: TCP transfers of growing size every few seconds, per family
    Btc(crate::flags::btc::BtcArgs),
    /// Path capacity by packet dispersion: peak rate, sustained (shaped) rate and bucket depth
    Capacity(crate::flags::capacity::CapacityArgs),
    /// Traffic profiles: concurrent UDP burst streams both ways, per-stream loss, lateness
    /// and per-burst completeness
    #[command(subcommand)]
    Profile(crate::flags::profile::ProfileCommand),
    /// Many TCP connections to a small stack's echo, discard or chargen server: speed per
    /// connection, fairness, clean close
    Stress(crate::flags::stress::StressArgs),
    /// Rate sweep: per datagram length the highest rate within a loss limit, or achieved against asked
    Sweep(crate::flags::sweep::SweepArgs),
    /// Serve RFC 862 echo, RFC 863 discard and RFC 864 chargen over TCP and UDP
    Services(crate::flags::stress::ServicesArgs),
    /// A long transfer that switches between IPv4 and IPv6 every N s, SHA-256 checked at both ends
    #[command(name = "switch-test")]
    SwitchTest(crate::flags::switch::SwitchTestArgs),
    /// A file in blocks over a serial line (tty), each block acknowledged: bytes/s, retries and errors per block size
    Serial(crate::flags::serial::SerialArgs),
    /// Serve tests and measure peers on a schedule (latency, paced throughput, capacity, profiles); results to the store, metrics for Prometheus
    Agent(crate::flags::agent::AgentArgs),
    /// Write report.md and report.html from a lab results database or sonde JSON results
    Report(ReportArgs),
    /// The emulated lab: scenarios over impaired links in network namespaces (root)
    #[command(subcommand)]
    Lab(LabCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions {
        /// The shell to complete for
        shell: clap_complete::Shell,
    },
    /// Print sonde's man page (roff), generated from these flags: every subcommand and its
    /// options in one page, or one subcommand's page, or with --dir a page per subcommand
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Print only this subcommand's page, with its own subcommands (e.g. `client`, `lab run`)
    #[arg(value_name = "SUBCOMMAND")]
    pub command: Vec<String>,
    /// Write sonde.1 and a sonde-SUBCOMMAND.1 for every subcommand into DIR (e.g.
    /// /usr/local/share/man/man1) instead of printing one page
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum LabCommand {
    /// Run a scenario's matrix (settings x tests x repetitions), or a mesh of agents, and write its report
    Run(LabRunArgs),
    /// Remove namespaces and interfaces left by a killed lab (sonde- prefix)
    Clean,
    /// List the built-in scenarios
    List,
    /// Print a built-in scenario's TOML (a starting point for your own)
    Show {
        /// Built-in scenario name (see `sonde lab list`)
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct LabRunArgs {
    /// A built-in scenario name (quick, lossy-link, rates, coded-vs-tcp, bufferbloat, mesh) or a scenario or mesh TOML file
    #[arg(value_name = "NAME|FILE")]
    pub scenario: String,
    /// Directory for the results database, raw results, server logs and the report
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: std::path::PathBuf,
    /// Continue the latest run in DIR: skip the tests it has recorded
    #[arg(long, conflicts_with = "new")]
    pub resume: bool,
    /// Start another run in a DIR that already holds one (its results stay beside it)
    #[arg(long)]
    pub new: bool,
    /// Run only these link settings (repeatable)
    #[arg(long = "settings", value_name = "NAME")]
    pub settings: Vec<String>,
    #[command(flatten)]
    pub store: crate::flags::store::StoreArgs,
    #[command(flatten)]
    pub mesh: crate::flags::mesh::MeshArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A lab results database (the SQLite file, the directory holding it, or a postgres://
    /// URL), or one or more sonde or iperf3 -J files
    #[arg(required = true, value_name = "RESULTS")]
    pub results: Vec<std::path::PathBuf>,
    /// The run of the database to report on (default: the newest, the highest id); a lab
    /// --out DIR holds several after `lab run --new`
    #[arg(long = "run", value_name = "ID", value_parser = clap::value_parser!(i64).range(1..))]
    pub run: Option<i64>,
    /// List the runs of the database (id, scenario, status, start, tests) instead of writing a
    /// report
    #[arg(long = "list-runs", conflicts_with = "run")]
    pub list_runs: bool,
    /// Directory to write the report into
    #[arg(
        short = 'o',
        long = "out",
        value_name = "DIR",
        default_value = "sonde-live"
    )]
    pub out: std::path::PathBuf,
    /// md, html or json (repeatable or comma-separated; default md and html)
    #[arg(long = "format", value_name = "FORMAT")]
    pub format: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Port for TCP and UDP
    #[arg(short = 'p', long, default_value_t = 5201)]
    pub port: u16,
    /// Bind to this address only (default: all, IPv4 and IPv6)
    #[arg(short = 'B', long = "bind", value_name = "ADDR")]
    pub bind: Option<std::net::IpAddr>,
    /// Serve IPv4 only
    #[arg(short = '4', long = "version4", conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// Serve IPv6 only
    #[arg(short = '6', long = "version6")]
    pub ipv6: bool,
    /// Refuse clients beyond N concurrent tests
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_clients: Option<u32>,
    /// Close, as soon as accepted, connections from an address that opens more than N per
    /// second (N at once; a client's -P streams count: leave room for them)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_conn_rate: Option<u32>,
    /// Refuse tests (sonde, iperf3, tcp-rr) from an address that starts more than N per
    /// minute (N at once), with a message saying so
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_test_rate: Option<u32>,
    /// Leave latency probes from an address beyond N per second unanswered (N at once)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_probe_rate: Option<u32>,
    /// Refuse a client whose address already holds N control connections (tests running or
    /// waiting to start; sonde, iperf3 and tcp-rr alike), with a message saying so; 0: no limit
    #[arg(long, value_name = "N", default_value_t = sonde_runtime::server::source_limit::DEFAULT_SESSIONS_PER_SOURCE as u32)]
    pub max_sessions_per_source: u32,
    /// Refuse tests longer than SECS (omit included; iperf3: --server-max-duration)
    #[arg(long, alias = "server-max-duration", value_name = "SECS", value_parser = parse_positive_secs)]
    pub max_duration: Option<f64>,
    /// Refuse tests whose total target rate exceeds RATE (e.g. 1G; iperf3:
    /// --server-bitrate-limit)
    #[arg(long, alias = "server-bitrate-limit", value_name = "RATE", value_parser = parse_rate_flag)]
    pub max_bitrate: Option<Rate>,
    /// Serve one test, then exit
    #[arg(short = '1', long = "one-off")]
    pub one_off: bool,
    /// UDP: send every datagram as its own packet (sendmmsg) instead of using GSO
    #[arg(long = "no-gso")]
    pub no_gso: bool,
    /// Interval of the server's own reports (default: the client's)
    #[arg(short = 'i', long, value_name = "SECS", value_parser = parse_interval)]
    pub interval: Option<f64>,
    /// End a test when no data arrives for this long while the server receives: milliseconds
    /// as in iperf3, or with a unit (`30s`)
    #[arg(long = "rcv-timeout", value_name = "MS|TIME", default_value = RCV_TIMEOUT_DEFAULT, value_parser = parse_connect_timeout)]
    pub rcv_timeout: std::time::Duration,
    /// With -1: exit (status 0) when no client came for SECS; otherwise note the idle time
    /// in the log and keep serving (iperf3's restart of a stuck server; sonde's does not wedge)
    #[arg(long = "idle-timeout", value_name = "SECS", value_parser = clap::value_parser!(u32).range(1..=86_400))]
    pub idle_timeout: Option<u32>,
    /// Run in the background, detached from the terminal (output goes to --logfile, or is lost)
    #[arg(short = 'D', long = "daemon")]
    pub daemon: bool,
    /// Write the server's process id to FILE (removed when the server exits)
    #[arg(short = 'I', long = "pidfile", value_name = "FILE")]
    pub pidfile: Option<std::path::PathBuf>,
    /// Listen with Multipath TCP as well (MPTCP clients get MPTCP, TCP ones TCP)
    #[arg(short = 'm', long = "mptcp")]
    pub mptcp: bool,
    /// Serve iperf 2 clients (`iperf -c`) too, on TCP and UDP PORT (default iperf 2's 5001)
    /// of the same address: TCP (-P, -t, -n, -l, -b, -R, --full-duplex, -d, -r, --bounceback)
    /// and UDP tests, each UDP test answered with iperf 2's server report
    #[arg(long = "iperf2", value_name = "PORT", num_args = 0..=1, default_missing_value = "5001")]
    pub iperf2: Option<u16>,
    /// Pin the server to CPU core N (a client's -A n,m pins its own test to core m)
    #[arg(short = 'A', long = "affinity", value_name = "N", value_parser = clap::value_parser!(u32).range(0..1024))]
    pub affinity: Option<u32>,
    #[command(flatten)]
    pub auth: crate::flags::auth::ServerAuthArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ClientArgs {
    /// Server host name or address
    pub host: String,
    /// Server port [default: 5201; 5001 with --iperf2]
    #[arg(short = 'p', long)]
    pub port: Option<u16>,
    /// UDP instead of TCP
    #[arg(short = 'u', long)]
    pub udp: bool,
    /// The coded transport: a fully reliable, loss-resilient transfer over UDP (-b caps its
    /// rate); --coded=arq runs plain selective-repeat ARQ instead (no coding) as a baseline
    #[arg(long, value_enum, value_name = "SCHEME", num_args = 0..=1, require_equals = true,
          default_missing_value = "rs", conflicts_with_all = ["udp", "bidir", "iperf3", "iperf2"])]
    pub coded: Option<crate::flags::coded::SchemeArg>,
    #[command(flatten)]
    pub coded_args: crate::flags::coded::CodedArgs,
    /// Seconds to transmit (default 10; ignored with -n or -k)
    #[arg(short = 't', long, value_name = "SECS", value_parser = parse_secs)]
    pub time: Option<f64>,
    /// Bytes to transmit instead of a duration (e.g. 100M)
    #[arg(short = 'n', long = "bytes", value_name = "BYTES", value_parser = parse_size_arg, conflicts_with = "blockcount")]
    pub bytes: Option<Size>,
    /// Blocks (writes / datagrams) to transmit instead of a duration
    #[arg(short = 'k', long = "blockcount", value_name = "BLOCKS", value_parser = parse_count_arg)]
    pub blockcount: Option<u64>,
    /// Write length (TCP, default 128K) or datagram size (UDP, default 1448, 16..65507)
    #[arg(short = 'l', long = "length", value_name = "LENGTH", value_parser = parse_size_arg)]
    pub length: Option<Size>,
    /// Target bit/s per stream (UDP default 1M, 0 = unlimited; TCP default unlimited);
    /// `RATE/N` as in iperf3 is the same as `-b RATE --burst N`
    #[arg(short = 'b', long = "bitrate", visible_alias = "bandwidth", value_name = "RATE[/N]", value_parser = parse_rate_burst)]
    pub bitrate: Option<RateBurst>,
    /// UDP: send N datagrams back to back at each departure, keeping the -b average (1..1000;
    /// default 1: every datagram at its own time)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub burst: Option<u32>,
    /// UDP: a sender held up makes up at most two datagrams of lost schedule (the rest shows
    /// as sent below -b) instead of up to 200 ms of it at twice -b. For devices with short
    /// buffers near their ceiling; `sonde sweep` always paces this way
    #[arg(long)]
    pub steady_pacing: bool,
    /// Reverse: the server sends
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both directions at once
    #[arg(long)]
    pub bidir: bool,
    /// Parallel streams (1..128)
    #[arg(short = 'P', long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=128))]
    pub parallel: u32,
    /// Omit the first SECS from the summary
    #[arg(short = 'O', long, value_name = "SECS", default_value_t = 0.0, value_parser = parse_secs)]
    pub omit: f64,
    /// Seconds between interval reports (0 = summary only)
    #[arg(short = 'i', long, value_name = "SECS", default_value_t = 1.0, value_parser = parse_interval)]
    pub interval: f64,
    /// TCP congestion control algorithm (e.g. cubic, bbr, reno)
    #[arg(short = 'C', long = "congestion", value_name = "ALGO")]
    pub congestion: Option<String>,
    /// Socket buffer size (e.g. 4M)
    #[arg(short = 'w', long = "window", value_name = "SIZE", value_parser = parse_size_arg)]
    pub window: Option<Size>,
    /// TCP maximum segment size
    #[arg(short = 'M', long = "set-mss", value_name = "MSS", value_parser = clap::value_parser!(u32).range(88..=65535))]
    pub mss: Option<u32>,
    /// TCP_NODELAY on data streams
    #[arg(short = 'N', long = "no-delay")]
    pub nodelay: bool,
    /// IP type-of-service byte (0..255, decimal, 0x hex or 0 octal)
    #[arg(short = 'S', long = "tos", value_name = "TOS", value_parser = parse_tos, conflicts_with = "dscp")]
    pub tos: Option<u8>,
    /// DSCP value (0..63, or a name: ef, af11..af43, cs0..cs7, le, va), sets TOS = DSCP << 2
    #[arg(long, value_name = "DSCP", value_parser = parse_dscp)]
    pub dscp: Option<u8>,
    #[command(flatten)]
    pub ip: crate::flags::connection::FamilyArgs,
    /// Client port for data streams (stream i uses PORT + i - 1)
    #[arg(long, value_name = "PORT")]
    pub cport: Option<u16>,
    /// Leave from this local address (`ADDR%DEV` also binds to device DEV), as iperf3's -B
    #[arg(short = 'B', long = "bind", value_name = "ADDR[%DEV]", value_parser = parse_bind)]
    pub bind: Option<BindArg>,
    /// Leave through this network device (SO_BINDTODEVICE; root or CAP_NET_RAW)
    #[arg(long = "bind-dev", value_name = "DEV")]
    pub bind_dev: Option<String>,
    /// TCP: end a data connection whose sent data stays unacknowledged this long
    /// (TCP_USER_TIMEOUT), milliseconds as in iperf3
    #[arg(long = "snd-timeout", value_name = "MS", value_parser = parse_ms_arg)]
    pub snd_timeout: Option<std::time::Duration>,
    /// Keepalive probes on the control connection: IDLE/INTERVAL/COUNT in seconds (default
    /// 10/5/3 when given without a value), as iperf3's --cntl-ka
    #[arg(long = "cntl-ka", value_name = "IDLE/INTV/CNT", num_args = 0..=1, require_equals = true, default_missing_value = "10/5/3", value_parser = parse_keepalive)]
    pub cntl_ka: Option<(std::time::Duration, std::time::Duration, u32)>,
    /// A string stored in -J's top-level "extra_data", as iperf3's --extra-data
    #[arg(long = "extra-data", value_name = "STR")]
    pub extra_data: Option<String>,
    /// Zero-copy sending (sendfile), TCP
    #[arg(short = 'Z', long = "zerocopy")]
    pub zerocopy: bool,
    /// TCP: the receiver discards data in the kernel instead of copying it (measures the path
    /// and the sender, not the receiver's memory copy; as iperf3 3.16's flag)
    #[arg(long = "skip-rx-copy")]
    pub skip_rx_copy: bool,
    /// Kernel pacing of each data socket at RATE bit/s (SO_MAX_PACING_RATE; TCP is paced by the
    /// kernel itself, UDP only under an fq qdisc), as iperf3's --fq-rate
    #[arg(long = "fq-rate", value_name = "RATE", value_parser = parse_rate_flag)]
    pub fq_rate: Option<Rate>,
    /// UDP: set the IP don't-fragment bit; a datagram above the path MTU fails instead of
    /// being fragmented
    #[arg(long = "dont-fragment")]
    pub dont_fragment: bool,
    /// UDP: send every datagram as its own packet (sendmmsg) instead of using GSO
    #[arg(long = "no-gso")]
    pub no_gso: bool,
    /// How long to wait for the server to answer a connection: milliseconds as in iperf3
    /// (`5000`), or with a unit (`5s`); default 30s (five SYN attempts, so a link losing 30 %
    /// of packets still connects)
    #[arg(long, value_name = "MS|TIME", default_value = CONNECT_TIMEOUT_DEFAULT, value_parser = parse_connect_timeout)]
    pub connect_timeout: std::time::Duration,
    /// TCP: send FILE's bytes (its size ends the test unless -n is smaller), or with -R write
    /// what arrives into FILE (iperf3's -F; one stream)
    #[arg(short = 'F', long = "file", value_name = "FILE")]
    pub file: Option<std::path::PathBuf>,
    /// IPv6 flow label of the data connections (0..1048575)
    #[arg(short = 'L', long = "flowlabel", value_name = "N", value_parser = clap::value_parser!(u32).range(0..=0xF_FFFF))]
    pub flowlabel: Option<u32>,
    /// Multipath TCP for the control and TCP data connections (falls back to TCP where the
    /// server has none)
    #[arg(short = 'm', long = "mptcp")]
    pub mptcp: bool,
    /// Pin this client to CPU core N, and with ",M" the server's side of the test to core M
    #[arg(short = 'A', long = "affinity", value_name = "N[,M]", value_parser = parse_affinity)]
    pub affinity: Option<(Option<u32>, Option<u32>)>,
    /// End the test with an error when no data arrives for this long while this end
    /// receives (-R, --bidir): milliseconds as in iperf3, or with a unit (`30s`)
    #[arg(long = "rcv-timeout", value_name = "MS|TIME", default_value = RCV_TIMEOUT_DEFAULT, value_parser = parse_connect_timeout)]
    pub rcv_timeout: std::time::Duration,
    /// Speak iperf3's protocol: drive a real `iperf3 -s` (3.x)
    #[arg(long, conflicts_with = "psk_file")]
    pub iperf3: bool,
    /// Speak iperf 2's protocol: drive a real `iperf -s` (2.1; port 5001 unless -p). UDP
    /// shows the server's report beside this end's figures; TCP has only this end's
    #[arg(long, conflicts_with_all = ["psk_file", "iperf3"])]
    pub iperf2: bool,
    /// With --iperf2: both directions at once on each connection (iperf 2's --full-duplex;
    /// TCP)
    #[arg(long, requires = "iperf2", conflicts_with_all = ["reverse", "bidir", "udp"])]
    pub full_duplex: bool,
    /// Show the server's view of the test after this end's: its intervals and summary (in -J
    /// as "server_output_json"); with --iperf3 what the iperf3 server printed
    #[arg(long)]
    pub get_server_output: bool,
    /// With --iperf3: 64-bit UDP sequence numbers
    #[arg(long, requires = "iperf3")]
    pub udp_counters_64bit: bool,
    /// With --iperf3: payload of repeated "0123456789" instead of random bytes
    #[arg(long, requires = "iperf3")]
    pub repeating_payload: bool,
    #[command(flatten)]
    pub auth: crate::flags::auth::ClientAuthArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Seconds per test
    #[arg(short = 't', long, default_value_t = 2.0, value_parser = parse_positive_secs)]
    pub time: f64,
    /// Directory for the report of the demo run
    #[arg(
        short = 'o',
        long = "out",
        value_name = "DIR",
        default_value = "sonde-demo"
    )]
    pub out: std::path::PathBuf,
}

/// Rewrites iperf3-style `-s` / `-c HOST` anywhere on the line into subcommands.
pub fn rewrite_iperf_style(args: Vec<String>) -> Vec<String> {
    let Some((prog, rest)) = args.split_first() else {
        return args;
    };
    if rest.first().is_some_and(|a| !a.starts_with('-')) {
        return args;
    }
    let mut out = vec![prog.clone()];
    if let Some(i) = rest.iter().position(|a| a == "-s" || a == "--server") {
        out.push("server".into());
        out.extend(
            rest.iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, a)| a.clone()),
        );
        return out;
    }
    // `-cHOST` and `--client=HOST` are the same as `-c HOST`.
    let split: Vec<String> = rest
        .iter()
        .flat_map(|a| {
            let glued = a.strip_prefix("--client=").or_else(|| {
                a.strip_prefix("-c")
                    .filter(|h| !h.is_empty() && !a.starts_with("--"))
            });
            match glued {
                Some(host) => vec!["-c".to_string(), host.to_string()],
                None => vec![a.clone()],
            }
        })
        .collect();
    let rest = split.as_slice();
    if let Some(i) = rest.iter().position(|a| a == "-c" || a == "--client") {
        out.push("client".into());
        if let Some(host) = rest.get(i + 1) {
            out.push(host.clone());
        }
        out.extend(
            rest.iter()
                .enumerate()
                .filter(|(j, _)| *j != i && *j != i + 1)
                .map(|(_, a)| a.clone()),
        );
        return out;
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn iperf_style_rewrites() {
        assert_eq!(
            rewrite_iperf_style(v("sonde -s -p 5202")),
            v("sonde server -p 5202")
        );
        assert_eq!(
            rewrite_iperf_style(v("sonde -t 3 -c host -R")),
            v("sonde client host -t 3 -R")
        );
        assert_eq!(
            rewrite_iperf_style(v("sonde client host")),
            v("sonde client host")
        );
        assert_eq!(
            rewrite_iperf_style(v("sonde -c192.0.2.1 -u")),
            v("sonde client 192.0.2.1 -u")
        );
        assert_eq!(
            rewrite_iperf_style(v("sonde -R --client=board -t 5")),
            v("sonde client board -R -t 5")
        );
        // Only iperf3-style lines: a subcommand's own -c (latency's count) is left alone.
        assert_eq!(
            rewrite_iperf_style(v("sonde latency h -c5")),
            v("sonde latency h -c5")
        );
    }

    #[test]
    fn iperf3_spellings_parse() {
        for line in [
            "sonde -v",
            "sonde server --server-max-duration 10 --server-bitrate-limit 1g --forceflush",
            "sonde client h --dscp af41 --bandwidth 10m --forceflush",
        ] {
            let parsed = Cli::try_parse_from(rewrite_iperf_style(v(line)));
            match parsed {
                Ok(_) => {}
                Err(e) if e.kind() == clap::error::ErrorKind::DisplayVersion => {}
                Err(e) => panic!("{line}: {e}"),
            }
        }
    }
}
