//! How soon a connection to a PostgreSQL that vanished is given up: a server whose host lost
//! power or whose link was cut sends nothing, not even a reset, and without a limit a copy
//! in flight waits for the kernel's retransmissions to end, about 15 minutes on Linux, while
//! every later copy waits behind it. The agent buffers locally whatever a failed copy did not
//! write, so giving up early loses nothing.
//!
//! Unless the URL sets them (libpq's names and units: `tcp_user_timeout` in milliseconds,
//! the keepalive settings in seconds), a connection gives up after [`USER_TIMEOUT`] with
//! data unacknowledged, and probes an idle connection after [`KEEPALIVE_IDLE`], every
//! [`KEEPALIVE_INTERVAL`], [`KEEPALIVE_RETRIES`] times: a dead peer is noticed within about
//! 30 s either way.

use std::time::Duration;

/// Longest wait for the server to acknowledge data sent.
pub const USER_TIMEOUT: Duration = Duration::from_secs(30);
/// Idle time before the first keepalive probe.
pub const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);
/// Time between unanswered probes.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
/// Unanswered probes before the connection is dropped.
pub const KEEPALIVE_RETRIES: u32 = 4;

/// Sets on `config` the limits the URL leaves unset (`url_keys`: the keys its query names,
/// as crate::pg::tls::parse found them).
pub fn apply_defaults(config: &mut postgres::Config, url_keys: &[String]) {
    let sets = |k: &str| url_keys.iter().any(|g| g == k);
    if !sets("keepalives") {
        config.keepalives(true);
    }
    if !sets("keepalives_idle") {
        config.keepalives_idle(KEEPALIVE_IDLE);
    }
    if !sets("keepalives_interval") {
        config.keepalives_interval(KEEPALIVE_INTERVAL);
    }
    if !sets("keepalives_retries") {
        config.keepalives_retries(KEEPALIVE_RETRIES);
    }
    if !sets("tcp_user_timeout") {
        config.tcp_user_timeout(USER_TIMEOUT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_only_what_the_url_leaves_unset() {
        let url = "postgres://u@h/db?keepalives_idle=60&connect_timeout=3";
        let (mut config, settings) = crate::pg::tls::parse(url).unwrap();
        apply_defaults(&mut config, &settings.url_keys);
        assert_eq!(config.get_keepalives_idle(), Duration::from_secs(60));
        assert_eq!(config.get_keepalives_interval(), Some(KEEPALIVE_INTERVAL));
        assert_eq!(config.get_keepalives_retries(), Some(KEEPALIVE_RETRIES));
        assert_eq!(config.get_tcp_user_timeout(), Some(&USER_TIMEOUT));
        assert!(config.get_keepalives());
        // libpq's tcp_user_timeout is in milliseconds (the driver's, in seconds).
        let url = "postgres://u@h/db?tcp_user_timeout=1500&keepalives=0";
        let (mut config, settings) = crate::pg::tls::parse(url).unwrap();
        apply_defaults(&mut config, &settings.url_keys);
        assert_eq!(
            config.get_tcp_user_timeout(),
            Some(&Duration::from_millis(1500))
        );
        assert!(!config.get_keepalives());
    }
}
