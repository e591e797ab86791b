//! Turns the workers' live counters into interval reports and end-of-test views.
//!
//! The meter snapshots every stream at each interval boundary (and at the end of the omit
//! period, the baseline the summary counts from) and hands the deltas to the pure statistics in
//! `sonde-stats`. It reads clocks only through the `elapsed` argument.

use crate::streams::StreamShared;
use sonde_platform::tcp_info::{self, TcpInfo};
use sonde_proto::message::PeerStream;
use sonde_stats::interval::{bits_per_second, IntervalSchedule};
use sonde_stats::model::{
    EndView, IntervalReport, Protocol, StreamRole, StreamSample, TcpInfoSample,
};
use sonde_stats::sum::sum_streams;
use sonde_stats::tcp_summary::TcpSummaryBuilder;
use sonde_stats::udp_rx::{final_stats, UdpRxCounters};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// One stream as the meter sees it.
pub struct MeteredStream {
    pub shared: Arc<StreamShared>,
    /// A handle on the TCP socket for TCP_INFO (sending TCP streams only).
    pub tcp: Option<TcpStream>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Snapshot {
    bytes: u64,
    packets: u64,
    udp: UdpRxCounters,
    retrans: u64,
}

/// Interval and summary accounting for the local streams of one test.
pub struct Meter {
    protocol: Protocol,
    schedule: IntervalSchedule,
    streams: Vec<MeteredStream>,
    prev: Vec<Snapshot>,
    baseline: Vec<Snapshot>,
    tcp_builders: Vec<TcpSummaryBuilder>,
    last_info: Vec<Option<TcpInfo>>,
    last_boundary: f64,
    baseline_taken: bool,
    /// `clock::now_ns()` when the meter (and so the test's clock) started.
    start_ns: u64,
    /// The clock counts from the first data (see [`Meter::settle_clock`]).
    clock_settled: bool,
}

impl Meter {
    pub fn new(
        protocol: Protocol,
        interval_secs: f64,
        omit_secs: f64,
        streams: Vec<MeteredStream>,
    ) -> Self {
        let n = streams.len();
        Self {
            protocol,
            schedule: IntervalSchedule::new(interval_secs, omit_secs),
            streams,
            prev: vec![Snapshot::default(); n],
            baseline: vec![Snapshot::default(); n],
            tcp_builders: (0..n).map(|_| TcpSummaryBuilder::new()).collect(),
            last_info: vec![None; n],
            last_boundary: 0.0,
            baseline_taken: omit_secs <= 0.0,
            start_ns: crate::clock::now_ns(),
            clock_settled: false,
        }
    }

    /// Starts the server's test clock again at the client's Start, unless the clock already
    /// counts from the first data or an interval was cut (None then): the server's clock then
    /// counts from the client's start, so both ends' intervals cover the same spans. Returns
    /// the new start (`clock::now_ns()`). [`Meter::settle_clock`] moves it to the first data.
    pub fn restart_clock(&mut self) -> Option<u64> {
        if self.clock_settled || self.last_boundary > 0.0 {
            return None;
        }
        self.start_ns = crate::clock::now_ns();
        Some(self.start_ns)
    }

    /// Starts the test's clock at this end's first data, sent or received, once that has
    /// happened (and only while no interval was cut); the new start, the first time only.
    ///
    /// Why: a clock started before the data counts time nothing could have moved. The
    /// client's clock starts before its senders' threads first run and before its Start
    /// leaves, and the server's when it reads the Start; data can arrive before that is read
    /// (by milliseconds on a busy host), and a server clock started after the data credited
    /// those bytes to a shorter span (0.3 s tests received up to 1.5 % faster than they were
    /// sent). Both ends' clocks now start with the data.
    pub fn settle_clock(&mut self) -> Option<u64> {
        if self.clock_settled || self.last_boundary > 0.0 {
            return None;
        }
        let first = self
            .streams
            .iter()
            .map(|s| s.shared.first_data_ns.load(Ordering::Relaxed))
            .filter(|&ns| ns > 0)
            .min()?;
        self.clock_settled = true;
        self.start_ns = first;
        Some(first)
    }

