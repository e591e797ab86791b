//! One iperf 2 UDP test as the server receives it: the datagrams of one client address and
//! port, accounted by sequence number (loss, reordering, duplicates, RFC 3550 jitter), its
//! intervals and its End emitted to the test's sink, and at the end the report iperf 2's
//! client waits for.
//!
//! iperf 2's client ends with its last sequence number negated. The first such datagram is
//! still data (iperf 2 counts it), so a test of 89 datagrams ends with `-89` and reports 89.
//! Times are arguments (monotonic nanoseconds), so the accounting is testable without a clock.

use sonde_proto::iperf2::server_report::{ServerReport, Totals};
use sonde_proto::message::{PeerStream, TestParams};
use sonde_stats::interval::bits_per_second;
use sonde_stats::model::{
    CpuUsage, EndView, Event, IntervalReport, Role, StreamRole, StreamSample, TestSummary,
};
use sonde_stats::sink::{deliver, Sink};
use sonde_stats::sum::sum_streams;
use sonde_stats::udp_rx::{final_stats, UdpReceiveTracker, UdpRxCounters};

/// A UDP test being received.
pub struct Flow {
    pub params: TestParams,
    /// 64-bit sequence numbers (the header's flag; 2.1.8 always sets it).
    pub wide: bool,
    tracker: UdpReceiveTracker,
    first_ns: u64,
    last_ns: u64,
    interval_ns: u64,
    next_boundary_ns: u64,
    at_boundary: UdpRxCounters,
    boundary_ns: u64,
    sink: Box<dyn Sink<Event> + Send>,
    ended: bool,
}

impl Flow {
    /// A flow whose first datagram arrived at `now_ns`; its events go to `sink`, which has
    /// had the test's Start.
    pub fn new(
        params: TestParams,
        wide: bool,
        interval_secs: f64,
        now_ns: u64,
        sink: Box<dyn Sink<Event> + Send>,
    ) -> Self {
        let interval_ns = (interval_secs.max(0.0) * 1e9) as u64;
        Flow {
            params,
            wide,
            tracker: UdpReceiveTracker::new(),
            first_ns: now_ns,
            last_ns: now_ns,
            interval_ns,
            next_boundary_ns: now_ns.saturating_add(interval_ns),
            at_boundary: UdpRxCounters::default(),
            boundary_ns: now_ns,
            sink,
            ended: false,
        }
    }

    /// Accounts a data datagram (sequence number from 1) of `bytes` sent at `send_ns` (the
    /// client's clock).
    pub fn on_data(&mut self, seq: u64, send_ns: u64, now_ns: u64, bytes: u64) {
        self.tick(now_ns);
        self.tracker.on_datagram(seq, send_ns, now_ns, bytes);
        self.last_ns = now_ns;
    }

    /// Emits the intervals that ended by `now_ns`.
    pub fn tick(&mut self, now_ns: u64) {
        while self.interval_ns > 0 && now_ns >= self.next_boundary_ns {
            let at = self.next_boundary_ns;
            self.emit_interval(at);
            self.next_boundary_ns = at.saturating_add(self.interval_ns);
        }
    }

    /// Nanoseconds since the last datagram.
    pub fn idle_ns(&self, now_ns: u64) -> u64 {
        now_ns.saturating_sub(self.last_ns)
    }

    fn secs(&self, ns: u64) -> f64 {
        ns.saturating_sub(self.first_ns) as f64 / 1e9
    }

    fn emit_interval(&mut self, at_ns: u64) {
        let now = self.tracker.counters();
        let (start, end) = (self.secs(self.boundary_ns), self.secs(at_ns));
        let bytes = now.bytes.saturating_sub(self.at_boundary.bytes);
        let sample = StreamSample {
            id: 1,
            role: StreamRole::Receiver,
            start,
            end,
            bytes,
            bits_per_second: bits_per_second(bytes, end - start),
            omitted: false,
            tcp: None,
            udp_sent_packets: None,
            udp_received: Some(now.interval_stats(&self.at_boundary)),
        };
        let sums = sum_streams(StreamRole::Receiver, &[&sample])
            .into_iter()
            .collect();
        deliver(
            &mut *self.sink,
            &Event::Interval(IntervalReport {
                streams: vec![sample],
                sums,
            }),
        );
        self.at_boundary = now;
        self.boundary_ns = at_ns;
    }

    /// What iperf 2's report carries, from the counters so far.
    pub fn totals(&self) -> Totals {
        let c = self.tracker.counters();
        Totals {
            bytes: c.bytes,
            duration_us: self.last_ns.saturating_sub(self.first_ns) / 1000,
            lost: c.lost(),
            out_of_order: c.out_of_order,
            datagrams: c.max_seq,
            jitter_us: (c.jitter_secs * 1e6).round() as u64,
            received: c.unique,
        }
    }

    /// Ends the test: the last interval, the End (with `error` when it did not end with the
    /// client's final datagram), and the report bytes to answer the final datagrams with.
    pub fn finish(&mut self, sent: Option<u64>, error: Option<String>) -> Vec<u8> {
        if self.ended {
            return self.report();
        }
        self.ended = true;
        if self.last_ns > self.boundary_ns {
            self.emit_interval(self.last_ns);
        }
        let c = self.tracker.counters();
        let duration = self.secs(self.last_ns);
        let view = EndView {
            start: 0.0,
            end: duration,
            bytes: c.bytes,
            bits_per_second: bits_per_second(c.bytes, duration),
            tcp: None,
            udp_sent_packets: None,
            udp_received: Some(final_stats(&c, &UdpRxCounters::default(), sent)),
        };
        let summary = summary(&self.params, view, error);
        deliver(&mut *self.sink, &Event::End(Box::new(summary)));
        self.report()
    }

    fn report(&self) -> Vec<u8> {
        let mut out = Vec::new();
        ServerReport::from_totals(&self.totals()).emit(&mut out);
        out
    }
}

impl Drop for Flow {
    fn drop(&mut self) {
        if !self.ended {
            self.finish(
                None,
                Some("the server stopped before the test ended".into()),
            );
        }
    }
}

/// The server's summary of a one-stream UDP test: only this end's receiving view.
fn summary(p: &TestParams, view: EndView, error: Option<String>) -> TestSummary {
    let local = [PeerStream {
        id: 1,
        role: StreamRole::Receiver,
        view,
    }];
    sonde_runtime_core::summary::build(sonde_runtime_core::summary::SummaryInput {
        role: Role::Server,
        params: p,
        local: &local,
        peer: None,
        cpu_local: CpuUsage::default(),
        local_congestion: None,
        error,
    })
}
