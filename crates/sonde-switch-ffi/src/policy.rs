//! The switching policy through the C ABI: a connection given a policy
//! (`sonde_switch_set_policy`) is handed each verdict of the application's measurements
//! (`sonde_switch_verdict`) and moves the stream when [`sonde_switch::policy::Policy`] says so:
//! the other family better by the margin, confident enough, for `confirm` verdicts in a row,
//! and not within `hold_ms` of the last switch.
//!
//! The verdict is plain numbers (the better family, the margin, the confidence), so a C
//! program can give what it measured itself or what it read from `sonde compare-ip -J`'s
//! `verdict` object (`better`, `margin_pct`, `confidence`). Time is the library's monotonic
//! clock from the policy's setting.

use crate::api::{handle, SondeSwitchConn};
use crate::error::{call, Failure};
use crate::policy_slot::PolicySlot;
use crate::types::{read_sized, write_sized};
use sonde_switch::policy::{Decision, Evidence, Policy, PolicyConfig};
use sonde_switch::Family;
use std::ffi::{c_char, c_int, CStr};
use std::time::{Duration, Instant};

/// Bytes of `SondeSwitchDecision::reason`, its NUL included.
pub const SONDE_SWITCH_REASON_LEN: usize = 256;

/// A policy's thresholds. Call `sonde_switch_policy_init` for the defaults, then change
/// what you need: every field is taken as it is.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SondeSwitchPolicyConfig {
    /// `sizeof(SondeSwitchPolicyConfig)` as the caller knows it.
    pub size: u32,
    /// Verdicts in a row that must favour the other family (default 1; at least 1).
    pub confirm: u32,
    /// Smallest margin worth a switch, percent (default 10).
    pub margin_pct: f64,
    /// Smallest confidence (1 - p) accepted, 0 to 1 (default 0.95).
    pub min_confidence: f64,
    /// No switch within this many milliseconds of the last one (default 30000).
    pub hold_ms: u64,
}

/// One verdict of the application's measurements.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SondeSwitchVerdict {
    /// `sizeof(SondeSwitchVerdict)` as the caller knows it.
    pub size: u32,
    /// The better family: AF_INET, AF_INET6, or 0 when neither is.
    pub better: c_int,
    /// How much better, percent, on the deciding measure (at least 0).
    pub margin_pct: f64,
    /// 1 - p of the deciding test, 0 to 1; negative when the test gives none (ranges that
    /// did not overlap), which passes any `min_confidence`.
    pub confidence: f64,
    /// The deciding measure's name, for the reason ("median latency"); NULL for none.
    pub measure: *const c_char,
}

/// What the policy decided on one verdict.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SondeSwitchDecision {
    /// `sizeof(SondeSwitchDecision)` as the caller knows it: set it before the call.
    pub size: u32,
    /// AF_INET or AF_INET6 when the policy moved the stream there, 0 when it stayed.
    pub switched_to: c_int,
    /// Why, in words, NUL-terminated (cut to fit).
    pub reason: [c_char; SONDE_SWITCH_REASON_LEN],
}

fn defaults() -> SondeSwitchPolicyConfig {
    let d = PolicyConfig::default();
    SondeSwitchPolicyConfig {
        size: std::mem::size_of::<SondeSwitchPolicyConfig>() as u32,
        confirm: d.confirm,
        margin_pct: d.margin_pct,
        min_confidence: d.min_confidence,
        hold_ms: u64::try_from(d.hold.as_millis()).unwrap_or(u64::MAX),
    }
}

/// Fills `*cfg` with the defaults (10 % margin, 0.95 confidence, 1 verdict, 30 s hold) and
/// its `size`.
///
/// # Safety
/// `cfg` is NULL or points to a writable `SondeSwitchPolicyConfig`.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_policy_init(cfg: *mut SondeSwitchPolicyConfig) -> c_int {
    call(
        |e| e,
        || {
            if cfg.is_null() {
                return Err(Failure::invalid("cfg is NULL"));
            }
            // SAFETY: checked non-NULL; the caller vouches it is writable.
            unsafe { cfg.write(defaults()) };
            Ok(0)
        },
    )
}

/// Gives the connection a policy with the thresholds in `*cfg` (a new one replaces the old,
/// its streak and hold started afresh). Only the connecting end can switch, so only its
/// policy can move the stream. -EINVAL for a NULL argument or a threshold that cannot be met
/// (a margin below 0 or not a number, a confidence outside 0 to 1, confirm 0).
///
/// # Safety
/// `c` is a live connection; `cfg` NULL or a `SondeSwitchPolicyConfig` with `size` set.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_set_policy(
    c: *const SondeSwitchConn,
    cfg: *const SondeSwitchPolicyConfig,
) -> c_int {
    call(
        |e| e,
        || {
            // SAFETY: forwarded from the caller.
            let conn = unsafe { handle(c)? };
            // SAFETY: forwarded from the caller. Every field up to hold_ms must be there.
            let raw = unsafe {
                read_sized(
                    cfg,
                    defaults(),
                    std::mem::size_of::<SondeSwitchPolicyConfig>(),
                    "cfg",
                )?
            };
            let config = PolicyConfig {
                margin_pct: raw.margin_pct,
                min_confidence: raw.min_confidence,
                confirm: raw.confirm,
                hold: Duration::from_millis(raw.hold_ms),
            };
            config
                .check()
                .map_err(|why| Failure::invalid(format!("policy: {why}")))?;
            *conn.policy_slot() = Some(PolicySlot {
                policy: Policy::new(config),
                since: Instant::now(),
            });
            Ok(0)
        },
    )
}

