//! `-y C`: iperf 2's CSV lines from `sonde client` and `sonde server`, as a script written for
//! iperf 2 reads them. Each run is short (1-2 s, loopback) and the tests assert the shape and
//! the bookkeeping of the lines, never a rate: the count of lines, the count of columns, that
//! every column parses, the transfer ids (`-1` on sums), the intervals, which end is the
//! source, and how the bytes add up within one run: a sum line's are its streams' (per interval
//! and in the summary), a summary's are at least its interval lines' (it also counts the last
//! moments after the last interval, under a tenth of an interval, which have no line of their
//! own in sonde as in iperf 2), and a TCP server's summary says the bytes the client's says.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common::Server;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// One parsed line.
#[derive(Debug, Clone)]
struct Row {
    src_port: u16,
    dst_port: u16,
    id: i64,
    start: f64,
    end: f64,
    bytes: u64,
    /// jitter, lost, total, percent, out-of-order (UDP lines only).
    udp: Option<(f64, u64, u64, f64, u64)>,
}

fn num<T: std::str::FromStr>(line: &str, col: &str, what: &str) -> T {
    col.parse()
        .unwrap_or_else(|_| panic!("{what} '{col}' does not parse in: {line}"))
}

/// Parses one line, asserting that it has `cols` columns and that each parses.
fn parse(line: &str, cols: usize) -> Row {
    let c: Vec<&str> = line.split(',').collect();
    assert_eq!(c.len(), cols, "columns of: {line}");
    assert!(
        c[0].len() == 14 && c[0].bytes().all(|b| b.is_ascii_digit()) && c[0].starts_with("20"),
        "timestamp of: {line}"
    );
    let _: IpAddr = num(line, c[1], "source address");
    let _: IpAddr = num(line, c[3], "destination address");
    let (start, end) = c[6]
        .split_once('-')
        .unwrap_or_else(|| panic!("interval of: {line}"));
    assert!(
        start.split_once('.').is_some_and(|(_, d)| d.len() == 1),
        "one decimal: {line}"
    );
    let _bps: u64 = num(line, c[8], "bits per second");
    let udp = (cols == 14).then(|| {
        (
            num(line, c[9], "jitter"),
            num(line, c[10], "lost"),
            num(line, c[11], "total"),
            num(line, c[12], "percent"),
            num(line, c[13], "out of order"),
        )
    });
    Row {
        src_port: num(line, c[2], "source port"),
        dst_port: num(line, c[4], "destination port"),
        id: num(line, c[5], "transfer id"),
        start: num(line, start, "interval start"),
        end: num(line, end, "interval end"),
        bytes: num(line, c[7], "bytes"),
        udp,
    }
}

/// A run's lines split into interval lines and the summary (the last block: one line per
/// stream, and a sum when there are several), checked against each other.
struct Report {
    intervals: Vec<Row>,
    summary: Vec<Row>,
}

impl Report {
    fn of(text: &str, streams: usize, cols: usize) -> Report {
        let rows: Vec<Row> = text.lines().map(|l| parse(l, cols)).collect();
        let tail = streams + usize::from(streams > 1);
        assert!(rows.len() > tail, "too few lines:\n{text}");
        let (intervals, summary) = rows.split_at(rows.len() - tail);
        let r = Report {
            intervals: intervals.to_vec(),
            summary: summary.to_vec(),
        };
        r.check(text, streams);
        r
    }

