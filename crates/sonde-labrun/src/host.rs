//! Facts about the machine, stored with each run so a report says where it was measured.

use serde_json::{json, Value};
use sonde_emu::backend::KernelCaps;

fn read(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// Host name, kernel (release and version) and other facts (CPU model and count, the
/// kernel's qdiscs as the lab probed them).
pub(crate) fn facts(caps: Option<KernelCaps>) -> (String, String, Value) {
    let hostname = read("/proc/sys/kernel/hostname");
    let kernel = format!(
        "{} {}",
        read("/proc/sys/kernel/osrelease"),
        read("/proc/sys/kernel/version")
    );
    let cpuinfo = read("/proc/cpuinfo");
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(str::trim)
        .unwrap_or_default()
        .to_owned();
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let info = json!({
        "cpus": cpus,
        "cpu_model": model,
        "kernel_caps": caps,
    });
    (hostname, kernel.trim().to_owned(), info)
}
