//! The sink trait every reporter implements, re-exported from `sonde_stats::sink` (where it
//! lives beside the event types, so that the runtime below can take the same trait), and
//! [`Tee`], the fan-out over several reporters, which only output needs.
//!
//! A leaf: the reporters (`json`, `json_lines`, `table`, the latency and stress modules)
//! import the trait from here, and it imports none of them, so two reporters of one kind (a
//! table and its JSON) need not import each other for the trait they share.

use std::io;

use sonde_stats::model::Event;
pub use sonde_stats::sink::{Discard, FnSink, Sink};

/// Fan-out sink: passes every event to each inner sink in order.
///
/// A failing sink does not stop the others from receiving the event; the first error is
/// returned after all sinks were called.
#[derive(Default)]
pub struct Tee {
    sinks: Vec<Box<dyn Sink + Send>>,
}

impl Tee {
    /// A tee over `sinks`.
    pub fn new(sinks: Vec<Box<dyn Sink + Send>>) -> Self {
        Tee { sinks }
    }

    /// Add one more sink.
    pub fn push(&mut self, sink: Box<dyn Sink + Send>) {
        self.sinks.push(sink);
    }

    /// Number of inner sinks.
    pub fn len(&self) -> usize {
        self.sinks.len()
    }

    /// True when there are no inner sinks.
    pub fn is_empty(&self) -> bool {
        self.sinks.is_empty()
    }

    fn each(
        &mut self,
        mut f: impl FnMut(&mut (dyn Sink + Send)) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut first_err = None;
        for sink in &mut self.sinks {
            if let Err(e) = f(sink.as_mut()) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl Sink for Tee {
    fn event(&mut self, ev: &Event) -> io::Result<()> {
        self.each(|s| s.event(ev))
    }

    fn finish(&mut self) -> io::Result<()> {
        self.each(|s| s.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    struct Recorder(Arc<Mutex<Vec<String>>>, bool);

    impl Sink for Recorder {
        fn event(&mut self, ev: &Event) -> io::Result<()> {
            self.0.lock().unwrap().push(format!("{ev:?}"));
            if self.1 {
                Err(io::Error::other("boom"))
            } else {
                Ok(())
            }
        }
        fn finish(&mut self) -> io::Result<()> {
            self.0.lock().unwrap().push("finish".into());
            Ok(())
        }
    }

    #[test]
    fn tee_calls_every_sink_even_after_an_error() {
        let a = Arc::new(Mutex::new(Vec::new()));
        let b = Arc::new(Mutex::new(Vec::new()));
        let mut tee = Tee::new(vec![Box::new(Recorder(a.clone(), true))]);
        tee.push(Box::new(Recorder(b.clone(), false)));
        assert_eq!(tee.len(), 2);
        let err = tee.event(&Event::Note("hi".into())).unwrap_err();
        assert_eq!(err.to_string(), "boom");
        tee.finish().unwrap();
        assert_eq!(a.lock().unwrap().len(), 2);
        assert_eq!(b.lock().unwrap().len(), 2);
    }
}
