//! The sending side of a whole `sonde serial` run over a [`Tty`]: one transfer of the file
//! per block size, in order, until one does not end done; each with its report.
//!
//! The transfers are the sans-IO [`Sender`] run by [`driver::send`]; this module chooses
//! their transfer ids, turns each sender's counters into a [`TransferReport`] and says how
//! the run ended. Progress goes to a [`Sink`] of [`SendEvent`]s as it happens (a terminal's
//! progress line), the reports come back in the [`SendRun`].

use crate::control::EndAck;
use crate::driver::{self, DriveError};
use crate::sender::{AckMode, SendError, SendStats, Sender, SenderConfig, Status};
use crate::tty::Tty;
use sonde_stats::sink::{deliver, Sink};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// What to send and how.
#[derive(Clone, Debug)]
pub struct SendPlan {
    /// Block sizes, one transfer each, in order.
    pub blocks: Vec<usize>,
    /// Resends of one frame before a transfer gives up.
    pub retries: u32,
    /// How long to wait for each frame's acknowledgement.
    pub timeout: Duration,
    pub mode: AckMode,
    /// The file name the far end may store the file under.
    pub name: String,
    /// The first transfer's id (the next ones count up from it); see [`first_transfer_id`].
    pub first_id: u16,
}

/// What a run tells as it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendEvent {
    /// After each step of a transfer: how far it got.
    Progress {
        block: usize,
        blocks: u32,
        blocks_total: u32,
        retries: u32,
    },
    /// A transfer ended (its report follows in the [`SendRun`]).
    TransferEnded { block: usize },
}

/// One transfer (one block size), finished or not: the sender's counters and what the far
/// end said.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TransferReport {
    pub block: usize,
    /// The sender's counters (blocks and bytes acknowledged, bytes on the line, resends,
    /// time-outs, `Nak`s, broken frames received).
    pub stats: SendStats,
    /// Blocks the file has at this size.
    pub blocks_total: u32,
    /// From the first byte written to the final acknowledgement (or to now, unfinished).
    pub seconds: f64,
    /// The far end's final count (None: echo mode, or the transfer did not end).
    pub far: Option<EndAck>,
    /// Length and SHA-256 matched at the far end (None: the transfer did not end).
    pub hash_ok: Option<bool>,
    /// Why it failed.
    pub error: Option<String>,
}

impl TransferReport {
    /// Broken frames the far end saw: its final count, else its `Nak`s.
    pub fn crc_errors_far(&self) -> u32 {
        self.far.map_or(self.stats.naks, |f| f.crc_errors)
    }

    /// Blocks the far end got twice (None: it sent no final count).
    pub fn duplicates(&self) -> Option<u32> {
        self.far.map(|f| f.duplicates)
    }
}

/// How a transfer, and so the run, ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    Done,
    Failed(String),
    Interrupted,
}

/// The run: a report per transfer made, and how the last one ended.
#[derive(Clone, Debug, PartialEq)]
pub struct SendRun {
    pub transfers: Vec<TransferReport>,
    pub ended: Ended,
}

/// A transfer id unlikely to match the far end's previous one (it may have served another
/// run): the process id and the clock's nanoseconds, mixed.
pub fn first_transfer_id() -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    (std::process::id() as u16) ^ (nanos as u16) ^ ((nanos >> 16) as u16)
}

/// Sends `data` once per block size of `plan` over `tty`, until a transfer does not end
/// done (it failed, or `interrupt` was raised).
///
/// # Errors
/// A sender configuration refused (a block size out of range, a file with too many blocks).
pub fn send_file(
    tty: &Tty,
    plan: &SendPlan,
    data: &Arc<[u8]>,
    interrupt: &AtomicBool,
    events: &mut dyn Sink<SendEvent>,
) -> Result<SendRun, SendError> {
    let mut transfers = Vec::new();
    let mut ended = Ended::Done;
    for (i, &block) in plan.blocks.iter().enumerate() {
        let cfg = SenderConfig {
            block,
            retries: plan.retries,
            timeout: plan.timeout,
            mode: plan.mode,
            transfer: plan.first_id.wrapping_add(i as u16),
            name: plan.name.clone(),
        };
        let (report, how) = one_transfer(tty, cfg, data, interrupt, events)?;
        transfers.push(report);
        ended = how;
        if ended != Ended::Done {
            break;
        }
    }
    Ok(SendRun { transfers, ended })
}

