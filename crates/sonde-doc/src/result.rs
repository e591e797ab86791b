//! Reading result documents: sonde's `-J` throughput document (iperf3's schema, which real
//! iperf3 output also follows) and sonde's latency document.
//!
//! A throughput document holds the interval reports of the end that wrote it and, when the
//! other end's were passed along, those too: sonde keeps them in `sonde.peer_intervals`, iperf3
//! run with `--get-server-output` (against an iperf3 server in `-J` mode) in
//! `server_output_json.intervals`. Both are read, each series labelled with the end that
//! measured it, so a chart shows the sender's and the receiver's view side by side.
//!
//! The documents are read from JSON values, not deserialised into the runtime's types: a report
//! must render results from older sondes and from iperf3 itself, where fields are missing or
//! extra. Every field is optional here; what is missing shows as a dash in the report. Only the
//! shape that says *what kind* of document it is must be present.

use serde::Serialize;
use serde_json::Value;

/// Looks up a path of object keys.
pub fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

/// A number at `path`.
pub fn num(v: &Value, path: &[&str]) -> Option<f64> {
    at(v, path)
        .and_then(Value::as_f64)
        .filter(|f| f.is_finite())
}

/// An unsigned integer at `path`.
pub fn uint(v: &Value, path: &[&str]) -> Option<u64> {
    at(v, path).and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f.max(0.0) as u64)))
}

/// The elements of the array at key `k` (none when it is missing or not an array).
pub fn items<'a>(v: &'a Value, k: &str) -> impl Iterator<Item = &'a Value> {
    v.get(k).and_then(Value::as_array).into_iter().flatten()
}

/// A string at `path`.
pub fn text(v: &Value, path: &[&str]) -> Option<String> {
    at(v, path).and_then(Value::as_str).map(str::to_owned)
}

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
    fn skip(&mut self) {
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

/// The tool that wrote a document, with its version: `"sonde 0.1.0"`, `"iperf3 3.12"`.
/// iperf3 writes `start.version` as `"iperf 3.12"`; sonde as `"sonde 0.1.0"`.
pub fn tool(doc: &Value) -> Option<String> {
    match text(doc, &["start", "version"]) {
        Some(v) => match v.strip_prefix("iperf ") {
            Some(version) => Some(format!("iperf3 {}", version.trim())),
            None => Some(v),
        },
        None if doc.get("sonde").is_some() || at(doc, &["start", "sonde"]).is_some() => {
            Some("sonde".into())
        }
        None => None,
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
    /// The tool that wrote the document and its version ([`tool`]).
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

/// A delay distribution, ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DelayView {
    pub samples: u64,
    pub min: f64,
    pub mean: f64,
    pub median: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub stddev: f64,
}

impl DelayView {
    fn read(v: Option<&Value>) -> Option<DelayView> {
        let v = v.filter(|v| v.is_object())?;
        let f = |k: &str| num(v, &[k]).unwrap_or(0.0);
        Some(DelayView {
            samples: uint(v, &["samples"]).unwrap_or(0),
            min: f("min_ms"),
            mean: f("mean_ms"),
            median: f("median_ms"),
            p90: f("p90_ms"),
            p99: f("p99_ms"),
            p999: f("p999_ms"),
            max: f("max_ms"),
            stddev: f("stddev_ms"),
        })
    }
}

/// Round-trip times binned as the latency document's `end.rtt_histogram` holds them:
/// `{"unit": "ms", "bins": [[low, high, count], ...]}`, one entry per non-empty bin, in
/// ascending order, each sample counted in the bin with `low <= rtt <= high`.
///
/// This is what an honest distribution plot needs: every sample, at the resolution of its
/// bin, rather than a curve drawn through a few quantiles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RttHistogram {
    /// `(low_ms, high_ms, count)`, ascending, non-empty bins only.
    pub bins: Vec<(f64, f64, u64)>,
}

impl RttHistogram {
    fn read(v: Option<&Value>) -> Option<RttHistogram> {
        let v = v?;
        if text(v, &["unit"]).is_some_and(|u| u != "ms") {
            return None;
        }
        let mut bins: Vec<(f64, f64, u64)> = v
            .get("bins")?
            .as_array()?
            .iter()
            .filter_map(|b| {
                let b = b.as_array()?;
                let (lo, hi, n) = (
                    b.first()?.as_f64()?,
                    b.get(1)?.as_f64()?,
                    b.get(2)?.as_u64()?,
                );
                (lo.is_finite() && hi.is_finite() && lo <= hi && n > 0).then_some((lo, hi, n))
            })
            .collect();
        bins.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        (!bins.is_empty()).then_some(RttHistogram { bins })
    }

    /// Samples in the bins.
    pub fn samples(&self) -> u64 {
        self.bins.iter().map(|b| b.2).sum()
    }

    /// The widest bin, ms.
    pub fn widest_bin_ms(&self) -> f64 {
        self.bins.iter().map(|b| b.1 - b.0).fold(0.0, f64::max)
    }

    /// The empirical CDF as `(ms, fraction of samples at or below)`: starts at 0 at the
    /// lowest bin's low edge, then each bin's samples are counted at its high edge (so the
    /// curve never claims a sample below where it may lie).
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        let total = self.samples() as f64;
        let mut out = Vec::with_capacity(self.bins.len() + 1);
        if let Some(first) = self.bins.first() {
            out.push((first.0, 0.0));
        }
        let mut seen = 0u64;
        for &(_, hi, n) in &self.bins {
            seen += n;
            out.push((hi, seen as f64 / total));
        }
        out
    }
}

