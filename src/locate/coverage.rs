//! Which functions of a program no test runs. A fix checked only by tests that never call a
//! function says nothing about that function (Refactory's question 2 asks for three functions
//! and tests two), so `ldb fix` names them: the same coverage runs as localisation, read per
//! function instead of per statement.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::observe::observe;
use super::LocateError;
use crate::run::{Runner, TestInput};

/// A function no test entered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Unexercised {
    pub function: String,
    /// Lines of its statements (the `def` line's body, first to last).
    pub first_line: u32,
    pub last_line: u32,
}

/// The functions of `program` (at any depth; not lambdas or comprehensions) that none of
/// `tests` executes a statement of, in source order. Empty when there are no tests or a run
/// came back without coverage (nothing can be said then).
pub fn unexercised(
    runner: &Runner,
    program: &str,
    tests: &[TestInput],
) -> Result<Vec<Unexercised>, LocateError> {
    if tests.is_empty() {
        return Ok(Vec::new());
    }
    let observable = super::observable(runner, program, tests)?;
    let outcomes = observe(runner, &observable, tests)?;
    if outcomes.iter().any(|o| o.trace.is_none()) {
        return Ok(Vec::new());
    }
    let mut entered = vec![false; observable.statements.len()];
    for outcome in &outcomes {
        for i in observable.observation(outcome, outcome.passed()).covered {
            if let Some(e) = entered.get_mut(i) {
                *e = true;
            }
        }
    }
    // By scope: two functions may share a name.
    let mut scopes: BTreeMap<usize, (Unexercised, bool)> = BTreeMap::new();
    for (s, &ran) in observable.statements.iter().zip(&entered) {
        if s.function.starts_with('<') {
            continue;
        }
        let entry = scopes.entry(s.scope).or_insert_with(|| {
            (
                Unexercised {
                    function: s.function.clone(),
                    first_line: s.first,
                    last_line: s.last,
                },
                false,
            )
        });
        entry.0.first_line = entry.0.first_line.min(s.first);
        entry.0.last_line = entry.0.last_line.max(s.last);
        entry.1 |= ran;
    }
    let mut out: Vec<Unexercised> = scopes
        .into_values()
        .filter(|(_, ran)| !ran)
        .map(|(u, _)| u)
        .collect();
    out.sort_by_key(|u| u.first_line);
    Ok(out)
}
