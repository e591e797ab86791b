//! Link settings and backend plans, as the report shows them.
//!
//! The store keeps each settings entry as the lab serialised it (`sonde_scenario`'s
//! `Settings`) and the scenario file verbatim. The report reads the JSON first and falls back
//! to the scenario text, so a database whose settings JSON is missing or from another version still gives the
//! link columns where it can. One number per column summarises a settings entry: the lowest
//! rate, the highest one-way delay and the highest random loss of any impaired direction (in
//! the built-in scenarios one link carries every impairment, so these are exact there).

use serde::Serialize;
use serde_json::Value;
use sonde_scenario::{Scenario, Settings};

use crate::fmt;

/// One settings entry: a column of the matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkView {
    pub name: String,
    /// Every impaired link direction, `"wan both: rate 100mbit, loss 5%"`; empty when clean.
    pub description: String,
    pub rate_bps: Option<f64>,
    pub delay_ms: Option<f64>,
    pub loss_percent: Option<f64>,
}

impl LinkView {
    /// A settings entry known only by name.
    pub fn unknown(name: &str) -> LinkView {
        LinkView {
            name: name.to_owned(),
            description: String::new(),
            rate_bps: None,
            delay_ms: None,
            loss_percent: None,
        }
    }

    /// Loss / delay / rate in a few words, for table cells.
    pub fn short(&self) -> String {
        let mut p = Vec::new();
        if let Some(r) = self.rate_bps {
            p.push(fmt::rate(r));
        }
        if let Some(d) = self.delay_ms {
            p.push(format!("{} delay", fmt::ms(d)));
        }
        if let Some(l) = self.loss_percent {
            p.push(format!("{} loss", fmt::percent(l)));
        }
        if p.is_empty() {
            if self.description.is_empty() {
                "–".into()
            } else {
                self.description.clone()
            }
        } else {
            p.join(", ")
        }
    }

    /// Builds the view from parsed settings.
    pub fn from_settings(s: &Settings) -> LinkView {
        let mut v = LinkView::unknown(&s.name);
        let mut parts = Vec::new();
        for l in &s.links {
            if l.impair.is_empty() {
                continue;
            }
            let imp = &l.impair;
            let text = serde_json::to_value(imp)
                .ok()
                .and_then(|j| {
                    j.as_object().map(|o| {
                        o.iter()
                            .map(|(k, v)| match v {
                                Value::String(s) => format!("{k} {s}"),
                                other => format!("{k} {other}"),
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                })
                .unwrap_or_default();
            let dir = serde_json::to_value(l.direction)
                .ok()
                .and_then(|d| d.as_str().map(str::to_owned))
                .unwrap_or_default();
            parts.push(format!("{} {}: {}", l.link, dir, text));
            if let Some(r) = imp.rate {
                let r = r.0 as f64;
                v.rate_bps = Some(v.rate_bps.map_or(r, |x| x.min(r)));
            }
            if let Some(d) = imp.delay {
                let d = d.0.as_secs_f64() * 1e3;
                v.delay_ms = Some(v.delay_ms.map_or(d, |x| x.max(d)));
            }
            let loss = imp.loss.map(|p| p.0 * 100.0);
            if let Some(l) = loss {
                v.loss_percent = Some(v.loss_percent.map_or(l, |x| x.max(l)));
            }
        }
        if v.loss_percent.is_none() && v.rate_bps.is_some() && !has_other_loss(s) {
            v.loss_percent = Some(0.0);
        }
        v.description = parts.join("; ");
        v
    }

    /// From the stored JSON, else from the scenario text, else by name only.
    pub fn resolve(name: &str, json: &Value, scenario: Option<&Scenario>) -> LinkView {
        if let Ok(s) = serde_json::from_value::<Settings>(json.clone()) {
            return LinkView::from_settings(&s);
        }
        if let Some(s) = scenario.and_then(|sc| sc.setting(name)) {
            return LinkView::from_settings(s);
        }
        LinkView::unknown(name)
    }
}

/// True when some direction has burst (Gilbert-Elliott) loss: then "0 % loss" would be wrong.
fn has_other_loss(s: &Settings) -> bool {
    s.links.iter().any(|l| l.impair.gemodel.is_some())
}

/// Which backend applied one link direction's impairments.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackendLine {
    pub settings: String,
    pub link: String,
    pub direction: String,
    pub backend: String,
    pub impairments: String,
    pub reason: String,
    pub repeatable: Option<bool>,
}

fn value_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| value_text(Some(x)))
            .collect::<Vec<_>>()
            .join(", "),
        Some(Value::Object(o)) => o
            .iter()
            .map(|(k, v)| format!("{k} {}", value_text(Some(v))))
            .collect::<Vec<_>>()
            .join(", "),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// The lines of a serialised `BackendPlan` (`{"settings", "caps", "directions": [...]}`).
pub fn backend_lines(settings: &str, plan: &Value) -> Vec<BackendLine> {
    let Some(dirs) = plan.get("directions").and_then(Value::as_array) else {
        return Vec::new();
    };
    dirs.iter()
        .map(|d| BackendLine {
            settings: settings.to_owned(),
            link: value_text(d.get("link")),
            direction: value_text(d.get("direction")),
            backend: value_text(d.get("backend")),
            impairments: value_text(d.get("impairments")),
            reason: value_text(d.get("reason")),
            repeatable: d.get("repeatable").and_then(Value::as_bool),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_summary() {
        let s = json!({"name": "loss-5", "link": [{"link": "wan", "direction": "both",
            "impair": {"rate": "100mbit", "delay": "10ms", "loss": "5%"}}]});
        let v = LinkView::resolve("loss-5", &s, None);
        assert_eq!(v.rate_bps, Some(100e6));
        assert_eq!(v.delay_ms, Some(10.0));
        assert_eq!(v.loss_percent, Some(5.0));
        assert_eq!(v.short(), "100.00 Mbit/s, 10.000 ms delay, 5.00 % loss");
        let clean = json!({"name": "loss-0", "link": [{"link": "wan",
            "impair": {"rate": "100mbit"}}]});
        assert_eq!(LinkView::resolve("x", &clean, None).loss_percent, Some(0.0));
        assert_eq!(LinkView::resolve("y", &json!(3), None).short(), "–");
    }

    #[test]
    fn plan_lines() {
        let plan = json!({"settings": "s", "directions": [{"link": "wan", "direction": "a-to-b",
            "backend": "userspace", "impairments": ["rate", "loss"],
            "reason": "the kernel has no netem", "repeatable": true}]});
        let l = backend_lines("s", &plan);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].impairments, "rate, loss");
        assert_eq!(l[0].backend, "userspace");
        let kernel = json!({"directions": [{"backend": {"kernel": "tbf"}}]});
        assert_eq!(backend_lines("s", &kernel)[0].backend, "kernel tbf");
    }
}
