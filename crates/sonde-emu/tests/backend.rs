//! The built-in scenarios' settings build into chains, and each link direction gets the
//! backend (kernel qdisc or userspace) its impairments need.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use sonde_emu::backend::{self, Backend, KernelCaps, Qdisc};
use sonde_emu::build::build_settings;
use sonde_scenario::{builtin_text, Scenario, BUILTIN_NAMES};
use sonde_testkit::scenario::tcp_lab_with as with_settings;

fn scenario(name: &str) -> Scenario {
    builtin_text(name)
        .map(Scenario::from_toml)
        .unwrap_or_else(|| panic!("no built-in {name}"))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_builtin_builds() {
    for name in BUILTIN_NAMES {
        let s = scenario(name);
        for settings in &s.settings {
            let chains =
                build_settings(&s, &settings.name, s.seed).unwrap_or_else(|e| panic!("{e}"));
            assert!(!chains.is_empty());
        }
    }
}

#[test]
fn backends_on_this_machine_and_with_netem() {
    let here = KernelCaps {
        has_netem: false,
        has_tbf: true,
        has_htb: true,
    };
    let s = scenario("lossy-link");
    let plain = backend::plan(&s, "loss-0", here).unwrap_or_else(|e| panic!("{e}"));
    assert!(plain
        .directions
        .iter()
        .all(|d| d.backend == Backend::Kernel(Qdisc::Tbf)));
    let lossy = backend::plan(&s, "loss-5", here).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lossy.directions.len(), 2);
    assert!(lossy.needs_userspace());
    assert!(lossy.directions.iter().all(|d| d.repeatable));
    let netem = KernelCaps {
        has_netem: true,
        ..here
    };
    let kernel = backend::plan(&s, "loss-5", netem).unwrap_or_else(|e| panic!("{e}"));
    assert!(kernel
        .directions
        .iter()
        .all(|d| d.backend == Backend::Kernel(Qdisc::Netem) && !d.repeatable));
    assert!(backend::plan(&s, "nope", here).is_err());
}

#[test]
fn a_device_model_needs_the_userspace_engine() {
    let text = with_settings("device = { pps = 8000, ring = 20 }\ngemodel = { p = \"1%\", r = \"30%\", 1-h = \"100%\", 1-k = \"0%\" }");
    let s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let imp = s.settings[0].links[0].impair.clone();
    let caps = KernelCaps {
        has_netem: true,
        has_tbf: true,
        has_htb: true,
    };
    let (b, why) = backend::choose(&imp, caps).unwrap_or_else(|| panic!("no plan"));
    assert_eq!(b, Backend::Userspace);
    assert!(why.contains("frame ring"));
}

/// A half-duplex link goes to the userspace engine both ways, and the two chains built for it
/// share one budget: between them they carry the link's rate, not twice it.
#[test]
fn a_half_duplex_link_builds_two_chains_on_one_budget() {
    use sonde_emu::{Instant, Packet};
    let text = with_settings("rate = \"12mbit\"\nburst = \"1500b\"\nduplex = \"half\"");
    let s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let plan = backend::plan(&s, "s", KernelCaps::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plan.directions.len(), 2);
    assert!(plan
        .directions
        .iter()
        .all(|d| d.backend == Backend::Userspace
            && d.impairments.contains(&backend::Impairment::HalfDuplex)));
    let mut chains = build_settings(&s, "s", 1).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(chains.len(), 2);
    // 100 frames of 1500 bytes each way at once: one per ms between both directions.
    for c in &mut chains {
        for i in 0..100 {
            c.chain.push(Packet::new(vec![0; 1500], i), Instant::ZERO);
        }
    }
    let mut last = Instant::ZERO;
    let mut out = 0;
    while let Some(t) = chains.iter().filter_map(|c| c.chain.next_wakeup()).min() {
        for c in &mut chains {
            while c.chain.poll(t).is_some() {
                out += 1;
                last = t;
            }
        }
    }
    assert_eq!(out, 200);
    // 200 frames, the first from the full bucket: the last leaves at 199 ms (own buckets
    // would have finished both directions by 99 ms).
    assert_eq!(last, Instant::from_millis(199));
}

/// IPv6 with 20 ms more delay than the link's 5 ms: the userspace engine (no qdisc splits by
/// EtherType), and the built chains delay an IPv6 frame 25 ms, an IPv4 frame and an ARP frame
/// 5 ms, each family's stages counted apart.
#[test]
fn a_family_override_builds_a_chain_of_its_own() {
    use sonde_emu::{Instant, Packet};
    let text = with_settings("delay = \"5ms\"\nipv6 = { delay = \"25ms\", mtu = 1480 }");
    let s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let plan = backend::plan(&s, "s", NETEM_EVERYWHERE).unwrap_or_else(|e| panic!("{e}"));
    assert!(plan
        .directions
        .iter()
        .all(|d| d.backend == Backend::Userspace
            && d.impairments.contains(&backend::Impairment::PerFamily)));
    let mut chains = build_settings(&s, "s", 1).unwrap_or_else(|e| panic!("{e}"));
    let c = &mut chains[0].chain;
    let frame = |ethertype: [u8; 2]| {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&ethertype);
        f.resize(60, 0);
        f
    };
    c.push(Packet::new(frame([0x86, 0xdd]), 6), Instant::ZERO);
    c.push(Packet::new(frame([0x08, 0x00]), 4), Instant::ZERO);
    c.push(Packet::new(frame([0x08, 0x06]), 1), Instant::ZERO);
    let mut out = Vec::new();
    while let Some(t) = c.next_wakeup() {
        while let Some(p) = c.poll(t) {
            out.push((p.meta.seq, t));
        }
    }
    let ms = Instant::from_millis;
    assert_eq!(out, [(4, ms(5)), (1, ms(5)), (6, ms(25))]);
    let stages: Vec<(String, u64)> = c
        .stage_stats()
        .into_iter()
        .map(|(n, st)| (n, st.packets_out))
        .collect();
    assert_eq!(
        stages,
        [("delay".to_owned(), 2), ("ipv6 delay".to_owned(), 1)]
    );
    // An MTU alone is no stage: a plain rate keeps its qdisc.
    let text = with_settings("rate = \"10mbit\"\nipv6 = { mtu = 1480 }");
    let s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let plan = backend::plan(&s, "s", NETEM_EVERYWHERE).unwrap_or_else(|e| panic!("{e}"));
    assert!(plan
        .directions
        .iter()
        .all(|d| d.backend == Backend::Kernel(Qdisc::Tbf)));
}

const NETEM_EVERYWHERE: KernelCaps = KernelCaps {
    has_netem: true,
    has_tbf: true,
    has_htb: true,
};
