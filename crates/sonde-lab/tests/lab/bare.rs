//! A lab on a machine with iproute2 alone: no `nft`, `ethtool` or `sysctl`.
//!
//! The parent test makes a directory holding only `ip` and `tc` (symlinks), and runs this
//! test binary again with `PATH` set to it and `SONDE_LAB_BARE_CHILD` pointing at a result
//! file; in that child [`child_on_iproute2_alone`] builds labs for real, so every lookup of a
//! missing tool really fails. The child checks that the tools are unreachable, that traffic
//! flows, that 5 % loss and a 100 Mbit/s tbf rate still apply, that sysctls and offloads
//! were set without the tools, and writes the lost sequence numbers of a seeded loss run. The
//! parent (where `nft` may be installed) runs the same seeded loss and compares: the same
//! seed drops the same packets with and without `nft`, because the impairment box filters
//! multicast listener reports itself.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use sonde_emu::backend::{Backend, KernelCaps};
use sonde_lab::offload::{self, Offload};
use sonde_lab::{netns, LabOptions};

use crate::util::{self, Cleanup};

const CHILD: &str = "SONDE_LAB_BARE_CHILD";
const SEED: u64 = 7;
const COUNT: u64 = 20_000;

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The seeded 5 % loss run: lost sequence numbers, the engine's drops, and the MLD frames
/// the box filtered.
fn seeded_loss(tag: &str) -> (BTreeSet<u64>, u64, u64) {
    let prefix = util::prefix(tag);
    let _cleanup = Cleanup(prefix.clone());
    let s = util::chain3(r#"loss = "5%""#);
    let opts = LabOptions {
        seed: Some(SEED),
        ..util::opts(&prefix)
    };
    let lab = util::build(&s, Some("s"), opts);
    let got = util::udp_run(&lab, COUNT, 50_000, 64);
    let report = lab.finish();
    let a_to_b = report
        .userspace
        .iter()
        .find(|d| d.direction == sonde_emu::Direction::AToB);
    let dropped = a_to_b.map_or(0, |d| d.total.dropped);
    let mld: u64 = report.userspace.iter().map(|d| d.io.mld_dropped).sum();
    (util::lost(&got, COUNT), dropped, mld)
}

#[test]
fn a_lab_needs_only_iproute2_and_its_loss_pattern_does_not_depend_on_nft() {
    let _serial = util::serial();
    if !util::lab_available("iproute2_alone") {
        return;
    }
    let dir = TempDir(std::env::temp_dir().join(format!("sonde-bare-{}", std::process::id())));
    let bin = dir.0.join("bin");
    std::fs::create_dir_all(&bin).unwrap_or_else(|e| panic!("{e}"));
    for tool in ["ip", "tc"] {
        let target = util::which(tool).unwrap_or_else(|| panic!("{tool} is not installed"));
        std::os::unix::fs::symlink(target, bin.join(tool)).unwrap_or_else(|e| panic!("{e}"));
    }
    let result = dir.0.join("lost.json");
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(exe)
        .args(["--exact", "bare::child_on_iproute2_alone", "--nocapture"])
        .args(["--test-threads", "1"])
        .env("PATH", &bin)
        .env(CHILD, &result)
        .output()
        .unwrap_or_else(|e| panic!("running the child: {e}"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    eprintln!("{stderr}");
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the child ran no test:\n{stdout}"
    );
    let text = std::fs::read_to_string(&result).unwrap_or_else(|e| panic!("{e}"));
    let bare: BTreeSet<u64> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let (here, _, mld) = seeded_loss("bare-ref");
    eprintln!(
        "same seed with the tools on PATH (nft {}): {} lost, {mld} MLD frames filtered",
        if util::which("nft").is_some() {
            "installed"
        } else {
            "absent"
        },
        here.len()
    );
    assert_eq!(
        bare, here,
        "the loss pattern depends on the tools installed"
    );
}

/// Runs only as the child of the test above (otherwise passes at once).
#[test]
fn child_on_iproute2_alone() {
    let Some(result) = std::env::var_os(CHILD) else {
        return;
    };
    for tool in ["nft", "ethtool", "sysctl", "ping"] {
        assert!(util::which(tool).is_none(), "{tool} is reachable");
    }
    // Traffic flows, the loss applies, same seed twice gives the same pattern.
    let (first, dropped, mld) = seeded_loss("bare1");
    let rate = first.len() as f64 / COUNT as f64 * 100.0;
    eprintln!(
        "iproute2 alone, 5 % loss: lost {} of {COUNT} = {rate:.2} %, {mld} MLD frames \
         filtered by the box",
        first.len()
    );
    assert!((4.5..=5.5).contains(&rate), "loss {rate:.2} %");
    assert_eq!(
        dropped,
        first.len() as u64,
        "losses the engine did not make"
    );
    let (again, _, _) = seeded_loss("bare2");
    assert!(
        first == again,
        "same seed, different loss pattern: {} of {} lost packets differ",
        first.symmetric_difference(&again).count(),
        first.len()
    );
    let json = serde_json::to_string(&first).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(result, json).unwrap_or_else(|e| panic!("{e}"));

    // A kernel rate (tbf through `tc`), sysctls and offloads, without the tools.
    let prefix = util::prefix("bare3");
    let _cleanup = Cleanup(prefix.clone());
    let s = util::chain3(r#"rate = "100mbit""#);
    let lab = util::build(&s, Some("s"), util::opts(&prefix));
    assert!(
        lab.notes().is_empty(),
        "no box, nothing to note: {:?}",
        lab.notes()
    );
    let plan = lab.plan().map(|p| p.directions.clone()).unwrap_or_default();
    let router = lab.netns("router").unwrap_or_else(|e| panic!("{e}"));
    let forwarding = netns::run_in(router, || {
        std::fs::read_to_string("/proc/sys/net/ipv4/ip_forward").unwrap_or_default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(forwarding.trim(), "1", "ip_forward in the router");
    for o in Offload::SEGMENTATION {
        let on = offload::is_on(router, "s-wan", o).unwrap_or_else(|e| panic!("{e}"));
        assert!(!on, "{} is on", o.name());
    }
    let mbit = crate::impair::tcp_goodput_mbit(&lab, 3.0, 0.5);
    let ceiling = 100.0 * 1448.0 / 1514.0;
    eprintln!(
        "iproute2 alone, 100 Mbit/s via {:?}: TCP goodput {mbit:.2} Mbit/s (ceiling {ceiling:.2})",
        plan.first().map(|d| d.backend)
    );
    assert!(
        (ceiling * 0.97..=ceiling * 1.01).contains(&mbit),
        "goodput {mbit:.2} Mbit/s"
    );
    drop(lab);

    // A box: the note says nft is missing, and the box-facing side has checksumming off.
    let prefix = util::prefix("bare4");
    let _cleanup = Cleanup(prefix.clone());
    let opts = LabOptions {
        caps: Some(KernelCaps::default()),
        ..util::opts(&prefix)
    };
    let lab = util::build(&s, Some("s"), opts);
    assert!(lab
        .plan()
        .is_some_and(|p| p.directions.iter().all(|d| d.backend == Backend::Userspace)));
    assert!(
        lab.notes().iter().any(|n| n.contains("nft")),
        "{:?}",
        lab.notes()
    );
    let server = lab.netns("server").unwrap_or_else(|e| panic!("{e}"));
    for o in [
        Offload::TxChecksum,
        Offload::Tso,
        Offload::Gso,
        Offload::Gro,
    ] {
        let on = offload::is_on(server, "s-wan", o).unwrap_or_else(|e| panic!("{e}"));
        assert!(!on, "{} is on", o.name());
    }
    let got = util::udp_run(&lab, 2_000, 5_000, 1200);
    assert_eq!(got.len(), 2_000, "a plain box loses nothing");
    let report = lab.finish();
    assert!(report.notes.iter().any(|n| n.contains("nft")));
}
