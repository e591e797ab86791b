//! What a client checks before and during a test: that the server can do what was asked
//! (capabilities, congestion control), and that data still arrives (`--rcv-timeout`).

use crate::engine::Engine;
use crate::error::RunError;
use sonde_platform::sockopt;
use sonde_proto::message::TestParams;
use sonde_stats::model::Direction;
use std::time::Duration;

/// `--rcv-timeout`: an error when this end receives and nothing arrived for that long.
///
/// # Errors
/// [`RunError::ReceiveTimeout`].
pub fn check_receiving(engine: &Engine, limit: Option<Duration>) -> Result<(), RunError> {
    match (engine.receive_idle_secs(), limit) {
        (Some(idle), Some(limit)) if idle > limit.as_secs_f64() => {
            Err(RunError::ReceiveTimeout { secs: idle })
        }
        _ => Ok(()),
    }
}

/// Features the server must apply itself need a server that knows them; an older one would
/// silently ignore them: intended bursts from its senders, discarding receives on its
/// receivers.
pub fn check_capabilities(
    p: &TestParams,
    caps: &[String],
    software: String,
) -> Result<(), RunError> {
    let has = |c: &str| caps.iter().any(|x| x == c);
    if p.burst > 1 && p.direction != Direction::Upload && !has("burst") {
        return Err(RunError::PeerLacks {
            software,
            capability: "burst",
            what: "send intended bursts (--burst with -R or --bidir)",
            instead: "run the bursts as an upload",
        });
    }
    let server_sends = p.direction != Direction::Upload;
    if p.steady_pacing && server_sends && !has("steady-pacing") {
        return Err(RunError::PeerLacks {
            software,
            capability: "steady-pacing",
            what: "pace its senders steadily (--steady-pacing or a sweep with -R or --bidir)",
            instead: "run the test as an upload",
        });
    }
    if !p.fq_rate.is_unlimited() && server_sends && !has("fq-rate") {
        return Err(RunError::PeerLacks {
            software,
            capability: "fq-rate",
            what: "pace its senders with --fq-rate (-R or --bidir)",
            instead: "run the test as an upload",
        });
    }
    if p.dont_fragment && server_sends && !has("dont-fragment") {
        return Err(RunError::PeerLacks {
            software,
            capability: "dont-fragment",
            what: "send with --dont-fragment (-R or --bidir)",
            instead: "run the test as an upload",
        });
    }
    if p.server_affinity.is_some() && !has("affinity") {
        return Err(RunError::PeerLacks {
            software,
            capability: "affinity",
            what: "pin the test to a core (-A n,m)",
            instead: "give only this end's core (-A n)",
        });
    }
    if p.skip_rx_copy && p.direction != Direction::Reverse && !has("skip-rx-copy") {
        return Err(RunError::PeerLacks {
            software,
            capability: "skip-rx-copy",
            what: "receive without copying (--skip-rx-copy for an upload or --bidir)",
            instead: "use -R, where this client receives",
        });
    }
    Ok(())
}

pub fn check_congestion(algo: &str, server: &[String], dir: Direction) -> Result<(), RunError> {
    let local = sockopt::available_congestion();
    let client_sends = dir != Direction::Reverse;
    let server_sends = dir != Direction::Upload;
    if client_sends && !local.is_empty() && !local.iter().any(|a| a == algo) {
        return Err(RunError::Congestion {
            algo: algo.into(),
            side: "client",
            available: local.join(", "),
        });
    }
    if server_sends && !server.is_empty() && !server.iter().any(|a| a == algo) {
        return Err(RunError::Congestion {
            algo: algo.into(),
            side: "server",
            available: server.join(", "),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_pacing_from_the_server_needs_a_server_that_knows_it() {
        let caps = |list: &[&str]| list.iter().map(|c| (*c).to_owned()).collect::<Vec<_>>();
        let p = TestParams {
            steady_pacing: true,
            direction: Direction::Reverse,
            ..TestParams::default()
        };
        let err = check_capabilities(&p, &caps(&["udp"]), "old".into()).unwrap_err();
        assert!(err.to_string().contains("steady"), "{err}");
        assert!(check_capabilities(&p, &caps(&["udp", "steady-pacing"]), "new".into()).is_ok());
        // An upload paces on this side: any server will do.
        let up = TestParams {
            direction: Direction::Upload,
            ..p
        };
        assert!(check_capabilities(&up, &caps(&["udp"]), "old".into()).is_ok());
    }
}
