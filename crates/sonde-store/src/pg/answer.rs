//! Connecting with a bound on the whole exchange, not only on the socket's connect.
//!
//! The driver's connect time-out covers the TCP connect alone. A server that accepts the
//! connection and then says nothing (a stuck PostgreSQL, or another program on its port)
//! would hold the connect, and with it `sonde report` or an agent's sync, forever, deaf even
//! to Ctrl-C. So the connect and the migration run on a helper thread and the caller waits
//! at most a bounded time. A helper still blocked when the wait ends stays blocked until
//! the server closes the connection (the driver cannot be cancelled from outside); at most
//! [`MAX_PENDING`] helpers run at once for one target (the URL, its password left out), so a
//! server that never answers cannot pile up threads in a long-running agent: further
//! attempts at it fail at once until one ends. Other targets are not held up by it: an agent
//! or a test process that once met a silent server still reaches every other one.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Duration;

use crate::error::StoreError;

/// Helpers connecting to one target at most at once.
pub(crate) const MAX_PENDING: usize = 4;

/// Helpers still running, per target.
static PENDING: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());

fn pending() -> MutexGuard<'static, BTreeMap<String, usize>> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Helpers still running for `target` (the tests watch it).
#[cfg(test)]
fn pending_for(target: &str) -> usize {
    pending().get(target).copied().unwrap_or(0)
}

/// A helper's place among its target's; given back when the helper ends, however it ends (a
/// panic included).
struct Slot(String);

impl Slot {
    /// A place for a helper connecting to `target`, unless [`MAX_PENDING`] are taken.
    fn take(target: &str) -> Option<Slot> {
        let mut p = pending();
        let n = p.entry(target.to_owned()).or_insert(0);
        if *n >= MAX_PENDING {
            return None;
        }
        *n += 1;
        Some(Slot(target.to_owned()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut p = pending();
        if let Some(n) = p.get_mut(&self.0) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                p.remove(&self.0);
            }
        }
    }
}

fn silent(target: &str, what: String) -> StoreError {
    StoreError::PostgresSilent {
        target: target.to_owned(),
        what,
    }
}

/// Runs `work` (a connect) on a helper thread; its result, or an error once `limit` passed
/// without one.
///
/// # Errors
/// What `work` returns; [`StoreError::PostgresSilent`] when it took longer than `limit`, when
/// [`MAX_PENDING`] earlier attempts are still waiting, or when no thread could start.
pub(crate) fn within<T: Send + 'static>(
    target: &str,
    limit: Duration,
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    let Some(slot) = Slot::take(target) else {
        return Err(silent(
            target,
            format!(
                "{MAX_PENDING} earlier connection attempts still wait for the server's answer; \
                 not trying again until one ends"
            ),
        ));
    };
    let (tx, rx) = mpsc::channel();
    let spawned = thread::Builder::new()
        .name("sonde-pg-connect".into())
        .spawn(move || {
            let _slot = slot;
            let result = work();
            // The caller may have given up already; then nobody needs the result.
            let _ = tx.send(result);
        });
    if let Err(e) = spawned {
        // The closure, and the slot in it, went with the error.
        return Err(silent(
            target,
            format!("cannot start a thread to connect: {e}"),
        ));
    }
    match rx.recv_timeout(limit) {
        Ok(result) => result,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(silent(
            target,
            format!(
                "no answer within {} s: a server that takes the connection and says nothing \
                 (is PostgreSQL on that port, and not stuck?), or every address of the host \
                 timing out",
                limit.as_secs_f64().round()
            ),
        )),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(silent(
            target,
            "the connecting thread ended without a result".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Barrier, Mutex};
    use std::time::Instant;

    /// The helpers' count is global: these tests take turns.
    static TURN: Mutex<()> = Mutex::new(());

    #[test]
    fn an_answer_in_time_comes_back() {
        let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
        let r = within("t", Duration::from_secs(5), || Ok(7));
        assert_eq!(r.ok(), Some(7));
    }

    #[test]
    fn no_answer_is_an_error_after_the_limit_and_pending_helpers_are_bounded() {
        let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
        let release = Arc::new(Barrier::new(MAX_PENDING + 1));
        let start = Instant::now();
        for _ in 0..MAX_PENDING {
            let b = Arc::clone(&release);
            let r = within("t", Duration::from_millis(50), move || {
                b.wait();
                Ok(())
            });
            assert!(
                matches!(r, Err(StoreError::PostgresSilent { ref what, .. }) if what.contains("no answer within")),
                "{r:?}"
            );
        }
        assert!(start.elapsed() < Duration::from_secs(5));
        // All helpers are still blocked: the next attempt fails at once.
        let r = within("t", Duration::from_secs(5), || Ok(()));
        assert!(
            matches!(r, Err(StoreError::PostgresSilent { ref what, .. }) if what.contains("still wait")),
            "{r:?}"
        );
        release.wait();
        // Once they end, attempts run again.
        let deadline = Instant::now() + Duration::from_secs(5);
        while pending_for("t") > 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        assert!(within("t", Duration::from_secs(5), || Ok(())).is_ok());
    }

    #[test]
    fn a_silent_target_does_not_hold_up_another() {
        let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
        let release = Arc::new(Barrier::new(MAX_PENDING + 1));
        for _ in 0..MAX_PENDING {
            let b = Arc::clone(&release);
            let _ = within("silent", Duration::from_millis(20), move || {
                b.wait();
                Ok(())
            });
        }
        let r = within("silent", Duration::from_secs(5), || Ok(()));
        assert!(r.is_err(), "{r:?}");
        assert!(within("another", Duration::from_secs(5), || Ok(())).is_ok());
        release.wait();
        let deadline = Instant::now() + Duration::from_secs(5);
        while pending_for("silent") > 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(pending_for("silent"), 0);
    }

    #[test]
    fn a_helper_that_panics_gives_its_slot_back_and_says_so() {
        let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
        for _ in 0..MAX_PENDING + 1 {
            let r: Result<(), StoreError> =
                within("t", Duration::from_secs(5), || panic!("a driver bug"));
            assert!(
                matches!(r, Err(StoreError::PostgresSilent { ref what, .. }) if what.contains("without a result")),
                "{r:?}"
            );
        }
        assert!(within("t", Duration::from_secs(5), || Ok(())).is_ok());
    }
}
