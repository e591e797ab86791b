//! Whole runs over pseudo-terminals, in one process: a sender on one pty's slave, the
//! serving side on another's, a relay thread joining the two masters (or a master that
//! echoes, or one that swallows everything). A pty has no baud rate: these show the runs'
//! bookkeeping (reports, stored files, how a run ends), not a line's speed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use nix::poll::{PollFd, PollFlags, PollTimeout};
use sonde_serial::send_run::{self, Ended, SendEvent, SendPlan, SendRun};
use sonde_serial::serve_run::{self, Served};
use sonde_serial::tty::Tty;
use sonde_serial::AckMode;
use sonde_stats::sink::FnSink;
use sonde_testkit::pty::{pty, read_some, write_all, Pty};
use sonde_testkit::TempDir;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Runs `f` while a relay thread carries what `a`'s master reads to `b` (or back to `a`
/// without one, or nowhere when `swallow`) and what `b`'s reads to `a`.
fn relayed<R>(a: &Pty, b: Option<&Pty>, swallow: bool, f: impl FnOnce() -> R) -> R {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut buf = [0u8; 4096];
            while !stop.load(Ordering::SeqCst) {
                let mut fds = vec![PollFd::new(a.master.as_fd(), PollFlags::POLLIN)];
                if let Some(b) = b {
                    fds.push(PollFd::new(b.master.as_fd(), PollFlags::POLLIN));
                }
                if nix::poll::poll(&mut fds, PollTimeout::from(20u16)).unwrap_or(0) <= 0 {
                    continue;
                }
                let ready: Vec<bool> = fds
                    .iter()
                    .map(|f| f.revents().is_some_and(|r| r.contains(PollFlags::POLLIN)))
                    .collect();
                if ready[0] {
                    let n = read_some(&a.master, &mut buf);
                    match (b, swallow) {
                        (_, true) => {}
                        (Some(b), false) => write_all(&b.master, &buf[..n]),
                        (None, false) => write_all(&a.master, &buf[..n]),
                    }
                }
                if let (Some(b), Some(true)) = (b, ready.get(1)) {
                    let n = read_some(&b.master, &mut buf);
                    write_all(&a.master, &buf[..n]);
                }
            }
        });
        let r = f();
        stop.store(true, Ordering::SeqCst);
        r
    })
}

fn plan(blocks: &[usize], mode: AckMode) -> SendPlan {
    SendPlan {
        blocks: blocks.to_vec(),
        retries: 3,
        timeout: Duration::from_millis(300),
        mode,
        name: "../payload.bin".into(),
        first_id: 40,
    }
}

/// `plan` of `data` over the pty at `path` (its progress dropped).
fn send(
    path: &std::path::Path,
    plan: &SendPlan,
    data: &Arc<[u8]>,
    interrupted: bool,
) -> Result<SendRun, sonde_serial::SendError> {
    let tty = Tty::open(path, 115_200).unwrap();
    let interrupt = AtomicBool::new(interrupted);
    send_run::send_file(
        &tty,
        plan,
        data,
        &interrupt,
        &mut FnSink(|_: &SendEvent| {}),
    )
}

/// Every byte value, the frame flag and escape among them.
fn payload(len: usize) -> Arc<[u8]> {
    (0..len).map(|i| (i * 31 + i / 251) as u8).collect()
}

