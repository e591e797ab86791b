//! A peer entry that stands for every address its name resolves to (`every_address = true`),
//! as a fleet listed by its DNS is (a Kubernetes headless Service), in two namespaces of the
//! test's own (root): the agent in one, at 10.203.9.1, a sonde server in the other answering
//! at 10.203.9.2-18 and fd00:203:9::2; the name `fleet` given by the agent's namespace's hosts
//! file, rewritten while the agent runs as a fleet's DNS changes.
//!
//! Checked: each address is a peer of its own (`fleet/ADDRESS`), in both families; the agent's
//! own address among them is never measured and said once; a member that joins is measured
//! from its next round and one that leaves is no longer measured, both said in the log. And
//! the server, listening on all its addresses, answers probes and UDP streams from the
//! address each was sent to (before, from its first address, which the clients dropped).
//!
//! A round of members longer than its period is said once and its overrun skipped and
//! counted. And with the agent's name servers silent (a socket of the test's that takes queries and
//! never answers): a named peer goes on being measured at its last address, a name never
//! answered fails its runs without holding the others', and Ctrl-C or SIGTERM ends a client
//! or the agent at once, where each would have waited out the resolver.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::agent::{runs, stop, wait_for};
use common::{lab_available, sonde_bin, Proc, TempDir};
use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

const PORT: u16 = 5411;

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The two namespaces and the agent's hosts file, removed when dropped (also on failure).
struct Fleet {
    agent_ns: String,
    server_ns: String,
    hosts: PathBuf,
}