    fn ids(rows: &[Row]) -> Vec<i64> {
        let mut ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Ids, intervals and bytes agree between the interval lines and the summary.
    fn check(&self, text: &str, streams: usize) {
        let ids = Self::ids(&self.summary);
        assert_eq!(Self::ids(&self.intervals), ids, "{text}");
        let stream_ids: Vec<i64> = ids.iter().copied().filter(|&i| i > 0).collect();
        assert_eq!(stream_ids.len(), streams, "{text}");
        assert_eq!(ids.contains(&-1), streams > 1, "{text}");
        let mut by_id: BTreeMap<i64, u64> = BTreeMap::new();
        for r in &self.intervals {
            assert!(r.end > r.start && r.end - r.start <= 1.05, "{text}");
            *by_id.entry(r.id).or_default() += r.bytes;
        }
        let last_end = self.intervals.iter().map(|r| r.end).fold(0.0, f64::max);
        for s in &self.summary {
            assert_eq!(s.start, 0.0, "{text}");
            assert!(s.end >= last_end, "{text}");
            // The summary also counts the last moments of the test after the last interval,
            // when they are under a tenth of an interval (no line of their own, as in iperf 2).
            let intervals = by_id.get(&s.id).copied().unwrap_or(0);
            assert!(intervals > 0 && s.bytes >= intervals, "id {}: {text}", s.id);
        }
        if streams > 1 {
            let sum: u64 = self
                .summary
                .iter()
                .filter(|s| s.id > 0)
                .map(|s| s.bytes)
                .sum();
            let all = self.summary.iter().find(|s| s.id == -1).map(|s| s.bytes);
            assert_eq!(all, Some(sum), "{text}");
        }
    }

    /// Interval lines in order of their start: each start is one of `0.0, 1.0, ...`.
    fn starts(&self) -> Vec<f64> {
        let mut s: Vec<f64> = self.intervals.iter().map(|r| r.start).collect();
        s.dedup();
        s
    }
}

/// What the server (run with `-y C`) printed once it holds `want` lines, within 15 s.
fn server_lines(server: &Server, want: usize) -> String {
    let t0 = Instant::now();
    loop {
        let text = server.output_so_far();
        let out: String = text
            .lines()
            .filter(|l| l.starts_with("20"))
            .map(|l| format!("{l}\n"))
            .collect();
        if out.lines().count() >= want || t0.elapsed() > Duration::from_secs(15) {
            return out;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn client(server: &Server, args: &[&str]) -> String {
    let out = server.client(args, Duration::from_secs(30));
    out.expect_code(0);
    out.stdout
}

#[test]
fn a_tcp_client_and_its_server_write_iperf2s_nine_columns() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&["-y", "C"]);
    let text = client(&server, &["-t", "2", "-i", "1", "-y", "C"]);
    let c = Report::of(&text, 1, 9);
    assert_eq!(c.starts(), [0.0, 1.0], "{text}");
    assert_eq!(c.summary[0].id, 1, "{text}");
    // The client sends: its port is the source, the server's the destination.
    assert!(
        c.summary.iter().all(|r| r.dst_port == server.port),
        "{text}"
    );
    assert!(
        c.intervals
            .iter()
            .all(|r| r.src_port == c.summary[0].src_port),
        "{text}"
    );
    let srv = server_lines(&server, c.intervals.len() + 1);
    let s = Report::of(&srv, 1, 9);
    assert!(s.summary.iter().all(|r| r.dst_port == server.port), "{srv}");
    assert_eq!(s.summary[0].src_port, c.summary[0].src_port, "{srv}");
    assert_eq!(
        s.summary[0].bytes, c.summary[0].bytes,
        "received = sent: {srv}\n{text}"
    );
}

#[test]
fn two_streams_add_a_sum_line_with_id_minus_one() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&["-y", "c"]);
    let text = client(
        &server,
        &["-t", "2", "-i", "1", "-P", "2", "--reportstyle", "C"],
    );
    let c = Report::of(&text, 2, 9);
    for start in c.starts() {
        let at: Vec<&Row> = c.intervals.iter().filter(|r| r.start == start).collect();
        assert_eq!(at.len(), 3, "two streams and their sum at {start}: {text}");
        let streams: u64 = at.iter().filter(|r| r.id > 0).map(|r| r.bytes).sum();
        let sum = at.iter().find(|r| r.id == -1).map(|r| r.bytes);
        assert_eq!(sum, Some(streams), "{text}");
    }
    let srv = server_lines(&server, c.intervals.len() + 3);
    Report::of(&srv, 2, 9);
}

#[test]
fn udp_lines_add_jitter_lost_total_percent_and_out_of_order() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&["-y", "C"]);
    let text = client(
        &server,
        &["-u", "-b", "10m", "-t", "2", "-i", "1", "-y", "C"],
    );
    let c = Report::of(&text, 1, 14);
    // The sender's lines: no jitter, loss or reordering of its own; total = datagrams sent.
    let mut sent = 0;
    for r in &c.intervals {
        let (jitter, lost, total, pct, ooo) = r.udp.unwrap();
        assert_eq!((jitter, lost, pct, ooo), (0.0, 0, 0.0, 0), "{text}");
        sent += total;
    }
    let total = c.summary[0].udp.unwrap().2;
    assert!(
        sent > 0 && total >= sent,
        "the summary counts what the intervals sent: {text}"
    );
    let srv = server_lines(&server, c.intervals.len() + 1);
    let s = Report::of(&srv, 1, 14);
    for r in s.intervals.iter().chain(&s.summary) {
        let (jitter, lost, total, pct, _) = r.udp.unwrap();
        assert!(
            jitter >= 0.0 && lost <= total && (0.0..=100.0).contains(&pct),
            "{srv}"
        );
    }
    let expected: u64 = s.intervals.iter().map(|r| r.udp.unwrap().2).sum();
    let received = s.summary[0].udp.unwrap().2;
    assert!(expected > 0 && received >= expected, "{srv}");
    // The receiver expects no more datagrams than were sent, and gets no more bytes.
    assert!(
        received <= total && s.summary[0].bytes <= c.summary[0].bytes,
        "{srv}\n{text}"
    );
}

#[test]
fn a_reverse_test_names_the_server_as_the_source() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let text = client(&server, &["-t", "1", "-i", "1", "-R", "-y", "C"]);
    let c = Report::of(&text, 1, 9);
    assert!(
        c.intervals
            .iter()
            .chain(&c.summary)
            .all(|r| r.src_port == server.port),
        "{text}"
    );
}

#[test]
fn y_c_refuses_json_and_commands_without_iperf2_lines() {
    let _turn = crate::turns::take(module_path!());
    let both = crate::common::run(
        &["client", "127.0.0.1", "-y", "C", "-J"],
        Duration::from_secs(10),
    );
    both.expect_code(2);
    assert!(
        both.stderr.contains("cannot be used with"),
        "{}",
        both.describe()
    );
    let latency = crate::common::run(
        &["latency", "127.0.0.1", "-y", "C"],
        Duration::from_secs(10),
    );
    latency.expect_code(2);
    assert!(
        latency.stderr.contains("not 'sonde latency'"),
        "{}",
        latency.describe()
    );
}
