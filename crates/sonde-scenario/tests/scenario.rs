//! Scenario files: the built-ins parse, bad files fail with the right error, a file
//! serialises back to itself.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use sonde_scenario::{
    builtin, builtin_text, Scenario, ScenarioError, ValidationError, BUILTIN_NAMES,
};
use sonde_testkit::scenario::{tcp_lab, tcp_lab_with as with_settings};

fn scenario(name: &str) -> Scenario {
    builtin_text(name)
        .map(Scenario::from_toml)
        .unwrap_or_else(|| panic!("no built-in {name}"))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_builtin_parses_and_validates() {
    for name in BUILTIN_NAMES {
        let s = scenario(name);
        assert_eq!(s.name, name);
        assert_eq!(builtin(name).as_ref(), Some(&s));
    }
    assert!(builtin("nope").is_none());
}

#[test]
fn lossy_link_is_the_fifty_test_matrix() {
    // The original harness's 40 tests (cubic, reno, bbr, UDP) plus the coded row.
    let s = scenario("lossy-link");
    let runs = s.expand_matrix();
    assert_eq!(runs.len(), 50);
    assert_eq!(runs[0].id, "loss-0/tcp-cubic/1");
    assert_eq!(runs[4].id, "loss-0/coded/1");
    assert_eq!(runs[5].id, "loss-0/tcp-cubic/2");
    assert_eq!(runs[49].id, "loss-20/coded/2");
    let ids: std::collections::HashSet<_> = runs.iter().map(|r| &r.id).collect();
    assert_eq!(ids.len(), 50);
    let seeds: std::collections::HashSet<_> = runs.iter().map(|r| r.seed).collect();
    assert_eq!(seeds.len(), 50);
    assert!(runs.iter().enumerate().all(|(i, r)| r.index == i));
    // Stable across expansions.
    assert_eq!(runs, s.expand_matrix());
}

fn invalid(text: &str) -> ValidationError {
    match Scenario::from_toml(text) {
        Err(ScenarioError::Invalid { error, .. }) => error,
        other => panic!("expected a validation error, got {other:?}"),
    }
}

fn parse_error(text: &str) -> String {
    match Scenario::from_toml(text) {
        Err(e @ ScenarioError::Parse(_)) => e.to_string(),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn rejects_inconsistent_scenarios() {
    let e = invalid(&with_settings("loss = \"120%\""));
    assert!(
        matches!(e, ValidationError::OverHundred { field: "loss", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("120% is more than 100%"), "{e}");

    let e = invalid(&with_settings("loss = \"1%\"\ngemodel = { p = \"1%\" }"));
    assert!(
        matches!(
            e,
            ValidationError::Conflict {
                a: "loss",
                b: "gemodel",
                ..
            }
        ),
        "{e}"
    );
    let e = invalid(&with_settings("jitter = \"1ms\""));
    assert!(
        matches!(
            e,
            ValidationError::Needs {
                field: "jitter",
                needs: "delay",
                ..
            }
        ),
        "{e}"
    );
    let e = invalid(&with_settings("queue_limit = \"10pkt\""));
    assert!(
        matches!(
            e,
            ValidationError::Needs {
                field: "queue_limit",
                needs: "rate",
                ..
            }
        ),
        "{e}"
    );
    let e = invalid(&with_settings("device = { pps = 0, ring = 4 }"));
    assert!(
        matches!(
            e,
            ValidationError::Zero {
                field: "device pps",
                ..
            }
        ),
        "{e}"
    );

    let unknown_link = with_settings("loss = \"1%\"")
        .replace("link = \"wan\"\n[settings", "link = \"wan2\"\n[settings");
    let e = invalid(&unknown_link);
    assert_eq!(
        e,
        ValidationError::UnknownLink {
            setting: "s".into(),
            link: "wan2".into()
        }
    );
    let missing_host = with_settings("").replace("b = \"server\"", "b = \"srv\"");
    assert!(
        matches!(invalid(&missing_host), ValidationError::UnknownNode { node, .. } if node == "srv")
    );
    let bad_client =
        with_settings("").replace("name = \"tcp\"", "name = \"tcp\"\nclient = \"router\"");
    assert!(matches!(
        invalid(&bad_client),
        ValidationError::UnknownHost { role: "client", .. }
    ));
    let placeholder = with_settings("").replace("{server}", "{serverr}");
    assert!(
        matches!(invalid(&placeholder), ValidationError::UnknownPlaceholder { name, .. } if name == "serverr")
    );
    let both = with_settings("").replace("sonde = [", "command = [\"iperf3\"]\nsonde = [");
    assert!(matches!(invalid(&both), ValidationError::TestKind { .. }));
    let twice = format!(
        "{}\n[[settings.link]]\nlink = \"wan\"\ndirection = \"a-to-b\"\n",
        with_settings("loss = \"1%\"")
    );
    assert!(matches!(invalid(&twice), ValidationError::SetTwice { .. }));
    let overlap =
        with_settings("").replace("b = \"router\"", "b = \"router\"\nipv4 = \"10.77.0.0/16\"");
    assert!(matches!(
        invalid(&overlap),
        ValidationError::SubnetOverlap { .. }
    ));
    let mtu = with_settings("").replace("b = \"router\"", "b = \"router\"\nmtu = 500");
    assert!(matches!(
        invalid(&mtu),
        ValidationError::Mtu { mtu: 500, .. }
    ));
    let long = with_settings("").replace("\"client\"", "\"client-host-1\"");
    assert!(matches!(invalid(&long), ValidationError::BadName { .. }));
    let island =
        with_settings("").replace("routers = [\"router\"]", "routers = [\"router\", \"r2\"]");
    assert!(matches!(invalid(&island), ValidationError::Disconnected { node, .. } if node == "r2"));
    let matrix = format!("{}\n[matrix]\ntests = [\"udp\"]\n", with_settings(""));
    assert!(matches!(
        invalid(&matrix),
        ValidationError::MatrixUnknown { kind: "test", .. }
    ));
    let no_settings = tcp_lab().to_toml();
    assert!(matches!(
        invalid(&no_settings),
        ValidationError::Empty { what: "settings" }
    ));
}

#[test]
fn rejects_malformed_values_with_their_line() {
    let e = parse_error(&with_settings("rate = \"100mbps\""));
    assert!(e.contains("bytes per second") && e.contains("line"), "{e}");
    let e = parse_error(&with_settings("delay = \"10\""));
    assert!(e.contains("has no unit"), "{e}");
    let e = parse_error(&with_settings("los = \"5%\""));
    assert!(e.contains("unknown field") && e.contains("los"), "{e}");
    let e = parse_error(&with_settings("distribution = \"gauss\""));
    assert!(e.contains("gauss"), "{e}");
    let e = parse_error(
        &with_settings("").replace("b = \"router\"", "b = \"router\"\nipv4 = \"10.77.1.1/24\""),
    );
    assert!(e.contains("host bits"), "{e}");
}

#[test]
fn device_and_gemodel_settings_read_as_netem_writes_them() {
    let text = with_settings("device = { pps = 8000, ring = 20 }\ngemodel = { p = \"1%\", r = \"30%\", 1-h = \"100%\", 1-k = \"0%\" }");
    let s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let imp = s.settings[0].links[0].impair.clone();
    let ge = imp
        .gemodel
        .map(|g| g.params())
        .unwrap_or_else(|| panic!("no gemodel"));
    assert!((ge.r - 0.3).abs() < 1e-12 && (ge.loss_bad - 1.0).abs() < 1e-12);
    assert_eq!(imp.device.map(|d| (d.pps, d.ring)), Some((8000, 20)));
    // Serialises back to a scenario that parses to the same thing.
    let again = toml::to_string(&s).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        Scenario::from_toml(&again).unwrap_or_else(|e| panic!("{e}\n{again}")),
        s
    );
}

#[test]
fn device_backpressure_and_its_queue_are_read_and_checked() {
    let text = with_settings("device = { pps = 8000, ring = 4, backpressure = true, queue = 500 }");
    let s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let d = s.settings[0].links[0]
        .impair
        .device
        .unwrap_or_else(|| panic!("no device"));
    assert!(d.backpressure);
    assert_eq!(d.queue_len(), 500);
    let d = Scenario::from_toml(&with_settings(
        "device = { pps = 8000, ring = 4, backpressure = true }",
    ))
    .unwrap_or_else(|e| panic!("{e}"))
    .settings[0]
        .links[0]
        .impair
        .device;
    assert_eq!(d.map(|d| d.queue_len()), Some(1000));
    let e = invalid(&with_settings(
        "device = { pps = 8000, ring = 4, queue = 10 }",
    ));
    assert!(
        matches!(
            e,
            ValidationError::Needs {
                field: "device queue",
                ..
            }
        ),
        "{e}"
    );
    let e = invalid(&with_settings(
        "device = { pps = 8000, ring = 4, backpressure = true, queue = 0 }",
    ));
    assert!(
        matches!(
            e,
            ValidationError::Zero {
                field: "device queue",
                ..
            }
        ),
        "{e}"
    );
    let e = invalid(&with_settings(
        "device = { pps = 8000, ring = 4, backpressure = true, queue = 100001 }",
    ));
    assert!(
        e.to_string().contains("device queue 100001 is more than"),
        "{e}"
    );
    let e = parse_error(&with_settings(
        "device = { pps = 8000, ring = 4, backpresure = true }",
    ));
    assert!(
        e.contains("unknown field") && e.contains("backpresure"),
        "{e}"
    );
    let e = parse_error(&with_settings(
        "device = { pps = 8000, ring = 4, backpressure = \"yes\" }",
    ));
    assert!(e.contains("backpressure") && e.contains("boolean"), "{e}");
}

#[test]
fn half_duplex_needs_one_rate_shared_both_ways() {
    let s = Scenario::from_toml(&with_settings("rate = \"10mbit\"\nduplex = \"half\""))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        s.settings[0].links[0].impair.duplex,
        Some(sonde_scenario::Duplex::Half)
    );
    let e = invalid(&with_settings("duplex = \"half\""));
    assert!(
        matches!(e, ValidationError::Needs { needs: "rate", .. }),
        "{e}"
    );
    assert!(
        e.to_string().contains("duplex = \"half\" needs rate"),
        "{e}"
    );
    let one_way = with_settings("rate = \"10mbit\"\nduplex = \"half\"").replace(
        "link = \"wan\"\n",
        "link = \"wan\"\ndirection = \"a-to-b\"\n",
    );
    let e = invalid(&one_way);
    assert!(matches!(e, ValidationError::HalfDuplex { .. }), "{e}");
    let unequal = format!(
        "{}\n[[settings.link]]\nlink = \"wan\"\ndirection = \"b-to-a\"\n\
         impair = {{ rate = \"20mbit\", duplex = \"half\" }}\n",
        one_way
    );
    let e = invalid(&unequal);
    assert!(e.to_string().contains("same rate"), "{e}");
    let e = parse_error(&with_settings("rate = \"10mbit\"\nduplex = \"halve\""));
    assert!(e.contains("halve") && e.contains("duplex"), "{e}");
}

/// The crate docs' example scenario (every key it shows, the device's flow control and half
/// duplex included) parses and validates.
#[test]
fn the_documented_example_is_a_valid_scenario() {
    let docs = include_str!("../src/lib.rs");
    let example: String = docs
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .skip_while(|l| *l != "```toml")
        .skip(1)
        .take_while(|l| *l != "```")
        .map(|l| format!("{l}\n"))
        .collect();
    let s = Scenario::from_toml(&example).unwrap_or_else(|e| panic!("{e}\n{example}"));
    let usb = s
        .setting("usb-bridge")
        .unwrap_or_else(|| panic!("no usb-bridge"));
    let up = usb.impairments("wan", sonde_scenario::Direction::BToA);
    assert_eq!(
        up.and_then(|i| i.device).map(|d| d.backpressure),
        Some(true)
    );
    let hub = s
        .setting("half-duplex")
        .unwrap_or_else(|| panic!("no half-duplex"));
    let both = hub.impairments("wan", sonde_scenario::Direction::AToB);
    assert_eq!(
        both.and_then(|i| i.duplex),
        Some(sonde_scenario::Duplex::Half)
    );
    let fq = s
        .setting("fq-codel")
        .and_then(|f| f.impairments("wan", sonde_scenario::Direction::AToB));
    assert_eq!(fq.and_then(|i| i.aqm), Some(sonde_scenario::Aqm::FqCodel));
}

/// `ipv4 = {...}` / `ipv6 = {...}` beside a direction's keys: the family's impairments are
/// the direction's with the override's values; an MTU only is no chain of its own.
#[test]
fn per_family_overrides_read_and_merge_with_the_direction() {
    use sonde_scenario::{Direction, Family};
    use std::time::Duration;
    let text = with_settings(
        "delay = \"5ms\"\nloss = \"1%\"\nipv6 = { delay = \"25ms\", mtu = 1480 }\nipv4 = { mtu = 1400 }",
    );
    let s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let imp = s.settings[0]
        .impairments("wan", Direction::AToB)
        .unwrap_or_else(|| panic!("no impairments"));
    let v6 = imp
        .for_family(Family::Ipv6)
        .unwrap_or_else(|| panic!("IPv6 has a chain of its own"));
    assert_eq!(v6.delay.map(|d| d.0), Some(Duration::from_millis(25)));
    assert_eq!(v6.loss, imp.loss, "what IPv6 does not override it shares");
    assert!(v6.ipv6.is_none() && v6.ipv4.is_none());
    assert_eq!(imp.family(Family::Ipv6).and_then(|o| o.mtu), Some(1480));
    assert!(imp.for_family(Family::Ipv4).is_none(), "an MTU is no stage");
    assert_eq!(imp.family(Family::Ipv4).and_then(|o| o.mtu), Some(1400));
    assert!(imp.splits_families());
    // Serialised and read back, the same scenario.
    let again = toml::to_string(&s).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(Scenario::from_toml(&again).as_ref(), Ok(&s));
}

#[test]
fn per_family_overrides_are_checked_with_the_key_named() {
    let e = parse_error(&with_settings("ipv6 = { dealy = \"20ms\" }"));
    assert!(e.contains("dealy"), "{e}");
    let e = parse_error(&with_settings("ipv6 = { mtu = \"big\" }"));
    assert!(e.contains("mtu"), "{e}");
    let e = parse_error(&with_settings("ipv7 = { delay = \"20ms\" }"));
    assert!(e.contains("ipv7"), "{e}");
    let e = invalid(&with_settings("ipv6 = { mtu = 1200 }"));
    assert!(
        matches!(
            e,
            ValidationError::FamilyMtu {
                mtu: 1200,
                min: 1280,
                max: 1500,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("ipv6: mtu 1200"), "{e}");
    let e = invalid(&with_settings("ipv4 = { mtu = 500 }"));
    assert!(
        matches!(e, ValidationError::FamilyMtu { min: 576, .. }),
        "{e}"
    );
    let e = invalid(&with_settings("ipv4 = { mtu = 1501 }"));
    assert!(
        e.to_string()
            .contains("ipv4: mtu 1501 must be between 576 and the link's MTU 1500"),
        "{e}"
    );
    let e = invalid(&with_settings("ipv6 = { jitter = \"2ms\" }"));
    assert!(e.to_string().contains("ipv6: jitter needs delay"), "{e}");
    let e = invalid(&with_settings("ipv4 = { loss = \"120%\" }"));
    assert!(e.to_string().contains("ipv4: loss"), "{e}");
    let e = invalid(&with_settings(
        "rate = \"10mbit\"\nduplex = \"half\"\nipv6 = { delay = \"20ms\" }",
    ));
    assert!(matches!(e, ValidationError::Conflict { .. }), "{e}");
    // A delay the direction has is enough for a family's jitter.
    Scenario::from_toml(&with_settings(
        "delay = \"5ms\"\nipv6 = { jitter = \"1ms\" }",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
}
