//! The agent's configuration file (`agent.toml`), parsed and checked before anything binds or
//! resolves: a bad file is refused with the field named, a good one cannot make the schedule
//! saturate a link (throughput needs a link rate to take its share of).
//!
//! ```toml
//! listen_port = 5201
//! store = "/var/lib/sonde/agent.db"
//! jitter = 0.2
//!
//! [latency]
//! every_secs = 10
//! probes = 10
//! probe_interval_ms = 100
//!
//! [throughput]
//! every_mins = 30
//! duration_secs = 5
//! share = 0.1
//!
//! [[peer]]
//! name = "rack-b"
//! host = "sonde-b.example.net"
//! link_rate = "1G"
//! ```

pub use crate::config_error::{parse_positive_rate, ConfigError};
use crate::server_settings::ServerSettings;
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// The whole file, as written.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Port the agent's own server listens on (TCP and UDP), 0 for any.
    #[serde(default = "default_port")]
    pub listen_port: u16,
    /// This agent's name in the results (default: the host name), so that the runs of many
    /// agents in one PostgreSQL database, or on one host, can be told apart.
    pub name: Option<String>,
    /// The SQLite results database (with `store_url`, the buffer PostgreSQL is copied from).
    #[serde(default = "default_store")]
    pub store: PathBuf,
    /// A PostgreSQL database (`postgres://user:password@host/db`) the local store is copied to.
    pub store_url: Option<String>,
    /// Copy to PostgreSQL at most this often, and retry this often while it is away.
    #[serde(default = "default_sync_every")]
    pub sync_every_secs: f64,
    /// Keep tests in the local store for this many days (fractions allowed), then delete
    /// them; with `store_url`, only once they are in PostgreSQL. Unset: keep everything.
    pub retain_days: Option<f64>,
    /// Each run starts up to this fraction of its period late (0..=0.5), drawn afresh per run,
    /// so agents started together drift apart.
    #[serde(default = "default_jitter")]
    pub jitter: f64,
    /// Seed of the jitter (default: from the clock and the process id).
    pub seed: Option<u64>,
    pub latency: Option<LatencyTask>,
    pub throughput: Option<ThroughputTask>,
    pub capacity: Option<CapacityTask>,
    pub profile: Option<ProfileTask>,
    /// Limits and key of the agent's own server.
    #[serde(default)]
    pub server: ServerSettings,
    /// The peers, each running `sonde agent` or `sonde server`.
    #[serde(default, rename = "peer")]
    pub peers: Vec<Peer>,
}

/// Latency every `every_secs`: `probes` UDP probes `probe_interval_ms` apart.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyTask {
    pub every_secs: f64,
    #[serde(default = "default_probes")]
    pub probes: u64,
    #[serde(default = "default_probe_interval")]
    pub probe_interval_ms: f64,
}

/// A TCP throughput test every `every_mins`, paced (`-b`) to `share` of the peer's link rate.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThroughputTask {
    pub every_mins: f64,
    #[serde(default = "default_tp_duration")]
    pub duration_secs: f64,
    /// Fraction of the link rate a test may use (0 < share <= 0.5).
    #[serde(default = "default_share")]
    pub share: f64,
    /// Which way the data flows, seen from this agent.
    #[serde(default)]
    pub direction: ThroughputDirection,
    /// TCP (the default) or UDP: datagrams at the paced rate, whose loss and jitter show what
    /// the path does to traffic that is not slowed down for it.
    #[serde(default)]
    pub protocol: ThroughputProtocol,
}

/// The transport of a scheduled throughput test.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThroughputProtocol {
    #[default]
    Tcp,
    Udp,
}

impl ThroughputProtocol {
    /// `tcp` / `udp`, as the configuration writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ThroughputProtocol::Tcp => "tcp",
            ThroughputProtocol::Udp => "udp",
        }
    }
}

/// Which way a scheduled throughput test sends, seen from the agent that schedules it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThroughputDirection {
    /// This agent sends (iperf3's default).
    #[default]
    Upload,
    /// The peer sends (`-R`): what an asymmetric link's other side carries.
    Download,
    /// Both at once (`--bidir`), each direction paced to half the share, so that the two
    /// together keep to it even on a half-duplex link (radio, a shared medium).
    Both,
}

/// A capacity measurement (`sonde capacity`'s default plan) every `every_mins`; the latest
/// figure of a peer becomes the reference of its throughput share (with its link rate, the
/// smaller of the two).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacityTask {
    pub every_mins: f64,
}