/// Runs one transfer over `tty`; its report and how it ended.
fn one_transfer(
    tty: &Tty,
    cfg: SenderConfig,
    data: &Arc<[u8]>,
    interrupt: &AtomicBool,
    events: &mut dyn Sink<SendEvent>,
) -> Result<(TransferReport, Ended), SendError> {
    let block = cfg.block;
    let mut sender = Sender::new(cfg, data.clone())?;
    let result = driver::send(tty, &mut sender, interrupt, |s| {
        let st = s.stats();
        let progress = SendEvent::Progress {
            block,
            blocks: st.blocks,
            blocks_total: s.blocks(),
            retries: st.retries,
        };
        deliver(events, &progress);
    });
    deliver(events, &SendEvent::TransferEnded { block });
    let ended = ended(&result, sender.status());
    let error = match &ended {
        Ended::Failed(e) => Some(e.clone()),
        _ => None,
    };
    Ok((report(&sender, block, error), ended))
}

/// How a transfer ended, from the driver's result and the sender's status.
fn ended(result: &Result<(), DriveError>, status: &Status) -> Ended {
    match (result, status) {
        (Err(DriveError::Interrupted), _) => Ended::Interrupted,
        (Err(e), _) => Ended::Failed(e.to_string()),
        (Ok(()), Status::Failed(e)) => Ended::Failed(e.to_string()),
        (Ok(()), Status::Done(o)) if !o.hash_ok => {
            Ended::Failed("the far end's length or SHA-256 does not match the file".to_string())
        }
        _ => Ended::Done,
    }
}

/// The report of one transfer, finished or not.
pub fn report(s: &Sender, block: usize, error: Option<String>) -> TransferReport {
    let (seconds, far, hash_ok) = match s.status() {
        Status::Done(o) => (o.elapsed.as_secs_f64(), o.far, Some(o.hash_ok)),
        _ => (
            s.started().map_or(0.0, |t| t.elapsed().as_secs_f64()),
            None,
            None,
        ),
    };
    TransferReport {
        block,
        stats: s.stats(),
        blocks_total: s.blocks(),
        seconds,
        far,
        hash_ok,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sender::Outcome;

    fn done(hash_ok: bool) -> Status {
        Status::Done(Outcome {
            hash_ok,
            far: None,
            elapsed: Duration::from_millis(5),
        })
    }

    #[test]
    fn a_transfer_ends_done_only_when_the_far_end_matched_the_file() {
        assert_eq!(ended(&Ok(()), &done(true)), Ended::Done);
        assert_eq!(
            ended(&Ok(()), &done(false)),
            Ended::Failed("the far end's length or SHA-256 does not match the file".into())
        );
        assert_eq!(
            ended(&Err(DriveError::Interrupted), &Status::Running),
            Ended::Interrupted
        );
        let hangup = ended(&Err(DriveError::Hangup("/dev/x".into())), &done(true));
        assert_eq!(
            hangup,
            Ended::Failed(
                "/dev/x: the device hung up (its other end closed or it was unplugged)".into()
            )
        );
    }

    #[test]
    fn an_unstarted_transfer_reports_nothing_done_and_no_hash_check() {
        let cfg = SenderConfig {
            block: 8,
            retries: 1,
            timeout: Duration::from_millis(10),
            mode: AckMode::Peer,
            transfer: 1,
            name: "f".into(),
        };
        let s = Sender::new(cfg, b"0123456789".to_vec().into()).unwrap();
        let r = report(&s, 8, Some("why".into()));
        assert_eq!(
            (r.stats.blocks, r.blocks_total, r.stats.bytes, r.seconds),
            (0, 2, 0, 0.0)
        );
        assert_eq!(
            (r.hash_ok, r.duplicates(), r.error.as_deref()),
            (None, None, Some("why"))
        );
        assert_eq!(r.crc_errors_far(), 0);
    }

    #[test]
    fn the_far_ends_final_count_wins_over_its_naks() {
        let mut r = TransferReport {
            stats: SendStats {
                naks: 3,
                ..SendStats::default()
            },
            ..TransferReport::default()
        };
        assert_eq!((r.crc_errors_far(), r.duplicates()), (3, None));
        r.far = Some(EndAck {
            verdict: crate::control::Verdict::Ok,
            received: 0,
            sha256: [0; 32],
            crc_errors: 5,
            duplicates: 1,
        });
        assert_eq!((r.crc_errors_far(), r.duplicates()), (5, Some(1)));
    }
}
