//! The shared views of a measured result: a throughput test's figures ([`Throughput`], its
//! directions, CPU and feedback) and the interval [`Series`] charts draw.
//!
//! Several readers build these (the iperf3-schema reader in `throughput`, the coded
//! and switch-test readers, the latency reader's series), and the report model and renderers
//! show them, so they sit below all of them: this module reads no JSON and calls no reader.

use serde::Serialize;

/// CPU use of one end, percent of one core.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CpuView {
    pub total: f64,
    pub user: f64,
    pub system: f64,
}

/// UDP receive figures of one direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UdpView {
    pub packets: u64,
    pub lost: u64,
    pub lost_percent: f64,
    pub jitter_ms: f64,
    pub out_of_order: u64,
    pub duplicates: u64,
}

/// One direction of traffic in a throughput test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirView {
    /// True for client → server.
    pub client_sends: bool,
    pub sent_bytes: Option<u64>,
    pub sent_bps: Option<f64>,
    pub received_bytes: Option<u64>,
    pub received_bps: Option<f64>,
    /// Seconds the receiver measured over.
    pub seconds: Option<f64>,
    pub retransmits: Option<u64>,
    pub udp: Option<UdpView>,
}

impl DirView {
    /// "client → server" or "server → client".
    pub fn label(&self) -> &'static str {
        if self.client_sends {
            "client → server"
        } else {
            "server → client"
        }
    }

    /// Delivered / sent, percent: UDP datagrams, else TCP bytes.
    pub fn delivered_percent(&self) -> Option<f64> {
        if let Some(u) = &self.udp {
            if u.packets == 0 {
                return None;
            }
            let got = u.packets.saturating_sub(u.lost);
            return Some(100.0 * got as f64 / u.packets as f64);
        }
        match (self.received_bytes, self.sent_bytes) {
            (Some(r), Some(s)) if s > 0 => Some(100.0 * r as f64 / s as f64),
            _ => None,
        }
    }
}

/// A time series: `(seconds, value)` points, one per interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Indices of the points whose interval does not start where the previous point's ended
    /// (a missing interval): a chart does not join across them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub breaks: Vec<usize>,
    /// End of the last point's interval, to find the next gap.
    #[serde(skip)]
    last_end: Option<f64>,
    /// An interval without a figure was seen since the last point.
    #[serde(skip)]
    skipped: bool,
}

impl Series {
    pub(crate) fn new(label: String) -> Series {
        Series {
            label,
            points: Vec::new(),
            breaks: Vec::new(),
            last_end: None,
            skipped: false,
        }
    }

    /// Notes an interval that has no figure: the line breaks there.
    pub(crate) fn skip(&mut self) {
        self.skipped = true;
    }

    /// Adds the figure of the interval `start..end` (plotted at `x`).
    pub(crate) fn push(&mut self, start: Option<f64>, end: f64, x: f64, y: f64) {
        let touches = match (self.last_end, start) {
            (Some(prev), Some(start)) => (start - prev).abs() <= 1e-3,
            (Some(prev), None) => end > prev,
            (None, _) => true,
        };
        if (self.skipped || !touches) && !self.points.is_empty() {
            self.breaks.push(self.points.len());
        }
        self.points.push((x, y));
        self.last_end = Some(end);
        self.skipped = false;
    }
}

/// What the receiver tells the sender while data flows: the scenario's "feedback" column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FeedbackView {
    /// "ACKs" (TCP), "none" (UDP), or a coded transfer's mode ("unrestricted", "restricted").
    pub mode: String,
    /// Feedback messages the receiver sent (coded transfers).
    pub messages: Option<u64>,
    /// Rounds of repair the sender answered feedback with (coded transfers).
    pub rounds: Option<u64>,
}

impl FeedbackView {
    /// A feedback of `mode` with no counts.
    pub fn mode(mode: &str) -> Self {
        Self {
            mode: mode.into(),
            messages: None,
            rounds: None,
        }
    }
}

