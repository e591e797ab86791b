//! What a shaped lab link delivers to TCP: client - router - server with the router-server
//! link shaped by the kernel (tbf) at RATE, a `sonde` TCP upload of SECS seconds across it,
//! and the interface counters at both ends (root; `sonde` built first).
//!
//! `cargo run --release -p sonde-lab --example shaped_rate -- SONDE_BIN RATE [BURST] [SECS]`,
//! e.g. `... target/release/sonde 1000mbit 64kb 3`. Prints the receiver's goodput, the
//! TCP ceiling `rate × 1448 / 1514` (1500-byte MTU, TCP timestamps on: 1448 bytes of payload
//! per 1514-byte frame as tbf counts it), and packets sent by the client / received by the
//! server, which agree when segmentation offloads are off (see `offload`).
//!
//! Comparisons: `OFFLOADS_ON=1` turns TSO, GSO and GRO back on (with the `ethtool` program);
//! `RPS=router:s-lan:2` steers the router's receive processing to CPU 1 (mask 2), splitting
//! the 1 Gbit/s packet path over two cores.

use std::process::{Command, Stdio};
use std::time::Duration;

use sonde_lab::{Lab, LabOptions};

fn scenario(rate: &str, burst: Option<&str>) -> Result<sonde_scenario::Scenario, String> {
    let burst = burst
        .map(|b| format!(", burst = \"{b}\""))
        .unwrap_or_default();
    let text = format!(
        r#"
        name = "shaped"
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
        impair = {{ rate = "{rate}"{burst} }}
        [[test]]
        name = "none"
        command = ["true"]
        "#
    );
    sonde_scenario::Scenario::from_toml(&text).map_err(|e| e.to_string())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(sonde), Some(rate)) = (args.first(), args.get(1)) else {
        return Err("usage: shaped_rate SONDE_BIN RATE [BURST|-] [SECS]".into());
    };
    let burst = args.get(2).map(String::as_str).filter(|b| *b != "-");
    let secs = args.get(3).map_or("3", String::as_str);
    let lab = Lab::build(&scenario(rate, burst)?, Some("s"), LabOptions::default())?;
    if std::env::var_os("OFFLOADS_ON").is_some() {
        // The comparison: what the lab turned off, back on (needs the ethtool program).
        for n in &lab.layout().nodes {
            for f in &n.ifaces {
                Command::new("ip")
                    .args(["netns", "exec", &n.netns, "ethtool", "-K", &f.name])
                    .args(["tso", "on", "gso", "on", "gro", "on"])
                    .status()?;
            }
        }
    }
    if let Ok(spec) = std::env::var("RPS") {
        // NODE:IFACE:MASK,...: receive packet steering, e.g. `router:s-lan:2` hands the
        // router's share of the path to CPU 1 (sysfs inside the namespace, through `sh`).
        for one in spec.split(',') {
            let [node, iface, mask] = one.split(':').collect::<Vec<_>>()[..] else {
                return Err(format!("RPS: {one:?} is not NODE:IFACE:MASK").into());
            };
            let sh = format!("echo {mask} > /sys/class/net/{iface}/queues/rx-0/rps_cpus");
            Command::new("ip")
                .args(["netns", "exec", lab.netns(node)?, "sh", "-c", &sh])
                .status()?;
        }
    }
    let server = lab.node("server")?.ifaces[0].ipv4.to_string();
    let mut srv = lab
        .command("server", sonde, &["server", "-1"])?
        .stdout(Stdio::null())
        .spawn()?;
    std::thread::sleep(Duration::from_millis(300));
    let count = |node: &str| -> Result<(u64, u64), Box<dyn std::error::Error>> {
        let c = lab.counters(node)?;
        let f = c
            .iter()
            .find(|c| c.name.starts_with("s-"))
            .ok_or("no lab interface")?;
        Ok((f.tx_packets, f.rx_packets))
    };
    let (c0, s0) = (count("client")?, count("server")?);
    let out = lab
        .command("client", sonde, &["client", &server, "-t", secs, "-J"])?
        .output()?;
    let (c1, s1) = (count("client")?, count("server")?);
    let _ = srv.wait();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let recv = &doc["end"]["sum_received"];
    let bps = recv["bits_per_second"].as_f64().unwrap_or(0.0);
    let rate_bps = sonde_stats::units::parse_scenario_rate(rate).map_or(0.0, |r| r as f64);
    let ceiling = rate_bps * 1448.0 / 1514.0;
    println!(
        "rate {rate} burst {}: TCP {:.2} Mbit/s over {:.2} s, ceiling {:.2} ({:+.2} %); \
         client sent {} pkts, server received {} pkts",
        burst.unwrap_or("default"),
        bps / 1e6,
        recv["seconds"].as_f64().unwrap_or(0.0),
        ceiling / 1e6,
        (bps / ceiling - 1.0) * 100.0,
        c1.0 - c0.0,
        s1.1 - s0.1,
    );
    let _ = lab.finish();
    Ok(())
}