    /// `clock::now_ns()` at the start of the test's clock.
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }

    pub fn streams(&self) -> &[MeteredStream] {
        &self.streams
    }

    fn snapshot(&mut self, i: usize) -> Snapshot {
        let s = &self.streams[i].shared;
        let udp = s.udp_rx.lock().map(|t| t.counters()).unwrap_or_default();
        let retrans = self.last_info[i].map(|t| t.total_retrans).unwrap_or(0);
        Snapshot {
            bytes: s.bytes.load(Ordering::Relaxed),
            packets: s.packets.load(Ordering::Relaxed),
            udp,
            retrans,
        }
    }

    /// Seconds since start at which the next report is due (None when intervals are off and
    /// the omit baseline is taken).
    pub fn next_due(&self) -> Option<f64> {
        let next = self.schedule.next_boundary(self.last_boundary);
        if !self.baseline_taken {
            let omit = self.schedule.omit();
            return Some(next.map_or(omit, |n| n.min(omit)));
        }
        next
    }

    /// Called often with the time since the test start; returns a report when one is due.
    pub fn tick(&mut self, elapsed: f64) -> Option<IntervalReport> {
        let due = self.next_due()?;
        if elapsed + 1e-9 < due {
            return None;
        }
        let report = self.sample(due, self.schedule.interval() > 0.0);
        if !self.baseline_taken && due + 1e-9 >= self.schedule.omit() {
            self.baseline_taken = true;
            self.baseline = self.prev.clone();
            self.tcp_builders = (0..self.streams.len())
                .map(|_| TcpSummaryBuilder::new())
                .collect();
        }
        report
    }

    /// The last, partial interval at the end of the test, if it is long enough to mean much.
    pub fn finish(&mut self, elapsed: f64) -> Option<IntervalReport> {
        let span = elapsed - self.last_boundary;
        let min = (self.schedule.interval() * 0.1).max(0.01);
        if self.schedule.interval() <= 0.0 || span < min {
            // Still keep TCP figures current for the summary.
            self.refresh_tcp(self.schedule.is_omitted(elapsed));
            return None;
        }
        self.sample(elapsed, true)
    }

    fn refresh_tcp(&mut self, omitted: bool) -> Vec<Option<TcpInfoSample>> {
        (0..self.streams.len())
            .map(|i| {
                let st = &self.streams[i];
                let info = st.tcp.as_ref().and_then(tcp_info::read)?;
                let prev = self.last_info[i].map(|p| p.total_retrans).unwrap_or(0);
                self.last_info[i] = Some(info);
                let sample = TcpInfoSample {
                    retransmits: info.total_retrans.saturating_sub(prev),
                    snd_cwnd: info.snd_cwnd_bytes,
                    rtt_us: info.rtt_us,
                    rttvar_us: info.rttvar_us,
                    pmtu: info.pmtu,
                    snd_wnd: info.snd_wnd.map(u64::from),
                    reorder: info.reord_seen.map(u64::from),
                };
                if !omitted {
                    self.tcp_builders[i].add(&sample);
                }
                Some(sample)
            })
            .collect()
    }

