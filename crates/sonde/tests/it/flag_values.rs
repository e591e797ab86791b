//! Values as a new user types them (issue 34): a rate below 1 bit/s is refused everywhere a
//! rate is read (it used to round to 0, "no limit", and flood), a negative value is refused as
//! negative on every subcommand, and a repeated flag takes its last value as in iperf3.
//! Nothing here sends traffic: every refusal comes before a socket is opened, which the first
//! test checks with listeners of its own.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{run, Output, Server, TempDir};
use std::net::{TcpListener, UdpSocket};
use std::time::Duration;

const QUICK: Duration = Duration::from_secs(10);

/// Runs `args`, expects exit 2 with `says` on stderr.
#[track_caller]
fn refused(args: &[&str], says: &str) -> Output {
    let out = run(args, QUICK);
    out.expect_code(2);
    assert!(out.stderr.contains(says), "{}", out.describe());
    out
}

const BELOW_ONE_BIT: &str = "is below 1 bit/s";

#[test]
fn a_rate_that_rounds_to_zero_is_refused_before_anything_is_sent() {
    let _turn = crate::turns::take(module_path!());
    let port = common::free_port();
    let tcp = TcpListener::bind(("127.0.0.1", port)).unwrap();
    let udp = UdpSocket::bind(("127.0.0.1", port)).unwrap();
    let port = port.to_string();
    for rate in [
        &["-u", "-b", "0.5"][..],
        &["-u", "-b", "0.0000001k"],
        &["-b", "0.5"],
        &["-u", "-b", "0.5/8"],
        &["--fq-rate", "0.5"],
    ] {
        let mut args = vec!["client", "127.0.0.1", "-p", &port, "-t", "1"];
        args.extend_from_slice(rate);
        let out = refused(&args, BELOW_ONE_BIT);
        assert!(out.stdout.is_empty(), "{}", out.describe());
    }
    tcp.set_nonblocking(true).unwrap();
    udp.set_nonblocking(true).unwrap();
    let accepted = tcp.accept();
    assert!(accepted.is_err(), "a client connected: {accepted:?}");
    let mut buf = [0u8; 2048];
    let got = udp.recv_from(&mut buf);
    assert!(got.is_err(), "a datagram arrived: {got:?}");
}

#[test]
fn a_server_limit_that_rounds_to_zero_is_refused_at_start() {
    let _turn = crate::turns::take(module_path!());
    let port = common::free_port().to_string();
    let out = refused(
        &["server", "-p", &port, "--max-bitrate", "0.5"],
        BELOW_ONE_BIT,
    );
    assert!(out.elapsed < QUICK, "{}", out.describe());
    refused(
        &[
            "server",
            "-p",
            &port,
            "--server-bitrate-limit",
            "0.0000001k",
        ],
        BELOW_ONE_BIT,
    );
}

#[test]
fn every_command_that_reads_a_rate_refuses_one_below_1_bit() {
    let _turn = crate::turns::take(module_path!());
    for args in [
        &[
            "stress",
            "127.0.0.1",
            "-p",
            "9",
            "--discard",
            "-u",
            "-b",
            "0.5",
        ][..],
        &["stress", "127.0.0.1", "-p", "9", "--steps", "10m,0.5"],
        &["sweep", "127.0.0.1", "-p", "9", "-u", "--max-rate", "0.5"],
        &["sweep", "127.0.0.1", "-p", "9", "-u", "--min-rate", "0.5"],
        &["sweep", "127.0.0.1", "-p", "9", "-u", "-b", "1m,0.5"],
    ] {
        refused(args, BELOW_ONE_BIT);
    }
}

#[test]
fn a_rate_that_rounds_to_zero_in_a_config_or_scenario_file_is_refused() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("tiny-rates");
    let agent = dir.file("agent.toml");
    std::fs::write(
        &agent,
        "[[peer]]\nhost = \"127.0.0.1\"\nlink_rate = \"0.5\"\n[throughput]\nevery_mins = 10\nduration_secs = 5\nshare = 0.1\n",
    )
    .unwrap();
    let out = refused(
        &["agent", "--config", agent.to_str().unwrap(), "--check"],
        BELOW_ONE_BIT,
    );
    assert!(out.stderr.contains("link_rate"), "{}", out.describe());
    let scenario = dir.file("tiny.toml");
    let trickle = "[[settings]]\nname = \"trickle\"\n[[settings.link]]\nlink = \"wan\"\n\
                   direction = \"both\"\n[settings.link.impair]\nrate = \"0.5bit\"\n\
                   [[test]]\nname = \"tcp\"\nsonde = [\"client\", \"{server}\", \"-t\", \"1\"]\n";
    std::fs::write(&scenario, crate::cli::two_host_scenario("tiny", trickle)).unwrap();
    let out_dir = dir.file("out");
    let out = refused(
        &[
            "lab",
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        BELOW_ONE_BIT,
    );
    assert!(!out_dir.join("results.db").exists(), "{}", out.describe());
}

#[test]
fn a_negative_value_is_refused_as_negative_on_every_subcommand() {
    let _turn = crate::turns::take(module_path!());
    for args in [
        &["client", "127.0.0.1", "-p", "9", "-b", "-5m"][..],
        &["client", "127.0.0.1", "-p", "9", "-t", "-1"],
        &["-c", "127.0.0.1", "-p", "9", "-l", "-1K"],
        &["server", "--max-bitrate", "-1m"],
        &["server", "-i", "-1"],
        &["sweep", "127.0.0.1", "-u", "--max-loss", "-1"],
        &["sweep", "127.0.0.1", "-u", "--max-rate", "-100m"],
        &["stress", "127.0.0.1", "--echo", "-P", "-4"],
        &["latency", "127.0.0.1", "-c", "-5"],
        &["profile", "run", "127.0.0.1", "-t", "-2"],
        &["btc", "127.0.0.1", "--sizes", "-6M"],
        &["capacity", "127.0.0.1", "--connect-timeout", "-1"],
        &["report", "x.json", "--run", "-1"],
    ] {
        let out = refused(args, "must not be negative");
        assert!(!out.stderr.contains("-- -"), "{}", out.describe());
    }
}

#[test]
fn a_repeated_flag_takes_its_last_value() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let out = server.client(
        &["-t", "5", "-t", "1", "-b", "1m", "-b", "2m", "-J"],
        Duration::from_secs(30),
    );
    out.expect_code(0);
    let doc = out.json();
    let test_start = common::at(&doc, "start.test_start");
    assert_eq!(
        common::num(test_start, "duration"),
        1.0,
        "{}",
        out.describe()
    );
    let bps = common::num(&doc, "end.sum_sent.bits_per_second");
    assert!(
        (1.8e6..2.2e6).contains(&bps),
        "the last -b (2m) paces the test: {bps} bit/s\n{}",
        out.describe()
    );
    // And on the other subcommands: the last value is the one checked.
    refused(
        &[
            "sweep",
            "127.0.0.1",
            "-u",
            "--max-loss",
            "1",
            "--max-loss",
            "100",
        ],
        "percentage",
    );
    refused(&["server", "-i", "1", "-i", "100"], "interval");
}