impl Fleet {
    /// `tag` tells apart the namespaces of this module's tests, which run side by side.
    fn new(tag: &str) -> Fleet {
        let id = std::process::id();
        let fleet = Fleet {
            agent_ns: format!("sonde-fla{tag}-{id}"),
            server_ns: format!("sonde-fls{tag}-{id}"),
            hosts: PathBuf::from(format!("/etc/netns/sonde-fla{tag}-{id}/hosts")),
        };
        let (a, s) = (&fleet.agent_ns, &fleet.server_ns);
        ip(&["netns", "add", a]);
        ip(&["netns", "add", s]);
        for ns in [a, s] {
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        ip(&[
            "-n", a, "link", "add", "fa", "type", "veth", "peer", "name", "fs",
        ]);
        ip(&["-n", a, "link", "set", "fs", "netns", s]);
        ip(&["-n", a, "addr", "add", "10.203.9.1/24", "dev", "fa"]);
        ip(&[
            "-n",
            a,
            "addr",
            "add",
            "fd00:203:9::1/64",
            "dev",
            "fa",
            "nodad",
        ]);
        for host in 2..=18 {
            ip(&[
                "-n",
                s,
                "addr",
                "add",
                &format!("10.203.9.{host}/24"),
                "dev",
                "fs",
            ]);
        }
        ip(&[
            "-n",
            s,
            "addr",
            "add",
            "fd00:203:9::2/64",
            "dev",
            "fs",
            "nodad",
        ]);
        ip(&["-n", a, "link", "set", "fa", "up"]);
        ip(&["-n", s, "link", "set", "fs", "up"]);
        std::fs::create_dir_all(fleet.hosts.parent().unwrap()).unwrap();
        fleet
    }

    /// The name `fleet` as the agent's namespace resolves it: these addresses. Written in
    /// place, as the agent's view of /etc/hosts is this very file.
    fn set_members(&self, addrs: &[&str]) {
        let entries: Vec<(&str, &str)> = addrs.iter().map(|a| (*a, "fleet")).collect();
        self.set_hosts(&entries);
    }

    /// The agent's namespace's hosts file: these (address, name) entries and localhost.
    fn set_hosts(&self, entries: &[(&str, &str)]) {
        let mut text = String::from("127.0.0.1 localhost\n");
        for (a, name) in entries {
            text.push_str(&format!("{a} {name}\n"));
        }
        std::fs::write(&self.hosts, text).unwrap();
    }

    /// Names not in the hosts file go to a name server in the agent's namespace that takes
    /// every query and never answers (the socket returned), and the resolver waits 30 s for
    /// it: a cluster's DNS gone silent.
    fn silent_name_server(&self) -> UdpSocket {
        let dir = self.hosts.parent().unwrap();
        std::fs::write(
            dir.join("resolv.conf"),
            "nameserver 127.0.0.53\noptions timeout:30 attempts:1\n",
        )
        .unwrap();
        sonde_lab::netns::run_in(&self.agent_ns, || UdpSocket::bind("127.0.0.53:53"))
            .unwrap()
            .unwrap()
    }

    /// A sonde server in the server's namespace, and in the agent's an agent probing the
    /// `[[peer]]` entries `peers` every second; the agent's database, the server, the agent.
    fn start(&self, dir: &TempDir, peers: &str) -> (PathBuf, Proc, Proc) {
        self.start_probing(dir, 3, peers)
    }

    /// [`Fleet::start`] with `probes` probes 20 ms apart a run.
    fn start_probing(&self, dir: &TempDir, probes: u32, peers: &str) -> (PathBuf, Proc, Proc) {
        let db = dir.file("agent.db");
        let cfg = dir.file("agent.toml");
        std::fs::write(
            &cfg,
            format!(
                "listen_port = {PORT}\nstore = {db:?}\njitter = 0.05\n\n[latency]\nevery_secs = 1\nprobes = {probes}\nprobe_interval_ms = 20\n\n{peers}"
            ),
        )
        .unwrap();
        let port = PORT.to_string();
        let server = Fleet::spawn_in(&self.server_ns, &["server", "-p", &port]);
        let agent = Fleet::spawn_in(
            &self.agent_ns,
            &["agent", "--config", cfg.to_str().unwrap()],
        );
        (db, server, agent)
    }

    fn spawn_in(ns: &str, args: &[&str]) -> Proc {
        let mut all = vec!["netns", "exec", ns, sonde_bin()];
        all.extend_from_slice(args);
        Proc::spawn_program("ip", &all)
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for ns in [&self.agent_ns, &self.server_ns] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
        if let Some(dir) = self.hosts.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[test]
fn every_address_of_a_name_is_a_peer_and_the_fleet_is_followed_as_it_changes() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let fleet = Fleet::new("1");
    fleet.set_members(&["10.203.9.1", "10.203.9.2", "10.203.9.3", "fd00:203:9::2"]);
    let dir = TempDir::new("agent-fleet");
    let (db, server, agent) = fleet.start(
        &dir,
        &format!(
            "[[peer]]\nname = \"fleet\"\nhost = \"fleet\"\nport = {PORT}\nevery_address = true\n"
        ),
    );
    let port = PORT.to_string();
    let first = [
        "fleet/10.203.9.2",
        "fleet/10.203.9.3",
        "fleet/fd00:203:9::2",
    ];
    wait_for(
        "two good runs to each member but the agent",
        20,
        || first.iter().all(|p| runs(&db, p).1 >= 2),
        &[&agent, &server],
    );

    // The fleet changes: .3 leaves, .4 joins.
    fleet.set_members(&["10.203.9.1", "10.203.9.2", "10.203.9.4", "fd00:203:9::2"]);
    wait_for(
        "the change in the agent's log",
        10,
        || {
            agent
                .stderr_so_far()
                .contains("peer fleet: 4 addresses (new 10.203.9.4; gone 10.203.9.3)")
        },
        &[&agent],
    );
    let left_with = runs(&db, "fleet/10.203.9.3").0;
    wait_for(
        "two good runs to the member that joined",
        10,
        || runs(&db, "fleet/10.203.9.4").1 >= 2,
        &[&agent],
    );
    // A run to .3 may have been under way when the log said it left (one round measures
    // the members it found, one after another); none began after that round.
    let after = runs(&db, "fleet/10.203.9.3").0;
    assert!(
        after <= left_with + 1,
        "{after} runs to the member that left, {left_with} when it left"
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        runs(&db, "fleet/10.203.9.3").0,
        after,
        "runs to a member that left"
    );

    // A UDP test to the server's third address: its stream answers from that address too
    // (the client's socket is connected to it and takes nothing from another).
    let udp = Fleet::spawn_in(
        &fleet.agent_ns,
        &[
            "client",
            "10.203.9.3",
            "-p",
            &port,
            "-u",
            "-b",
            "10m",
            "-t",
            "1",
            "-J",
        ],
    )
    .wait(Duration::from_secs(20));
    assert_eq!(udp.code(), Some(0), "{}", udp.describe());
    let doc: serde_json::Value = serde_json::from_str(&udp.stdout).unwrap();
    assert!(
        doc["end"]["sum"]["packets"].as_u64().unwrap_or(0) > 100,
        "{}",
        udp.stdout
    );

    let out = stop(agent);
    server.signal(libc::SIGTERM);
    let _ = server.wait(Duration::from_secs(10));
    assert_eq!(
        runs(&db, "fleet/10.203.9.1").0,
        0,
        "the agent measured itself"
    );
    let said =
        format!("peer fleet/10.203.9.1 (10.203.9.1:{PORT}) is this agent itself: not measured");
    assert_eq!(out.stderr.matches(&said).count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "peer fleet: 4 addresses (10.203.9.1, 10.203.9.2, 10.203.9.3, fd00:203:9::2)"
        ),
        "{}",
        out.stderr
    );
    // A round of three members' 60 ms of probing fits its second: no warning.
    assert!(!out.stderr.contains("a round, more than"), "{}", out.stderr);
    // Both families, each member under its own label; every run to a member ended ok.
    for p in [
        "fleet/10.203.9.2",
        "fleet/10.203.9.4",
        "fleet/fd00:203:9::2",
    ] {
        let (all, ok) = runs(&db, p);
        assert!(all >= 2 && ok + 1 >= all, "{p}: {ok} of {all} runs ok");
    }
}

#[test]
fn silent_name_servers_hold_neither_the_schedule_nor_a_stop() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let fleet = Fleet::new("2");
    fleet.set_hosts(&[("10.203.9.2", "server-b")]);
    let _dns = fleet.silent_name_server();
    let dir = TempDir::new("agent-dns");
    let peers: String = ["server-b", "10.203.9.3", "nowhere.sonde.test"]
        .iter()
        .map(|h| format!("[[peer]]\nhost = \"{h}\"\nport = {PORT}\n\n"))
        .collect();
    let (db, server, agent) = fleet.start(&dir, &peers);
    let port = PORT.to_string();
    // The name the servers never answer costs its own runs, not the others': two good runs
    // each to the named peer and the address within a few rounds.
    wait_for(
        "two good runs each to server-b and 10.203.9.3",
        15,
        || runs(&db, "server-b").1 >= 2 && runs(&db, "10.203.9.3").1 >= 2,
        &[&agent, &server],
    );

