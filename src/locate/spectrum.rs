//! Ranking statements by suspiciousness from what passing and failing runs executed
//! (spectrum-based fault localisation, Ochiai: Abreu et al. 2007), with the statement a failing
//! run raised in (and the program's calls that led there) as a second signal and a stated rule
//! for ties.
//!
//! Ochiai of a statement: `ef / sqrt(F * (ef + ep))`, where `F` is the number of failing runs,
//! `ef` the failing runs that executed it and `ep` the passing ones. It needs both kinds of
//! run: when every run fails, every statement all of them execute scores 1 and the tie rule
//! decides alone.

use serde::Serialize;

use crate::python::StmtKind;

/// One statement of the program, as ranked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Statement {
    /// Lines of the statement (a compound statement: its header).
    pub first: u32,
    pub last: u32,
    /// Scope (in [`crate::python::ProgramCfg::scopes`]) and block number.
    pub scope: usize,
    pub block: usize,
    #[serde(skip)]
    pub kind: StmtKind,
    /// The function (or `<module>`) it is in.
    pub function: String,
}

/// What one run (a test, or an extra input judged against other candidates) did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub passed: bool,
    /// Indices (into the statements) of the statements the run executed.
    pub covered: Vec<usize>,
    /// The statement the run's exception came from, when it raised inside the program.
    pub raised: Option<usize>,
    /// The statements of the program's frames that called the one that raised (a helper's
    /// caller): the value that made the helper raise may come from there.
    pub callers: Vec<usize>,
}

/// How ties between equal scores are broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// Later statements first: a wrong value usually shows late (returns, the last update).
    #[default]
    Later,
    /// Statements that decide or produce values first (conditions, returns, assignments),
    /// then later ones first.
    Kind,
    /// Source order.
    Earlier,
}

/// Which signals count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Signals {
    /// Ochiai over the runs.
    pub spectrum: bool,
    /// Added to the score of a statement a failing run raised in.
    pub exception: f64,
    /// Added to the score of a statement whose call led to a failing run's raise (not added
    /// where `exception` already is).
    pub callers: f64,
    pub tie: TieBreak,
}

impl Default for Signals {
    fn default() -> Self {
        Signals {
            spectrum: true,
            exception: 1.0,
            callers: 0.0,
            tie: TieBreak::Later,
        }
    }
}

/// A statement's place in the ranking and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suspect {
    /// Index into the statements.
    pub stmt: usize,
    pub score: f64,
    pub ochiai: f64,
    /// Failing runs that executed it, passing runs that executed it.
    pub failing: u32,
    pub passing: u32,
    /// Failing runs that raised in it.
    pub raised: u32,
    /// Failing runs whose raise its call led to.
    pub called: u32,
}

/// Ochiai from counts: failing runs executing the statement, passing runs executing it, and
/// failing runs in all.
pub fn ochiai(ef: u32, ep: u32, failed: u32) -> f64 {
    let denom = (f64::from(failed) * f64::from(ef + ep)).sqrt();
    if denom == 0.0 {
        0.0
    } else {
        f64::from(ef) / denom
    }
}

/// Every statement some failing run executed, most suspicious first. Statements no failing run
/// reached cannot hold the fault those runs show and are left out.
pub fn rank(statements: &[Statement], runs: &[Observation], signals: &Signals) -> Vec<Suspect> {
    rank_with(statements, runs, signals, &[])
}

/// [`rank`], with `bonus[i]` added to statement `i`'s score (another signal, such as the block
/// a debugger's verdict names).
pub fn rank_with(
    statements: &[Statement],
    runs: &[Observation],
    signals: &Signals,
    bonus: &[f64],
) -> Vec<Suspect> {
    let failed = runs.iter().filter(|r| !r.passed).count() as u32;
    let mut counts = vec![(0u32, 0u32, 0u32, 0u32); statements.len()];
    for run in runs {
        for &s in &run.covered {
            if let Some(c) = counts.get_mut(s) {
                if run.passed {
                    c.1 += 1;
                } else {
                    c.0 += 1;
                }
            }
        }
        if let (false, Some(s)) = (run.passed, run.raised) {
            if let Some(c) = counts.get_mut(s) {
                c.2 += 1;
            }
        }
        if !run.passed {
            let mut seen: Vec<usize> = Vec::new();
            for &s in &run.callers {
                if Some(s) != run.raised && !seen.contains(&s) {
                    seen.push(s);
                    if let Some(c) = counts.get_mut(s) {
                        c.3 += 1;
                    }
                }
            }
        }
    }
    let mut out: Vec<Suspect> = counts
        .iter()
        .enumerate()
        .filter(|(_, c)| c.0 > 0)
        .map(|(i, &(ef, ep, raised, called))| {
            let o = ochiai(ef, ep, failed);
            let mut score = if signals.spectrum { o } else { 0.0 };
            if raised > 0 {
                score += signals.exception;
            } else if called > 0 {
                score += signals.callers;
            }
            score += bonus.get(i).copied().unwrap_or(0.0);
            Suspect {
                stmt: i,
                score,
                ochiai: o,
                failing: ef,
                passing: ep,
                raised,
                called,
            }
        })
        .collect();
    let kind_rank = |s: &Statement| match s.kind {
        StmtKind::If | StmtKind::Elif | StmtKind::While | StmtKind::For | StmtKind::Return => 0,
        StmtKind::Simple => 1,
        _ => 2,
    };
    out.sort_by(|a, b| {
        let (sa, sb) = (&statements[a.stmt], &statements[b.stmt]);
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| match signals.tie {
                TieBreak::Later => sb.first.cmp(&sa.first),
                TieBreak::Earlier => sa.first.cmp(&sb.first),
                TieBreak::Kind => kind_rank(sa)
                    .cmp(&kind_rank(sb))
                    .then(sb.first.cmp(&sa.first)),
            })
    });
    out
}

