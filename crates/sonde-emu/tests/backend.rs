//! The built-in scenarios' settings build into chains, and each link direction gets the
//! backend (kernel qdisc or userspace) its impairments need.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use sonde_emu::backend::{self, Backend, KernelCaps, Qdisc};
use sonde_emu::build::build_settings;
use sonde_scenario::{builtin_text, Scenario, BUILTIN_NAMES};

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

const BASE: &str = r#"
name = "t"
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
[[test]]
name = "tcp"
sonde = ["client", "{server}"]
"#;

fn with_settings(impair: &str) -> String {
    format!("{BASE}\n[[settings]]\nname = \"s\"\n[[settings.link]]\nlink = \"wan\"\n[settings.link.impair]\n{impair}\n")
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
    use sonde_emu::impair::Stage;
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
