//! `sonde agent --store postgres://...` against a real PostgreSQL server started by the test:
//! two agents measure each other and copy their runs to one database; PostgreSQL is stopped
//! while they run and started again; every run arrives once, told apart by agent name. Also:
//! an unreachable PostgreSQL at start is not fatal, a malformed URL is; and the retention
//! (`retain_days`) deletes old tests from the local store, with PostgreSQL only those it
//! holds, so an outage longer than the retention loses nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::agent::{http_get, sample, wait_for};
use common::postgres::{pg_available, Postgres};
use common::{free_port, run, Proc, TempDir};
use sonde_store::{RunStatus, Store};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// An agent `name` on `port` measuring `peer_port` every second, copying to `url` every second.
fn config(dir: &TempDir, name: &str, port: u16, peer_port: u16, url: &str) -> String {
    let text = format!(
        "name = \"{name}\"\nlisten_port = {port}\nstore = {:?}\nstore_url = \"{url}\"\nsync_every_secs = 1\njitter = 0.1\n\n[latency]\nevery_secs = 1\nprobes = 3\nprobe_interval_ms = 20\n\n[[peer]]\nname = \"peer\"\nhost = \"127.0.0.1\"\nport = {peer_port}\n",
        dir.file(&format!("{name}.db"))
    );
    let path = dir.file(&format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// The matrix ids of every test of `store`'s runs named `agent:NAME`, and those runs' statuses.
fn tests_of(store: &Store, name: &str) -> (Vec<String>, Vec<RunStatus>) {
    let mut ids = Vec::new();
    let mut statuses = Vec::new();
    for r in store.runs().unwrap() {
        if r.scenario_name != format!("agent:{name}") {
            continue;
        }
        let run = store.load_run(r.id).unwrap();
        statuses.push(run.run.status);
        ids.extend(run.tests.into_iter().map(|t| t.matrix_id));
    }
    (ids, statuses)
}

fn remote_count(url: &str, name: &str) -> usize {
    Store::open_read_only(url)
        .map(|s| tests_of(&s, name).0.len())
        .unwrap_or(0)
}

fn local_count(db: &Path) -> usize {
    Store::open_read_only(db)
        .map(|s| s.test_counts().unwrap().iter().map(|c| c.1 as usize).sum())
        .unwrap_or(0)
}

/// How long ago the oldest test in the local store `db` ended, seconds (None when empty).
fn oldest_age(db: &Path) -> Option<f64> {
    let store = Store::open_read_only(db).ok()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    store
        .runs()
        .ok()?
        .iter()
        .filter_map(|r| store.load_run(r.id).ok())
        .flat_map(|r| r.tests)
        .map(|t| now - t.ended_unix)
        .reduce(f64::max)
}

#[test]
fn agents_copy_to_postgresql_through_an_outage() {
    let _turn = crate::turns::take(module_path!());
    if !pg_available() {
        return;
    }
    let pg = Postgres::start_new();
    let url = pg.url();
    let dir = TempDir::new("agent-pg");
    let (pa, pb, pm) = (free_port(), free_port(), free_port());
    let a = Proc::spawn(&[
        "agent",
        "--config",
        &config(&dir, "a", pa, pb, &url),
        "--metrics",
        &format!("127.0.0.1:{pm}"),
    ]);
    let b = Proc::spawn(&["agent", "--config", &config(&dir, "b", pb, pa, &url)]);
    wait_for(
        "both agents' runs in PostgreSQL",
        15,
        || remote_count(&url, "a") >= 2 && remote_count(&url, "b") >= 2,
        &[&a, &b],
    );

    // PostgreSQL goes away: the agents go on measuring into their local stores.
    pg.stop();
    let db_a = dir.file("a.db");
    let before = local_count(&db_a);
    wait_for(
        "runs of a recorded while PostgreSQL is down",
        15,
        || local_count(&db_a) >= before + 3,
        &[&a],
    );
    let (_, text) = http_get(pm, "/metrics").expect("metrics endpoint answers");
    assert!(
        sample(&text, "sonde_store_sync_failures_total").unwrap_or(0.0) >= 2.0,
        "{text}"
    );
    assert!(
        sample(&text, "sonde_store_unsynced_tests").unwrap_or(0.0) >= 1.0,
        "{text}"
    );

    // Back: everything buffered arrives.
    pg.start();
    wait_for(
        "a's copy after PostgreSQL is back",
        15,
        || a.stderr_so_far().contains("is back after"),
        &[&a],
    );
    for p in [a, b] {
        p.signal(libc::SIGTERM);
        let out = p.wait(Duration::from_secs(15));
        assert_eq!(out.code(), Some(0), "{}", out.describe());
        // One line for the outage, not one per failed attempt.
        assert_eq!(
            out.stderr
                .matches("cannot copy results to PostgreSQL")
                .count(),
            1,
            "{}",
            out.describe()
        );
    }
    let remote = Store::open_read_only(&url).unwrap();
    for name in ["a", "b"] {
        let local = Store::open_read_only(dir.file(&format!("{name}.db"))).unwrap();
        let (local_ids, _) = tests_of(&local, name);
        let (remote_ids, statuses) = tests_of(&remote, name);
        assert_eq!(statuses, vec![RunStatus::Completed], "agent {name}");
        assert_eq!(remote_ids.len(), local_ids.len(), "agent {name}: all, once");
        let set: BTreeSet<_> = remote_ids.iter().collect();
        assert_eq!(set.len(), remote_ids.len(), "agent {name}: none twice");
        assert_eq!(
            set,
            local_ids.iter().collect::<BTreeSet<_>>(),
            "agent {name}"
        );
    }
}

#[test]
fn an_unreachable_postgresql_is_logged_not_fatal_and_a_bad_url_is() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("agent-pg-away");
    let (pa, away) = (free_port(), free_port());
    // Nothing listens on `away`.
    let url = format!("postgres://sonde@127.0.0.1:{away}/postgres?connect_timeout=2");
    let cfg = config(&dir, "lonely", pa, pa, &url);
    let agent = Proc::spawn(&["agent", "--config", &cfg]);
    let db = dir.file("lonely.db");
    wait_for(
        "runs recorded locally with PostgreSQL away",
        15,
        || local_count(&db) >= 2,
        &[&agent],
    );
    agent.signal(libc::SIGTERM);
    let out = agent.wait(Duration::from_secs(15));
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(
        out.stderr.contains("cannot copy results to PostgreSQL")
            && out.stderr.contains(&format!("127.0.0.1:{away}"))
            && out.stderr.contains("copied by the agent's next start"),
        "{}",
        out.describe()
    );

    let bad = run(
        &["agent", "--config", &cfg, "--store", "postgres://h:port/db"],
        Duration::from_secs(10),
    );
    assert_eq!(bad.code(), Some(2), "{}", bad.describe());
    assert!(bad.stderr.contains("--store"), "{}", bad.describe());
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace(&url, "postgres://sonde@[::1/x");
    std::fs::write(&cfg, text).unwrap();
    let bad = run(&["agent", "--config", &cfg], Duration::from_secs(10));
    assert_eq!(bad.code(), Some(2), "{}", bad.describe());
    assert!(bad.stderr.contains("store_url"), "{}", bad.describe());
}

/// The sequence numbers of `store`'s tests of agent `name` (`PEER/latency/SEQ`), sorted.
fn seqs(store: &Store, name: &str) -> Vec<u64> {
    let mut v: Vec<u64> = tests_of(store, name)
        .0
        .iter()
        .filter_map(|id| id.rsplit('/').next()?.parse().ok())
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn retention_deletes_old_tests_and_with_postgresql_only_those_it_holds() {
    let _turn = crate::turns::take(module_path!());
    if !pg_available() {
        return;
    }
    let pg = Postgres::start_new();
    let url = pg.url();
    let dir = TempDir::new("agent-retain");
    let (pk, pl, pm) = (free_port(), free_port(), free_port());
    // 0.0001 days = 8.64 s, pruned every second. `kept` copies to PostgreSQL; `lone` has no
    // PostgreSQL and measures `kept`'s server.
    let retain = "retain_days = 0.0001\n";
    let kept_cfg = config(&dir, "kept", pk, pk, &url);
    let text = std::fs::read_to_string(&kept_cfg).unwrap();
    std::fs::write(&kept_cfg, format!("{retain}{text}")).unwrap();
    let lone_cfg = dir.file("lone.toml");
    std::fs::write(
        &lone_cfg,
        format!(
            "{retain}name = \"lone\"\nlisten_port = {pl}\nstore = {:?}\njitter = 0.1\n\n[latency]\nevery_secs = 1\nprobes = 3\nprobe_interval_ms = 20\n\n[[peer]]\nname = \"peer\"\nhost = \"127.0.0.1\"\nport = {pk}\n",
            dir.file("lone.db")
        ),
    )
    .unwrap();
    let kept = Proc::spawn(&[
        "agent",
        "--config",
        &kept_cfg,
        "--metrics",
        &format!("127.0.0.1:{pm}"),
    ]);
    let lone = Proc::spawn(&["agent", "--config", lone_cfg.to_str().unwrap()]);
    wait_for(
        "kept's first runs in PostgreSQL",
        15,
        || remote_count(&url, "kept") >= 2,
        &[&kept, &lone],
    );

    // An outage longer than the retention: nothing recorded meanwhile may be deleted.
    pg.stop();
    let db = dir.file("kept.db");
    let down = std::time::Instant::now();
    std::thread::sleep(Duration::from_secs(12));
    let held = local_count(&db);
    let (_, text) = http_get(pm, "/metrics").expect("metrics endpoint answers");
    let unsynced = sample(&text, "sonde_store_unsynced_tests").unwrap_or(0.0);
    assert!(
        unsynced >= 8.0 && held as f64 >= unsynced,
        "{held} tests held, {unsynced} not copied, after {:?} down:\n{text}",
        down.elapsed()
    );

    // What the outage recorded is held past the retention (0.0001 days, 8.64 s).
    let retention = 8.64;
    assert!(
        oldest_age(&db).is_some_and(|a| a > retention + 2.0),
        "the outage's tests were not held: oldest {:?} s",
        oldest_age(&db)
    );

    // Back: everything is copied, then what is old goes.
    pg.start();
    wait_for(
        "the copy after PostgreSQL is back",
        15,
        || kept.stderr_so_far().contains("is back after"),
        &[&kept],
    );
    // Once copied, the old tests go (pruning runs every second) and only younger ones stay.
    // (A count would depend on how long the restart took: a test more each second, and a
    // test fewer.)
    wait_for(
        "old tests deleted once copied",
        15,
        || oldest_age(&db).is_some_and(|a| a <= retention + 2.0),
        &[&kept],
    );
    let (_, text) = http_get(pm, "/metrics").unwrap();
    assert!(
        sample(&text, "sonde_store_pruned_tests_total").unwrap_or(0.0) >= 4.0,
        "{text}"
    );
    let out = {
        kept.signal(libc::SIGTERM);
        kept.wait(Duration::from_secs(15))
    };
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(out.stderr.contains("deleted "), "{}", out.describe());
    lone.signal(libc::SIGTERM);
    let lone_out = lone.wait(Duration::from_secs(15));
    assert_eq!(lone_out.code(), Some(0), "{}", lone_out.describe());

    // PostgreSQL holds every run of `kept`, none missing: 0, 1, ... N.
    let remote = seqs(&Store::open_read_only(&url).unwrap(), "kept");
    let n = remote.len() as u64;
    assert!(n >= 15, "{remote:?}");
    assert_eq!(remote, (0..n).collect::<Vec<_>>(), "a run is missing");
    // The local store keeps only the newest of them, about a retention's worth.
    let local = seqs(&Store::open_read_only(&db).unwrap(), "kept");
    assert_eq!(local.last(), remote.last(), "the newest is kept");
    assert!(local.len() <= 14 && local[0] > 0, "{local:?}");
    // Without PostgreSQL the retention goes by age alone.
    let lone_seqs = seqs(&Store::open_read_only(dir.file("lone.db")).unwrap(), "lone");
    eprintln!(
        "held {held} ({unsynced} not copied) in the outage; PostgreSQL 0..{n}; kept locally {local:?}; lone kept {lone_seqs:?}"
    );
    assert!(
        lone_seqs.len() <= 14 && lone_seqs[0] > 0,
        "{lone_seqs:?}\n{}",
        lone_out.describe()
    );
}
