//! The settings of the impairment stages that a scenario names as values.
//!
//! A scenario file writes these and `sonde-emu` builds its stages from them, so they live with
//! the file format, not with the engine: the engine depends on the format, never the other way.

/// The distribution of the jitter term.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Distribution {
    /// Uniform on `[-jitter, +jitter]` (netem's default without a table).
    #[default]
    Uniform,
    /// Normal with standard deviation `jitter`.
    Normal,
    /// Pareto (shape 3), shifted and scaled to mean 0 and standard deviation `jitter`: mostly a
    /// little early, sometimes very late.
    Pareto,
    /// netem's `paretonormal`: a quarter of the variance Pareto, three quarters normal.
    ParetoNormal,
}

/// The four netem `gemodel` parameters, as probabilities in 0..=1.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct GeParams {
    /// Good → bad transition probability.
    pub p: f64,
    /// Bad → good transition probability.
    pub r: f64,
    /// Loss probability in the bad state (netem's `1-h`).
    pub loss_bad: f64,
    /// Loss probability in the good state (netem's `1-k`).
    pub loss_good: f64,
}

impl GeParams {
    /// netem's defaults for the omitted parameters: `r = 1 - p`, `1-h = 1`, `1-k = 0`.
    pub fn simple(p: f64) -> Self {
        GeParams {
            p,
            r: 1.0 - p,
            loss_bad: 1.0,
            loss_good: 0.0,
        }
    }

    /// The long-run loss rate, `(r·(1-k) + p·(1-h)) / (p + r)`; with `p = r = 0` the chain
    /// stays in the good state.
    pub fn stationary_loss(&self) -> f64 {
        if self.p + self.r == 0.0 {
            return self.loss_good;
        }
        (self.r * self.loss_good + self.p * self.loss_bad) / (self.p + self.r)
    }
}

/// Settings of a `sonde-emu`'s device stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Most frames per second the device moves.
    pub pps: u64,
    /// Frames the ring holds, including the one being moved.
    pub ring: u32,
    /// Flow control: a frame that finds the ring full waits upstream (the sender's own
    /// transmit queue) instead of being dropped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub backpressure: bool,
    /// Frames the upstream queue holds with `backpressure` (default
    /// [`DeviceConfig::DEFAULT_QUEUE`]); a frame beyond it is dropped there, and counted there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<u32>,
}

impl DeviceConfig {
    /// The upstream queue's default length: a Linux host's default `txqueuelen`.
    pub const DEFAULT_QUEUE: u32 = 1000;
    /// The longest upstream queue a scenario may ask for (frames are held in memory).
    pub const MAX_QUEUE: u32 = 100_000;

    /// A device of `pps` frames per second and a `ring`-frame ring that drops at ring full.
    pub fn dropping(pps: u64, ring: u32) -> Self {
        DeviceConfig {
            pps,
            ring,
            backpressure: false,
            queue: None,
        }
    }

    /// The upstream queue's length when `backpressure` is on.
    pub fn queue_len(&self) -> u32 {
        self.queue.unwrap_or(Self::DEFAULT_QUEUE)
    }
}

/// Whether a link's two directions share its rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Duplex {
    /// Each direction has the whole rate (the default).
    #[default]
    Full,
    /// Both directions draw on one rate budget, as on a shared half-duplex medium.
    Half,
}
