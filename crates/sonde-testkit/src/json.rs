//! Paths into JSON documents with readable failure messages: `at(doc, "end.streams.0.udp")`
//! names the path and shows the document when a step is missing or of another type.

use serde_json::Value;

use crate::tail;

/// The value at a dotted path (`"end.streams.0.udp.jitter_ms"`; numbers index arrays), with the
/// document in the panic message when it is missing.
#[track_caller]
pub fn at<'a>(doc: &'a Value, path: &str) -> &'a Value {
    let mut v = doc;
    for seg in path.split('.') {
        let next = match seg.parse::<usize>() {
            Ok(i) => v.get(i),
            Err(_) => v.get(seg),
        };
        v = next.unwrap_or_else(|| {
            panic!(
                "JSON has no `{path}` (stopped at `{seg}`)\n{}",
                tail(&serde_json::to_string_pretty(doc).unwrap_or_default(), 6000)
            )
        });
    }
    v
}

/// The number at `path`.
#[track_caller]
pub fn num(doc: &Value, path: &str) -> f64 {
    at(doc, path)
        .as_f64()
        .unwrap_or_else(|| panic!("`{path}` is not a number: {}", at(doc, path)))
}

/// The unsigned integer at `path`.
#[track_caller]
pub fn uint(doc: &Value, path: &str) -> u64 {
    at(doc, path)
        .as_u64()
        .unwrap_or_else(|| panic!("`{path}` is not an unsigned integer: {}", at(doc, path)))
}

/// The array at `path`.
#[track_caller]
pub fn arr<'a>(doc: &'a Value, path: &str) -> &'a Vec<Value> {
    at(doc, path)
        .as_array()
        .unwrap_or_else(|| panic!("`{path}` is not an array: {}", at(doc, path)))
}

/// The string at `path`.
#[track_caller]
pub fn text<'a>(doc: &'a Value, path: &str) -> &'a str {
    at(doc, path)
        .as_str()
        .unwrap_or_else(|| panic!("`{path}` is not a string: {}", at(doc, path)))
}

/// The notes of a sonde `-J` document (`sonde.notes`: both ends' words about the run, such
/// as a sender that fell behind its schedule); none for a document without them.
pub fn notes(doc: &Value) -> Vec<&str> {
    doc["sonde"]["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_steps_through_objects_and_arrays() {
        let doc: Value = serde_json::json!({"end": {"streams": [{"udp": {"jitter_ms": 0.5, "n": 3, "k": "x"}}]}});
        assert_eq!(num(&doc, "end.streams.0.udp.jitter_ms"), 0.5);
        assert_eq!(uint(&doc, "end.streams.0.udp.n"), 3);
        assert_eq!(text(&doc, "end.streams.0.udp.k"), "x");
        assert_eq!(arr(&doc, "end.streams").len(), 1);
    }

    #[test]
    #[should_panic(expected = "JSON has no `end.nope` (stopped at `nope`)")]
    fn a_missing_step_is_named() {
        at(&serde_json::json!({"end": {}}), "end.nope");
    }

    #[test]
    fn notes_are_the_strings_under_sonde_notes_or_none() {
        let doc = serde_json::json!({"sonde": {"notes": ["a", 3, "b"]}});
        assert_eq!(notes(&doc), ["a", "b"]);
        assert!(notes(&serde_json::json!({"end": {}})).is_empty());
    }
}
