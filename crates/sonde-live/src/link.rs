//! Both ends' link facts ([`LinkPair`]) as `-V` shows them and as `-J` writes them
//! (`start.sonde.link`, [`sonde_schema::throughput::link`]).
//!
//! An unknown is said as "unknown", a server that sent none as "not reported by the
//! server": the block never fills a gap with a figure.

use sonde_schema::throughput::link as slink;
use sonde_stats::link::{LinkFacts, LinkPair};
use sonde_stats::units::format_bitrate;

/// `start.sonde.link`.
pub fn doc(pair: &LinkPair) -> slink::Link {
    slink::Link {
        local: pair.local.as_ref().map(facts_doc),
        remote: pair.remote.as_ref().map(facts_doc),
    }
}

fn facts_doc(f: &LinkFacts) -> slink::LinkFacts {
    slink::LinkFacts {
        interface: f.interface.clone(),
        speed_bps: f.speed_bps.map(|r| r.bits_per_sec()),
        duplex: f.duplex.clone(),
        autoneg: f.autoneg,
        driver: f.driver.clone(),
        mtu: f.mtu,
        operstate: f.operstate.clone(),
        gso: f.gso,
        gro: f.gro,
        tso: f.tso,
        tcp_rmem: f.tcp_rmem,
        tcp_wmem: f.tcp_wmem,
        tcp_congestion_control: f.tcp_congestion_control.clone(),
    }
}

/// The `-V` block: two lines for each end that reported, one for an end that did not.
pub fn verbose_lines(pair: &LinkPair) -> Vec<String> {
    let mut out = Vec::new();
    for (end, facts, missing) in [
        (
            "this host",
            &pair.local,
            "unknown (no interface holds the control connection's address)",
        ),
        ("server", &pair.remote, "not reported by the server"),
    ] {
        match facts {
            Some(f) => out.extend(facts_lines(end, f)),
            None => out.push(format!("Link, {end}: {missing}")),
        }
    }
    out
}

fn known<T>(v: Option<T>, show: impl FnOnce(T) -> String) -> String {
    v.map_or_else(|| "unknown".to_owned(), show)
}

fn on_off(v: Option<bool>) -> String {
    known(v, |b| if b { "on" } else { "off" }.to_owned())
}

fn triplet(v: Option<[u64; 3]>) -> String {
    known(v, |[a, b, c]| format!("{a} {b} {c}"))
}

fn facts_lines(end: &str, f: &LinkFacts) -> [String; 2] {
    [
        format!(
            "Link, {end}: {}, speed {}, duplex {}, autoneg {}, driver {}, MTU {}, state {}",
            f.interface,
            known(f.speed_bps, |r| format_bitrate(r.bits_per_sec() as f64)),
            known(f.duplex.as_deref(), str::to_owned),
            on_off(f.autoneg),
            known(f.driver.as_deref(), str::to_owned),
            known(f.mtu, |m| m.to_string()),
            known(f.operstate.as_deref(), str::to_owned),
        ),
        format!(
            "      GSO {}, GRO {}, TSO {}; tcp_rmem {}; tcp_wmem {}; congestion control {}",
            on_off(f.gso),
            on_off(f.gro),
            on_off(f.tso),
            triplet(f.tcp_rmem),
            triplet(f.tcp_wmem),
            known(f.tcp_congestion_control.as_deref(), str::to_owned),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::units::Rate;

    #[test]
    fn unknowns_are_said_and_a_silent_server_is_named() {
        let pair = LinkPair {
            local: Some(LinkFacts {
                interface: "eth0".into(),
                speed_bps: Some(Rate::from_bits_per_sec(1_000_000_000)),
                duplex: Some("full".into()),
                mtu: Some(1500),
                gro: Some(false),
                tcp_rmem: Some([4096, 131_072, 6_291_456]),
                ..LinkFacts::default()
            }),
            remote: None,
        };
        let lines = verbose_lines(&pair);
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("Link, this host: eth0, speed 1.00 Gbits/sec, duplex full"));
        assert!(lines[0].contains("autoneg unknown, driver unknown, MTU 1500, state unknown"));
        assert!(lines[1].contains("GSO unknown, GRO off"));
        assert!(lines[1].contains("tcp_rmem 4096 131072 6291456; tcp_wmem unknown"));
        assert_eq!(lines[2], "Link, server: not reported by the server");
        let d = doc(&pair);
        crate::snapshot::check("link_1", &d);
        assert_eq!(d.local.and_then(|l| l.speed_bps), Some(1_000_000_000));
        assert_eq!(d.remote, None);
    }
}
