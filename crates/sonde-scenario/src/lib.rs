//! The lab's scenario files: the model, its TOML, its checks.
//!
//! Sans-IO: text in, a validated [`Scenario`] and its ordered runs out. The lab (`sonde-lab`),
//! its runner (`sonde-labrun`), the mesh, the report (`sonde-report`) and the command line read
//! this format; the impairment engine (`sonde-emu`) builds its stages from the settings here,
//! so the format sits below the engine and every reader needs only this crate.
//!
//! A scenario names its hosts and routers (each becomes a network namespace), joins them with
//! links (veth pairs, with an MTU and an IPv4 and IPv6 subnet each), lists named link
//! **settings** (per link and direction impairments), lists **tests** (a sonde command line or
//! an external command such as iperf3), and a **matrix** saying which settings × tests to run
//! and how many times. [`Scenario::expand_matrix`] turns that into an ordered list of runs with
//! stable ids, so an interrupted run can resume.
//!
//! ```toml
//! name = "example"
//! seed = 7
//! hosts = ["client", "server"]
//! routers = ["router"]
//!
//! [[link]]
//! name = "lan"
//! a = "client"
//! b = "router"
//!
//! [[link]]
//! name = "wan"
//! a = "router"
//! b = "server"
//! mtu = 1500
//! ipv4 = "10.77.2.0/24"          # optional: 10.77.<n>.0/24 and fd00:77:0:<n>::/64 otherwise
//!
//! [[settings]]
//! name = "lossy"
//! [[settings.link]]
//! link = "wan"
//! direction = "both"             # or "a-to-b", "b-to-a"
//! [settings.link.impair]
//! rate = "100mbit"
//! delay = "10ms"
//! jitter = "1ms"
//! distribution = "normal"
//! loss = "5%"
//! queue_limit = "100pkt"
//!
//! [[settings]]
//! name = "fq-codel"
//! [[settings.link]]
//! link = "wan"
//! [settings.link.impair]
//! rate = "20mbit"
//! queue_limit = "100ms"          # a time: the bytes the rate drains in it (250 000 here)
//! aqm = "fq_codel"               # or "codel", "pie"; without it a tail-drop FIFO
//! aqm_target = "5ms"             # optional, as aqm_interval, flows, quantum: see `aqm`
//!
//! [[settings]]
//! name = "usb-bridge"
//! [[settings.link]]
//! link = "wan"
//! direction = "a-to-b"           # towards the USB side: a full 20-frame ring drops
//! impair = { device = { pps = 8000, ring = 20 } }
//! [[settings.link]]
//! link = "wan"
//! direction = "b-to-a"           # from the USB side: flow control, frames wait upstream
//! impair = { device = { pps = 8000, ring = 4, backpressure = true, queue = 1000 } }
//!
//! [[settings]]
//! name = "half-duplex"
//! [[settings.link]]
//! link = "wan"
//! impair = { rate = "10mbit", duplex = "half" }  # both directions share the 10 Mbit/s
//!
//! [[settings]]
//! name = "tunnel"
//! [[settings.link]]
//! link = "wan"                   # IPv6 as through a 6in4 tunnel: 20 ms more, MTU 1480
//! impair = { delay = "5ms", ipv6 = { delay = "25ms", mtu = 1480 } }
//!
//! [[test]]
//! name = "tcp"
//! sonde = ["client", "{server}", "-t", "10"]
//!
//! [[test]]
//! name = "iperf3"
//! command = ["iperf3", "-c", "{server}", "-t", "10"]
//!
//! [matrix]
//! repetitions = 2
//! ```
//!
//! Every table rejects unknown keys, so a misspelt impairment is an error, not a silent no-op.
//! The impairment keys mirror `sonde-emu`'s stages; see [`Impairments`].

pub mod aqm;
mod direction;
mod family;
mod matrix;
pub mod seed;
mod shared;
mod stages;
mod validate;
mod validation_error;
mod values;

pub use aqm::Aqm;
pub use direction::Direction;
pub use family::{Family, FamilyOverride};
pub use stages::{DeviceConfig, Distribution, Duplex, GeParams};