    fn sample(&mut self, at: f64, emit: bool) -> Option<IntervalReport> {
        let start = self.last_boundary;
        let omitted = self.schedule.is_omitted(at);
        let tcp = self.refresh_tcp(omitted);
        let mut samples = Vec::with_capacity(self.streams.len());
        for (i, tcp) in tcp.into_iter().enumerate() {
            let now = self.snapshot(i);
            let prev = self.prev[i];
            self.prev[i] = now;
            let shared = &self.streams[i].shared;
            let bytes = now.bytes.saturating_sub(prev.bytes);
            let udp = self.protocol == Protocol::Udp;
            samples.push(StreamSample {
                id: shared.id,
                role: shared.role,
                start,
                end: at,
                bytes,
                bits_per_second: bits_per_second(bytes, at - start),
                omitted,
                tcp,
                udp_sent_packets: (udp && shared.role == StreamRole::Sender)
                    .then(|| now.packets.saturating_sub(prev.packets)),
                udp_received: (udp && shared.role == StreamRole::Receiver)
                    .then(|| now.udp.interval_stats(&prev.udp)),
            });
        }
        self.last_boundary = at;
        if !emit {
            return None;
        }
        let refs: Vec<&StreamSample> = samples.iter().collect();
        let sums = [StreamRole::Sender, StreamRole::Receiver]
            .into_iter()
            .filter_map(|r| sum_streams(r, &refs))
            .collect();
        Some(IntervalReport {
            streams: samples,
            sums,
        })
    }

    /// [`Meter::end_views`] as the streams of an end's results.
    pub fn peer_streams(
        &mut self,
        end: f64,
        sent_by_peer: &dyn Fn(u32) -> Option<u64>,
        peer_stopped_at: Option<f64>,
    ) -> Vec<PeerStream> {
        self.end_views(end, sent_by_peer, peer_stopped_at)
            .into_iter()
            .map(|(id, role, view)| PeerStream { id, role, view })
            .collect()
    }

    /// Each stream's view of the whole test, from the omit baseline to `end` seconds.
    /// `sent_by_peer` gives, for UDP streams this end receives, how many datagrams the peer sent;
    /// `peer_stopped_at`, when the peer's senders were told to stop (seconds of its clock).
    pub fn end_views(
        &mut self,
        end: f64,
        sent_by_peer: &dyn Fn(u32) -> Option<u64>,
        peer_stopped_at: Option<f64>,
    ) -> Vec<(u32, StreamRole, EndView)> {
        let start = if self.baseline_taken {
            self.schedule.omit()
        } else {
            end
        };
        (0..self.streams.len())
            .map(|i| {
                let now = self.snapshot(i);
                let base = self.baseline[i];
                let shared = &self.streams[i].shared;
                let bytes = now.bytes.saturating_sub(base.bytes);
                let udp = self.protocol == Protocol::Udp;
                let sender = shared.role == StreamRole::Sender;
                let tcp = self.streams[i].tcp.is_some().then(|| {
                    let mut t = self.tcp_builders[i].build();
                    t.retransmits = now.retrans.saturating_sub(base.retrans);
                    t
                });
                let last_rx = shared.last_rx_ns.load(Ordering::Relaxed);
                let last_arrival =
                    (last_rx > self.start_ns).then(|| (last_rx - self.start_ns) as f64 / 1e9);
                let end = if sender {
                    end
                } else {
                    receiver_end(end, last_arrival, peer_stopped_at).max(start)
                };
                let view = EndView {
                    start,
                    end,
                    bytes,
                    bits_per_second: bits_per_second(bytes, end - start),
                    tcp,
                    udp_sent_packets: (udp && sender)
                        .then(|| now.packets.saturating_sub(base.packets)),
                    udp_received: (udp && !sender)
                        .then(|| final_stats(&now.udp, &base.udp, sent_by_peer(shared.id))),
                };
                (shared.id, shared.role, view)
            })
            .collect()
    }
}