/// A latency run's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    pub mode: String,
    /// The tool that wrote the document and its version ([`tool`]).
    pub tool: Option<String>,
    pub target: Option<String>,
    pub family: Option<String>,
    pub size: Option<u64>,
    pub version: Option<String>,
    pub timestamp_unix: Option<f64>,
    pub sent: Option<u64>,
    pub received: Option<u64>,
    pub loss_percent: Option<f64>,
    pub jitter_ms: Option<f64>,
    pub rtt: Option<DelayView>,
    /// Every round trip, binned, when the document has them.
    pub rtt_histogram: Option<RttHistogram>,
    /// Median RTT per interval, ms (plotted at each interval's end).
    pub over_time: Series,
    pub partial: bool,
    pub error: Option<String>,
}

/// What a document holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ResultDoc {
    Throughput(Box<Throughput>),
    Latency(Box<Latency>),
    Profile(Box<crate::profile::ProfileRun>),
    Stress(Box<crate::stress::StressRun>),
    Sweep(Box<crate::sweep::SweepRun>),
    Capacity(Box<crate::capacity::CapacityRun>),
    #[serde(rename = "compare-ip")]
    CompareIp(Box<crate::compare_ip::CompareIpRun>),
    Rrul(Box<crate::rrul::RrulRun>),
    Btc(Box<crate::btc::BtcRun>),
}

/// Reads a document, or says why it is not one this report knows.
pub fn read(doc: &Value) -> Result<ResultDoc, String> {
    if crate::coded::is_coded(doc) {
        return Ok(ResultDoc::Throughput(Box::new(crate::coded::throughput(
            doc,
        ))));
    }
    if crate::switch::is_switch_test(doc) {
        return Ok(ResultDoc::Throughput(Box::new(crate::switch::throughput(
            doc,
        ))));
    }
    if at(doc, &["start", "test_start"]).is_some() {
        return Ok(ResultDoc::Throughput(Box::new(throughput(doc))));
    }
    // Before stress: a sweep's steps also carry offered rates.
    if crate::sweep::is_sweep(doc) {
        return Ok(ResultDoc::Sweep(Box::new(crate::sweep::read(doc))));
    }
    if crate::capacity::is_capacity(doc) {
        return Ok(ResultDoc::Capacity(Box::new(crate::capacity::read(doc))));
    }
    if crate::compare_ip::is_compare_ip(doc) {
        return Ok(ResultDoc::CompareIp(Box::new(crate::compare_ip::read(doc))));
    }
    if crate::rrul::is_rrul(doc) {
        return Ok(ResultDoc::Rrul(Box::new(crate::rrul::read(doc))));
    }
    if crate::btc::is_btc(doc) {
        return Ok(ResultDoc::Btc(Box::new(crate::btc::read(doc))));
    }
    // Before latency: a stress run's start also names a mode.
    if crate::stress::is_stress(doc) {
        return Ok(ResultDoc::Stress(Box::new(crate::stress::read(doc))));
    }
    if at(doc, &["start", "mode"]).is_some() {
        return Ok(ResultDoc::Latency(Box::new(latency(doc))));
    }
    if crate::profile::is_profile(doc) {
        return Ok(ResultDoc::Profile(Box::new(crate::profile::read(doc))));
    }
    if !doc.is_object() {
        return Err("not a JSON object".into());
    }
    Err(
        "neither a throughput document (no start.test_start), a latency document \
         (no start.mode), a profile document (no profile and streams), a stress, sweep, \
         capacity, compare-ip, rrul nor btc document"
            .into(),
    )
}

fn cpu(v: &Value, prefix: &str) -> Option<CpuView> {
    let c = at(v, &["end", "cpu_utilization_percent"])?;
    Some(CpuView {
        total: num(c, &[&format!("{prefix}_total")])?,
        user: num(c, &[&format!("{prefix}_user")]).unwrap_or(0.0),
        system: num(c, &[&format!("{prefix}_system")]).unwrap_or(0.0),
    })
}