pub use matrix::Run;
pub use validate::{validate_impairments, ValidationError};
pub use values::{Dur, Ipv4Subnet, Ipv6Subnet, Percent, Rate, Size, SubnetError};

use serde::{Deserialize, Serialize};

/// The queue limit of the rate and delay stages, defined with the other units in
/// [`sonde_stats::units`].
pub use sonde_stats::units::QueueLimit;

/// A parsed, validated scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The scenario's name.
    pub name: String,
    /// What it is for.
    #[serde(default)]
    pub description: String,
    /// The run seed every random stream derives from.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// End hosts (namespaces that run tests).
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Routers (namespaces that forward, and run the userspace engine when needed).
    #[serde(default)]
    pub routers: Vec<String>,
    /// The links.
    #[serde(default, rename = "link")]
    pub links: Vec<Link>,
    /// Named link settings.
    #[serde(default, rename = "settings")]
    pub settings: Vec<Settings>,
    /// The tests.
    #[serde(default, rename = "test")]
    pub tests: Vec<Test>,
    /// Which settings × tests to run, and how often.
    #[serde(default)]
    pub matrix: Matrix,
}

fn default_seed() -> u64 {
    1
}

/// A link between two nodes: a veth pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// The link's name (at most 10 characters: interface names are built from it).
    pub name: String,
    /// One end; directions are named from it (`a-to-b`).
    pub a: String,
    /// The other end.
    pub b: String,
    /// MTU of both interfaces.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// IPv4 subnet; `a` gets its first address, `b` its second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv4: Option<Ipv4Subnet>,
    /// IPv6 subnet; `a` gets its first address, `b` its second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv6: Option<Ipv6Subnet>,
}

fn default_mtu() -> u32 {
    1500
}

/// A named set of link impairments: one column of the matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The setting's name.
    pub name: String,
    /// Impairments per link and direction; links not listed are left clean.
    #[serde(default, rename = "link")]
    pub links: Vec<LinkSetting>,
}

/// Impairments of one link in one or both directions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSetting {
    /// The link's name.
    pub link: String,
    /// Which direction(s).
    #[serde(default)]
    pub direction: DirectionSel,
    /// The impairments.
    #[serde(default)]
    pub impair: Impairments,
}

/// A direction selector in a scenario file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirectionSel {
    /// From `a` to `b`.
    AToB,
    /// From `b` to `a`.
    BToA,
    /// Both ways, each with its own random stream.
    #[default]
    Both,
}

impl DirectionSel {
    /// The directions selected.
    pub fn directions(self) -> &'static [Direction] {
        match self {
            DirectionSel::AToB => &[Direction::AToB],
            DirectionSel::BToA => &[Direction::BToA],
            DirectionSel::Both => &Direction::BOTH,
        }
    }
}