#[test]
fn a_file_sent_in_two_block_sizes_is_served_stored_and_reported_twice() {
    let (near, far) = (pty(), pty());
    let dir = TempDir::new("serial-runs");
    let out = dir.path().to_path_buf();
    let stop = Arc::new(AtomicBool::new(false));
    let serving = {
        let stop = stop.clone();
        let far = Tty::open(&far.path, 115_200).unwrap();
        std::thread::spawn(move || {
            let mut served: Vec<Served> = Vec::new();
            let run = serve_run::serve_files(
                &far,
                Some(&out),
                &stop,
                &mut FnSink(|s: &Served| served.push(s.clone())),
            );
            (run, served)
        })
    };
    let data = payload(3000);
    let tty = Tty::open(&near.path, 115_200).unwrap();
    let mut ended_events = Vec::new();
    let run = relayed(&near, Some(&far), false, || {
        send_run::send_file(
            &tty,
            &plan(&[64, 256], AckMode::Peer),
            &data,
            &AtomicBool::new(false),
            &mut FnSink(|e: &SendEvent| {
                if let SendEvent::TransferEnded { block } = e {
                    ended_events.push(*block);
                }
            }),
        )
    })
    .unwrap();
    stop.store(true, Ordering::SeqCst);
    let (served_run, served) = serving.join().unwrap();
    assert_eq!(run.ended, Ended::Done);
    assert_eq!(ended_events, [64, 256]);
    let t = &run.transfers;
    assert_eq!(t.len(), 2);
    assert_eq!(
        (t[0].block, t[0].blocks_total, t[0].stats.bytes),
        (64, 47, 3000)
    );
    assert_eq!((t[1].block, t[1].blocks_total), (256, 12));
    assert!(
        t.iter()
            .all(|r| r.hash_ok == Some(true) && r.error.is_none()),
        "{t:?}"
    );
    assert!(
        t.iter()
            .all(|r| r.duplicates() == Some(0) && r.stats.wire_bytes > 3000),
        "{t:?}"
    );
    assert!(t.iter().all(|r| r.crc_errors_far() == 0), "{t:?}");
    assert!(served_run.error.is_none(), "{:?}", served_run.error);
    assert_eq!(served_run.served, 2);
    assert_eq!(served_run.unfinished, None);
    assert_eq!(served.len(), 2);
    let stored = dir.file("payload.bin");
    assert!(served
        .iter()
        .all(|s| s.ok() && s.stored.as_ref() == Some(&stored)));
    assert_eq!(std::fs::read(&stored).unwrap(), &data[..]);
    assert!(!dir.file("payload.part").exists());
}

#[test]
fn an_echoing_device_checks_the_file_it_sent_back() {
    let near = pty();
    let run = relayed(&near, None, false, || {
        send(
            &near.path,
            &plan(&[32], AckMode::Echo),
            &payload(500),
            false,
        )
    })
    .unwrap();
    assert_eq!(run.ended, Ended::Done);
    let r = &run.transfers[0];
    assert_eq!(
        (r.hash_ok, r.duplicates(), r.stats.bytes),
        (Some(true), None, 500)
    );
}

#[test]
fn a_far_end_that_never_answers_fails_the_first_transfer_and_stops_the_run() {
    let near = pty();
    let mut p = plan(&[16, 32], AckMode::Peer);
    p.timeout = Duration::from_millis(30);
    p.retries = 1;
    let run = relayed(&near, None, true, || {
        send(&near.path, &p, &payload(100), false)
    })
    .unwrap();
    let Ended::Failed(why) = &run.ended else {
        panic!("{:?}", run.ended);
    };
    assert!(why.contains("start-of-transfer frame"), "{why}");
    assert_eq!(
        run.transfers.len(),
        1,
        "the run stops at the failed transfer"
    );
    let r = &run.transfers[0];
    assert_eq!((r.hash_ok, r.stats.blocks, r.stats.timeouts), (None, 0, 2));
    assert_eq!(r.error.as_deref(), Some(why.as_str()));
}

#[test]
fn an_interrupt_ends_the_run_as_interrupted_and_a_block_size_out_of_range_is_refused() {
    // Nothing is written: the interrupt is seen before the first frame.
    let near = pty();
    let path = &near.path;
    let run = send(path, &plan(&[16], AckMode::Peer), &payload(100), true).unwrap();
    assert_eq!(run.ended, Ended::Interrupted);
    assert_eq!(run.transfers[0].error, None);
    let e = send(path, &plan(&[0], AckMode::Peer), &payload(10), false).unwrap_err();
    assert!(e.to_string().contains("block size 0"), "{e}");
}