/// Where a receiver's span ends (test seconds): at its last arrival when that came after the
/// stop (the drain), so that drained bytes are not credited to a shorter time; else at the
/// stop, which is when the peer's senders stopped when the peer said so (both ends' clocks
/// start at the first data) and not later than this end's own `stop`. The peer's figure can
/// move the end back to the last arrival at most.
fn receiver_end(stop: f64, last_arrival: Option<f64>, peer_stopped_at: Option<f64>) -> f64 {
    let stopped = peer_stopped_at
        .filter(|p| p.is_finite() && *p >= 0.0)
        .map_or(stop, |p| p.min(stop));
    last_arrival.map_or(stopped, |a| stopped.max(a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streams::StreamShared;

    fn meter(roles: &[StreamRole]) -> Meter {
        let streams = roles
            .iter()
            .enumerate()
            .map(|(i, &role)| MeteredStream {
                shared: Arc::new(StreamShared::new(i as u32 + 1, role)),
                tcp: None,
            })
            .collect();
        Meter::new(Protocol::Udp, 1.0, 0.0, streams)
    }

    #[test]
    fn a_receivers_span_ends_where_the_peer_stopped_or_at_its_last_arrival() {
        // The Stop read 4 ms after the peer's senders stopped, the last datagram before it.
        assert_eq!(receiver_end(0.304, Some(0.3001), Some(0.3)), 0.3001);
        // A drain after the stop extends the span, whatever the peer says.
        assert_eq!(receiver_end(0.304, Some(0.35), Some(0.3)), 0.35);
        // Nothing arrived lately (an outage): the span still runs to the peer's stop.
        assert_eq!(receiver_end(0.304, Some(0.1), Some(0.3)), 0.3);
        // No figure (an older client), or a nonsense one: this end's own stop.
        assert_eq!(receiver_end(0.304, Some(0.3001), None), 0.304);
        assert_eq!(receiver_end(0.304, None, Some(f64::NAN)), 0.304);
        // A peer cannot stretch the span past this end's stop, nor cut it before the data.
        assert_eq!(receiver_end(0.304, Some(0.3), Some(9.0)), 0.304);
        assert_eq!(receiver_end(0.304, Some(0.3), Some(0.0)), 0.3);
    }

    #[test]
    fn the_clock_settles_on_the_first_data_sent_or_received_once() {
        let mut m = meter(&[StreamRole::Sender, StreamRole::Receiver]);
        assert_eq!(m.settle_clock(), None, "no data yet");
        let t = crate::clock::now_ns();
        m.streams()[1].shared.data_read(0, 0, t + 5_000);
        m.streams()[0].shared.data_read(0, 0, t + 9_000);
        assert_eq!(m.settle_clock(), Some(t + 5_000));
        assert_eq!(m.start_ns(), t + 5_000);
        // Settled: later data and the server's restart at the Start leave it.
        m.streams()[0]
            .shared
            .first_data_ns
            .store(t + 1, Ordering::Relaxed);
        assert_eq!(m.settle_clock(), None);
        assert_eq!(m.restart_clock(), None);
        assert_eq!(m.start_ns(), t + 5_000);
    }

    #[test]
    fn a_restart_before_any_data_is_moved_to_the_first_data() {
        let mut m = meter(&[StreamRole::Sender]);
        let restarted = m.restart_clock().unwrap();
        assert_eq!(m.start_ns(), restarted);
        m.streams()[0].shared.data_sent();
        let first = m.settle_clock().unwrap();
        assert!(first >= restarted);
        assert_eq!(m.start_ns(), first);
    }

    #[test]
    fn late_reads_are_dated_back_by_how_long_the_data_waited() {
        let m = meter(&[StreamRole::Receiver]);
        let s = &m.streams()[0].shared;
        s.data_read(3_000_000, 1_000_000, 10_000_000);
        assert_eq!(s.first_data_ns.load(Ordering::Relaxed), 7_000_000);
        assert_eq!(s.last_rx_ns.load(Ordering::Relaxed), 9_000_000);
        // A later read moves the last arrival, not the first.
        s.data_read(0, 500_000, 12_000_000);
        assert_eq!(s.first_data_ns.load(Ordering::Relaxed), 7_000_000);
        assert_eq!(s.last_rx_ns.load(Ordering::Relaxed), 11_500_000);
    }

    #[test]
    fn the_clock_is_not_moved_once_an_interval_was_cut() {
        let mut m = meter(&[StreamRole::Receiver]);
        assert!(m.tick(1.5).is_some());
        m.streams()[0].shared.data_read_at(crate::clock::now_ns());
        assert_eq!(m.settle_clock(), None);
        assert_eq!(m.restart_clock(), None);
    }
}
