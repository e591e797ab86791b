//! Counts as the iperf3-shaped documents may spell them when read: an integer, or a float
//! (some writers print every number as one; a hand-made document may), taken whole
//! (truncated, a negative one as 0), as the report always read them. Written, they stay the
//! integers they are.

use serde::de::{Deserializer, Error, Visitor};
use serde::Deserialize;

/// A count read leniently (see the module docs).
struct Count(u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Count;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a count (a number)")
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<Count, E> {
                Ok(Count(v))
            }
            fn visit_i64<E: Error>(self, v: i64) -> Result<Count, E> {
                Ok(Count(u64::try_from(v).unwrap_or(0)))
            }
            fn visit_f64<E: Error>(self, v: f64) -> Result<Count, E> {
                Ok(Count(v.max(0.0) as u64))
            }
        }
        d.deserialize_any(V)
    }
}

/// A required count.
pub(crate) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Count::deserialize(d).map(|c| c.0)
}

/// An optional count (missing or null: `None`; give the field `default` too).
pub(crate) fn opt_count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Option::<Count>::deserialize(d).map(|c| c.map(|c| c.0))
}

#[cfg(test)]
mod tests {
    #[derive(Debug, serde::Deserialize)]
    struct T {
        #[serde(deserialize_with = "super::count")]
        n: u64,
        #[serde(default, deserialize_with = "super::opt_count")]
        m: Option<u64>,
    }

    #[test]
    fn integers_and_floats_read_as_whole_counts_and_text_is_refused() {
        let read = |v| serde_json::from_value::<T>(v).map(|t| (t.n, t.m));
        assert_eq!(read(serde_json::json!({"n": 3})).ok(), Some((3, None)));
        let t = read(serde_json::json!({"n": 516.67, "m": -2, }));
        assert_eq!(t.ok(), Some((516, Some(0))));
        assert_eq!(
            read(serde_json::json!({"n": 1, "m": null})).ok(),
            Some((1, None))
        );
        assert!(read(serde_json::json!({"n": "3"})).is_err());
        assert!(read(serde_json::json!({})).is_err());
    }
}
