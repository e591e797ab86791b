//! Expansion of the matrix into an ordered list of runs with stable ids.
//!
//! Runs are ordered settings first (changing link settings is the expensive step), then
//! repetition, then test, so each repetition passes over every test before the next begins
//! and a slow drift of the host does not land on one test only. The id
//! `SETTINGS/TEST/REPETITION` depends on names only, not on positions, so `--resume` still
//! recognises finished runs after the file gained a test.

use serde::Serialize;

use super::Scenario;
use crate::seed;

/// One run of the matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Run {
    /// Position in the run order, from 0.
    pub index: usize,
    /// Stable id, `SETTINGS/TEST/REPETITION` (repetitions from 1).
    pub id: String,
    /// The settings' name.
    pub settings: String,
    /// The test's name.
    pub test: String,
    /// The repetition, from 1.
    pub repetition: u32,
    /// The seed of this run's random streams: the scenario seed mixed with the id, so that
    /// repetitions differ from each other yet each repeats exactly.
    pub seed: u64,
}

impl Scenario {
    /// The runs of the matrix, in order.
    pub fn expand_matrix(&self) -> Vec<Run> {
        let settings: Vec<&str> = match &self.matrix.settings {
            Some(names) => names.iter().map(String::as_str).collect(),
            None => self.settings.iter().map(|s| s.name.as_str()).collect(),
        };
        let tests: Vec<&str> = match &self.matrix.tests {
            Some(names) => names.iter().map(String::as_str).collect(),
            None => self.tests.iter().map(|t| t.name.as_str()).collect(),
        };
        let mut runs =
            Vec::with_capacity(settings.len() * tests.len() * self.matrix.repetitions as usize);
        for s in &settings {
            for repetition in 1..=self.matrix.repetitions {
                for t in &tests {
                    let id = format!("{s}/{t}/{repetition}");
                    runs.push(Run {
                        index: runs.len(),
                        seed: seed::mix(self.seed, &id),
                        id,
                        settings: (*s).to_owned(),
                        test: (*t).to_owned(),
                        repetition,
                    });
                }
            }
        }
        runs
    }
}
