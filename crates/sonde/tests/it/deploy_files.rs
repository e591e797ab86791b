//! The deployment files under `deploy/` parse and say what the README says: the systemd unit
//! passes `systemd-analyze verify` and is hardened, the Kubernetes manifest is valid YAML
//! whose Service reaches the DaemonSet's metrics port, and the Dockerfile is multi-stage. No
//! container engine or image registry is at hand here, so what the image's build and run
//! depend on is checked instead: `cargo build --locked` accepts the committed lock file, and
//! the binary needs no shared library beyond what `debian:bookworm-slim` holds.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use common::{require_all, sonde_bin, TempDir};
use serde_yaml::Value;

fn deploy(file: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy")
        .join(file);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn systemd_unit_verifies_and_is_hardened() {
    let _turn = crate::turns::take(module_path!());
    let unit = deploy("systemd/sonde-agent.service");
    for line in [
        "DynamicUser=yes",
        "StateDirectory=sonde-agent",
        "CapabilityBoundingSet=",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
    ] {
        assert!(unit.lines().any(|l| l == line), "unit lacks {line}");
    }
    assert!(
        !unit.contains("AmbientCapabilities"),
        "the agent needs no capability"
    );
    if Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            !require_all(),
            "SONDE_REQUIRE_ALL=1 but systemd-analyze is missing"
        );
        eprintln!("skipped verify: no systemd-analyze");
        return;
    }
    // verify checks that ExecStart's program exists: point it at the binary under test.
    let dir = TempDir::new("unit");
    let path = dir.file("sonde-agent.service");
    std::fs::write(&path, unit.replace("/usr/local/bin/sonde", sonde_bin())).unwrap();
    let out = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "systemd-analyze verify: {stderr}");
    let own: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("sonde-agent.service"))
        .collect();
    assert!(own.is_empty(), "systemd-analyze complains: {own:?}");
}

fn get<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(v, |v, k| {
        v.get(*k).unwrap_or_else(|| panic!("no {k} in {path:?}"))
    })
}

#[test]
fn kubernetes_manifest_parses_and_the_service_reaches_metrics() {
    let _turn = crate::turns::take(module_path!());
    let text = deploy("kubernetes/sonde-agent.yaml");
    let docs: Vec<Value> = text
        .split("\n---\n")
        .map(|d| serde_yaml::from_str(d).unwrap_or_else(|e| panic!("YAML: {e}")))
        .collect();
    let kinds: Vec<&str> = docs
        .iter()
        .map(|d| get(d, &["kind"]).as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["ConfigMap", "DaemonSet", "Service", "Service"]);
    let (ds, svc, peers) = (&docs[1], &docs[2], &docs[3]);
    let pod_labels = get(ds, &["spec", "template", "metadata", "labels"]);
    assert_eq!(get(ds, &["spec", "selector", "matchLabels"]), pod_labels);
    assert_eq!(get(svc, &["spec", "selector"]), pod_labels);
    // The agents' peer list: a headless Service of every agent, the name the ConfigMap's
    // one peer entry stands for (every_address).
    assert_eq!(get(peers, &["spec", "selector"]), pod_labels);
    assert_eq!(get(peers, &["spec", "clusterIP"]), "None");
    let config = get(&docs[0], &["data", "agent.toml"]).as_str().unwrap();
    let name = get(peers, &["metadata", "name"]).as_str().unwrap();
    assert!(
        config.contains(&format!("host = \"{name}\"\nevery_address = true")),
        "{config}"
    );
    let container = &get(ds, &["spec", "template", "spec", "containers"])[0];
    let caps = get(container, &["securityContext", "capabilities"]);
    assert_eq!(get(caps, &["drop"]), &Value::from(vec!["ALL"]));
    assert!(
        caps.get("add").is_none(),
        "the agent needs no capability: {caps:?}"
    );
    let metrics = get(container, &["ports"])
        .as_sequence()
        .unwrap()
        .iter()
        .find(|p| get(p, &["name"]) == "metrics")
        .expect("a metrics port");
    let svc_port = &get(svc, &["spec", "ports"])[0];
    assert_eq!(get(svc_port, &["targetPort"]), "metrics");
    assert_eq!(get(svc_port, &["port"]), get(metrics, &["containerPort"]));
    // The agent serves /metrics only when told where: on the port the Service targets.
    let args: Vec<&str> = get(container, &["args"])
        .as_sequence()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let at = args
        .iter()
        .position(|a| *a == "--metrics")
        .expect("--metrics in the args");
    let port = get(metrics, &["containerPort"]).as_u64().unwrap();
    assert!(args[at + 1].ends_with(&format!(":{port}")), "{args:?}");
}

#[test]
fn dockerfile_builds_in_one_stage_and_ships_in_another() {
    let _turn = crate::turns::take(module_path!());
    let text = deploy("Dockerfile");
    let froms: Vec<&str> = text.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(froms.len(), 2, "{froms:?}");
    assert!(froms[0].ends_with(" AS build"));
    assert!(text.contains("cargo build --release --locked -p sonde"));
    assert!(text.contains("COPY --from=build /out/sonde /usr/local/bin/sonde"));
    assert!(text
        .lines()
        .any(|l| l.starts_with("USER ") && l != "USER root"));
}

