//! Scores of runtime-error detection, as ORCA and the runtime-error paper define them.
//!
//! ORCA (`src/orca/accuracy.py`, `show_results.py`, the baselines' `accuracy.py`): detection
//! counts TP/FN over buggy and FP/TN over clean instances; statement- and block-level fault
//! localisation count, over buggy instances, a predicted error whose line (block) is the crash
//! line (block); trace metrics (exact match, prefix, coverage, transitions) are averaged over all
//! instances; variable-value accuracy compares, at every position where the predicted block is
//! the true one, each true variable's value with the predicted one, quotes stripped.
//! Runtime-error paper (`core/lib/metrics.py`): accuracy, weighted and macro F1 over classes,
//! binary F1 of error against no error.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// What actually happened in one instance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Truth {
    pub is_error: bool,
    pub line: Option<u32>,
    pub block: Option<u32>,
    pub line_trace: Vec<u32>,
    pub block_trace: Vec<u32>,
    /// Variables after each visit of `block_trace` (values as `repr` strings).
    pub states: Vec<BTreeMap<String, String>>,
}

/// What a system said about one instance. `None`: the system does not produce that part.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Prediction {
    pub is_error: bool,
    pub line: Option<u32>,
    pub block: Option<u32>,
    pub line_trace: Option<Vec<u32>>,
    pub block_trace: Option<Vec<u32>>,
    /// Variables after each visit of `block_trace`.
    pub states: Option<Vec<BTreeMap<String, String>>>,
}

/// Length of the longest common prefix.
pub fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// (recall, precision) of `pred` against `truth` on the longest correct prefix: n/N and n/M.
/// An empty side scores 0 (1 when both are empty).
pub fn prefix_scores(pred: &[u32], truth: &[u32]) -> (f64, f64) {
    let n = common_prefix(pred, truth) as f64;
    (
        ratio(n, truth.len(), pred.is_empty()),
        ratio(n, pred.len(), truth.is_empty()),
    )
}

/// (recall, precision) on the sets of unique elements.
pub fn coverage_scores(pred: &[u32], truth: &[u32]) -> (f64, f64) {
    let p: BTreeSet<u32> = pred.iter().copied().collect();
    let t: BTreeSet<u32> = truth.iter().copied().collect();
    let common = p.intersection(&t).count() as f64;
    (
        ratio(common, t.len(), p.is_empty()),
        ratio(common, p.len(), t.is_empty()),
    )
}

/// (recall, precision) on the sets of consecutive pairs.
pub fn transition_scores(pred: &[u32], truth: &[u32]) -> (f64, f64) {
    let pairs =
        |s: &[u32]| -> BTreeSet<(u32, u32)> { s.windows(2).map(|w| (w[0], w[1])).collect() };
    let (p, t) = (pairs(pred), pairs(truth));
    let common = p.intersection(&t).count() as f64;
    (
        ratio(common, t.len(), p.is_empty()),
        ratio(common, p.len(), t.is_empty()),
    )
}

fn ratio(n: f64, total: usize, other_empty: bool) -> f64 {
    if total == 0 {
        if other_empty {
            1.0
        } else {
            0.0
        }
    } else {
        n / total as f64
    }
}

/// A value as ORCA compares it: surrounding whitespace and quotes removed.
pub fn strip_quotes(v: &str) -> &str {
    v.trim().trim_matches(|c| c == '\'' || c == '"')
}

/// Sums of one kind of trace metric over instances.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TraceSums {
    pub instances: usize,
    pub exact: usize,
    pub prefix_recall: f64,
    pub prefix_precision: f64,
    pub coverage_recall: f64,
    pub coverage_precision: f64,
    pub transition_recall: f64,
    pub transition_precision: f64,
}

impl TraceSums {
    pub fn add(&mut self, pred: &[u32], truth: &[u32]) {
        self.instances += 1;
        self.exact += usize::from(pred == truth);
        let (r, p) = prefix_scores(pred, truth);
        self.prefix_recall += r;
        self.prefix_precision += p;
        let (r, p) = coverage_scores(pred, truth);
        self.coverage_recall += r;
        self.coverage_precision += p;
        let (r, p) = transition_scores(pred, truth);
        self.transition_recall += r;
        self.transition_precision += p;
    }