fn udp_view(v: &Value) -> Option<UdpView> {
    let packets = uint(v, &["packets"])?;
    Some(UdpView {
        packets,
        lost: uint(v, &["lost_packets"]).unwrap_or(0),
        lost_percent: num(v, &["lost_percent"]).unwrap_or(0.0),
        jitter_ms: num(v, &["jitter_ms"]).unwrap_or(0.0),
        out_of_order: uint(v, &["out_of_order"]).unwrap_or(0),
        duplicates: uint(v, &["duplicates"]).unwrap_or(0),
    })
}

fn direction_of(doc: &Value) -> String {
    if let Some(d) = text(doc, &["start", "sonde", "direction"]) {
        return d;
    }
    let ts = |k| uint(doc, &["start", "test_start", k]).unwrap_or(0);
    if ts("bidir") != 0 {
        "bidir".into()
    } else if ts("reverse") != 0 {
        "reverse".into()
    } else {
        "upload".into()
    }
}

fn throughput(doc: &Value) -> Throughput {
    let ts = |k: &str| at(doc, &["start", "test_start", k]).cloned();
    let protocol = ts("protocol")
        .and_then(|v| v.as_str().map(str::to_uppercase))
        .unwrap_or_else(|| "?".into());
    let udp = protocol == "UDP";
    let direction = direction_of(doc);
    let role = text(doc, &["start", "sonde", "role"]).unwrap_or_else(|| {
        if at(doc, &["start", "accepted_connection"]).is_some() {
            "server".into()
        } else {
            "client".into()
        }
    });
    let end = at(doc, &["end"]).cloned().unwrap_or(Value::Null);
    let mut directions = Vec::new();
    for suffix in ["", "_bidir_reverse"] {
        let sent = end.get(format!("sum_sent{suffix}"));
        let recv = end.get(format!("sum_received{suffix}"));
        if sent.is_none() && recv.is_none() {
            continue;
        }
        let client_sends = if suffix.is_empty() {
            direction != "reverse"
        } else {
            false
        };
        let udp_src = end.get(format!("sum{suffix}")).or(recv);
        directions.push(DirView {
            client_sends,
            sent_bytes: sent.and_then(|v| uint(v, &["bytes"])),
            sent_bps: sent.and_then(|v| num(v, &["bits_per_second"])),
            received_bytes: recv.and_then(|v| uint(v, &["bytes"])),
            received_bps: recv.and_then(|v| num(v, &["bits_per_second"])),
            seconds: recv.and_then(|v| num(v, &["seconds"])),
            retransmits: if udp {
                None
            } else {
                sent.and_then(|v| uint(v, &["retransmits"]))
            },
            udp: if udp {
                udp_src.and_then(udp_view)
            } else {
                None
            },
        });
    }
    let rtts: Vec<f64> = end
        .get("streams")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| num(s, &["sender", "mean_rtt"]))
                .collect()
        })
        .unwrap_or_default();
    let tcp_rtt_ms = (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64 / 1e3);
    let remote_known = at(&end, &["sonde", "remote_cpu_known"])
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let (host, remote) = (
        cpu(doc, "host"),
        cpu(doc, "remote").filter(|_| remote_known),
    );
    let (cpu_client, cpu_server) = if role == "server" {
        (remote, host)
    } else {
        (host, remote)
    };
    let (mut throughput, mut stream_loss) = intervals(doc.get("intervals"), &direction, &role);
    // The other end's intervals: sonde's peer_intervals, or iperf3's server output (a client
    // document only; the server's own document has no such field).
    let peer_role = if role == "server" { "client" } else { "server" };
    let peer = at(doc, &["sonde", "peer_intervals"])
        .or_else(|| at(doc, &["server_output_json", "intervals"]).filter(|_| role == "client"));
    let (peer_sums, peer_loss) = intervals(peer, &direction, peer_role);
    throughput.extend(peer_sums);
    stream_loss.extend(peer_loss);
    let protocol_name = protocol.clone();
    let protocol_name = protocol_name.as_str();
    Throughput {
        protocol,
        direction,
        role,
        tool: tool(doc),
        version: text(doc, &["start", "version"]),
        system_info: text(doc, &["start", "system_info"]),
        timestamp_unix: num(doc, &["start", "timestamp", "timemillisecs"])
            .map(|ms| ms / 1e3)
            .or_else(|| num(doc, &["start", "timestamp", "timesecs"])),
        streams: ts("num_streams").and_then(|v| v.as_u64()),
        congestion: text(doc, &["end", "sender_tcp_congestion"])
            .or_else(|| text(doc, &["start", "sonde", "congestion"])),
        target_bitrate: ts("target_bitrate").and_then(|v| v.as_u64()),
        blksize: ts("blksize").and_then(|v| v.as_u64()),
        duration_secs: ts("duration").and_then(|v| v.as_f64()),
        directions,
        tcp_rtt_ms,
        cpu_client,
        cpu_server,
        throughput,
        stream_loss,
        partial: at(&end, &["sonde", "partial"])
            .and_then(Value::as_bool)
            .unwrap_or(end.is_null()),
        error: text(doc, &["error"]),
        switches: Vec::new(),
        feedback: match protocol_name {
            "TCP" => Some(FeedbackView::mode("ACKs")),
            "UDP" => Some(FeedbackView::mode("none")),
            _ => None,
        },
    }
}