/// The image's build runs `cargo build --locked`, which fails when `Cargo.lock` is stale.
///
/// Checked for this machine's platform only (`--filter-platform`): `cargo metadata` reads the
/// manifest of every package it lists, and a build here never downloads the Windows- or
/// macOS-only ones, so asking for every platform offline passes only where something else
/// happened to fill the cargo cache. The resolution itself, where a stale lock shows, still
/// covers the whole lock file. `--offline` because a test must not need the network: the
/// index entries it reads are the ones the build of this test just used.
#[test]
fn the_lock_file_is_current_for_the_images_locked_build() {
    let _turn = crate::turns::take(module_path!());
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let version = Command::new(&cargo).arg("-vV").output().unwrap();
    let version = String::from_utf8_lossy(&version.stdout);
    let host = version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .unwrap_or_else(|| panic!("`cargo -vV` names no host: {version}"));
    let out = Command::new(&cargo)
        .args(["metadata", "--locked", "--offline", "--format-version", "1"])
        .args(["--filter-platform", host])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo metadata --locked --filter-platform {host}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The image ships the binary alone on `debian:bookworm-slim`, with no packages but
/// ca-certificates: every shared library it loads must be one the slim base has (glibc's and
/// libgcc's). A dependency that pulled in OpenSSL or the system SQLite would fail here, not
/// in the first container an operator starts.
#[test]
fn the_binary_needs_only_the_slim_bases_libraries() {
    let _turn = crate::turns::take(module_path!());
    let out = Command::new("ldd").arg(sonde_bin()).output().unwrap();
    assert!(out.status.success(), "ldd {}", sonde_bin());
    let text = String::from_utf8_lossy(&out.stdout);
    let slim = [
        "linux-vdso.so",
        "ld-linux",
        "libc.so.6",
        "libm.so.6",
        "libgcc_s.so.1",
        "libpthread.so.0",
        "libdl.so.2",
        "librt.so.1",
    ];
    let libs: Vec<&str> = text
        .split_whitespace()
        .filter(|w| w.contains(".so"))
        .collect();
    assert!(libs.iter().any(|l| l.contains("libc.so.6")), "{text}");
    let foreign: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !slim.iter().any(|s| l.contains(s)))
        .collect();
    assert!(
        foreign.is_empty(),
        "libraries bookworm-slim lacks: {foreign:?}"
    );
}

/// `docker build` sends the whole directory as its context unless `.dockerignore` says
/// otherwise: what git ignores (build outputs, gigabytes in a working checkout) must be
/// ignored there too.
#[test]
fn the_build_context_leaves_out_what_git_ignores() {
    let _turn = crate::turns::take(module_path!());
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap();
    let patterns = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| l.trim_matches('/').to_owned())
            .collect()
    };
    let docker = patterns(&read(".dockerignore"));
    assert!(docker.iter().any(|p| p == "target"), "{docker:?}");
    for p in patterns(&read(".gitignore")) {
        assert!(
            docker.contains(&p),
            ".dockerignore lacks {p} (in .gitignore)"
        );
    }
}

/// The agent configurations the repository ships (the example and the Kubernetes ConfigMap's)
/// are ones `sonde agent` would start with: `--check` accepts them and says what would run.
#[test]
fn the_shipped_agent_configurations_pass_the_agents_check() {
    let _turn = crate::turns::take(module_path!());
    let manifest = deploy("kubernetes/sonde-agent.yaml");
    let map: Value = manifest
        .split("\n---\n")
        .map(|d| serde_yaml::from_str::<Value>(d).unwrap())
        .find(|d| get(d, &["kind"]).as_str() == Some("ConfigMap"))
        .unwrap();
    let map = &map;
    let text = get(map, &["data", "agent.toml"]).as_str().unwrap();
    let dir = TempDir::new("deploy-agent");
    let from_map = dir.file("configmap-agent.toml");
    std::fs::write(&from_map, text).unwrap();
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/agent.toml");
    for file in [from_map, example] {
        let out = common::run(
            &["agent", "--config", file.to_str().unwrap(), "--check"],
            std::time::Duration::from_secs(10),
        );
        out.expect_code(0);
        assert!(
            out.stdout
                .contains("would serve tests on port 5201, run latency every 10 s"),
            "{}",
            out.stdout
        );
    }
    // Names that do not resolve are said (the example's do not: .example.net, 2001:db8::).
    let out = common::run(
        &[
            "agent",
            "--config",
            dir.file("configmap-agent.toml").to_str().unwrap(),
            "--check",
        ],
        std::time::Duration::from_secs(10),
    );
    assert!(
        out.stdout
            .contains("sonde-agent-peers does not resolve here now"),
        "{}",
        out.stdout
    );
    // A configuration the agent would refuse is refused by the check, with the reason.
    let bad = dir.file("bad.toml");
    std::fs::write(&bad, "[[peer]]\nhost = \"a\"\n").unwrap();
    let out = common::run(
        &["agent", "--config", bad.to_str().unwrap(), "--check"],
        std::time::Duration::from_secs(10),
    );
    out.expect_code(2);
    assert!(out.stderr.contains("nothing to run"), "{}", out.stderr);
}