/// The verdict's numbers as the policy reads them.
fn evidence<'a>(v: &SondeSwitchVerdict, measure: &'a str) -> Result<Evidence<'a>, Failure> {
    let better = match v.better {
        0 => None,
        libc::AF_INET => Some(Family::V4),
        libc::AF_INET6 => Some(Family::V6),
        b => {
            return Err(Failure::invalid(format!(
                "verdict: better {b}: give AF_INET, AF_INET6 or 0 (neither)"
            )))
        }
    };
    if !(v.margin_pct.is_finite() && v.margin_pct >= 0.0) {
        return Err(Failure::invalid(format!(
            "verdict: margin_pct {} is not a percentage of at least 0",
            v.margin_pct
        )));
    }
    let confidence = match v.confidence {
        c if c < 0.0 => None,
        c if c <= 1.0 => Some(c),
        c => {
            return Err(Failure::invalid(format!(
                "verdict: confidence {c} is above 1 (give 0 to 1, or negative for none)"
            )))
        }
    };
    Ok(Evidence {
        better,
        measure,
        margin_pct: v.margin_pct,
        confidence,
        summary: "",
    })
}

/// Hands the connection's policy one verdict; when it says switch, the stream moves
/// (make-before-break, as `sonde_switch_switch`). Returns 0 when the stream stays, AF_INET
/// or AF_INET6 when it moved there, or a negative errno: -EINVAL for a NULL connection or
/// verdict, a verdict out of range, or no policy set; -ENOTCONN while the stream has no path;
/// the switch's own error when the move failed (the policy's hold still starts). `out` may be
/// NULL; otherwise set `out->size` first, and it gets the decision and its reason.
///
/// # Safety
/// `c` is a live connection; `v` a `SondeSwitchVerdict` with `size` set (its `measure` NULL
/// or a NUL-terminated string); `out` NULL or a `SondeSwitchDecision` with `size` set.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_verdict(
    c: *const SondeSwitchConn,
    v: *const SondeSwitchVerdict,
    out: *mut SondeSwitchDecision,
) -> c_int {
    call(
        |e| e,
        || {
            // SAFETY: forwarded from the caller.
            let conn = unsafe { handle(c)? };
            let none = SondeSwitchVerdict {
                size: 0,
                better: 0,
                margin_pct: 0.0,
                confidence: -1.0,
                measure: std::ptr::null(),
            };
            // SAFETY: forwarded from the caller; `measure` may be left out by a short size.
            let raw = unsafe { read_sized(v, none, 24, "verdict")? };
            let measure = if raw.measure.is_null() {
                "the measurements"
            } else {
                // SAFETY: the caller passes a NUL-terminated string.
                unsafe { CStr::from_ptr(raw.measure) }
                    .to_str()
                    .map_err(|_| Failure::invalid("verdict: measure is not UTF-8"))?
            };
            let evidence = evidence(&raw, measure)?;
            let mut slot = conn.policy_slot();
            let slot = slot
                .as_mut()
                .ok_or_else(|| Failure::invalid("no policy: call sonde_switch_set_policy first"))?;
            let current = conn.conn.family().ok_or_else(|| Failure {
                errno: libc::ENOTCONN,
                message: "the stream has no path now (recovering): no decision".into(),
            })?;
            let decision = slot
                .policy
                .decide_on(slot.since.elapsed(), current, &evidence);
            let to = match &decision {
                Decision::Stay { .. } => None,
                Decision::Switch { to, .. } => Some(*to),
            };
            let moved = to.map(|f| conn.conn.switch(f).map(|_| f)).transpose();
            let switched_to = match &moved {
                Ok(Some(Family::V4)) => libc::AF_INET,
                Ok(Some(Family::V6)) => libc::AF_INET6,
                _ => 0,
            };
            // SAFETY: forwarded from the caller.
            unsafe { write_decision(out, switched_to, decision.reason())? };
            moved?;
            Ok(switched_to)
        },
    )
}

/// Writes the decision into `*out` as far as its `size` reaches; nothing for NULL.
///
/// # Safety
/// `out` is NULL or points to at least `(*out).size` writable bytes, of which 4 readable.
unsafe fn write_decision(
    out: *mut SondeSwitchDecision,
    switched_to: c_int,
    reason: &str,
) -> Result<(), Failure> {
    if out.is_null() {
        return Ok(());
    }
    let mut d = SondeSwitchDecision {
        size: std::mem::size_of::<SondeSwitchDecision>() as u32,
        switched_to,
        reason: [0; SONDE_SWITCH_REASON_LEN],
    };
    let mut n = reason.len().min(SONDE_SWITCH_REASON_LEN - 1);
    while !reason.is_char_boundary(n) {
        n -= 1;
    }
    for (slot, b) in d.reason.iter_mut().zip(&reason.as_bytes()[..n]) {
        *slot = *b as c_char;
    }
    // SAFETY: forwarded from the caller.
    unsafe { write_sized(&d, out, "decision: set size to sizeof(SondeSwitchDecision)") }
}
