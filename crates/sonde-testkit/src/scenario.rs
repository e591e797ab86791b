//! Lab scenario files (`sonde lab run`'s TOML) for tests, built from the chain of nodes they
//! describe rather than written out by hand in each test: the client - router - server
//! topology most lab tests use is
//!
//! ```
//! use sonde_testkit::scenario::chain;
//!
//! let toml = chain()
//!     .name("device-ring")
//!     .seed(9)
//!     .host("client")
//!     .link("lan")
//!     .router("router")
//!     .link("dev")
//!     .host("server")
//!     .settings("ring-4")
//!     .impair("dev", "device = { pps = 8000, ring = 4 }")
//!     .sonde("up", &["client", "{server}", "-u", "-t", "4"])
//!     .to_toml();
//! assert!(toml.contains("[[link]]\nname = \"dev\"\na = \"router\"\nb = \"server\"\n"));
//! ```
//!
//! The text is laid out as the tests' files were: the top-level keys (name, description,
//! seed, hosts, routers), then each link, settings and test as a table of its own after a
//! blank line, in the order given. `{server}` and the other placeholders of `sonde lab run`
//! pass through as they are.

use std::fmt::Write;

/// A scenario whose nodes are added in a chain: [`Scenario::host`] at each end,
/// [`Scenario::router`] between, [`Scenario::link`] joining a node to the next one added.
pub fn chain() -> Scenario {
    Scenario::default()
}

/// client - router - server over the links `lan` and `wan`, `wan` impaired as `impair` (an
/// inline table's body, `loss = "5%"`) in the setting `s`, and one test, `none`, that does
/// nothing: a lab for a test to measure in itself. Name and seed follow.
pub fn chain3(impair: &str) -> Scenario {
    chain()
        .host("client")
        .link("lan")
        .router("router")
        .link("wan")
        .host("server")
        .settings("s")
        .impair_inline("wan", impair)
        .command("none", &["true"])
}

/// client - router - server over the links `lan` and `wan`, named `t`, with one test, `tcp`
/// (`sonde client {server}`), and no settings: the lab the scenario files' own checks
/// change one key or line of at a time.
pub fn tcp_lab() -> Scenario {
    chain()
        .name("t")
        .host("client")
        .link("lan")
        .router("router")
        .link("wan")
        .host("server")
        .sonde("tcp", &["client", "{server}"])
}

/// [`tcp_lab`] with the setting `s`, which impairs `wan` both ways as `keys` (TOML lines,
/// written as a `[settings.link.impair]` table; empty for none), as a file.
pub fn tcp_lab_with(keys: &str) -> String {
    tcp_lab().settings("s").impair("wan", keys).to_toml()
}

/// A scenario being built; [`Scenario::to_toml`] writes it out.
#[derive(Clone, Debug, Default)]
pub struct Scenario {
    name: String,
    description: Option<String>,
    seed: Option<u64>,
    hosts: Vec<String>,
    routers: Vec<String>,
    /// The node the next link starts from.
    last: Option<String>,
    /// A link named but not yet joined to its second node.
    open_link: Option<String>,
    links: Vec<Link>,
    settings: Vec<Settings>,
    tests: Vec<Test>,
    matrix: Option<String>,
}

#[derive(Clone, Debug)]
struct Link {
    name: String,
    a: String,
    b: String,
}

#[derive(Clone, Debug)]
struct Settings {
    name: String,
    links: Vec<Impair>,
}

#[derive(Clone, Debug)]
struct Impair {
    link: String,
    /// TOML keys: one a line for a `[settings.link.impair]` table, comma-separated for an
    /// inline one.
    keys: String,
    inline: bool,
}

#[derive(Clone, Debug)]
struct Test {
    name: String,
    timeout: Option<String>,
    /// `sonde` (its arguments) or `command` (the whole command line).
    key: &'static str,
    argv: Vec<String>,
}

