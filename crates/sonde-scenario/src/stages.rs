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
}