    // server-b leaves the hosts file: its name now goes to the silent server, and its last
    // address is measured.
    fleet.set_hosts(&[]);
    wait_for(
        "the fallback to server-b's last address in the log",
        10,
        || {
            agent.stderr_so_far().contains(
                "the name servers do not answer for server-b: measuring its last known address 10.203.9.2",
            )
        },
        &[&agent],
    );
    let (_, ok_then) = runs(&db, "server-b");
    let (_, other_then) = runs(&db, "10.203.9.3");
    wait_for(
        "three more good runs each to server-b (by its last address) and 10.203.9.3",
        15,
        || runs(&db, "server-b").1 >= ok_then + 3 && runs(&db, "10.203.9.3").1 >= other_then + 3,
        &[&agent],
    );

    // A client asked for a name the servers do not answer: Ctrl-C ends its wait at once.
    let client = Fleet::spawn_in(
        &fleet.agent_ns,
        &["client", "nowhere.sonde.test", "-p", &port, "-t", "1"],
    );
    std::thread::sleep(Duration::from_millis(700));
    let asked = Instant::now();
    client.signal(libc::SIGINT);
    let out = client.wait(Duration::from_secs(10));
    let took = asked.elapsed();
    assert_eq!(out.code(), Some(1), "{}", out.describe());
    assert!(out.stderr.contains("interrupted"), "{}", out.describe());
    assert!(
        took < Duration::from_secs(2),
        "the client took {took:?} to stop"
    );