impl Scenario {
    /// The scenario's `name`.
    pub fn name(mut self, name: &str) -> Self {
        self.name = name.to_owned();
        self
    }

    /// Its `description`.
    pub fn description(mut self, description: &str) -> Self {
        self.description = Some(description.to_owned());
        self
    }

    /// Its `seed`.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// A host: the chain's first node, or its last.
    pub fn host(mut self, name: &str) -> Self {
        self.hosts.push(name.to_owned());
        self.node(name)
    }

    /// A router: a node between the hosts.
    pub fn router(mut self, name: &str) -> Self {
        self.routers.push(name.to_owned());
        self.node(name)
    }

    fn node(mut self, name: &str) -> Self {
        if let Some(link) = self.open_link.take() {
            let a = self.last.clone().expect("a link starts at a node");
            self.links.push(Link {
                name: link,
                a,
                b: name.to_owned(),
            });
        }
        self.last = Some(name.to_owned());
        self
    }

    /// A link from the node added last to the next one.
    #[track_caller]
    pub fn link(mut self, name: &str) -> Self {
        assert!(self.last.is_some(), "link {name:?} needs a node before it");
        assert!(
            self.open_link.is_none(),
            "link {name:?} follows a link: a node goes between"
        );
        self.open_link = Some(name.to_owned());
        self
    }

    /// A link setting; [`Scenario::impair`] after it impairs its links (none: the links as
    /// they are).
    pub fn settings(mut self, name: &str) -> Self {
        self.settings.push(Settings {
            name: name.to_owned(),
            links: Vec::new(),
        });
        self
    }

    /// The last setting's impairment of `link`, both ways: `keys` are TOML lines (`rate =
    /// "100mbit"\nloss = "1%"`), written as a `[settings.link.impair]` table.
    #[track_caller]
    pub fn impair(self, link: &str, keys: &str) -> Self {
        self.impair_as(link, keys, false)
    }

    /// [`Scenario::impair`] as an inline table, `impair = { KEYS }`: `keys` comma-separated
    /// (`delay = "10ms", loss = "1%"`; empty for none).
    #[track_caller]
    pub fn impair_inline(self, link: &str, keys: &str) -> Self {
        self.impair_as(link, keys, true)
    }

    #[track_caller]
    fn impair_as(mut self, link: &str, keys: &str, inline: bool) -> Self {
        let settings = self
            .settings
            .last_mut()
            .expect("impair() follows settings()");
        settings.links.push(Impair {
            link: link.to_owned(),
            keys: keys.to_owned(),
            inline,
        });
        self
    }

    /// A test that runs `sonde ARGS` in the client node (`{server}`: the server's address).
    pub fn sonde<S: AsRef<str>>(self, name: &str, args: &[S]) -> Self {
        self.test(name, "sonde", args)
    }

    /// A test that runs the command line `argv` in the client node.
    pub fn command<S: AsRef<str>>(self, name: &str, argv: &[S]) -> Self {
        self.test(name, "command", argv)
    }

    fn test<S: AsRef<str>>(mut self, name: &str, key: &'static str, argv: &[S]) -> Self {
        self.tests.push(Test {
            name: name.to_owned(),
            timeout: None,
            key,
            argv: argv.iter().map(|a| a.as_ref().to_owned()).collect(),
        });
        self
    }

    /// The last test's `timeout` (`"200s"`).
    #[track_caller]
    pub fn timeout(mut self, timeout: &str) -> Self {
        let test = self.tests.last_mut().expect("timeout() follows a test");
        test.timeout = Some(timeout.to_owned());
        self
    }

    /// A `[matrix]` table of `keys` (TOML lines: `repetitions = 1`).
    pub fn matrix(mut self, keys: &str) -> Self {
        self.matrix = Some(keys.to_owned());
        self
    }

