//! `sonde client --iperf2`: one test against a real iperf 2 server (`iperf -s`, 2.1.8).
//!
//! iperf 2 has no control connection: each stream states the test in iperf 2's client header
//! ([`client_header`](crate::client_header)), at the start of a TCP stream (the server
//! acknowledges it, [`client_ack`](crate::client_ack)) or after the 16-byte header of every
//! UDP datagram (the workers' datagram format and prefix). Then the streams run on sonde's
//! own engine, so intervals, summary, pacing and every reporter are exactly those of sonde's
//! and iperf3's tests, and this end decides when the test ends (`-t`, `-n`, `-k`).
//!
//! What comes back differs by transport. TCP: nothing; the result is this end's view, and a
//! note says so. UDP: each stream's final datagrams are answered by the server's report
//! ([`client_fin`](crate::client_fin)), which becomes that stream's receiver view.

use crate::client_ack::{read_ack, ACK_WAIT};
use crate::client_fin::{self, Ending, FinStream};
use crate::client_header::{self, Request};
use sonde_platform::cpu;
use sonde_platform::resolve::resolve;
use sonde_proto::datagram_format::DatagramFormat;
use sonde_proto::message::{PeerStream, Results, TestParams};
use sonde_runtime_core::connect::{open_data_stream, open_streams, running, OpenedStream};
use sonde_runtime_core::connect::{ClientConfig, ClientOutcome};
use sonde_runtime_core::engine::{DataSocket, Engine, LocalStream};
use sonde_runtime_core::error::RunError;
use sonde_runtime_core::streams::{Budget, StreamConfig};
use sonde_stats::model::{Direction, Event, Protocol, Role, StreamRole, TestSummary};
use sonde_stats::sink::{deliver, Sink};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// How long TCP senders wait for `iperf -s` to close after their half-close (it closes once
/// it has read everything, so its count is complete when it does).
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// What the header needs that the test parameters do not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Iperf2Options {
    /// `-l` was given (it then goes in the header, as 2.1.8 puts it there).
    pub length_given: bool,
}

/// Runs one test against an iperf 2 server. Events go to `emit`; the outcome says how it
/// ended.
pub fn run(
    cfg: &ClientConfig,
    opts: Iperf2Options,
    interrupt: &AtomicBool,
    emit: &mut dyn Sink<Event>,
) -> ClientOutcome {
    let mut run = Run {
        cfg,
        opts,
        interrupt,
        emit,
        engine: None,
        cpu0: cpu::ProcessSpan::start(),
        stop_at: None,
    };
    let (summary, error) = match run.execute() {
        Ok(s) => (Some(s), None),
        Err(e) => (run.partial(&e), Some(e)),
    };
    ClientOutcome {
        summary,
        error,
        server_view: None,
        server_load: None,
    }
}

/// What the end of the test needs of each stream, kept beside the engine's sockets.
enum Tail {
    /// TCP: the sending streams, to wait for the server's close.
    Tcp(Vec<(u32, TcpStream)>),
    /// UDP: the streams to end with final datagrams.
    Udp(Vec<FinStream>),
}

impl Tail {
    /// The tail of `opened`'s sending streams; TCP's close is awaited only with `wait_close`.
    fn of(opened: &[OpenedStream], len: usize, wait_close: bool) -> Result<Tail, RunError> {
        let clone_err = |id| move |source| RunError::Stream { id, source };
        let mut tcp = Vec::new();
        let mut udp = Vec::new();
        for o in opened.iter().filter(|o| o.role == StreamRole::Sender) {
            match &o.socket {
                DataSocket::Tcp(_) if !wait_close => {}
                DataSocket::Tcp(t) => tcp.push((o.id, t.try_clone().map_err(clone_err(o.id))?)),
                DataSocket::Udp(u) => udp.push(FinStream {
                    id: o.id,
                    sock: u.try_clone().map_err(clone_err(o.id))?,
                    last_seq: 0,
                    len,
                }),
            }
        }
        Ok(if udp.is_empty() {
            Tail::Tcp(tcp)
        } else {
            Tail::Udp(udp)
        })
    }
}

