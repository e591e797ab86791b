//! Regression tests: the CPU figures of `sonde client -J` (`end.cpu_utilization_percent`)
//! are each end's process CPU time over the wall time of the same span. A client of 128
//! streams on 2 cores once said 177 % to 2409 % (`/usr/bin/time`: about 100 %): it read the
//! CPU counters before starting its stream threads and the clock after, and a slow start of
//! many threads fell into the CPU time only. Checked against what the OS says the processes
//! used: the client's through `/usr/bin/time` (wait4's rusage), the server's in `/proc`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common::{self, num, require_all, Server};
use std::time::Duration;

/// The test's length (-t), seconds.
const SECS: f64 = 1.0;

fn cores() -> f64 {
    // SAFETY: sysconf only reads a system value.
    unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) as f64 }
}

/// User plus system CPU seconds process `pid` has used so far (`/proc/PID/stat`).
fn cpu_secs(pid: i32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command name in parentheses: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').unwrap().1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    // SAFETY: sysconf only reads a system value.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 }
}

/// `/usr/bin/time`'s user plus system seconds of the child, from its last stderr line.
fn time_cpu_secs(stderr: &str) -> f64 {
    let line = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("cpu-secs "))
        .unwrap();
    let mut f = line
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse::<f64>().unwrap());
    f.next().unwrap() + f.next().unwrap()
}

#[test]
fn cpu_figures_are_cpu_time_over_wall_time_within_the_cores_at_1_16_and_128_streams() {
    let _turn = crate::turns::take(module_path!());
    let time = "/usr/bin/time";
    if !std::path::Path::new(time).exists() {
        assert!(!require_all(), "SONDE_REQUIRE_ALL=1 but {time} is missing");
        eprintln!("skipped: {time} is missing (it says what the client used)");
        return;
    }
    let mut server = Server::start(&[]);
    let server_pid = server.proc().pid();
    let cap = cores() * 100.0;
    for p in ["1", "16", "128"] {
        let port = server.port.to_string();
        let t = SECS.to_string();
        let args = [
            "-f",
            "cpu-secs %U %S",
            common::sonde_bin(),
            "client",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            &t,
            "-P",
            p,
            "-i",
            "0",
            "-J",
        ];
        let before = cpu_secs(server_pid);
        let out = common::run_program(time, &args, Duration::from_secs(60));
        let server_used = cpu_secs(server_pid) - before;
        out.expect_code(0);
        let d = out.json();
        let host = num(&d, "end.cpu_utilization_percent.host_total");
        let remote = num(&d, "end.cpu_utilization_percent.remote_total");
        let why = format!(
            "-P {p}: host {host} %, remote {remote} %, {cap} % of cores\n{}",
            out.describe()
        );
        assert!(host > 0.0 && host <= cap, "{why}");
        assert!(remote > 0.0 && remote <= cap, "{why}");
        // Each figure's span lasts at least about -t, so its CPU time is at least the figure
        // times -t, and it is part of what the whole process used (the client's from wait4,
        // rounded to 10 ms; the server's from /proc in clock ticks).
        let client_used = time_cpu_secs(&out.stderr);
        assert!(
            host / 100.0 * SECS * 0.95 <= client_used + 0.03,
            "client used {client_used} s; {why}"
        );
        assert!(
            remote / 100.0 * SECS * 0.9 <= server_used + 0.03,
            "server used {server_used} s; {why}"
        );
    }
}