    /// The scenario file.
    #[track_caller]
    pub fn to_toml(&self) -> String {
        assert!(
            self.open_link.is_none(),
            "link {:?} has no node after it",
            self.open_link
        );
        let mut t = String::new();
        let _ = writeln!(t, "name = {}", quote(&self.name));
        if let Some(d) = &self.description {
            let _ = writeln!(t, "description = {}", quote(d));
        }
        if let Some(seed) = self.seed {
            let _ = writeln!(t, "seed = {seed}");
        }
        let _ = writeln!(t, "hosts = {}", list(&self.hosts));
        if !self.routers.is_empty() {
            let _ = writeln!(t, "routers = {}", list(&self.routers));
        }
        for l in &self.links {
            let _ = write!(
                t,
                "\n[[link]]\nname = {}\na = {}\nb = {}\n",
                quote(&l.name),
                quote(&l.a),
                quote(&l.b)
            );
        }
        for s in &self.settings {
            let _ = write!(t, "\n[[settings]]\nname = {}\n", quote(&s.name));
            for i in &s.links {
                let _ = writeln!(t, "[[settings.link]]\nlink = {}", quote(&i.link));
                if i.inline {
                    let _ = writeln!(t, "impair = {{ {} }}", i.keys);
                } else {
                    let _ = writeln!(t, "[settings.link.impair]\n{}", i.keys);
                }
            }
        }
        for test in &self.tests {
            let _ = write!(t, "\n[[test]]\nname = {}\n", quote(&test.name));
            if let Some(timeout) = &test.timeout {
                let _ = writeln!(t, "timeout = {}", quote(timeout));
            }
            let _ = writeln!(t, "{} = {}", test.key, list(&test.argv));
        }
        if let Some(keys) = &self.matrix {
            let _ = write!(t, "\n[matrix]\n{keys}\n");
        }
        t
    }
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\t' => q.push_str("\\t"),
            '\r' => q.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(q, "\\u{:04X}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// A TOML array of strings, on one line.
fn list<S: AsRef<str>>(items: &[S]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| quote(i.as_ref())).collect();
    format!("[{}]", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    //! The builder's text against scenario files as the tests wrote them by hand before the
    //! builder (less their opening newline): three that between them use every method
    //! (description, timeout, routers, inline and table impairments, commands, a matrix).

    use super::*;

    #[track_caller]
    fn same(built: &str, literal: &str) {
        let literal = literal.strip_prefix('\n').unwrap_or(literal);
        assert_eq!(
            built, literal,
            "\n--- built ---\n{built}\n--- was ---\n{literal}"
        );
    }

    /// `crates/sonde/tests/it/sweep_lab.rs`, its `{sonde}` filled in as the test does.
    #[test]
    fn sweep_lab() {
        const TOPOLOGY: &str = r#"
name = "sweep-lab"
description = "a rate sweep through a device link with a packet ceiling"
seed = 10
hosts = ["client", "server"]
routers = ["router"]

[[link]]
name = "lan"
a = "client"
b = "router"

[[link]]
name = "dev"
a = "router"
b = "server"

[[settings]]
name = "device"
[[settings.link]]
link = "dev"
[settings.link.impair]
device = { pps = 8000, ring = 20 }

[[test]]
name = "sweep"
timeout = "200s"
sonde = [{sonde}]
"#;
        let args = ["-l", "64,1448", "-R"];
        let mut argv = vec!["\"sweep\"".to_owned(), "\"{server}\"".into()];
        argv.extend(args.iter().map(|a| format!("{a:?}")));
        let old = TOPOLOGY.replace("{sonde}", &argv.join(", "));
        let mut sonde = vec!["sweep", "{server}"];
        sonde.extend(args);
        let built = chain()
            .host("client")
            .link("lan")
            .router("router")
            .link("dev")
            .host("server")
            .name("sweep-lab")
            .description("a rate sweep through a device link with a packet ceiling")
            .seed(10)
            .settings("device")
            .impair("dev", "device = { pps = 8000, ring = 20 }")
            .sonde("sweep", &sonde)
            .timeout("200s")
            .to_toml();
        same(&built, &old);
    }

    /// `crates/sonde/tests/it/common/mod.rs`'s `chain3_lab`: indented and without blank lines
    /// there, so the same lines once each is trimmed and the blank ones dropped.
    #[test]
    fn chain3_lab() {
        for impair in ["", r#"delay = "10ms""#, r#"rate = "100mbit", loss = "2%""#] {
            let old = format!(
                r#"
        name = "chain3"
        seed = 5
        hosts = ["client", "server"]
        routers = ["router"]
        [[link]]
        name = "lan"
        a = "client"
        b = "router"
        [[link]]
        name = "wan"
        a = "router"
        b = "server"
        [[settings]]
        name = "s"
        [[settings.link]]
        link = "wan"
        impair = {{ {impair} }}
        [[test]]
        name = "none"
        command = ["true"]
        "#
            );
            let built = chain3(impair).name("chain3").seed(5).to_toml();
            let lines = |t: &str| -> Vec<String> {
                t.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned)
                    .collect()
            };
            assert_eq!(lines(&built), lines(&old), "{built}");
        }
    }

    /// `crates/sonde/tests/it/lab.rs`: one link, two settings, a `[matrix]`; and a failing
    /// command between sonde tests.
    #[test]
    fn lab() {
        const SMALL: &str = r#"
name = "small"
description = "one link, 0 and 20 % random loss"
seed = 11
hosts = ["client", "server"]

[[link]]
name = "wan"
a = "client"
b = "server"

[[settings]]
name = "loss-0"
[[settings.link]]
link = "wan"
[settings.link.impair]
rate = "100mbit"

[[settings]]
name = "loss-20"
[[settings.link]]
link = "wan"
[settings.link.impair]
rate = "100mbit"
loss = "20%"

[[test]]
name = "tcp"
sonde = ["client", "{server}", "-t", "2"]

[[test]]
name = "udp"
sonde = ["client", "{server}", "-u", "-b", "10m", "-t", "2"]

[matrix]
repetitions = 1
"#;
        const FAILING: &str = r#"
name = "failing"
seed = 12
hosts = ["client", "server"]

[[link]]
name = "wan"
a = "client"
b = "server"

[[settings]]
name = "clean"

[[test]]
name = "broken"
command = ["sh", "-c", "echo 'no such peer {server}' >&2; exit 7"]

[[test]]
name = "tcp"
sonde = ["client", "{server}", "-t", "1"]
"#;
        let two = || chain().host("client").link("wan").host("server");
        let small = two()
            .name("small")
            .description("one link, 0 and 20 % random loss")
            .seed(11)
            .settings("loss-0")
            .impair("wan", "rate = \"100mbit\"")
            .settings("loss-20")
            .impair("wan", "rate = \"100mbit\"\nloss = \"20%\"")
            .sonde("tcp", &["client", "{server}", "-t", "2"])
            .sonde("udp", &["client", "{server}", "-u", "-b", "10m", "-t", "2"])
            .matrix("repetitions = 1");
        same(&small.to_toml(), SMALL);
        let failing = two()
            .name("failing")
            .seed(12)
            .settings("clean")
            .command(
                "broken",
                &["sh", "-c", "echo 'no such peer {server}' >&2; exit 7"],
            )
            .sonde("tcp", &["client", "{server}", "-t", "1"]);
        same(&failing.to_toml(), FAILING);
    }

    #[test]
    fn strings_are_quoted_as_toml_reads_them() {
        assert_eq!(quote(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(quote("x\ny\u{1b}"), r#""x\ny\u001B""#);
    }

    #[test]
    #[should_panic(expected = "has no node after it")]
    fn a_link_needs_a_node_on_each_side() {
        chain().host("client").link("wan").to_toml();
    }
}