/// The impairments of one link direction. Every field is optional; absent means none.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Impairments {
    /// Rate limit (token bucket), `"100mbit"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// Bytes added to every packet for the rate accounting (e.g. 24 for Ethernet framing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<u32>,
    /// Token bucket depth, `"64kb"`. Used as given when set (at least one frame). By default
    /// it depends on the backend: the kernel's tbf/htb get one millisecond at the rate, at
    /// least two frames (`max(rate / 8 / 1000, 2 × (mtu + 14))` bytes: 12 500 at 100 Mbit/s,
    /// 125 000 at 1 Gbit/s), since their timer wakes late and a one-frame bucket then loses
    /// rate; the userspace engine, which runs its schedule at the instants it announced, one
    /// frame (1514 bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<Size>,
    /// Rate limiter queue limit, `"100pkt"`, `"150kb"` or `"100ms"` (the bytes that take that
    /// long to leave at `rate`); default 1000 packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_limit: Option<QueueLimit>,
    /// Queue management of the rate limiter's queue (needs `rate`): `"codel"`, `"fq_codel"` or
    /// `"pie"`; by default a tail-drop FIFO. See [`aqm`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aqm: Option<Aqm>,
    /// The AQM's target queue delay (default 5 ms for CoDel and FQ-CoDel, 15 ms for PIE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aqm_target: Option<Dur>,
    /// CoDel's and FQ-CoDel's interval (default 100 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aqm_interval: Option<Dur>,
    /// FQ-CoDel's number of flow queues (default 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<u32>,
    /// FQ-CoDel's deficit round robin quantum in bytes (default 1514).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<u32>,
    /// Fixed delay, `"10ms"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    /// Jitter around the delay (needs `delay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Dur>,
    /// Jitter distribution (needs `jitter`): uniform, normal, pareto, pareto-normal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
    /// Let jitter reorder packets, as netem does; by default order is kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub jitter_reorders: bool,
    /// Independent random loss, `"5%"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<Percent>,
    /// Gilbert-Elliott burst loss (exclusive with `loss`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gemodel: Option<GeModel>,
    /// Reordering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reorder: Option<ReorderSpec>,
    /// Duplication probability, `"1%"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate: Option<Percent>,
    /// Corruption probability (one bit flipped), `"0.1%"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrupt: Option<Percent>,
    /// Device model: `{ pps = 8000, ring = 20 }`; with flow control towards the sender,
    /// `{ pps = 8000, ring = 4, backpressure = true, queue = 1000 }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceConfig>,
    /// `"half"`: both directions of the link share one rate budget (needs `rate`, the same in
    /// both directions, and `duplex = "half"` in both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplex: Option<Duplex>,
    /// What IPv4 frames get instead: `{ rate, delay, jitter, loss, mtu }` (see [`Family`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv4: Option<FamilyOverride>,
    /// What IPv6 frames get instead, e.g. `{ delay = "20ms", mtu = 1480 }`, as behind a 6in4
    /// tunnel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv6: Option<FamilyOverride>,
}

impl Impairments {
    /// True when nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == Impairments::default()
    }
}

/// netem's `gemodel p [r [1-h [1-k]]]`, each a percentage; omitted ones take netem's defaults
/// (`r = 100% - p`, `1-h = 100%`, `1-k = 0%`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeModel {
    /// Good → bad transition probability.
    pub p: Percent,
    /// Bad → good transition probability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r: Option<Percent>,
    /// Loss probability in the bad state.
    #[serde(default, rename = "1-h", skip_serializing_if = "Option::is_none")]
    pub one_minus_h: Option<Percent>,
    /// Loss probability in the good state.
    #[serde(default, rename = "1-k", skip_serializing_if = "Option::is_none")]
    pub one_minus_k: Option<Percent>,
}

impl GeModel {
    /// The model's probabilities, netem's defaults filled in.
    pub fn params(&self) -> GeParams {
        let simple = GeParams::simple(self.p.0);
        GeParams {
            p: self.p.0,
            r: self.r.map_or(simple.r, |v| v.0),
            loss_bad: self.one_minus_h.map_or(simple.loss_bad, |v| v.0),
            loss_good: self.one_minus_k.map_or(simple.loss_good, |v| v.0),
        }
    }
}

/// Reordering: hold a packet back until `gap` later packets passed it, or `max_hold` passed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReorderSpec {
    /// Probability a packet is held back.
    pub probability: Percent,
    /// Packets that overtake a held one (default 1).
    #[serde(default = "default_gap")]
    pub gap: u32,
    /// Longest hold (default 10 ms).
    #[serde(default = "default_max_hold")]
    pub max_hold: Dur,
}

fn default_gap() -> u32 {
    1
}

fn default_max_hold() -> Dur {
    Dur(std::time::Duration::from_millis(10))
}

/// One test: a sonde command line, or an external command, run from `client` against `server`.
///
/// Arguments may use `{server}` (the server's IPv4 address; `{server4}`, `{server6}` for a
/// family) and `{client}`, `{client4}`, `{client6}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Test {
    /// The test's name.
    pub name: String,
    /// Host the test runs on (default: the first host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Host the server runs on (default: the last host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Arguments to `sonde` (exclusive with `command`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sonde: Option<Vec<String>>,
    /// An external command and its arguments (exclusive with `sonde`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// Longest the test may take before it is stopped and recorded as failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Dur>,
}

