//! The sink trait: what every reporter implements and what measuring code hands its events
//! to. It lives here, beside the event types, so that the producers below the reporters (the
//! runtime's kinds, the stress client) and the reporters above them (`sonde-live`, which
//! re-exports it) share one trait without either depending on the other.
//!
//! [`Sink<E>`] is generic over the event type: the throughput test's [`Event`] by default,
//! [`crate::latency::model::LatencyEvent`] for latency runs,
//! [`crate::stress::model::StressEvent`] for `sonde stress`. Two small adapters serve callers
//! that want no reporter: [`FnSink`] turns a closure into a sink (tests, the agent picking
//! out the events it records), [`Discard`] drops every event (a suite's inner runs). Runs
//! that report only their progress (the suites' phases and steps) hand it to a sink of their
//! own event type, or of [`ProgressNote`] where a line of text is all there is. The
//! fan-out over several reporters (`Tee`) is a reporter's concern and stays in `sonde-live`.
//!
//! ```
//! use sonde_stats::model::Event;
//! use sonde_stats::sink::{deliver, FnSink};
//!
//! let mut notes = Vec::new();
//! let mut sink = FnSink(|ev: &Event| {
//!     if let Event::Note(n) = ev {
//!         notes.push(n.clone());
//!     }
//! });
//! deliver(&mut sink, &Event::Note("hello".into()));
//! assert_eq!(notes, ["hello"]);
//! ```

use std::io;

use crate::model::Event;

/// A consumer of test events of type `E` (the throughput test's [`Event`] unless named).
///
/// Calling order: [`Sink::event`] for each event as it happens (for the throughput test
/// typically `Start`, any number of `Interval`/`Note`/`Error`, then `End`), then
/// [`Sink::finish`] exactly once at the very end, also when the run failed or was interrupted
/// before `End`.
///
/// # Who handles a failure
/// A producer that measures (every run of `sonde-runtime`, the stress client of
/// `sonde-stress`) does not act on an error from [`Sink::event`]: output never stops or fails
/// a measurement, and the producer goes on with the next event (it hands events over through
/// [`deliver`], which drops the error). A sink that must react to a failed write does so
/// itself before it returns: the command line's sinks report a failure once on standard error
/// and, when standard output was closed by its reader, raise the run's stop flag, so that the
/// run ends as after Ctrl-C. A producer never calls [`Sink::finish`]: whoever made the sink
/// finishes it.
pub trait Sink<E = Event> {
    /// Consume one event.
    ///
    /// # Errors
    /// Fails when the underlying writer fails.
    fn event(&mut self, ev: &E) -> io::Result<()>;

    /// Finish the output (write buffered documents, flush).
    ///
    /// # Errors
    /// Fails when the underlying writer fails.
    fn finish(&mut self) -> io::Result<()>;
}

/// Hands `ev` to `sink` the way a measuring producer does: a failure is the sink's to handle
/// (see [`Sink`]), so it is dropped here and the run goes on.
pub fn deliver<E>(sink: &mut (impl Sink<E> + ?Sized), ev: &E) {
    // The sink already acted on its failure; a measurement does not stop for output.
    let _ = sink.event(ev);
}

impl<E, S: Sink<E> + ?Sized> Sink<E> for Box<S> {
    fn event(&mut self, ev: &E) -> io::Result<()> {
        (**self).event(ev)
    }

    fn finish(&mut self) -> io::Result<()> {
        (**self).finish()
    }
}

impl<E, S: Sink<E> + ?Sized> Sink<E> for &mut S {
    fn event(&mut self, ev: &E) -> io::Result<()> {
        (**self).event(ev)
    }

    fn finish(&mut self) -> io::Result<()> {
        (**self).finish()
    }
}

/// A closure as a sink: each event is passed to the closure, which cannot fail; `finish`
/// does nothing.
pub struct FnSink<F>(pub F);

impl<E, F: FnMut(&E)> Sink<E> for FnSink<F> {
    fn event(&mut self, ev: &E) -> io::Result<()> {
        (self.0)(ev);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A line of progress for the person watching, from a run whose only events are such lines
/// (the clock offset a profile run measured first, say): the runs that have no event type
/// of their own hand these to a `Sink<ProgressNote>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressNote(pub String);

/// A sink that drops every event: for runs whose events nobody reads (a suite's inner
/// tests, whose outcome is all it keeps).
#[derive(Debug, Default, Clone, Copy)]
pub struct Discard;

impl<E> Sink<E> for Discard {
    fn event(&mut self, _ev: &E) -> io::Result<()> {
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Failing(usize);

    impl Sink for Failing {
        fn event(&mut self, _ev: &Event) -> io::Result<()> {
            self.0 += 1;
            Err(io::Error::other("boom"))
        }
        fn finish(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn deliver_drops_the_sinks_error_and_goes_on() {
        let mut sink = Failing(0);
        deliver(&mut sink, &Event::Note("a".into()));
        let mut boxed: Box<dyn Sink> = Box::new(sink);
        deliver(&mut boxed, &Event::Note("b".into()));
        assert!(boxed.event(&Event::Note("c".into())).is_err());
    }

    #[test]
    fn a_closure_sees_every_event_and_discard_none() {
        let mut seen = Vec::new();
        let mut sink = FnSink(|ev: &Event| seen.push(ev.clone()));
        deliver(&mut sink, &Event::Note("one".into()));
        sink.finish().unwrap();
        assert_eq!(seen, [Event::Note("one".into())]);
        assert!(Sink::<Event>::event(&mut Discard, &Event::Note("x".into())).is_ok());
    }
}