    let asked = Instant::now();
    let out = stop(agent);
    let took = asked.elapsed();
    server.signal(libc::SIGTERM);
    let _ = server.wait(Duration::from_secs(10));
    assert!(
        took < Duration::from_secs(3),
        "the agent took {took:?} to stop"
    );
    assert_eq!(
        out.stderr
            .matches("the name servers do not answer for server-b")
            .count(),
        1,
        "{}",
        out.stderr
    );
    // The unanswered name's runs failed, saying why, and none was ever ok.
    assert!(
        out.stderr.contains(
            "latency to nowhere.sonde.test failed: cannot resolve host \"nowhere.sonde.test\": the system's name servers gave no answer within 3 s"
        ),
        "{}",
        out.stderr
    );
    let (all, ok) = runs(&db, "nowhere.sonde.test");
    assert!(
        all >= 1 && ok == 0,
        "nowhere.sonde.test: {ok} of {all} runs ok"
    );
    // Every run to the named peer was good, before and through the silence.
    let (all, ok) = runs(&db, "server-b");
    assert!(all >= 5 && ok + 1 >= all, "server-b: {ok} of {all} runs ok");

    // `--check` with the name servers silent: the first name waits as a run would (3 s),
    // the rest are not asked, and the check ends in seconds whatever their number.
    let names = dir.file("names.toml");
    let mut text = format!("listen_port = {PORT}\nstore = \"x.db\"\n[latency]\nevery_secs = 10\n[[peer]]\nname = \"fleet\"\nhost = \"fleet.sonde.test\"\nevery_address = true\n");
    for i in 0..20 {
        text.push_str(&format!("[[peer]]\nhost = \"n{i}.sonde.test\"\n"));
    }
    std::fs::write(&names, text).unwrap();
    let asked = Instant::now();
    let check = Fleet::spawn_in(
        &fleet.agent_ns,
        &["agent", "--config", names.to_str().unwrap(), "--check"],
    )
    .wait(Duration::from_secs(30));
    let took = asked.elapsed();
    assert_eq!(check.code(), Some(0), "{}", check.describe());
    assert!(took < Duration::from_secs(6), "the check took {took:?}");
    assert!(
        check.stdout.contains("fleet.sonde.test does not resolve here now (cannot resolve host \"fleet.sonde.test\": the system's name servers gave no answer within 3 s"),
        "{}",
        check.stdout
    );
    assert_eq!(
        check
            .stdout
            .matches("not asked: the name servers did not answer an earlier name")
            .count(),
        20,
        "{}",
        check.stdout
    );
}

/// A round of members that cannot fit in its period (17 members x 0.5 s of probing, four at a
/// time, every second): said once, with the figures, while the rounds go on and the runs they overrun are
/// skipped and counted, and every member is still measured in turn.
#[test]
fn a_round_longer_than_its_period_is_said_once_and_its_overrun_counted() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let fleet = Fleet::new("3");
    let addrs: Vec<String> = (1..=18).map(|h| format!("10.203.9.{h}")).collect();
    let addrs: Vec<&str> = addrs.iter().map(String::as_str).collect();
    fleet.set_members(&addrs);
    let dir = TempDir::new("agent-round");
    // 25 probes 20 ms apart: half a second a run, five waves of at most four a round.
    let (db, server, agent) = fleet.start_probing(
        &dir,
        25,
        &format!(
            "[[peer]]\nname = \"fleet\"\nhost = \"fleet\"\nport = {PORT}\nevery_address = true\n"
        ),
    );
    let members: Vec<String> = addrs[1..].iter().map(|a| format!("fleet/{a}")).collect();
    wait_for(
        "two good runs to each member",
        20,
        || members.iter().all(|p| runs(&db, p).1 >= 2),
        &[&agent, &server],
    );
    let out = stop(agent);
    server.signal(libc::SIGTERM);
    let _ = server.wait(Duration::from_secs(10));
    let warning = "peer fleet: 17 members x 0.5 s of latency, 4 at a time, = 2.5 s a round, more than its period of 1 s: rounds overrun and the runs due meanwhile are skipped";
    assert_eq!(out.stderr.matches(warning).count(), 1, "{}", out.stderr);
    let last = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("sonde agent: stopped after "))
        .unwrap_or_else(|| panic!("no totals:\n{}", out.stderr));
    let skipped: u64 = last
        .split(", ")
        .nth(1)
        .and_then(|s| s.strip_suffix(" skipped)"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no skipped count in {last:?}"));
    assert!(skipped >= 1, "{last}\n{}", out.stderr);
}
