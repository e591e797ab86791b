//! Pre-shared-key tags on latency probes and the tcp-rr challenge, so that a server started
//! with `--psk-file` answers only clients holding its key.
//!
//! **UDP probes.** A keyed client sets bit 0 of the probe's flags byte (offset 6, reserved
//! and ignored before) and writes a tag right after the 56-byte header: the first
//! [`TAG_LEN`] bytes of `HMAC-SHA256(key, "sonde-probe-v1" ‖ header[0..32])`, i.e. over
//! magic, version, kind, flags, token, sequence number and the client's send time. A tagged
//! probe is therefore at least [`TAGGED_LEN`] = 72 bytes. The responder checks the tag in
//! constant time and drops untagged or badly tagged probes silently; the reply is the request's
//! own bytes (tag included) with the server fields filled in, so it is never larger than the
//! request. Checking costs one HMAC over 46 bytes with the key's inner and outer states
//! prepared once ([`ProbeKey`]), 288 ns on the bench host (bench/RESULTS.md, the
//! `cost_of_a_tag` test below): no per-probe public-key work, no state
//! per client beyond the responder's session table, where a [`ReplayWindow`] drops a sequence
//! number already answered in that session (a captured probe replayed to the same address).
//! A probe replayed from another address is answered once per address, with a reply of its own
//! size: no amplification. Unkeyed servers answer tagged probes as before (the tag is
//! padding to them), and a keyed client's probes reach servers older than the tag unchanged.
//!
//! **tcp-rr.** A keyed client sets bit 31 of the transaction size after `SONDE/R1` (sizes
//! never exceed 65 507, so the bit was always zero). A server that sees it sends a challenge,
//! [`RR_CHALLENGE_MAGIC`] and a fresh 32-byte nonce; the client answers with
//! `HMAC-SHA256(key, "sonde-rr-v1" ‖ nonce ‖ size)` (32 bytes), then transactions go as before.
//! A keyed server refuses (the tcp-rr refusal of [`crate::probe`]) a wrong answer and a
//! connection without the bit; an unkeyed one accepts any answer. One HMAC per connection.
//!
//! The capability [`CAPABILITY`] in the control Welcome says a server knows both.

use crate::probe::HEADER_LEN;
use crate::psk::{Nonce, Psk, NONCE_LEN};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use thiserror::Error;

/// The capability a server lists when its responder and tcp-rr understand keys.
pub const CAPABILITY: &str = "probe-tag";
/// Bytes of a probe's tag.
pub const TAG_LEN: usize = 16;
/// Smallest tagged probe: the header and the tag.
pub const TAGGED_LEN: usize = HEADER_LEN + TAG_LEN;
/// The flags byte of the probe header.
pub const FLAGS: usize = 6;
/// Flag: the probe carries a tag after its header.
pub const FLAG_TAGGED: u8 = 0x01;
/// Header bytes the tag covers: magic to the client's send time.
const COVERED: std::ops::Range<usize> = 0..32;
/// Where the tag sits.
const TAG: std::ops::Range<usize> = HEADER_LEN..TAGGED_LEN;
const PROBE_CONTEXT: &[u8] = b"sonde-probe-v1";
const RR_CONTEXT: &[u8] = b"sonde-rr-v1";

/// Bit 31 of tcp-rr's transaction size: the client holds a key and will answer a challenge.
pub const RR_KEYED_BIT: u32 = 0x8000_0000;
/// Opens a tcp-rr challenge (as a refusal opens with `SONDE/RX`).
pub const RR_CHALLENGE_MAGIC: &[u8; 8] = b"SONDE/RC";
/// Bytes of a tcp-rr challenge.
pub const RR_CHALLENGE_LEN: usize = 8 + NONCE_LEN;
/// Bytes of a tcp-rr answer.
pub const RR_ANSWER_LEN: usize = 32;

/// Why a probe is not accepted by a keyed responder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum TagError {
    #[error("the probe carries no tag (the client has no --psk-file)")]
    Untagged,
    #[error("the probe's tag does not match the server's key")]
    Mismatch,
    #[error("a {0}-byte datagram cannot hold a tagged probe")]
    TooShort(usize),
}

/// A key prepared for tagging and checking probes (the HMAC state after the key, cloned per
/// probe). Its `Debug` shows nothing of the key.
#[derive(Clone)]
pub struct ProbeKey {
    probe: Hmac<Sha256>,
    rr: Hmac<Sha256>,
}

impl std::fmt::Debug for ProbeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProbeKey")
    }
}

impl ProbeKey {
    /// Prepares `psk` for probes and tcp-rr.
    pub fn new(psk: &Psk) -> Self {
        let mut probe = psk.hmac();
        probe.update(PROBE_CONTEXT);
        let mut rr = psk.hmac();
        rr.update(RR_CONTEXT);
        Self { probe, rr }
    }

