//! Issue 38, scenario 4: the link facts. A `sonde client` records, for the interface its test
//! leaves by at each end, the link speed, duplex, auto-negotiation, driver, MTU, offloads and
//! the TCP settings (`start.sonde.link` in `-J`, a block under `-V`); `sonde sweep` takes the
//! link's speed as its ceiling without `--max-rate`, and says which interface had none.
//!
//! Loopback is all this can check: `lo` has no speed, no device and no link settings, so
//! those read as unknown, and the figures that are certain (its MTU, the congestion control
//! default) are compared with what the kernel says in `/sys` and `/proc`. A link with a known
//! speed cannot be made here: a veth pair reports its driver's constant 10 Gbit/s (which the
//! sweep refuses as no link's speed), and this kernel has no other virtual link with a speed.

use crate::common::{run, Server};
use serde_json::Value;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

fn kernel(path: &str) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .trim()
        .to_owned()
}

/// One end's `link` object, checked against what this host's kernel says of `lo` (client and
/// server share the host, so both ends are `lo`).
#[track_caller]
fn is_loopback_as_the_kernel_says(end: &Value, which: &str, doc: &str) {
    assert_eq!(end["interface"], "lo", "{which}\n{doc}");
    let mtu: u64 = kernel("/sys/class/net/lo/mtu").parse().unwrap();
    assert_eq!(end["mtu"].as_u64(), Some(mtu), "{which}\n{doc}");
    let cc = kernel("/proc/sys/net/ipv4/tcp_congestion_control");
    assert_eq!(end["tcp_congestion_control"], cc.as_str(), "{which}\n{doc}");
    let rmem: Vec<u64> = kernel("/proc/sys/net/ipv4/tcp_rmem")
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    assert_eq!(end["tcp_rmem"], serde_json::json!(rmem), "{which}\n{doc}");
    // Loopback: no speed and no link settings (written as unknown), no device behind it.
    assert!(end["speed_bps"].is_null(), "{which}\n{doc}");
    assert!(end["autoneg"].is_null(), "{which}\n{doc}");
    assert_eq!(end["driver"], "none (virtual)", "{which}\n{doc}");
    for offload in ["gso", "gro", "tso"] {
        assert!(
            end[offload].is_boolean() || end[offload].is_null(),
            "{which} {offload}\n{doc}"
        );
    }
}

#[test]
fn a_client_document_records_both_ends_links() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let out = server.client(&["-t", "0.5", "-J", "-V"], DEADLINE);
    out.expect_code(0);
    let d = out.json();
    let link = &d["start"]["sonde"]["link"];
    let text = out.describe();
    is_loopback_as_the_kernel_says(&link["local"], "local", &text);
    is_loopback_as_the_kernel_says(&link["remote"], "remote (the sonde server's)", &text);
    // iperf3's own keys are untouched: the facts live only under sonde's key.
    assert!(d["start"].get("link").is_none(), "{text}");
}

#[test]
fn verbose_shows_a_block_for_each_end() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let out = server.client(&["-t", "0.5", "-V"], DEADLINE);
    out.expect_code(0);
    let mtu = kernel("/sys/class/net/lo/mtu");
    for end in ["this host", "server"] {
        let line = out
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("Link, {end}: lo,")))
            .unwrap_or_else(|| panic!("no link line for {end}\n{}", out.describe()));
        assert!(line.contains("speed unknown"), "{line}");
        assert!(line.contains(&format!("MTU {mtu}")), "{line}");
    }
    // Without -V the block is not shown.
    let quiet = server.client(&["-t", "0.5"], DEADLINE);
    quiet.expect_code(0);
    assert!(!quiet.stdout.contains("Link, "), "{}", quiet.describe());
}

#[test]
fn a_sweep_without_max_rate_names_the_interface_without_a_speed() {
    let _turn = crate::turns::take(module_path!());
    // Port 9 is never reached: the ceiling is decided before any socket to the server.
    let out = run(&["sweep", "127.0.0.1", "-p", "9", "-u"], DEADLINE);
    out.expect_code(2);
    assert!(
        out.stderr.contains("the link speed was not readable on lo"),
        "{}",
        out.describe()
    );
    assert!(out.stderr.contains("--max-rate"), "{}", out.describe());
}
