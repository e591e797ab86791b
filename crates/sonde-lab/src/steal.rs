//! Time the hypervisor held this machine's CPUs back while a lab ran ("steal" in
//! `/proc/stat`).
//!
//! On a virtual machine the host may run something else on the cores the guest thinks it has;
//! the guest's threads, the lab's real-time forwarder included, then stop for that long,
//! unseen by any scheduler inside. The kernel counts that time per CPU. A lab that took a
//! noticeable share says so in its notes: a delay or a gap measured through it may be the host's
//! doing, not the link's.

use std::time::Duration;

/// Steal below this is not worth a note (the counter ticks in 10 ms steps).
const NOTE_FROM: Duration = Duration::from_millis(50);

/// The machine's total steal time so far, if the kernel reports it.
pub fn total() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    // SAFETY: sysconf only reads a system constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = u64::try_from(hz).ok().filter(|h| *h > 0)?;
    let ticks = steal_ticks(&stat)?;
    Some(Duration::from_millis(ticks.saturating_mul(1000) / hz))
}

/// The steal field (the eighth number) of the all-CPU line of `/proc/stat`, in clock ticks.
fn steal_ticks(stat: &str) -> Option<u64> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    line.split_whitespace().nth(8)?.parse().ok()
}

/// How the steal note begins, so that a reader of a lab's notes can tell it from the others.
pub const NOTE_START: &str = "the hypervisor held this machine's CPUs back";

/// The note for `stolen` steal time over a lab that ran `lasted`, if it is worth one.
pub fn note(stolen: Duration, lasted: Duration) -> Option<String> {
    (stolen >= NOTE_FROM).then(|| {
        format!(
            "{NOTE_START} for {} ms in all while the lab ran \
             ({:.1} s; steal time in /proc/stat): a delay or gap measured through the lab may \
             be the host's doing, not the link's",
            stolen.as_millis(),
            lasted.as_secs_f64()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steal_field_is_read_from_the_all_cpu_line() {
        let stat = "cpu  4923409 1534 1096128 10460697 15421 0 301447 22484 0 0\n\
                    cpu0 1 2 3 4 5 6 7 99 0 0\nintr 1 2\n";
        assert_eq!(steal_ticks(stat), Some(22484));
        assert_eq!(steal_ticks("cpu  1 2 3\n"), None);
        assert_eq!(steal_ticks("intr 1\n"), None);
    }

    #[test]
    fn a_little_steal_is_no_news() {
        let s = Duration::from_secs(20);
        assert_eq!(note(Duration::from_millis(40), s), None);
        let n = note(Duration::from_millis(120), s).unwrap();
        assert!(
            n.contains("for 120 ms in all while the lab ran (20.0 s;"),
            "{n}"
        );
    }

    #[test]
    fn this_machine_reports_a_figure_or_none() {
        // Linux has had the field since 2.6.11; elsewhere, or without /proc, it is None.
        if std::path::Path::new("/proc/stat").exists() {
            assert!(total().is_some());
        }
    }
}
