//! iperf3's control protocol and UDP stream format (3.x wire behaviour), sans-IO.
//!
//! sonde speaks iperf3 in both directions: the server accepts real iperf3 clients on its own
//! port, and `sonde client --iperf3` drives a real `iperf3 -s`. The protocol is documented in
//! the esnet/iperf source (`iperf_api.c`, `iperf_client_api.c`, `iperf_server_api.c`), and the parts
//! sonde relies on are described on the modules below. Everything here is pure, so
//! each part is tested with literal bytes and fuzzed (`fuzz/fuzz_targets/iperf3_control.rs`):
//!
//! - [`state`]: the signed state bytes with checked conversions, and iperf3's error numbers;
//! - [`codec`]: the control byte stream (state bytes, 4-byte length + JSON, error pairs) with a
//!   size limit on every JSON message (8 KiB parameters, as iperf3 3.18+; bounded results);
//! - [`params`]: the parameter JSON, read with exact types, and its mapping to sonde's
//!   [`TestParams`](crate::message::TestParams);
//! - [`results`]: the results JSON (accepts `-1` printed as 18446744073709551615 by 3.12/3.13);
//! - [`udp`]: the UDP datagram header (32- or 64-bit sequence) and the UDP "connect" hello;
//! - [`session`]: the server and client control state machines.
//! - [`auth`]: the RSA credentials token (`authtoken`) and the server's checks of it.
//!
//! iperf3 numbers streams 1, 3, 4, 5, ... (a historical off-by-one); sonde numbers them 1..N.
//! [`to_iperf3_id`] and [`from_iperf3_id`] convert.

pub mod auth;
pub mod codec;
pub mod params;
pub mod results;
pub mod session;
pub mod state;
pub mod udp;

/// Bytes of the cookie that opens every iperf3 TCP connection (36 characters and a NUL).
pub const COOKIE_LEN: usize = 37;

/// An iperf3 session cookie.
pub type Cookie = [u8; COOKIE_LEN];

/// The alphabet iperf3 3.2+ draws cookie characters from.
const COOKIE_ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// Builds a cookie from 36 random bytes (each taken modulo 32, as iperf3 does).
pub fn cookie_from_random(random: &[u8; 36]) -> Cookie {
    let mut c = [0u8; COOKIE_LEN];
    for (dst, r) in c.iter_mut().zip(random.iter()) {
        *dst = COOKIE_ALPHABET[usize::from(*r % 32)];
    }
    c
}

/// Whether `b` opens with a cookie as iperf3 3.2+ makes them ([`cookie_from_random`]): 36
/// characters of its alphabet, then a NUL. Fewer than [`COOKIE_LEN`] bytes are no cookie.
pub fn is_cookie(b: &[u8]) -> bool {
    match b.get(..COOKIE_LEN) {
        Some([chars @ .., 0]) => chars.iter().all(|c| COOKIE_ALPHABET.contains(c)),
        _ => false,
    }
}

/// The cookie as text (the characters before the NUL; other bytes shown as `?`).
pub fn cookie_text(c: &Cookie) -> String {
    c.iter()
        .take_while(|&&b| b != 0)
        .map(|&b| if b.is_ascii_graphic() { b as char } else { '?' })
        .collect()
}

/// iperf3's id for sonde stream `id` (1-based): 1, 3, 4, 5, ...
pub fn to_iperf3_id(id: u32) -> u32 {
    if id <= 1 {
        id
    } else {
        id.saturating_add(1)
    }
}

/// sonde's id for iperf3 stream `id`; None for 2 (never used by iperf3) and 0.
pub fn from_iperf3_id(id: u32) -> Option<u32> {
    match id {
        0 | 2 => None,
        1 => Some(1),
        n => Some(n - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_ids_skip_two() {
        let ids: Vec<u32> = (1..=4).map(to_iperf3_id).collect();
        assert_eq!(ids, vec![1, 3, 4, 5]);
        for id in 1..100 {
            assert_eq!(from_iperf3_id(to_iperf3_id(id)), Some(id));
        }
        assert_eq!(from_iperf3_id(2), None);
        assert_eq!(from_iperf3_id(0), None);
    }

    #[test]
    fn cookie_uses_base32_alphabet_and_ends_in_nul() {
        let c = cookie_from_random(&[255; 36]);
        assert_eq!(c[36], 0);
        assert!(c[..36].iter().all(|b| COOKIE_ALPHABET.contains(b)));
        assert_eq!(cookie_text(&c).len(), 36);
        assert!(is_cookie(&c));
        assert!(is_cookie(&[&c[..], b"more"].concat()));
        assert!(!is_cookie(&c[..36]));
        let mut upper = c;
        upper[0] = b'A';
        assert!(!is_cookie(&upper));
        let mut no_nul = c;
        no_nul[36] = b'a';
        assert!(!is_cookie(&no_nul));
    }
}