/// What a test runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestKind<'a> {
    /// `sonde` with these arguments.
    Sonde(&'a [String]),
    /// This program and arguments.
    Command(&'a [String]),
}

impl Test {
    /// What the test runs; `None` only for an unvalidated test with neither or both set.
    pub fn kind(&self) -> Option<TestKind<'_>> {
        match (&self.sonde, &self.command) {
            (Some(a), None) => Some(TestKind::Sonde(a)),
            (None, Some(c)) => Some(TestKind::Command(c)),
            _ => None,
        }
    }
}

/// Which settings × tests to run, and how many times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    /// Settings to run, in order (default: all, in file order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Vec<String>>,
    /// Tests to run, in order (default: all, in file order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<Vec<String>>,
    /// Repetitions of each pair.
    #[serde(default = "default_repetitions")]
    pub repetitions: u32,
}

fn default_repetitions() -> u32 {
    1
}

impl Default for Matrix {
    fn default() -> Self {
        Matrix {
            settings: None,
            tests: None,
            repetitions: 1,
        }
    }
}

/// Why a scenario file was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    /// Not TOML, or not the shape of a scenario (unknown key, bad unit, ...); the message
    /// gives the line and column.
    #[error("scenario file: {0}")]
    Parse(#[from] toml::de::Error),
    /// Well-formed, but inconsistent.
    #[error("scenario {scenario:?}: {error}")]
    Invalid {
        /// The scenario's name.
        scenario: String,
        /// What is wrong.
        error: ValidationError,
    },
}

impl Scenario {
    /// Parses and validates a scenario file.
    ///
    /// # Errors
    /// [`ScenarioError::Parse`] for malformed TOML, unknown keys or bad values,
    /// [`ScenarioError::Invalid`] for an inconsistent scenario.
    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        let scenario: Scenario = toml::from_str(text)?;
        scenario
            .validate()
            .map_err(|error| ScenarioError::Invalid {
                scenario: scenario.name.clone(),
                error,
            })?;
        Ok(scenario)
    }

    /// The link named `name`.
    pub fn link(&self, name: &str) -> Option<&Link> {
        self.links.iter().find(|l| l.name == name)
    }

    /// The settings named `name`.
    pub fn setting(&self, name: &str) -> Option<&Settings> {
        self.settings.iter().find(|s| s.name == name)
    }

    /// The test named `name`.
    pub fn test(&self, name: &str) -> Option<&Test> {
        self.tests.iter().find(|t| t.name == name)
    }
}

impl Settings {
    /// The impairments of `link` in `direction`, if this setting impairs it.
    pub fn impairments(&self, link: &str, direction: Direction) -> Option<&Impairments> {
        self.links
            .iter()
            .find(|l| l.link == link && l.direction.directions().contains(&direction))
            .map(|l| &l.impair)
    }

    /// Every impaired link direction: (link, direction, impairments).
    pub fn directions(&self) -> impl Iterator<Item = (&str, Direction, &Impairments)> {
        self.links.iter().flat_map(|l| {
            l.direction
                .directions()
                .iter()
                .map(move |d| (l.link.as_str(), *d, &l.impair))
        })
    }
}

/// Names of the built-in scenarios.
pub const BUILTIN_NAMES: [&str; 5] = [
    "quick",
    "lossy-link",
    "rates",
    "coded-vs-tcp",
    "bufferbloat",
];

/// The TOML text of a built-in scenario.
pub fn builtin_text(name: &str) -> Option<&'static str> {
    match name {
        "quick" => Some(include_str!("../scenarios/quick.toml")),
        "lossy-link" => Some(include_str!("../scenarios/lossy-link.toml")),
        "rates" => Some(include_str!("../scenarios/rates.toml")),
        "coded-vs-tcp" => Some(include_str!("../scenarios/coded-vs-tcp.toml")),
        "bufferbloat" => Some(include_str!("../scenarios/bufferbloat.toml")),
        _ => None,
    }
}

/// A built-in scenario by name (the tests check that each one parses and validates).
pub fn builtin(name: &str) -> Option<Scenario> {
    Scenario::from_toml(builtin_text(name)?).ok()
}