    fn tag_of(&self, datagram: &[u8]) -> Hmac<Sha256> {
        let mut m = self.probe.clone();
        m.update(&datagram[COVERED]);
        m
    }

    /// Marks the probe header at the start of `datagram` as tagged and writes its tag after
    /// the header. Call after the header is emitted, before sending.
    ///
    /// # Errors
    /// [`TagError::TooShort`] when `datagram` is shorter than [`TAGGED_LEN`].
    pub fn seal(&self, datagram: &mut [u8]) -> Result<(), TagError> {
        if datagram.len() < TAGGED_LEN {
            return Err(TagError::TooShort(datagram.len()));
        }
        datagram[FLAGS] |= FLAG_TAGGED;
        let tag = self.tag_of(datagram).finalize().into_bytes();
        datagram[TAG].copy_from_slice(&tag[..TAG_LEN]);
        Ok(())
    }

    /// Checks the tag of a probe query in constant time.
    ///
    /// # Errors
    /// [`TagError`]: untagged, too short or not matching.
    pub fn check(&self, datagram: &[u8]) -> Result<(), TagError> {
        if datagram.len() < HEADER_LEN || datagram[FLAGS] & FLAG_TAGGED == 0 {
            return Err(TagError::Untagged);
        }
        let tag = datagram
            .get(TAG)
            .ok_or(TagError::TooShort(datagram.len()))?;
        self.tag_of(datagram)
            .verify_truncated_left(tag)
            .map_err(|_| TagError::Mismatch)
    }

    /// The client's answer to a tcp-rr challenge for transaction `size` (the size as sent,
    /// keyed bit included).
    pub fn rr_answer(&self, nonce: &Nonce, size_field: u32) -> [u8; RR_ANSWER_LEN] {
        let mut m = self.rr.clone();
        m.update(nonce);
        m.update(&size_field.to_be_bytes());
        m.finalize().into_bytes().into()
    }

    /// Checks a tcp-rr answer in constant time; true when it is right.
    pub fn rr_verify(&self, nonce: &Nonce, size_field: u32, answer: &[u8]) -> bool {
        let mut m = self.rr.clone();
        m.update(nonce);
        m.update(&size_field.to_be_bytes());
        m.verify_slice(answer).is_ok()
    }
}

/// A tcp-rr challenge on the wire.
pub fn emit_rr_challenge(nonce: &Nonce) -> [u8; RR_CHALLENGE_LEN] {
    let mut out = [0u8; RR_CHALLENGE_LEN];
    out[..8].copy_from_slice(RR_CHALLENGE_MAGIC);
    out[8..].copy_from_slice(nonce);
    out
}

/// The nonce of a tcp-rr challenge; `None` when `buf` does not start with a complete one.
pub fn parse_rr_challenge(buf: &[u8]) -> Option<Nonce> {
    let rest = buf.strip_prefix(RR_CHALLENGE_MAGIC.as_slice())?;
    rest.get(..NONCE_LEN)?.try_into().ok()
}

/// Sequence numbers already answered in one probe session: the highest seen and a bitmap of
/// the 64 below it (IPsec's anti-replay window, RFC 4303 §3.4.3). Probes further behind
/// than 64 are refused too: a real one that late has long been counted lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayWindow {
    highest: u64,
    seen: u64,
}

