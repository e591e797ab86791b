//! What refuses a value of the agent's configuration, and why: the error type and the rate
//! parser that both the file's sections (`config`) and the agent's server settings
//! (`server_settings`) use, kept apart from both so that neither imports the other for them.

/// Why a configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Not TOML, an unknown key, or a value of the wrong type.
    #[error("agent configuration: {0}")]
    Parse(#[from] toml::de::Error),
    /// A value out of its range, or settings that contradict each other.
    #[error("agent configuration: {0}")]
    Invalid(String),
}

/// A link or server rate with SI suffixes as iperf3 users type them (`100M`, `1.5g`, `800k`):
/// the CLI's own [`sonde_stats::units::parse_rate`] (so a rate below 1 bit/s is refused as it
/// is there), with zero refused too (to a client or server it means "unlimited", never a rate
/// to take a share of).
///
/// # Errors
/// Why the text is not a rate, to follow the field's name.
pub fn parse_positive_rate(s: &str) -> Result<u64, String> {
    sonde_stats::units::parse_positive_rate(s.trim()).map_err(|e| e.to_string())
}
