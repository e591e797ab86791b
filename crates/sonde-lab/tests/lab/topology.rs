//! Build and teardown: a 3-node chain answers ping both ways over IPv4 and IPv6, and no
//! namespace is left behind, after success, a failed build, a panic, or a "kill -9".

use sonde_lab::{netns, Lab, LabError};

use crate::util::{self, Cleanup};

#[test]
fn three_node_chain_pings_and_tears_down() {
    let _serial = util::serial();
    if !util::lab_and_ping_available("three_node_chain_pings_and_tears_down") {
        return;
    }
    let prefix = util::prefix("chain");
    let _cleanup = Cleanup(prefix.clone());
    let s = util::chain3(r#"loss = "0%""#);
    let lab = util::build(&s, None, util::opts(&prefix));
    assert_eq!(util::leftovers(&prefix).len(), 3);
    let server = lab.node("server").unwrap_or_else(|e| panic!("{e}")).ifaces[0].clone();
    let client = lab.node("client").unwrap_or_else(|e| panic!("{e}")).ifaces[0].clone();
    for (from, to) in [
        ("client", server.ipv4.to_string()),
        ("client", server.ipv6.to_string()),
        ("server", client.ipv4.to_string()),
        ("server", client.ipv6.to_string()),
    ] {
        let rtt = util::ping_avg_ms(&lab, from, &["-c", "2", "-i", "0.05", "-W", "2", &to]);
        assert!(rtt < 5.0, "{from} -> {to}: rtt {rtt} ms");
    }
    let before = lab.counters("client").unwrap_or_else(|e| panic!("{e}"));
    let wan = before.iter().find(|c| c.name == "s-lan");
    assert!(
        wan.is_some_and(|c| c.tx_packets >= 4 && c.rx_packets >= 4),
        "{before:?}"
    );
    let report = lab.finish();
    assert!(
        report.teardown_errors.is_empty(),
        "{:?}",
        report.teardown_errors
    );
    assert_eq!(util::leftovers(&prefix), Vec::<String>::new());
}

#[test]
fn a_failed_build_removes_only_what_it_made() {
    let _serial = util::serial();
    if !util::lab_available("a_failed_build_removes_only_what_it_made") {
        return;
    }
    let prefix = util::prefix("fail");
    let _cleanup = Cleanup(prefix.clone());
    // A namespace the lab did not make, in the middle of its build order.
    let squatter = format!("{prefix}-server");
    let made = std::process::Command::new("ip")
        .args(["netns", "add", &squatter])
        .status();
    assert!(made.is_ok_and(|s| s.success()));
    let s = util::chain3(r#"loss = "5%""#);
    match Lab::build(&s, Some("s"), util::opts(&prefix)) {
        Err(LabError::NamespaceExists(name)) => assert_eq!(name, squatter),
        other => panic!("expected NamespaceExists, got {other:?}"),
    }
    assert_eq!(util::leftovers(&prefix), vec![squatter.clone()]);
    let removed = std::process::Command::new("ip")
        .args(["netns", "del", &squatter])
        .status();
    assert!(removed.is_ok_and(|s| s.success()));
}

#[test]
fn a_panicking_test_leaves_nothing_behind() {
    let _serial = util::serial();
    if !util::lab_available("a_panicking_test_leaves_nothing_behind") {
        return;
    }
    let prefix = util::prefix("panic");
    let _cleanup = Cleanup(prefix.clone());
    let p = prefix.clone();
    let outcome = std::thread::spawn(move || {
        let s = util::chain3(r#"loss = "5%""#);
        let _lab = util::build(&s, Some("s"), util::opts(&p));
        assert_eq!(util::leftovers(&p).len(), 4, "3 nodes and the wan box");
        panic!("failing on purpose with a lab up");
    })
    .join();
    assert!(outcome.is_err());
    assert_eq!(util::leftovers(&prefix), Vec::<String>::new());
}

#[test]
fn clean_removes_leftovers_of_a_killed_lab() {
    let _serial = util::serial();
    if !util::lab_available("clean_removes_leftovers_of_a_killed_lab") {
        return;
    }
    let prefix = util::prefix("kill");
    let _cleanup = Cleanup(prefix.clone());
    let s = util::chain3(r#"loss = "0%""#);
    // Forgetting the lab skips its teardown, as kill -9 would.
    std::mem::forget(util::build(&s, None, util::opts(&prefix)));
    assert_eq!(util::leftovers(&prefix).len(), 3);
    assert!(matches!(
        sonde_lab::clean_leftovers("other-"),
        Err(LabError::BadPrefix(_))
    ));
    let cleaned = sonde_lab::clean_leftovers(&prefix).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cleaned.namespaces.len(), 3);
    assert!(netns::list().is_ok_and(|l| !l.iter().any(|n| n.starts_with(&prefix))));
}

/// `/etc/netns` entries whose name starts with `prefix`.
fn etc_leftovers(prefix: &str) -> Vec<String> {
    std::fs::read_dir("/etc/netns")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(prefix))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_hosts_file_names_the_nodes_inside_and_goes_with_the_lab() {
    let _serial = util::serial();
    if !util::lab_and_ping_available("a_hosts_file_names_the_nodes_inside_and_goes_with_the_lab") {
        return;
    }
    let prefix = util::prefix("hosts");
    let _cleanup = Cleanup(prefix.clone());
    let s = util::chain3(r#"loss = "0%""#);
    let lab = util::build(&s, None, util::opts(&prefix));
    let server = lab.node("server").unwrap_or_else(|e| panic!("{e}")).ifaces[0].clone();
    let hosts = format!(
        "127.0.0.1 localhost\n{} far-end\n{} far-end\n",
        server.ipv4, server.ipv6
    );
    lab.set_hosts(&hosts).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(etc_leftovers(&prefix).len(), 3, "one per namespace");
    // The system resolver inside a node finds both addresses of the name, and ping reaches
    // the server by it over each family.
    let out = lab
        .command("client", "getent", &["ahosts", "far-end"])
        .unwrap_or_else(|e| panic!("{e}"))
        .output()
        .unwrap_or_else(|e| panic!("getent: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&server.ipv4.to_string()) && text.contains(&server.ipv6.to_string()),
        "{text}"
    );
    for fam in ["-4", "-6"] {
        let rtt = util::ping_avg_ms(&lab, "client", &[fam, "-c", "1", "-W", "2", "far-end"]);
        assert!(rtt < 5.0, "ping {fam} far-end: rtt {rtt} ms");
    }
    let report = lab.finish();
    assert!(
        report.teardown_errors.is_empty(),
        "{:?}",
        report.teardown_errors
    );
    assert_eq!(etc_leftovers(&prefix), Vec::<String>::new());

    // After a kill -9: `clean` removes the namespaces with their files, and a file whose
    // namespace is gone already.
    let lab = util::build(&s, None, util::opts(&prefix));
    lab.set_hosts(&hosts).unwrap_or_else(|e| panic!("{e}"));
    std::mem::forget(lab);
    let stale = format!("{prefix}-gone");
    std::fs::create_dir_all(format!("/etc/netns/{stale}")).unwrap_or_else(|e| panic!("{e}"));
    let cleaned = sonde_lab::clean_leftovers(&prefix).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cleaned.namespaces.len(), 3);
    assert_eq!(cleaned.files, [format!("/etc/netns/{stale}")]);
    assert_eq!(etc_leftovers(&prefix), Vec::<String>::new());
}