    /// Percentages: exact match, prefix R/P, coverage R/P, transition R/P.
    pub fn percentages(&self) -> Option<[f64; 7]> {
        if self.instances == 0 {
            return None;
        }
        let n = self.instances as f64;
        Some([
            100.0 * self.exact as f64 / n,
            100.0 * self.prefix_recall / n,
            100.0 * self.prefix_precision / n,
            100.0 * self.coverage_recall / n,
            100.0 * self.coverage_precision / n,
            100.0 * self.transition_recall / n,
            100.0 * self.transition_precision / n,
        ])
    }
}

/// ORCA's scores of one system over a set of instances.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OrcaScores {
    pub tp: usize,
    pub fp: usize,
    pub fn_: usize,
    pub tn: usize,
    /// Buggy instances whose predicted error line (block) is the crash line (block); `None`
    /// totals mean the system gives no line (block).
    pub statement_hits: Option<usize>,
    pub block_hits: Option<usize>,
    /// Statement hits counted as ORCA's baseline scripts do: the last line of the predicted
    /// trace, whether or not an error was predicted.
    pub statement_hits_ungated: Option<usize>,
    pub line_trace: Option<TraceSums>,
    pub block_trace: Option<TraceSums>,
    pub vars_correct: usize,
    pub vars_total: usize,
    pub has_states: bool,
}

impl OrcaScores {
    pub fn add(&mut self, truth: &Truth, pred: &Prediction) {
        match (truth.is_error, pred.is_error) {
            (true, true) => self.tp += 1,
            (true, false) => self.fn_ += 1,
            (false, true) => self.fp += 1,
            (false, false) => self.tn += 1,
        }
        if truth.is_error {
            let line_hit = pred.is_error && pred.line.is_some() && pred.line == truth.line;
            let block_hit = pred.is_error && pred.block.is_some() && pred.block == truth.block;
            if pred.line.is_some() || self.statement_hits.is_some() || pred.line_trace.is_some() {
                *self.statement_hits.get_or_insert(0) += usize::from(line_hit);
            }
            if pred.block.is_some() || self.block_hits.is_some() || pred.block_trace.is_some() {
                *self.block_hits.get_or_insert(0) += usize::from(block_hit);
            }
            if let Some(trace) = &pred.line_trace {
                let hit = trace.last().is_some() && trace.last().copied() == truth.line;
                *self.statement_hits_ungated.get_or_insert(0) += usize::from(hit);
            }
        }
        if let Some(trace) = &pred.line_trace {
            self.line_trace
                .get_or_insert_with(TraceSums::default)
                .add(trace, &truth.line_trace);
        }
        if let Some(trace) = &pred.block_trace {
            self.block_trace
                .get_or_insert_with(TraceSums::default)
                .add(trace, &truth.block_trace);
        }
        if let (Some(states), Some(blocks)) = (&pred.states, &pred.block_trace) {
            self.has_states = true;
            for (i, gt) in truth.states.iter().enumerate() {
                if blocks.get(i) != truth.block_trace.get(i) {
                    continue;
                }
                let predicted = states.get(i);
                for (name, value) in gt {
                    self.vars_total += 1;
                    let same = predicted
                        .and_then(|s| s.get(name))
                        .is_some_and(|v| strip_quotes(v) == strip_quotes(value));
                    self.vars_correct += usize::from(same);
                }
            }
        }
    }

    pub fn instances(&self) -> usize {
        self.tp + self.fp + self.fn_ + self.tn
    }

    pub fn buggy(&self) -> usize {
        self.tp + self.fn_
    }

    pub fn accuracy(&self) -> f64 {
        pct(self.tp + self.tn, self.instances())
    }

    pub fn fp_rate(&self) -> f64 {
        pct(self.fp, self.fp + self.tn)
    }

    pub fn statement_fl(&self) -> Option<f64> {
        self.statement_hits.map(|h| pct(h, self.buggy()))
    }

