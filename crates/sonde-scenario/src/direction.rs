//! A link direction, as scenario files and records name it.

/// A link direction, as seen from the link's endpoints `a` and `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// From endpoint `a` to endpoint `b`.
    AToB,
    /// From endpoint `b` to endpoint `a`.
    BToA,
}

impl Direction {
    /// Both directions, `a`→`b` first.
    pub const BOTH: [Direction; 2] = [Direction::AToB, Direction::BToA];

    /// The name used in scenario files and records.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::AToB => "a-to-b",
            Direction::BToA => "b-to-a",
        }
    }
}

impl core::fmt::Display for Direction {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}
