//! Assembles the arriving probe datagrams into trains, pure (receive times are arguments):
//! what the client's receive loop feeds and asks which train to acknowledge.
//!
//! Trains arrive one after the other (the server waits for each acknowledgement), so one
//! train is built at a time: a probe of a later train closes the current one, a probe of a
//! closed train is late and ignored, as are probes that do not fit the plan. A train closes
//! with its last datagram, or when the receive loop reports a quiet spell (its tail was lost).

use sonde_proto::capacity::{CapacityPlan, Probe};
use sonde_stats::capacity::train::{Arrival, Train};

/// Collects the trains of one plan.
#[derive(Debug)]
pub struct Collector {
    plan: CapacityPlan,
    /// IP + UDP header bytes, added to each datagram's payload.
    headers: u32,
    building: Option<Train>,
    /// Closed trains, in the order they closed.
    pub done: Vec<Train>,
    /// Probes ignored: late, duplicated, or not fitting the plan.
    pub ignored: u64,
}

impl Collector {
    /// A collector for `plan`'s trains, each datagram counting its payload and `headers`
    /// (IP + UDP) bytes at the IP layer.
    pub fn new(plan: CapacityPlan, headers: u32) -> Self {
        Self {
            plan,
            headers,
            building: None,
            done: Vec::new(),
            ignored: 0,
        }
    }

    /// One probe of `payload` bytes received at `rx_ns`; the train to acknowledge when this
    /// one completed it. Its size is the one that arrived (a train's probe size, measured).
    pub fn push(&mut self, p: Probe, payload: usize, rx_ns: u64) -> Option<u32> {
        let fits = self.plan.train_len(p.train) == Some(p.count);
        let closed = self.done.last().is_some_and(|t| p.train <= t.id);
        if !fits || closed {
            self.ignored += 1;
            return None;
        }
        if self.building.as_ref().is_some_and(|t| t.id != p.train) {
            if self.building.as_ref().is_some_and(|t| p.train < t.id) {
                self.ignored += 1;
                return None;
            }
            self.close();
        }
        let t = self.building.get_or_insert_with(|| Train {
            id: p.train,
            sent: p.count,
            arrivals: Vec::new(),
        });
        if t.arrivals.iter().any(|a| a.seq == p.seq) || t.arrivals.len() >= p.count as usize {
            self.ignored += 1;
            return None;
        }
        t.arrivals.push(Arrival {
            seq: p.seq,
            ip_bytes: u32::try_from(payload)
                .unwrap_or(u32::MAX)
                .saturating_add(self.headers),
            rx_ns,
            tx_ns: p.send_ns,
        });
        if p.seq + 1 == p.count {
            return self.close();
        }
        None
    }

    /// Nothing arrived for a while: closes the train being built; the train to acknowledge.
    pub fn quiet(&mut self) -> Option<u32> {
        self.close()
    }

    fn close(&mut self) -> Option<u32> {
        let t = self.building.take()?;
        let id = t.id;
        self.done.push(t);
        Some(id)
    }

    /// True once the plan's last train has closed.
    pub fn complete(&self) -> bool {
        self.done
            .last()
            .is_some_and(|t| t.id + 1 >= self.plan.trains())
    }

    /// The long trains closed so far, in order (trains close in the order of their ids).
    pub fn long(&self) -> &[Train] {
        let short = self.plan.short_trains;
        let at = self.done.partition_point(|t| t.id < short);
        self.done.get(at..).unwrap_or_default()
    }

    /// Closes what is open and splits the trains into the short and the long ones.
    pub fn finish(mut self) -> (Vec<Train>, Vec<Train>) {
        self.close();
        let short = self.plan.short_trains;
        self.done.into_iter().partition(|t| t.id < short)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> CapacityPlan {
        CapacityPlan {
            short_trains: 2,
            short_len: 3,
            long_trains: 1,
            long_len: 16,
            spacing_ms: 10,
            ..CapacityPlan::default()
        }
    }

    fn probe(train: u32, seq: u32, count: u32) -> Probe {
        Probe {
            train,
            seq,
            count,
            send_ns: 7,
        }
    }

    #[test]
    fn trains_close_on_their_last_datagram_or_the_next_train() {
        let mut c = Collector::new(plan(), 28);
        assert_eq!(c.push(probe(0, 0, 3), 1472, 10), None);
        assert_eq!(c.push(probe(0, 1, 3), 1472, 20), None);
        assert_eq!(c.push(probe(0, 2, 3), 1472, 30), Some(0));
        // Train 1 loses its last datagram; train 2 closes it.
        assert_eq!(c.push(probe(1, 0, 3), 600, 40), None);
        assert_eq!(c.push(probe(2, 0, 16), 1472, 50), None);
        assert_eq!(c.done.len(), 2);
        assert!(!c.complete());
        // Late and misfit probes are ignored.
        assert_eq!(c.push(probe(1, 1, 3), 1472, 60), None);
        assert_eq!(c.push(probe(2, 1, 99), 1472, 60), None);
        assert_eq!(c.push(probe(2, 0, 16), 1472, 60), None);
        assert_eq!(c.push(probe(7, 0, 3), 1472, 60), None);
        assert_eq!(c.ignored, 4);
        assert!(c.long().is_empty());
        assert_eq!(c.quiet(), Some(2));
        assert!(c.complete());
        assert_eq!(c.long().len(), 1);
        let (short, long) = c.finish();
        assert_eq!(short.len(), 2);
        assert_eq!(long.len(), 1);
        assert_eq!(short[0].arrivals[2].rx_ns, 30);
        assert_eq!(short[0].arrivals[2].ip_bytes, 1500);
        assert_eq!(short[0].arrivals[2].tx_ns, 7);
        assert_eq!(short[1].arrivals.len(), 1);
        assert_eq!(short[1].sent, 3);
        assert_eq!(short[1].arrivals[0].ip_bytes, 628);
    }
}