    pub fn statement_fl_ungated(&self) -> Option<f64> {
        self.statement_hits_ungated.map(|h| pct(h, self.buggy()))
    }

    pub fn block_fl(&self) -> Option<f64> {
        self.block_hits.map(|h| pct(h, self.buggy()))
    }

    pub fn var_accuracy(&self) -> Option<f64> {
        (self.has_states && self.vars_total > 0).then(|| pct(self.vars_correct, self.vars_total))
    }
}

/// `100 * n / d`, 0 when `d` is 0.
pub fn pct(n: usize, d: usize) -> f64 {
    if d == 0 {
        0.0
    } else {
        100.0 * n as f64 / d as f64
    }
}

/// Classification scores over labels (the runtime-error paper's metrics).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassScores {
    pub n: usize,
    pub accuracy: f64,
    /// F1 per class, averaged weighted by each class's true count (sklearn `weighted`).
    pub weighted_f1: f64,
    /// F1 per class, plain average over the classes present in truth or prediction.
    pub macro_f1: f64,
    /// F1 of "some error" against `no_error`.
    pub binary_f1: f64,
}

/// Score `pairs` of (truth, prediction) labels; `no_error` is the label of a clean run.
pub fn class_scores(pairs: &[(String, String)], no_error: &str) -> ClassScores {
    let n = pairs.len();
    let labels: BTreeSet<&str> = pairs
        .iter()
        .flat_map(|(t, p)| [t.as_str(), p.as_str()])
        .collect();
    let mut weighted = 0.0;
    let mut macro_sum = 0.0;
    for label in &labels {
        let tp = pairs
            .iter()
            .filter(|(t, p)| t == label && p == label)
            .count();
        let pred = pairs.iter().filter(|(_, p)| p == label).count();
        let support = pairs.iter().filter(|(t, _)| t == label).count();
        let f1 = f1(tp, pred, support);
        macro_sum += f1;
        weighted += f1 * support as f64;
    }
    let correct = pairs.iter().filter(|(t, p)| t == p).count();
    let err = |l: &str| l != no_error;
    let btp = pairs.iter().filter(|(t, p)| err(t) && err(p)).count();
    let bpred = pairs.iter().filter(|(_, p)| err(p)).count();
    let bsupport = pairs.iter().filter(|(t, _)| err(t)).count();
    ClassScores {
        n,
        accuracy: pct(correct, n),
        weighted_f1: if n == 0 {
            0.0
        } else {
            100.0 * weighted / n as f64
        },
        macro_f1: if labels.is_empty() {
            0.0
        } else {
            100.0 * macro_sum / labels.len() as f64
        },
        binary_f1: 100.0 * f1(btp, bpred, bsupport),
    }
}