/// A traffic profile every `every_mins`: a built-in one (`name`, see `sonde profile list`) or
/// a file, cut to `duration_secs`; it runs only when its heavier direction's average rate is
/// within `share` of the peer's reference rate.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileTask {
    pub every_mins: f64,
    pub name: Option<String>,
    pub file: Option<PathBuf>,
    #[serde(default = "default_tp_duration")]
    pub duration_secs: f64,
    #[serde(default = "default_share")]
    pub share: f64,
}

/// One peer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Peer {
    /// The label in metrics and the store (default: the host).
    pub name: Option<String>,
    /// Host name or address (resolved before each run, so a peer may move).
    pub host: String,
    #[serde(default = "default_port")]
    pub port: u16,
    /// `"any"` (the resolver's first address), `"ipv4"` or `"ipv6"`.
    #[serde(default)]
    pub family: FamilyChoice,
    /// The link's rate in bits per second, with SI suffixes (`"100M"`, `"1G"`): what the
    /// throughput share is taken of.
    pub link_rate: Option<String>,
    /// The pre-shared key the peer's server asks for (its `--psk-file` or `[server] psk_file`),
    /// used by every kind of run to that peer.
    pub psk_file: Option<PathBuf>,
    /// The entry stands for every address `host` resolves to (of `family`, when it names
    /// one), each a peer labelled `LABEL/ADDRESS`, found again whenever a run is due: a fleet
    /// listed by its DNS (a Kubernetes headless Service, a round-robin name). See
    /// crate::group.
    #[serde(default)]
    pub every_address: bool,
}

/// The address family to measure a peer over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FamilyChoice {
    #[default]
    Any,
    Ipv4,
    Ipv6,
}

/// The shortest retention: 0.0001 days (8.64 s), for tests of the agent itself; fleets keep
/// days.
const MIN_RETAIN_DAYS: f64 = 0.0001;

fn default_port() -> u16 {
    5201
}
fn default_store() -> PathBuf {
    PathBuf::from("sonde-agent.db")
}
fn default_sync_every() -> f64 {
    10.0
}
fn default_jitter() -> f64 {
    0.2
}
fn default_probes() -> u64 {
    10
}
fn default_probe_interval() -> f64 {
    100.0
}
fn default_tp_duration() -> f64 {
    5.0
}
fn default_share() -> f64 {
    0.1
}

/// The kernel's host name (empty when it cannot be read).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

impl Peer {
    /// The peer's label.
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.host)
    }
}

impl LatencyTask {
    fn check(&self) -> Result<(), ConfigError> {
        range("latency.every_secs", self.every_secs, 0.5, 86_400.0)?;
        range("latency.probes", self.probes as f64, 1.0, 100_000.0)?;
        range(
            "latency.probe_interval_ms",
            self.probe_interval_ms,
            1.0,
            60_000.0,
        )?;
        let probing = self.probing().as_secs_f64();
        if probing > self.every_secs / 2.0 {
            return Err(ConfigError::Invalid(format!(
                "latency probing lasts {probing:.1} s (probes x probe_interval_ms), more than half of every_secs = {}: the peers would be probed without pause",
                self.every_secs
            )));
        }
        Ok(())
    }

    /// How long one latency run probes.
    pub fn probing(&self) -> Duration {
        Duration::from_secs_f64(self.probes as f64 * self.probe_interval_ms / 1e3)
    }
}

/// Refuses `v` outside `lo..=hi` (and NaN), naming the field.
fn range(field: &str, v: f64, lo: f64, hi: f64) -> Result<(), ConfigError> {
    if (lo..=hi).contains(&v) {
        return Ok(());
    }
    Err(ConfigError::Invalid(format!(
        "{field} must be {lo}..={hi}, got {v}"
    )))
}

/// Refuses a share of the link outside (0, 0.5].
fn share(field: &str, v: f64) -> Result<(), ConfigError> {
    if v > 0.0 && v <= 0.5 {
        return Ok(());
    }
    Err(ConfigError::Invalid(format!(
        "{field} must be above 0 and at most 0.5, got {v}"
    )))
}