impl ReplayWindow {
    /// Records `seq`; false when it was seen already or is too old (drop the probe).
    pub fn accept(&mut self, seq: u64) -> bool {
        if seq > self.highest {
            let shift = seq - self.highest;
            self.seen = if shift >= 64 { 0 } else { self.seen << shift };
            self.seen |= 1;
            self.highest = seq;
            return true;
        }
        let back = self.highest - seq;
        if back >= 64 {
            return false;
        }
        let bit = 1u64 << back;
        if self.seen & bit != 0 {
            return false;
        }
        self.seen |= bit;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{Probe, ProbeKind};

    fn key(s: &str) -> ProbeKey {
        ProbeKey::new(&Psk::from_file_bytes(s.as_bytes()).unwrap())
    }
    const K: &str = "0123456789abcdef0123456789abcdef";

    fn tagged(seq: u64, len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        Probe::request(0x0102, seq, 4).emit(&mut b).unwrap();
        key(K).seal(&mut b).unwrap();
        b
    }

    /// Checked against an independent computation: `(printf sonde-probe-v1; printf` the
    /// header's first 32 bytes`) | openssl dgst -sha256 -hmac K`, its first 16 bytes.
    #[test]
    fn tag_literal_bytes() {
        let b = tagged(3, TAGGED_LEN);
        let mut want = vec![b'S', b'N', b'D', b'P', 1, 1, FLAG_TAGGED, 0];
        for v in [0x0102u64, 3, 4, 0, 0, 0] {
            want.extend_from_slice(&v.to_be_bytes());
        }
        assert_eq!(&b[..HEADER_LEN], &want[..]);
        assert_eq!(crate::psk::hex(&b[HEADER_LEN..]), GOLDEN_TAG);
        // The header still parses; an unkeyed responder sees padding.
        assert_eq!(Probe::parse(&b).unwrap().seq, 3);
    }
    const GOLDEN_TAG: &str = "39ee3508006fbbb9d1e25cbb04741d51";

    #[test]
    fn check_accepts_the_key_only() {
        let b = tagged(3, 100);
        assert_eq!(key(K).check(&b), Ok(()));
        let other = key("fedcba9876543210fedcba9876543210");
        assert_eq!(other.check(&b), Err(TagError::Mismatch));
        // Any covered byte changed breaks it; the server fields and padding are not covered.
        for at in [5usize, 8, 16, 24, HEADER_LEN, TAGGED_LEN - 1] {
            let mut c = b.clone();
            c[at] ^= 0x40;
            assert_ne!(key(K).check(&c), Ok(()), "byte {at}");
        }
        let mut c = b.clone();
        c[40] ^= 1;
        c[90] ^= 1;
        assert_eq!(key(K).check(&c), Ok(()));
        // Untagged and short probes.
        let mut plain = vec![0u8; 100];
        Probe::request(1, 1, 1).emit(&mut plain).unwrap();
        assert_eq!(key(K).check(&plain), Err(TagError::Untagged));
        assert_eq!(key(K).check(&b[..60]), Err(TagError::TooShort(60)));
        assert_eq!(key(K).check(&[]), Err(TagError::Untagged));
        assert_eq!(
            key(K).seal(&mut [0u8; TAGGED_LEN - 1]),
            Err(TagError::TooShort(71))
        );
        let mut q = Probe::request(1, 0, 1);
        q.kind = ProbeKind::CountQuery;
        let mut qb = [0u8; TAGGED_LEN];
        q.emit(&mut qb).unwrap();
        key(K).seal(&mut qb).unwrap();
        assert_eq!(key(K).check(&qb), Ok(()));
    }

    #[test]
    fn rr_challenge_and_answer() {
        let n = [9u8; NONCE_LEN];
        let c = emit_rr_challenge(&n);
        assert_eq!(&c[..8], b"SONDE/RC");
        assert_eq!(parse_rr_challenge(&c), Some(n));
        assert_eq!(parse_rr_challenge(&c[..20]), None);
        assert_eq!(parse_rr_challenge(b"SONDE/RX\x00\x04busy"), None);
        let size = 56 | RR_KEYED_BIT;
        let a = key(K).rr_answer(&n, size);
        assert!(key(K).rr_verify(&n, size, &a));
        assert!(!key(K).rr_verify(&n, 56, &a), "bound to the size");
        assert!(
            !key(K).rr_verify(&[8u8; NONCE_LEN], size, &a),
            "and the nonce"
        );
        assert!(!key("fedcba9876543210fedcba9876543210").rr_verify(&n, size, &a));
        assert!(!key(K).rr_verify(&n, size, &a[..31]));
    }

    /// The responder's per-probe cost with and without the tag check (bench/RESULTS.md):
    /// `cargo test --release -p sonde-proto --lib probe_tag -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, not a check"]
    fn cost_of_a_tag() {
        const N: u32 = 1_000_000;
        let k = key(K);
        let b = tagged(3, TAGGED_LEN);
        let best = |f: &dyn Fn() -> bool| {
            (0..5)
                .map(|_| {
                    let t = std::time::Instant::now();
                    let ok = (0..N).filter(|_| f()).count();
                    assert_eq!(ok, N as usize);
                    t.elapsed().as_nanos() as f64 / f64::from(N)
                })
                .fold(f64::INFINITY, f64::min)
        };
        let plain = best(&|| Probe::parse(std::hint::black_box(&b)).is_ok());
        let keyed = best(&|| {
            let d = std::hint::black_box(&b);
            Probe::parse(d).is_ok() && k.check(d).is_ok()
        });
        println!(
            "parse {plain:.0} ns, parse + tag check {keyed:.0} ns per probe: \
             {:.0} vs {:.0} probes/s on one core (ratio {:.3})",
            1e9 / plain,
            1e9 / keyed,
            plain / keyed
        );
    }

    #[test]
    fn replay_window() {
        let mut w = ReplayWindow::default();
        assert!(w.accept(1));
        assert!(!w.accept(1), "a replay");
        assert!(w.accept(3));
        assert!(w.accept(2), "late but new");
        assert!(!w.accept(2));
        assert!(w.accept(100));
        assert!(!w.accept(36), "64 or more behind");
        assert!(w.accept(37));
        assert!(w.accept(u64::MAX));
        assert!(!w.accept(u64::MAX));
        assert!(!w.accept(1));
    }
}
