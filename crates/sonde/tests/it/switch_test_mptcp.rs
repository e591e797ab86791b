//! `sonde switch-test --backend mptcp` through the real binary, in a network namespace of the
//! test thread's own (root; the server and client processes start from that thread, so they
//! live in it too, and the MPTCP endpoints they add vanish with it).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{run, switch_test_server};
use sonde_testkit::lab::in_own_netns;
use sonde_testkit::skip;
use std::time::Duration;

#[test]
fn switch_test_over_mptcp_keeps_the_stream_intact() {
    let _turn = crate::turns::take(module_path!());
    in_own_netns(|| {
        if !std::path::Path::new("/proc/sys/net/mptcp/enabled").exists() {
            return skip("this kernel has no MPTCP");
        }
        let port = "5211";
        let addrs = [
            "--v4",
            "127.0.0.1",
            "--v6",
            "::1",
            "-p",
            port,
            "--backend",
            "mptcp",
        ];
        let mut server = vec!["switch-test", "--listen", "-1"];
        server.extend(addrs);
        let _server = switch_test_server(&server);
        let mut client = vec!["switch-test", "-t", "1", "--every", "0.1", "-J"];
        client.extend(addrs);
        let out = run(&client, Duration::from_secs(30));
        out.expect_code(0);
        let doc = out.json();
        let end = &doc["end"];
        assert_eq!(end["hash_equal"], true, "{end}");
        assert_eq!(doc["start"]["backend"], "mptcp");
        let switches = end["switches"].as_u64().unwrap();
        assert!(switches >= 5, "{switches} switches");
        eprintln!(
            "MPTCP: {} bytes, {switches} switches, {:.0} Mbit/s; acknowledged IPv4 {} B, IPv6 {} B",
            end["bytes"],
            end["bits_per_second"].as_f64().unwrap() / 1e6,
            end["sent_by_family"]["ipv4"],
            end["sent_by_family"]["ipv6"]
        );

        // Where MPTCP is off, the command says so instead of using plain TCP.
        std::fs::write("/proc/sys/net/mptcp/enabled", "0").unwrap();
        let out = run(&client, Duration::from_secs(10));
        out.expect_code(1);
        assert!(
            out.stderr_lc().contains("net.mptcp.enabled=1"),
            "{}",
            out.describe()
        );
    });
}