/// Refuses tests that would load the link more than a quarter of the time.
fn duty(what: &str, duration_secs: f64, every_mins: f64) -> Result<(), ConfigError> {
    if duration_secs <= every_mins * 60.0 / 4.0 {
        return Ok(());
    }
    Err(ConfigError::Invalid(format!(
        "{what} tests of {duration_secs} s every {every_mins} min would load the link more than a quarter of the time"
    )))
}

/// The checks the two budgeted tasks (`throughput`, `profile`) share: period from
/// `min_every_mins` up to a week, tests of 1..=60 s, a share of the link, and the duty cycle.
fn budgeted(
    task: &str,
    every_mins: f64,
    min_every_mins: f64,
    duration_secs: f64,
    v: f64,
) -> Result<(), ConfigError> {
    range(
        &format!("{task}.every_mins"),
        every_mins,
        min_every_mins,
        10_080.0,
    )?;
    range(&format!("{task}.duration_secs"), duration_secs, 1.0, 60.0)?;
    share(&format!("{task}.share"), v)?;
    duty(task, duration_secs, every_mins)
}

impl ThroughputTask {
    fn check(&self) -> Result<(), ConfigError> {
        budgeted(
            "throughput",
            self.every_mins,
            0.05,
            self.duration_secs,
            self.share,
        )
    }
}

impl ProfileTask {
    fn check(&self) -> Result<(), ConfigError> {
        budgeted(
            "profile",
            self.every_mins,
            1.0,
            self.duration_secs,
            self.share,
        )?;
        let invalid = |m: String| Err(ConfigError::Invalid(m));
        match (&self.name, &self.file) {
            (Some(n), None) if sonde_profile::builtin::text(n).is_none() => invalid(format!(
                "profile.name {n:?} is not a built-in profile (see `sonde profile list`)"
            )),
            (Some(_), None) | (None, Some(_)) => Ok(()),
            _ => invalid("[profile] needs exactly one of name (built-in) or file".into()),
        }
    }
}

impl AgentConfig {
    /// Parses and checks a configuration file's text.
    ///
    /// # Errors
    /// [`ConfigError::Parse`] for bad TOML or unknown keys, [`ConfigError::Invalid`] for values
    /// out of range (each message names the field).
    pub fn parse(text: &str) -> Result<AgentConfig, ConfigError> {
        let cfg: AgentConfig = toml::from_str(text)?;
        cfg.check()?;
        Ok(cfg)
    }

