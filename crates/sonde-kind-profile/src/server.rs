//! The server's end of a profile run: after the streams are set up it sends the profile's
//! from-server streams (from the client's Start), counts the to-server ones, and answers the
//! client's Stop with the figures of the streams it received.

use crate::client::{count_of, drain_grace, finish_all, set_dscp};
use crate::workers::{ProfileStream, Workers};
use sonde_proto::message::{ProfileRequest, Results, TestParams};
use sonde_proto::session::ServerEvent;
use sonde_runtime_core::engine::DataSocket;
use sonde_runtime_core::error::RunError;
use sonde_runtime_core::serving::served_test::{
    reack_hellos, sending_udp_sockets, OpenStream, ServedTest, STEP,
};
use sonde_stats::model::StreamRole;
use std::time::{Duration, Instant};

/// Runs the profile of `p` over `streams` until the client's Stop, then exchanges results.
pub fn serve(
    t: &mut ServedTest<'_>,
    p: &TestParams,
    streams: Vec<OpenStream>,
) -> Result<(), RunError> {
    let Some(request) = p.profile.as_ref() else {
        return Err(RunError::Setup("not a profile test".into()));
    };
    let reack = sending_udp_sockets(&streams);
    let (send, receive) = profile_streams(request, streams)?;
    let mut workers = Workers::new(send, receive, request.profile.duration_s)
        .map_err(|e| RunError::Setup(format!("starting stream threads: {e}")))?;
    t.log(&format!(
        "running profile {} ({} streams, {} s) for {}",
        request.profile.name,
        request.profile.streams.len(),
        request.profile.duration_s,
        t.peer
    ));
    let limit = Duration::from_secs_f64(t.time_limit(p));
    let begun = Instant::now();
    let peer_sent = loop {
        reack_hellos(&reack);
        if t.interrupted() {
            t.session.abort("the server is shutting down");
            let _ = t.flush();
            return Err(RunError::Interrupted);
        }
        if begun.elapsed() > limit {
            let msg = format!(
                "profile exceeded the server's time limit of {:.0} s",
                limit.as_secs_f64()
            );
            t.session.abort(&msg);
            let _ = t.flush();
            return Err(RunError::Setup(msg));
        }
        let Some(m) = t.conn.recv(sonde_runtime_core::control_conn::POLL_SLICE)? else {
            continue;
        };
        let r = t.session.handle(m);
        t.flush()?;
        r.map_err(|e| RunError::Protocol(e.to_string()))?;
        match t.session.poll_event() {
            Some(ServerEvent::Started) => workers
                .start(Instant::now())
                .map_err(|e| RunError::Setup(format!("starting stream threads: {e}")))?,
            Some(ServerEvent::StopRequested(s)) => break s.sent,
            Some(ServerEvent::Aborted(r)) => return Err(RunError::PeerAborted(r)),
            _ => {}
        }
    };
    let (sent, _) = workers.stop_senders();
    let lookup = |id| count_of(&peer_sent, id);
    let accounts = workers.drain_receivers(&lookup, drain_grace(request));
    let figures = finish_all(&accounts, &lookup, request, true);
    for f in &figures {
        t.log(&format!(
            "profile stream {} ({}) from {}: {}/{} received, {} lost, {} late, {}/{} bursts complete",
            f.id, f.name, t.peer, f.received, f.sent, f.lost, f.late, f.bursts_complete, f.bursts_sent
        ));
    }
    t.session.send_results(Results {
        sent,
        profile: figures,
        ..Results::default()
    });
    t.flush()?;
    if let Ok(ServerEvent::PeerResults(_)) = t.next_event(STEP, "the client's results") {
        let _ = t.next_event(Duration::from_secs(2), "the client's done");
    }
    Ok(())
}

/// The test's streams as profile streams: those this end sends, and those it receives.
fn profile_streams(
    request: &ProfileRequest,
    streams: Vec<OpenStream>,
) -> Result<(Vec<ProfileStream>, Vec<ProfileStream>), RunError> {
    let (mut send, mut receive) = (Vec::new(), Vec::new());
    for (s, _, _) in streams {
        let (Some(spec), DataSocket::Udp(socket)) = (request.profile.stream(s.id), s.socket) else {
            return Err(RunError::Setup(format!(
                "profile stream {} is not a UDP stream of the profile",
                s.id
            )));
        };
        set_dscp(&socket, s.id, spec.dscp)?;
        let stream = ProfileStream {
            id: s.id,
            spec: spec.clone(),
            socket,
            ack: s.ack,
        };
        match s.role {
            StreamRole::Sender => send.push(stream),
            StreamRole::Receiver => receive.push(stream),
        }
    }
    Ok((send, receive))
}
