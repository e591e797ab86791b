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

use crate::common::{run, Server, TempDir};
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

    // `sonde report` lists both ends in its header.
    let dir = TempDir::new("link-facts-report");
    let doc = dir.file("client.json");
    std::fs::write(&doc, &out.stdout).unwrap();
    let out_dir = dir.file("report");
    let (doc, out_dir) = (doc.display().to_string(), out_dir.display().to_string());
    run(
        &["report", &doc, "-o", &out_dir, "--format", "md"],
        DEADLINE,
    )
    .expect_code(0);
    let md = std::fs::read_to_string(dir.file("report").join("report.md")).unwrap();
    let links = md
        .lines()
        .find(|l| l.starts_with("- **Links**: "))
        .unwrap_or_else(|| panic!("no Links line\n{md}"));
    assert!(
        links.contains("client lo: speed unknown") && links.contains("; server lo: speed unknown"),
        "{links}"
    );
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

/// What `sysfs` says of `iface` in namespace `netns` (`ip netns exec` mounts that
/// namespace's view of `/sys`).
fn sysfs_in(netns: &str, iface: &str, file: &str) -> String {
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", netns, "cat"])
        .arg(format!("/sys/class/net/{iface}/{file}"))
        .output()
        .expect("ip netns exec");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Over a lab's veth links (root): each end names its own veth, with the MTU its namespace's
/// sysfs gives, the offloads as the lab's own ethtool reading finds them, no device behind it,
/// and the speed the veth driver reports (its constant, read as the kernel writes it). A sweep
/// from the client takes no ceiling from that constant: it says the interface is virtual.
#[test]
fn over_veth_each_end_names_its_interface_and_sweep_refuses_a_virtual_speed() {
    let _turn = crate::turns::take(module_path!());
    if !crate::common::lab_available_with("link facts over veth", &["ip"]) {
        return;
    }
    let lab = crate::common::chain3_lab(&format!("sonde-lf{}", std::process::id() % 1_000_000), "");
    let _server = crate::common::lab_server(&lab, &["server", "-p", "5201"]);
    let server_ip = lab.node("server").unwrap().ifaces[0].ipv4.to_string();
    let client_cmd = |args: &[&str]| {
        let out = lab
            .command("client", crate::common::sonde_bin(), args)
            .unwrap()
            .output()
            .unwrap();
        let text = format!(
            "exit {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out, text)
    };
    let (out, text) = client_cmd(&["client", &server_ip, "-t", "0.5", "-J"]);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let link = &d["start"]["sonde"]["link"];
    for (end, node) in [("local", "client"), ("remote", "server")] {
        let f = &link[end];
        let n = lab.node(node).unwrap();
        let iface = &n.ifaces[0].name;
        assert_eq!(f["interface"], iface.as_str(), "{end}\n{text}");
        let mtu: u64 = sysfs_in(&n.netns, iface, "mtu").parse().unwrap();
        assert_eq!(f["mtu"].as_u64(), Some(mtu), "{end}\n{text}");
        assert_eq!(f["driver"], "none (virtual)", "{end}\n{text}");
        let speed = sysfs_in(&n.netns, iface, "speed");
        let want = speed.parse::<u64>().ok().map(|mbps| mbps * 1_000_000);
        assert_eq!(
            f["speed_bps"].as_u64(),
            want,
            "{end} (sysfs {speed:?})\n{text}"
        );
        for (key, offload) in [
            ("gso", sonde_lab::offload::Offload::Gso),
            ("gro", sonde_lab::offload::Offload::Gro),
            ("tso", sonde_lab::offload::Offload::Tso),
        ] {
            let on = sonde_lab::offload::is_on(&n.netns, iface, offload).ok();
            assert_eq!(f[key].as_bool(), on, "{end} {key}\n{text}");
        }
    }
    let (out, text) = client_cmd(&["sweep", &server_ip, "-u"]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    let client = lab.node("client").unwrap();
    let iface = &client.ifaces[0].name;
    // An up veth reports its driver's constant; one that reports none reads as unknown.
    let said = match sysfs_in(&client.netns, iface, "speed").parse::<i64>() {
        Ok(mbps) if mbps > 0 => format!("{iface} is a virtual interface"),
        _ => format!("the link speed was not readable on {iface}"),
    };
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&said),
        "{said}\n{text}"
    );
}