struct Run<'a> {
    cfg: &'a ClientConfig,
    opts: Iperf2Options,
    interrupt: &'a AtomicBool,
    emit: &'a mut dyn Sink<Event>,
    engine: Option<Engine>,
    cpu0: cpu::ProcessSpan,
    /// When the senders were told to stop (test seconds): a partial summary ends there.
    stop_at: Option<f64>,
}

impl Run<'_> {
    fn execute(&mut self) -> Result<TestSummary, RunError> {
        let cfg = self.cfg;
        let p = &cfg.params;
        let addrs = resolve(&cfg.host, cfg.port, cfg.family, self.interrupt)?;
        let req = Request {
            length_given: self.opts.length_given,
            server_port: cfg.port,
        };
        let header = client_header::bytes(&client_header::header(p, req));
        let (opened, server) = self.open(&addrs, &header)?;
        let prefix = if p.protocol == Protocol::Udp {
            header
        } else {
            Vec::new()
        };
        // --full-duplex: each connection's receiver reads it to the server's close.
        let wait_close = p.direction != Direction::Bidir;
        let tail = Tail::of(&opened, p.length.as_len(), wait_close)?;
        crate::client_steps::announce(cfg, &opened, server, &mut *self.emit);
        self.start_engine(opened, prefix.clone())?;
        self.until_end()?;
        let engine = running(&mut self.engine)?;
        let stop_at = engine.elapsed();
        self.stop_at = Some(stop_at);
        engine.stop_senders(Duration::from_secs(1));
        let peer = self.end_streams(tail, &prefix)?;
        let mut engine = self
            .engine
            .take()
            .ok_or(RunError::Setup("engine missing".into()))?;
        engine.drain_receivers(&[], Engine::drain_grace(p.protocol));
        if let Some((id, e)) = engine.first_error() {
            // iperf -s may close (and so reset) a connection with data unread at the end.
            let note = format!("stream {id}: {e}: data still in flight then is not counted");
            deliver(self.emit, &Event::Note(note));
        }
        let local = engine.final_views(stop_at, &mut *self.emit);
        engine.join();
        let mut summary =
            sonde_runtime_core::summary::build(sonde_runtime_core::summary::SummaryInput {
                role: Role::Client,
                params: p,
                local: &local,
                peer: Some(&Results {
                    streams: peer,
                    ..Results::default()
                }),
                cpu_local: self.cpu0.usage(),
                local_congestion: engine.congestion(),
                error: None,
            });
        // iperf 2 reports no CPU figures.
        summary.cpu_remote = None;
        deliver(self.emit, &Event::End(Box::new(summary.clone())));
        Ok(summary)
    }

    /// Connects every stream (TCP: to the first address that answers) and, on TCP, reads
    /// each one's acknowledgement. Returns the streams and the server's address.
    fn open(
        &mut self,
        addrs: &[SocketAddr],
        header: &[u8],
    ) -> Result<(Vec<OpenedStream>, SocketAddr), RunError> {
        let (cfg, interrupt) = (self.cfg, self.interrupt);
        let duplex = cfg.params.direction == Direction::Bidir;
        // --full-duplex: one connection per stream pair, opened as the sending half.
        let connections = TestParams {
            direction: if duplex {
                Direction::Upload
            } else {
                cfg.params.direction
            },
            ..cfg.params.clone()
        };
        let mut last = None;
        for &server in addrs {
            let opened = open_streams(&connections, interrupt, |id| {
                open_data_stream(cfg, server, id, header, |_| Ok(()))
            });
            match opened {
                Ok(o) => {
                    self.read_acks(&o, server, duplex)?;
                    let o = match duplex {
                        true => crate::client_steps::duplex(o, cfg.params.parallel)?,
                        false => o,
                    };
                    return Ok((o, server));
                }
                Err(e @ RunError::Connect { .. }) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or(RunError::Setup("no address to connect to".into())))
    }

    /// Reads each TCP stream's acknowledgement; a note for the streams that got none (unless
    /// the server's data may come instead: `-R`, and `--full-duplex` when `duplex`).
    fn read_acks(
        &mut self,
        opened: &[OpenedStream],
        server: SocketAddr,
        duplex: bool,
    ) -> Result<(), RunError> {
        let deadline = Instant::now() + ACK_WAIT;
        let mut missing = Vec::new();
        for o in opened {
            if let DataSocket::Tcp(t) = &o.socket {
                let wait = deadline.saturating_duration_since(Instant::now());
                let receives = duplex || o.role == StreamRole::Receiver;
                if read_ack(t, o.id, wait, receives)?.is_none() && !receives {
                    missing.push(o.id.to_string());
                }
            }
        }
        if !missing.is_empty() {
            let note = format!(
                "{server} sent no header acknowledgement on stream(s) {} within {} s (an iperf 2 older than 2.1?); testing on",
                missing.join(", "),
                ACK_WAIT.as_secs()
            );
            deliver(self.emit, &Event::Note(note));
        }
        Ok(())
    }

    fn start_engine(&mut self, opened: Vec<OpenedStream>, prefix: Vec<u8>) -> Result<(), RunError> {
        let p = &self.cfg.params;
        let send = StreamConfig {
            format: DatagramFormat::Iperf2 { wide: true },
            prefix,
            file: self.cfg.file.clone(),
            ..StreamConfig::for_test(p)
        };
        let budget = if p.direction == Direction::Reverse {
            None
        } else {
            Budget::new(p.bytes, p.blocks)
        };
        let streams = opened
            .into_iter()
            .map(|o| LocalStream {
                id: o.id,
                role: o.role,
                socket: o.socket,
                ack: None,
            })
            .collect();
        self.cpu0 = cpu::ProcessSpan::start();
        let engine = Engine::start_now(p, streams, &send, budget)?;
        self.engine = Some(engine);
        Ok(())
    }

    /// Runs the streams until `-t`, `-n` or `-k` says the test is over.
    fn until_end(&mut self) -> Result<(), RunError> {
        let engine = running(&mut self.engine)?;
        engine.until_end(&self.cfg.params, self.interrupt, &mut *self.emit, || {
            std::thread::sleep(Duration::from_millis(5));
            Ok(())
        })
    }

    /// After the senders stopped: TCP waits for the server's close, UDP exchanges final
    /// datagrams for reports. Returns the server's view of each stream it reported.
    fn end_streams(&mut self, tail: Tail, prefix: &[u8]) -> Result<Vec<PeerStream>, RunError> {
        match tail {
            Tail::Tcp(streams) => {
                crate::client_steps::await_close(&streams, CLOSE_WAIT, &mut *self.emit);
                let note = "iperf 2 sends no TCP result back: the figures are this end's";
                deliver(self.emit, &Event::Note(note.into()));
                Ok(Vec::new())
            }
            Tail::Udp(mut streams) => {
                let sent = running(&mut self.engine)?.sent_counts();
                for s in &mut streams {
                    s.last_seq = sent.iter().find(|c| c.id == s.id).map_or(0, |c| c.packets);
                }
                let endings = client_fin::exchange(&streams, prefix, self.interrupt)?;
                Ok(self.reported(endings))
            }
        }
    }

    /// The reports as receiver views; a note for each stream without one.
    fn reported(&mut self, endings: Vec<(u32, Ending)>) -> Vec<PeerStream> {
        let mut views = Vec::new();
        for (id, ending) in endings {
            let note = match ending {
                Ending::Report(r) => {
                    views.push(PeerStream {
                        id,
                        role: StreamRole::Receiver,
                        view: client_fin::server_view(&r),
                    });
                    continue;
                }
                Ending::Missing => format!(
                    "warning: stream {id}: iperf -s sent no server report ({} final datagrams in {:.1} s): the server's view of it is unknown",
                    client_fin::FIN_TRIES,
                    (client_fin::FIN_EVERY * client_fin::FIN_TRIES).as_secs_f64()
                ),
                Ending::Refused(why) => {
                    format!("warning: stream {id}: iperf -s's server report is refused: {why}")
                }
            };
            deliver(self.emit, &Event::Note(note));
        }
        views
    }

    fn partial(&mut self, e: &RunError) -> Option<TestSummary> {
        let mut engine = self.engine.take()?;
        let summary = crate::client_steps::partial(
            &mut engine,
            &self.cfg.params,
            self.stop_at,
            e.to_string(),
            self.cpu0,
            &mut *self.emit,
        );
        deliver(self.emit, &Event::End(Box::new(summary.clone())));
        Some(summary)
    }
}