/// F1 from true positives, predicted positives and actual positives (0 when undefined).
fn f1(tp: usize, predicted: usize, actual: usize) -> f64 {
    if tp == 0 {
        return 0.0;
    }
    let p = tp as f64 / predicted as f64;
    let r = tp as f64 / actual as f64;
    2.0 * p * r / (p + r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn trace_scores_by_hand() {
        // Truth 1 2 3 2 4, prediction 1 2 3 4: prefix 3 → R 3/5, P 3/4; unique {1,2,3,4} both
        // → 1, 1; pairs truth {12,23,32,24}, pred {12,23,34} → common 2: R 2/4, P 2/3.
        let truth = [1, 2, 3, 2, 4];
        let pred = [1, 2, 3, 4];
        assert_eq!(prefix_scores(&pred, &truth), (0.6, 0.75));
        assert_eq!(coverage_scores(&pred, &truth), (1.0, 1.0));
        let (r, p) = transition_scores(&pred, &truth);
        assert!(close(r, 0.5) && close(p, 2.0 / 3.0));
        assert_eq!(prefix_scores(&[], &truth), (0.0, 0.0));
        assert_eq!(prefix_scores(&[], &[]), (1.0, 1.0));
    }

    #[test]
    fn orca_scores_by_hand() {
        let buggy = Truth {
            is_error: true,
            line: Some(3),
            block: Some(2),
            line_trace: vec![1, 2, 3],
            block_trace: vec![1, 2],
            states: vec![
                BTreeMap::from([("x".to_string(), "'a'".to_string())]),
                BTreeMap::from([
                    ("x".to_string(), "'a'".to_string()),
                    ("y".to_string(), "[1, 2]".to_string()),
                ]),
            ],
        };
        let clean = Truth {
            is_error: false,
            line_trace: vec![1, 2],
            block_trace: vec![1],
            states: vec![BTreeMap::from([("n".to_string(), "4".to_string())])],
            ..Truth::default()
        };
        let mut s = OrcaScores::default();
        // Right error, right line and block, full trace; y wrong.
        s.add(
            &buggy,
            &Prediction {
                is_error: true,
                line: Some(3),
                block: Some(2),
                line_trace: Some(vec![1, 2, 3]),
                block_trace: Some(vec![1, 2]),
                states: Some(vec![
                    BTreeMap::from([("x".to_string(), "a".to_string())]),
                    BTreeMap::from([
                        ("x".to_string(), "\"a\"".to_string()),
                        ("y".to_string(), "[2, 1]".to_string()),
                    ]),
                ]),
            },
        );
        // Says there is no error, but its trace ends on the crash line.
        s.add(
            &buggy,
            &Prediction {
                is_error: false,
                line_trace: Some(vec![1, 3]),
                block_trace: Some(vec![1]),
                states: Some(vec![BTreeMap::new()]),
                ..Prediction::default()
            },
        );
        // A false alarm on the clean program, wrong first block.
        s.add(
            &clean,
            &Prediction {
                is_error: true,
                line: Some(2),
                block: Some(1),
                line_trace: Some(vec![1, 2]),
                block_trace: Some(vec![2]),
                states: Some(vec![BTreeMap::new()]),
            },
        );
        assert_eq!((s.tp, s.fn_, s.fp, s.tn), (1, 1, 1, 0));
        assert!(close(s.accuracy(), 100.0 / 3.0));
        assert!(close(s.fp_rate(), 100.0));
        assert_eq!(s.statement_fl(), Some(50.0));
        assert_eq!(s.statement_fl_ungated(), Some(100.0));
        assert_eq!(s.block_fl(), Some(50.0));
        // Values: instance 1 has 3 compared (x ok, x ok, y wrong); instance 2 compares block 1
        // (x missing); instance 3 compares nothing (block differs) → 2 of 4.
        assert_eq!((s.vars_correct, s.vars_total), (2, 4));
        let lines = s.line_trace.as_ref().unwrap().percentages().unwrap();
        // Exact: 2 of 3 (instances 1 and 3).
        assert!(close(lines[0], 200.0 / 3.0));
        // Prefix recall: 1 + 1/3 + 1 over 3.
        assert!(close(lines[1], 100.0 * (1.0 + 1.0 / 3.0 + 1.0) / 3.0));
    }

    #[test]
    fn class_scores_by_hand() {
        let pairs: Vec<(String, String)> = [
            ("No error", "No error"),
            ("No error", "TypeError"),
            ("TypeError", "TypeError"),
            ("ValueError", "No error"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let s = class_scores(&pairs, "No error");
        assert_eq!(s.n, 4);
        assert!(close(s.accuracy, 50.0));
        // F1: No error 2·(1/2·1/2)/1 = 0.5 (support 2); TypeError p 1/2 r 1 → 2/3 (support 1);
        // ValueError 0 (support 1). Weighted (0.5·2 + 2/3)/4; macro (0.5 + 2/3 + 0)/3.
        assert!(close(s.weighted_f1, 100.0 * (1.0 + 2.0 / 3.0) / 4.0));
        assert!(close(s.macro_f1, 100.0 * (0.5 + 2.0 / 3.0) / 3.0));
        // Binary: errors predicted 2, actual 2, both 1 → p = r = 1/2 → F1 1/2.
        assert!(close(s.binary_f1, 50.0));
    }
}