/// Blocks `(scope, block)` ranked by their most suspicious statement, in the order of
/// `suspects`.
pub fn rank_blocks(statements: &[Statement], suspects: &[Suspect]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for s in suspects {
        let st = &statements[s.stmt];
        let key = (st.scope, st.block);
        if !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stmt(first: u32, block: usize, kind: StmtKind) -> Statement {
        Statement {
            first,
            last: first,
            scope: 1,
            block,
            kind,
            function: "f".into(),
        }
    }

    fn run(passed: bool, covered: &[usize]) -> Observation {
        Observation {
            passed,
            covered: covered.to_vec(),
            raised: None,
            callers: Vec::new(),
        }
    }

    #[test]
    fn the_statement_only_failing_runs_execute_ranks_first() {
        let s = vec![
            stmt(2, 0, StmtKind::Simple),
            stmt(3, 0, StmtKind::If),
            stmt(4, 1, StmtKind::Simple),
            stmt(5, 2, StmtKind::Return),
        ];
        let runs = vec![
            run(true, &[0, 1, 3]),
            run(true, &[0, 1, 3]),
            run(false, &[0, 1, 2, 3]),
        ];
        let r = rank(&s, &runs, &Signals::default());
        assert_eq!(r[0].stmt, 2);
        assert!((r[0].ochiai - 1.0).abs() < 1e-9);
        assert!((r[1].ochiai - (1.0 / 3f64.sqrt())).abs() < 1e-9);
        assert_eq!(rank_blocks(&s, &r)[0], (1, 1));
        // Statements no failing run executed are not suspects.
        let r = rank(
            &s,
            &[run(true, &[0]), run(false, &[1])],
            &Signals::default(),
        );
        assert_eq!(r.iter().map(|x| x.stmt).collect::<Vec<_>>(), vec![1]);
    }

    #[test]
    fn when_every_run_fails_the_raise_and_then_the_tie_rule_decide() {
        let s = vec![
            stmt(2, 0, StmtKind::Simple),
            stmt(3, 0, StmtKind::If),
            stmt(5, 1, StmtKind::Simple),
        ];
        let mut failing = run(false, &[0, 1, 2]);
        let r = rank(&s, &[failing.clone()], &Signals::default());
        assert_eq!(r.iter().map(|x| x.stmt).collect::<Vec<_>>(), vec![2, 1, 0]);
        let kind = Signals {
            tie: TieBreak::Kind,
            ..Signals::default()
        };
        let r = rank(&s, &[failing.clone()], &kind);
        assert_eq!(r[0].stmt, 1);
        failing.raised = Some(0);
        let r = rank(&s, &[failing], &Signals::default());
        assert_eq!(r[0].stmt, 0);
        assert_eq!(r[0].raised, 1);
    }

    #[test]
    fn the_call_that_led_to_a_raise_comes_after_the_raise_when_counted() {
        // A helper (statement 0) raises, called from statement 2; statement 1 ran too.
        let s = vec![
            stmt(2, 0, StmtKind::Simple),
            stmt(5, 1, StmtKind::Simple),
            stmt(6, 1, StmtKind::Return),
        ];
        let mut failing = run(false, &[0, 1, 2]);
        failing.raised = Some(0);
        failing.callers = vec![2, 0];
        let r = rank(&s, &[failing.clone()], &Signals::default());
        // Not counted by default: later statements first after the raise.
        assert_eq!(r.iter().map(|x| x.stmt).collect::<Vec<_>>(), vec![0, 2, 1]);
        assert_eq!((r[1].called, r[0].called), (1, 0));
        let with = Signals {
            callers: 0.5,
            tie: TieBreak::Earlier,
            ..Signals::default()
        };
        let r = rank(&s, &[failing], &with);
        assert_eq!(r.iter().map(|x| x.stmt).collect::<Vec<_>>(), vec![0, 2, 1]);
    }
}
