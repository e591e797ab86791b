//! `sonde agent` reads its configuration again on SIGHUP (`systemctl reload`), over loopback:
//! a peer list changed while the agent runs is measured from then on, the peer that went is
//! no longer measured and its series leave `/metrics`, a setting that needs a start is named
//! in the log, a file that cannot be used changes nothing, and a peer brought back is
//! recorded again.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::agent::{http_get, latest_tests, runs, sample, stop, wait_for};
use common::{free_port, Proc, TempDir};
use std::path::Path;
use std::time::Duration;

/// The (name in the store, start time) of each result of `peer` in `db`'s latest run.
fn ids(db: &Path, peer: &str) -> Vec<(String, u64)> {
    latest_tests(db)
        .iter()
        .filter(|t| t.settings == peer)
        .map(|t| (t.matrix_id.clone(), (t.started_unix * 1e6) as u64))
        .collect()
}

/// The configuration: the agent on `listen`, probing each (name, port) on 127.0.0.1 every
/// second.
fn config(db: &Path, listen: u16, peers: &[(&str, u16)]) -> String {
    let mut text = format!(
        "listen_port = {listen}\nstore = {db:?}\njitter = 0.1\n\n[latency]\nevery_secs = 1\nprobes = 3\nprobe_interval_ms = 20\n"
    );
    for (name, port) in peers {
        text.push_str(&format!(
            "\n[[peer]]\nname = \"{name}\"\nhost = \"127.0.0.1\"\nport = {port}\n"
        ));
    }
    text
}

#[test]
fn sighup_reloads_the_peers_and_keeps_the_rest_until_the_next_start() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("agent-reload");
    let db = dir.file("agent.db");
    let file = dir.file("agent.toml");
    let (listen, other, pm) = (free_port(), free_port(), free_port());
    let server = Proc::spawn(&["server", "-p", &other.to_string()]);
    std::fs::write(&file, config(&db, listen, &[("x", other)])).unwrap();
    let metrics = format!("127.0.0.1:{pm}");
    let agent = Proc::spawn(&[
        "agent",
        "--config",
        file.to_str().unwrap(),
        "--metrics",
        &metrics,
    ]);
    wait_for(
        "two good runs to x",
        20,
        || runs(&db, "x").1 >= 2,
        &[&agent, &server],
    );

    // x goes, the agent's own server comes (a loopback address is measured as asked), and
    // the port changes, which a reload cannot do.
    std::fs::write(&file, config(&db, listen + 1, &[("own", listen)])).unwrap();
    agent.signal(libc::SIGHUP);
    wait_for(
        "the reload in the log",
        5,
        || {
            agent.stderr_so_far().contains(
                "configuration reloaded: 1 peers; new own; gone x; listen_port changed, which takes effect at the next start",
            )
        },
        &[&agent],
    );
    let x_then = runs(&db, "x").0;
    wait_for(
        "two good runs to the new peer",
        15,
        || runs(&db, "own").1 >= 2,
        &[&agent],
    );
    // A run to x may have been under way when the signal came; none began after.
    assert!(runs(&db, "x").0 <= x_then + 1, "runs to x after the reload");
    let (_, text) = http_get(pm, "/metrics").unwrap();
    assert!(!text.contains("peer=\"x\""), "x's series stayed:\n{text}");
    assert_eq!(
        sample(&text, "sonde_config_reloads_total{result=\"ok\"}"),
        Some(1.0)
    );
    assert_eq!(
        sample(&text, "sonde_config_last_reload_successful"),
        Some(1.0)
    );
    assert!(
        text.contains(
            "sonde_tests_total{peer=\"own\",family=\"ipv4\",test=\"latency\",result=\"ok\"}"
        ),
        "{text}"
    );
    // The status page's model follows: x gone, own there, the reload counted.
    let status = |pm: u16| -> serde_json::Value {
        serde_json::from_str(&http_get(pm, "/api/status").unwrap().1).unwrap()
    };
    let doc = status(pm);
    let labels: Vec<_> = doc["peers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].clone())
        .collect();
    assert_eq!(labels, ["own"], "{doc}");
    assert_eq!(doc["agent"]["reloads"]["ok"], 1, "{doc}");
    // Still serving on the port it started with.
    let probe = common::run(
        &[
            "latency",
            "127.0.0.1",
            "-p",
            &listen.to_string(),
            "-c",
            "2",
            "-i",
            "0.02",
        ],
        Duration::from_secs(10),
    );
    assert_eq!(probe.code(), Some(0), "{}", probe.describe());

    // A file that is not a configuration changes nothing.
    std::fs::write(&file, "listen_port = \"no\"\n").unwrap();
    agent.signal(libc::SIGHUP);
    wait_for(
        "the refusal in the log",
        5,
        || {
            agent
                .stderr_so_far()
                .contains("configuration not reloaded: ")
        },
        &[&agent],
    );
    let (_, text) = http_get(pm, "/metrics").unwrap();
    assert_eq!(
        sample(&text, "sonde_config_reloads_total{result=\"failed\"}"),
        Some(1.0)
    );
    assert_eq!(
        sample(&text, "sonde_config_last_reload_successful"),
        Some(0.0)
    );
    assert_eq!(status(pm)["agent"]["reloads"]["last_ok"], false);
    let own_then = runs(&db, "own").1;
    wait_for(
        "two more good runs to the peer the agent had",
        10,
        || runs(&db, "own").1 >= own_then + 2,
        &[&agent],
    );

    // x comes back: its results are numbered on from its earlier ones (each result's name in
    // the store is unique in the run), and recorded.
    std::fs::write(&file, config(&db, listen, &[("own", listen), ("x", other)])).unwrap();
    agent.signal(libc::SIGHUP);
    let x_before = ids(&db, "x");
    wait_for(
        "two more runs to x, back",
        15,
        || ids(&db, "x").len() >= x_before.len() + 2,
        &[&agent],
    );
    let (_, text) = http_get(pm, "/metrics").unwrap();
    assert_eq!(
        sample(&text, "sonde_config_reloads_total{result=\"ok\"}"),
        Some(2.0)
    );
    assert_eq!(
        sample(&text, "sonde_config_last_reload_successful"),
        Some(1.0)
    );
    let out = stop(agent);
    assert!(!out.stderr.contains("cannot record"), "{}", out.stderr);
    assert!(!out.stderr.contains("cannot list"), "{}", out.stderr);
    // The run lists every peer it measured, the one the first reload brought included.
    let store = sonde_store::Store::open_read_only(&db).unwrap();
    let run = store
        .load_run(store.latest_run().unwrap().unwrap())
        .unwrap();
    let listed: Vec<&str> = run.settings.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(listed, ["x", "own"]);
    // Every earlier result of x is still there, none written over.
    let x_after = ids(&db, "x");
    assert!(
        x_before.iter().all(|b| x_after.contains(b)),
        "{x_before:?} became {x_after:?}"
    );
    assert_eq!(runs(&db, "x").0, x_after.len());
    server.signal(libc::SIGTERM);
    let _ = server.wait(Duration::from_secs(10));
    let refusal = out
        .stderr
        .lines()
        .find(|l| l.contains("configuration not reloaded"))
        .unwrap();
    assert!(
        refusal.contains(file.to_str().unwrap())
            && refusal.ends_with("going on with the one running"),
        "{refusal}"
    );
}
