//! What Ctrl-C, SIGTERM and SIGHUP do, for every command.
//!
//! The first SIGINT or SIGTERM raises the stop flag that every command polls: the test in
//! progress ends and its partial result is printed and saved. A second one exits at once,
//! except while a lab is built (its namespaces must be removed first: it says so instead).
//! SIGHUP stops a command like SIGTERM (the terminal went away), except the agent's, which
//! reads its configuration again (`systemctl reload`).
//!
//! The signals are taken on a thread of their own (`signal-hook`'s iterator), so what they
//! do is ordinary code, not a signal handler's restricted subset.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What the signals act on.
#[derive(Clone)]
pub struct Targets {
    /// Raised by the first SIGINT or SIGTERM (and SIGHUP, without `reload`).
    pub stop: Arc<AtomicBool>,
    /// A lab is being built: a second signal only says it is being removed.
    pub builds_lab: bool,
    /// Raised by SIGHUP instead of stopping (the agent).
    pub reload: Option<Arc<AtomicBool>>,
}

/// Takes SIGINT, SIGTERM and SIGHUP for `t` from now on.
pub fn arm(t: Targets) {
    let mut signals = match Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sonde: warning - cannot take Ctrl-C and SIGTERM: {e}");
            return;
        }
    };
    let spawned = std::thread::Builder::new()
        .name("sonde-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if sig == SIGHUP {
                    if let Some(r) = &t.reload {
                        r.store(true, Ordering::SeqCst);
                        continue;
                    }
                }
                if t.stop.swap(true, Ordering::SeqCst) {
                    if t.builds_lab {
                        eprintln!("sonde: stopping; removing the lab's namespaces first");
                    } else {
                        // A second one: the user really wants out now.
                        std::process::exit(crate::commands::exit::FAILED);
                    }
                }
            }
        });
    if let Err(e) = spawned {
        eprintln!("sonde: warning - cannot take Ctrl-C and SIGTERM: {e}");
    }
}