/// Interval series of the end `role` from its list of interval reports: throughput per sum,
/// and lost percent per receiving UDP stream.
fn intervals(list: Option<&Value>, direction: &str, role: &str) -> (Vec<Series>, Vec<Series>) {
    let Some(list) = list.and_then(Value::as_array) else {
        return (Vec::new(), Vec::new());
    };
    let main_c2s = direction != "reverse";
    let mut sums: Vec<Series> = Vec::new();
    let mut losses: Vec<(u64, Series)> = Vec::new();
    for iv in list {
        for (key, c2s) in [("sum", main_c2s), ("sum_bidir_reverse", false)] {
            let Some(s) = iv.get(key) else { continue };
            let (Some(end), Some(bps)) = (num(s, &["end"]), num(s, &["bits_per_second"])) else {
                continue;
            };
            // Plotted at the interval's middle: the rate is an average over the interval.
            let start = num(s, &["start"]);
            let mid = start.map_or(end, |start| (start + end) / 2.0);
            let host_sent = at(s, &["sender"]).and_then(Value::as_bool).unwrap_or(true);
            let label = format!(
                "{} {} by {} ({})",
                if c2s {
                    "client → server"
                } else {
                    "server → client"
                },
                if host_sent { "sent" } else { "received" },
                role,
                if host_sent { "sender" } else { "receiver" },
            );
            let at = match sums.iter().position(|x| x.label == label) {
                Some(i) => i,
                None => {
                    sums.push(Series::new(label));
                    sums.len() - 1
                }
            };
            if let Some(x) = sums.get_mut(at) {
                x.push(start, end, mid, bps);
            }
        }
        for st in iv
            .get("streams")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(id), Some(end), Some(lp)) = (
                uint(st, &["socket"]),
                num(st, &["end"]),
                num(st, &["lost_percent"]),
            ) else {
                continue;
            };
            let start = num(st, &["start"]);
            let mid = start.map_or(end, |start| (start + end) / 2.0);
            let at = match losses.iter().position(|(i, _)| *i == id) {
                Some(i) => i,
                None => {
                    let label = format!("stream {id}, received by {role}");
                    losses.push((id, Series::new(label)));
                    losses.len() - 1
                }
            };
            if let Some((_, x)) = losses.get_mut(at) {
                x.push(start, end, mid, lp);
            }
        }
    }
    losses.sort_by_key(|(id, _)| *id);
    (sums, losses.into_iter().map(|(_, s)| s).collect())
}

fn latency(doc: &Value) -> Latency {
    let end = at(doc, &["end"]);
    let mut over_time = Series::new("median RTT per interval".into());
    for iv in doc
        .get("intervals")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        // An interval without an answer has no median: the line breaks there.
        if let (Some(end), Some(ms)) = (num(iv, &["end"]), num(iv, &["rtt", "median_ms"])) {
            over_time.push(num(iv, &["start"]), end, end, ms);
        } else {
            over_time.skip();
        }
    }
    let mode = match at(doc, &["start", "mode"]) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "?".into(),
    };
    Latency {
        mode,
        tool: tool(doc),
        target: text(doc, &["start", "target"]),
        family: text(doc, &["start", "family"]),
        size: uint(doc, &["start", "size"]),
        version: text(doc, &["start", "version"]),
        timestamp_unix: num(doc, &["start", "timestamp_unix"]),
        sent: end.and_then(|e| uint(e, &["loss", "sent"])),
        received: end.and_then(|e| uint(e, &["loss", "received"])),
        loss_percent: end.and_then(|e| num(e, &["loss", "loss_percent"])),
        jitter_ms: end.and_then(|e| num(e, &["jitter_ms"])),
        rtt: DelayView::read(end.and_then(|e| e.get("rtt"))),
        rtt_histogram: RttHistogram::read(end.and_then(|e| e.get("rtt_histogram"))),
        over_time,
        partial: end
            .and_then(|e| e.get("partial"))
            .and_then(Value::as_bool)
            .unwrap_or(end.is_none()),
        error: text(doc, &["error"]).or_else(|| end.and_then(|e| text(e, &["error"]))),
    }
}