/// A throughput test's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Throughput {
    /// "TCP", "UDP" or "CODED".
    pub protocol: String,
    /// "upload", "reverse" or "bidir".
    pub direction: String,
    /// "client" or "server": which end wrote the document.
    pub role: String,
    /// The tool that wrote the document and its version ([`tool`](crate::json::tool)).
    pub tool: Option<String>,
    pub version: Option<String>,
    pub system_info: Option<String>,
    pub timestamp_unix: Option<f64>,
    pub streams: Option<u64>,
    pub congestion: Option<String>,
    /// Target bit/s per stream, 0 = unlimited.
    pub target_bitrate: Option<u64>,
    pub blksize: Option<u64>,
    pub duration_secs: Option<f64>,
    /// Main direction first (client → server in bidir).
    pub directions: Vec<DirView>,
    /// Mean of the TCP senders' mean RTT, ms.
    pub tcp_rtt_ms: Option<f64>,
    pub cpu_client: Option<CpuView>,
    pub cpu_server: Option<CpuView>,
    /// Interval sums in bit/s, one series per sum and per end the document has (its own
    /// intervals, then the other end's).
    pub throughput: Vec<Series>,
    /// Lost percent per interval, one series per UDP receiving stream and end.
    pub stream_loss: Vec<Series>,
    pub partial: bool,
    pub error: Option<String>,
    /// Moves between address families (switch tests): (seconds, what), marked on the chart.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub switches: Vec<(f64, String)>,
    /// The return path's feedback.
    pub feedback: Option<FeedbackView>,
}

impl Throughput {
    /// A sonde client's one-stream transfer in one direction (`dir`), nothing else known:
    /// the base of the documents with shapes of their own (coded, switch tests).
    pub(crate) fn one_direction(protocol: &str, dir: DirView) -> Throughput {
        let reverse = !dir.client_sends;
        Throughput {
            protocol: protocol.into(),
            direction: if reverse { "reverse" } else { "upload" }.into(),
            role: "client".into(),
            tool: Some("sonde".into()),
            version: None,
            system_info: None,
            timestamp_unix: None,
            streams: Some(1),
            congestion: None,
            target_bitrate: None,
            blksize: None,
            duration_secs: dir.seconds,
            directions: vec![dir],
            tcp_rtt_ms: None,
            cpu_client: None,
            cpu_server: None,
            throughput: Vec::new(),
            stream_loss: Vec::new(),
            partial: false,
            error: None,
            switches: Vec::new(),
            feedback: None,
        }
    }

    /// Received goodput over all directions, bit/s.
    pub fn goodput_bps(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .directions
            .iter()
            .filter_map(|d| d.received_bps)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum())
    }

    /// Delivered / sent over all directions, percent (the least of the directions).
    pub fn delivered_percent(&self) -> Option<f64> {
        self.directions
            .iter()
            .filter_map(DirView::delivered_percent)
            .reduce(f64::min)
    }

    /// TCP retransmits over all directions.
    pub fn retransmits(&self) -> Option<u64> {
        let v: Vec<u64> = self
            .directions
            .iter()
            .filter_map(|d| d.retransmits)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum())
    }

    /// Mean UDP jitter over directions, ms.
    pub fn jitter_ms(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .directions
            .iter()
            .filter_map(|d| d.udp.as_ref().map(|u| u.jitter_ms))
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }

    /// The protocol parameters in a few words: `"cubic"`, `"97.20 Mbit/s"`, `"-P 2"`.
    pub fn params_label(&self) -> String {
        let mut p = Vec::new();
        if let Some(c) = &self.congestion {
            p.push(c.clone());
        }
        match self.target_bitrate {
            Some(0) | None => {}
            Some(b) => p.push(format!("{} per stream", crate::fmt::rate(b as f64))),
        }
        if let Some(n) = self.streams.filter(|n| *n > 1) {
            p.push(format!("{n} streams"));
        }
        if self.direction != "upload" {
            p.push(self.direction.clone());
        }
        p.join(", ")
    }
}