    fn check(&self) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError::Invalid(m));
        if !(0.0..=0.5).contains(&self.jitter) {
            return bad(format!("jitter must be 0..=0.5, got {}", self.jitter));
        }
        if self.latency.is_none()
            && self.throughput.is_none()
            && self.capacity.is_none()
            && self.profile.is_none()
        {
            return bad(
                "nothing to run: add a [latency], [throughput], [capacity] or [profile] table"
                    .into(),
            );
        }
        if let Some(p) = &self.profile {
            p.check()?;
        }
        if let Some(c) = &self.capacity {
            range("capacity.every_mins", c.every_mins, 1.0, 10_080.0)?;
        }
        if let Some(l) = &self.latency {
            l.check()?;
        }
        self.server.check()?;
        self.check_store()?;
        if let Some(t) = &self.throughput {
            t.check()?;
        }
        self.check_peers()
    }

    fn check_store(&self) -> Result<(), ConfigError> {
        range("sync_every_secs", self.sync_every_secs, 1.0, 86_400.0)?;
        if let Some(days) = self.retain_days {
            range("retain_days", days, MIN_RETAIN_DAYS, 36_500.0)?;
        }
        if let Some(n) = &self.name {
            if n.trim().is_empty() {
                return Err(ConfigError::Invalid("name must not be empty".into()));
            }
        }
        match &self.store_url {
            Some(url) => sonde_store::check_postgres_url(url)
                .map_err(|e| ConfigError::Invalid(format!("store_url: {e}"))),
            None => Ok(()),
        }
    }

    /// This agent's name in the results: `name`, else the host name.
    pub fn agent_name(&self) -> String {
        self.name.clone().unwrap_or_else(host_name)
    }

    fn check_peers(&self) -> Result<(), ConfigError> {
        if self.peers.is_empty() {
            return Err(ConfigError::Invalid(
                "no peers: add at least one [[peer]] with a host".into(),
            ));
        }
        let mut labels = std::collections::BTreeSet::new();
        for p in &self.peers {
            if p.host.trim().is_empty() {
                return Err(ConfigError::Invalid("a peer has an empty host".into()));
            }
            if p.every_address && p.host.parse::<std::net::IpAddr>().is_ok() {
                return Err(ConfigError::Invalid(format!(
                    "peer {}: every_address needs a name that resolves to the fleet's addresses; an address stands only for itself",
                    p.label()
                )));
            }
            if !labels.insert(p.label().to_string()) {
                return Err(ConfigError::Invalid(format!(
                    "two peers are named {:?}: give each a distinct name",
                    p.label()
                )));
            }
            // A member of an every_address entry is labelled `LABEL/ADDRESS`: another entry
            // under such a label would share its series and rows.
            if let Some(g) = self.peers.iter().find(|g| {
                g.every_address
                    && p.label()
                        .strip_prefix(g.label())
                        .is_some_and(|r| r.starts_with('/'))
            }) {
                return Err(ConfigError::Invalid(format!(
                    "peer {:?}: the members of peer {:?} (every_address) are labelled {:?}/ADDRESS: give this one a name outside that",
                    p.label(),
                    g.label(),
                    g.label()
                )));
            }
            let rate = match &p.link_rate {
                Some(r) => Some(parse_positive_rate(r).map_err(|why| {
                    ConfigError::Invalid(format!("peer {}: link_rate {r:?}: {why}", p.label()))
                })?),
                None => None,
            };
            let budgeted = self.throughput.is_some() || self.profile.is_some();
            if budgeted && self.capacity.is_none() && rate.is_none() {
                return Err(ConfigError::Invalid(format!(
                    "peer {}: throughput and profile tests need its link_rate or a [capacity] schedule, so that they use only their share of it",
                    p.label()
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
listen_port = 0
store = "x.db"
[latency]
every_secs = 1
probes = 5
probe_interval_ms = 50
[throughput]
every_mins = 10
duration_secs = 2
share = 0.1
[[peer]]
host = "127.0.0.1"
link_rate = "100M"
"#;

    #[test]
    fn parses_a_good_file() {
        let c = AgentConfig::parse(GOOD).unwrap();
        assert_eq!(c.peers[0].label(), "127.0.0.1");
        assert_eq!(c.jitter, 0.2);
        assert_eq!(c.latency.unwrap().probing(), Duration::from_millis(250));
    }

    #[test]
    fn refuses_unknown_keys_and_bad_values() {
        assert!(AgentConfig::parse(&format!("{GOOD}\nbogus = 1")).is_err());
        let no_rate = GOOD.replace("link_rate = \"100M\"", "");
        let e = AgentConfig::parse(&no_rate).unwrap_err().to_string();
        assert!(e.contains("link_rate"), "{e}");
        let greedy = GOOD.replace("share = 0.1", "share = 0.9");
        assert!(AgentConfig::parse(&greedy).is_err());
        let busy = GOOD.replace("probes = 5", "probes = 50");
        assert!(AgentConfig::parse(&busy).is_err());
        let sideways = GOOD.replace("share = 0.1", "share = 0.1\ndirection = \"sideways\"");
        let e = AgentConfig::parse(&sideways).unwrap_err().to_string();
        assert!(e.contains("direction"), "{e}");
    }

    #[test]
    fn throughput_runs_upload_unless_told() {
        let tp = |text: &str| AgentConfig::parse(text).unwrap().throughput.unwrap();
        assert_eq!(tp(GOOD).direction, ThroughputDirection::Upload);
        assert_eq!(tp(GOOD).protocol, ThroughputProtocol::Tcp);
        let udp = GOOD.replace("share = 0.1", "share = 0.1\nprotocol = \"udp\"");
        assert_eq!(tp(&udp).protocol, ThroughputProtocol::Udp);
        assert!(AgentConfig::parse(
            &GOOD.replace("share = 0.1", "share = 0.1\nprotocol = \"sctp\"")
        )
        .is_err());
        for (word, want) in [
            ("upload", ThroughputDirection::Upload),
            ("download", ThroughputDirection::Download),
            ("both", ThroughputDirection::Both),
        ] {
            let text = GOOD.replace(
                "share = 0.1",
                &format!("share = 0.1\ndirection = \"{word}\""),
            );
            assert_eq!(tp(&text).direction, want, "{word}");
        }
    }

    #[test]
    fn every_address_takes_a_name_not_an_address() {
        let fleet =
            "[latency]\nevery_secs = 10\n[[peer]]\nhost = \"sonde-agents\"\nevery_address = true\n";
        let c = AgentConfig::parse(fleet).unwrap();
        assert!(c.peers[0].every_address);
        assert!(!AgentConfig::parse(GOOD).unwrap().peers[0].every_address);
        let e = AgentConfig::parse(&fleet.replace("sonde-agents", "10.0.0.1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("every_address needs a name"), "{e}");
        // An entry under a member's label.
        let clash =
            format!("{fleet}[[peer]]\nhost = \"10.0.0.2\"\nname = \"sonde-agents/10.0.0.2\"\n");
        let e = AgentConfig::parse(&clash).unwrap_err().to_string();
        assert!(
            e.contains("the members of peer \"sonde-agents\" (every_address) are labelled"),
            "{e}"
        );
        let apart = clash.replace("sonde-agents/10", "sonde-agents-10");
        assert!(AgentConfig::parse(&apart).is_ok());
    }

    #[test]
    fn rates_take_si_suffixes() {
        assert_eq!(parse_positive_rate("100M"), Ok(100_000_000));
        assert_eq!(parse_positive_rate("1.5g"), Ok(1_500_000_000));
        assert_eq!(parse_positive_rate("800"), Ok(800));
        assert!(parse_positive_rate("x").is_err());
        assert!(parse_positive_rate("-1M")
            .unwrap_err()
            .contains("must not be negative"));
        assert!(parse_positive_rate("0").unwrap_err().contains("above 0"));
    }

    #[test]
    fn a_link_rate_that_rounds_to_zero_is_refused() {
        let tiny = GOOD.replace("link_rate = \"100M\"", "link_rate = \"0.5\"");
        let e = AgentConfig::parse(&tiny).unwrap_err().to_string();
        assert!(e.contains("link_rate \"0.5\""), "{e}");
        assert!(e.contains("below 1 bit/s"), "{e}");
    }
}

#[cfg(test)]
mod example {
    /// The documented example in the repository stays valid.
    #[test]
    fn the_repository_example_parses() {
        let text = include_str!("../../../examples/agent.toml");
        let cfg = super::AgentConfig::parse(text).unwrap();
        assert_eq!(cfg.peers.len(), 2);
        assert!(cfg.throughput.is_some());
    }
}

#[cfg(test)]
mod store_checks {
    use super::AgentConfig;

    const BASE: &str = "[latency]\nevery_secs = 10\n[[peer]]\nhost = \"h\"\n";

    #[test]
    fn a_postgres_url_is_checked_without_connecting() {
        let ok = format!("store_url = \"postgres://sonde@db.invalid/sonde\"\nname = \"a\"\n{BASE}");
        let c = AgentConfig::parse(&ok).unwrap();
        assert_eq!(c.agent_name(), "a");
        assert_eq!(c.sync_every_secs, 10.0);
        assert_eq!(c.retain_days, None, "keeps everything unless told");
        let kept = AgentConfig::parse(&format!("retain_days = 30\n{BASE}")).unwrap();
        assert_eq!(kept.retain_days, Some(30.0));
        for (bad, key) in [
            ("store_url = \"postgres://h:port/db\"", "store_url"),
            ("store_url = \"db.sqlite\"", "store_url"),
            ("sync_every_secs = 0", "sync_every_secs"),
            ("name = \" \"", "name"),
            ("retain_days = 0", "retain_days"),
            ("retain_days = -1", "retain_days"),
            ("retain_days = nan", "retain_days"),
        ] {
            let e = AgentConfig::parse(&format!("{bad}\n{BASE}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(key), "{bad}: {e}");
        }
    }
}

#[cfg(test)]
mod profile_checks {
    use super::AgentConfig;

    const BASE: &str = "[[peer]]\nhost = \"h\"\nlink_rate = \"1G\"\n[profile]\nevery_mins = 10\n";

    #[test]
    fn a_profile_needs_one_known_source() {
        assert!(AgentConfig::parse(&format!("{BASE}name = \"monitoring\"\n")).is_ok());
        assert!(AgentConfig::parse(&format!("{BASE}file = \"p.toml\"\n")).is_ok());
        assert!(AgentConfig::parse(BASE).is_err());
        assert!(AgentConfig::parse(&format!("{BASE}name = \"nope\"\n")).is_err());
        let both = format!("{BASE}name = \"monitoring\"\nfile = \"p.toml\"\n");
        assert!(AgentConfig::parse(&both).is_err());
    }
}
