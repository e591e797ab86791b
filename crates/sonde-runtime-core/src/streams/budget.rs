//! A shared byte or block budget for `-n` / `-k`: senders claim from it before each write, so
//! the total sent is exact however many streams there are.

use sonde_stats::units::Size;
use std::sync::atomic::{AtomicU64, Ordering};

/// Remaining bytes or blocks, shared by all sending streams of one end.
#[derive(Debug)]
pub struct Budget {
    bytes_limit: u64,
    blocks_limit: u64,
    bytes: AtomicU64,
    blocks: AtomicU64,
}

impl Budget {
    /// A budget; a limit of 0 means no limit of that kind. None when neither is set.
    pub fn new(bytes_limit: Size, blocks_limit: u64) -> Option<Self> {
        let bytes_limit = bytes_limit.bytes();
        (bytes_limit > 0 || blocks_limit > 0).then(|| Self {
            bytes_limit,
            blocks_limit,
            bytes: AtomicU64::new(0),
            blocks: AtomicU64::new(0),
        })
    }

    /// Claims one block of up to `len` bytes; returns how many bytes may be written (0 = done).
    pub fn claim(&self, len: u64) -> u64 {
        if self.blocks_limit > 0 && self.blocks.fetch_add(1, Ordering::Relaxed) >= self.blocks_limit
        {
            return 0;
        }
        if self.bytes_limit == 0 {
            return len;
        }
        let before = self.bytes.fetch_add(len, Ordering::Relaxed);
        if before >= self.bytes_limit {
            return 0;
        }
        len.min(self.bytes_limit - before)
    }

    /// Nothing more may be claimed (a `-F` file ended before the budget did).
    pub fn close(&self) {
        self.bytes.fetch_max(self.bytes_limit, Ordering::Relaxed);
        self.blocks.fetch_max(self.blocks_limit, Ordering::Relaxed);
    }

    /// True once nothing more may be claimed.
    pub fn exhausted(&self) -> bool {
        (self.blocks_limit > 0 && self.blocks.load(Ordering::Relaxed) >= self.blocks_limit)
            || (self.bytes_limit > 0 && self.bytes.load(Ordering::Relaxed) >= self.bytes_limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_budget_is_exact() {
        let b = Budget::new(Size::from_bytes(250), 0).unwrap();
        assert_eq!(b.claim(100), 100);
        assert_eq!(b.claim(100), 100);
        assert_eq!(b.claim(100), 50);
        assert_eq!(b.claim(100), 0);
        assert!(b.exhausted());
    }

    #[test]
    fn blocks_budget() {
        let b = Budget::new(Size::ZERO, 2).unwrap();
        assert_eq!(b.claim(10), 10);
        assert_eq!(b.claim(10), 10);
        assert_eq!(b.claim(10), 0);
        assert!(Budget::new(Size::ZERO, 0).is_none());
    }

    #[test]
    fn a_closed_budget_is_exhausted() {
        let b = Budget::new(Size::from_bytes(1000), 0).unwrap();
        assert_eq!(b.claim(100), 100);
        b.close();
        assert!(b.exhausted());
        assert_eq!(b.claim(100), 0);
    }
}
