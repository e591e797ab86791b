//! A peer entry that stands for every address its name resolves to (`every_address = true`),
//! as a fleet listed by its DNS is (a Kubernetes headless Service), in two namespaces of the
//! test's own (root): the agent in one, at 10.203.9.1, a sonde server in the other answering
//! at 10.203.9.2-4 and fd00:203:9::2; the name `fleet` given by the agent's namespace's hosts
//! file, rewritten while the agent runs as a fleet's DNS changes.
//!
//! Checked: each address is a peer of its own (`fleet/ADDRESS`), in both families; the agent's
//! own address among them is never measured and said once; a member that joins is measured
//! from its next round and one that leaves is no longer measured, both said in the log. And
//! the server, listening on all its addresses, answers probes and UDP streams from the
//! address each was sent to (before, from its first address, which the clients dropped).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::agent::{stop, wait_for};
use common::{lab_available, sonde_bin, Proc, TempDir};
use sonde_store::{Store, TestStatus};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

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
    fn new() -> Fleet {
        let id = std::process::id();
        let fleet = Fleet {
            agent_ns: format!("sonde-fla-{id}"),
            server_ns: format!("sonde-fls-{id}"),
            hosts: PathBuf::from(format!("/etc/netns/sonde-fla-{id}/hosts")),
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
        for addr in ["10.203.9.2/24", "10.203.9.3/24", "10.203.9.4/24"] {
            ip(&["-n", s, "addr", "add", addr, "dev", "fs"]);
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
        let mut text = String::from("127.0.0.1 localhost\n");
        for a in addrs {
            text.push_str(&format!("{a} fleet\n"));
        }
        std::fs::write(&self.hosts, text).unwrap();
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

/// How many latency runs of `db`'s latest run went to each label, and how many of them ended
/// ok.
fn runs(db: &Path, peer: &str) -> (usize, usize) {
    let Ok(store) = Store::open_read_only(db) else {
        return (0, 0);
    };
    let Ok(Some(run)) = store.latest_run() else {
        return (0, 0);
    };
    let Ok(run) = store.load_run(run) else {
        return (0, 0);
    };
    let to: Vec<_> = run.tests.iter().filter(|t| t.settings == peer).collect();
    let ok = to.iter().filter(|t| t.status == TestStatus::Ok).count();
    (to.len(), ok)
}

#[test]
fn every_address_of_a_name_is_a_peer_and_the_fleet_is_followed_as_it_changes() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let fleet = Fleet::new();
    fleet.set_members(&["10.203.9.1", "10.203.9.2", "10.203.9.3", "fd00:203:9::2"]);
    let dir = TempDir::new("agent-fleet");
    let db = dir.file("fleet.db");
    let cfg = dir.file("fleet.toml");
    std::fs::write(
        &cfg,
        format!(
            "listen_port = {PORT}\nstore = {db:?}\njitter = 0.05\n\n[latency]\nevery_secs = 1\nprobes = 3\nprobe_interval_ms = 20\n\n[[peer]]\nname = \"fleet\"\nhost = \"fleet\"\nport = {PORT}\nevery_address = true\n"
        ),
    )
    .unwrap();
    let port = PORT.to_string();
    let server = Fleet::spawn_in(&fleet.server_ns, &["server", "-p", &port]);
    let agent = Fleet::spawn_in(
        &fleet.agent_ns,
        &["agent", "--config", cfg.to_str().unwrap()],
    );
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
