//! Choosing among candidates that pass the visible tests: run them all on extra inputs, group
//! those whose outputs agree on every input (exceptions and timeouts included), and take the
//! largest group (CodeT's and AlphaCode's clustering, without expected outputs).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::run::{TestOutcome, TestStatus};

/// Errors of a name read before it is bound: never what a program means to raise.
const UNBOUND: &[&str] = &["NameError", "UnboundLocalError"];

/// A derived test's expected behaviour where anything will do.
pub const ANY: &str = "*";

/// A derived test's expected behaviour where any answer but `None` will do (see `harden`: a
/// function that fell off its end on an input must answer there; a raise is no better).
pub const SOME_ANSWER: &str = "= ?";

/// A derived test's expected behaviour where anything will do but `behaviour` (see
/// `harden`: a program that raised an unexpected error on an input must no longer raise it
/// there; an answer or another error is fine, since the input may be outside the task, but not
/// a name unbound: no program means that, and one instead of an index out of range is the same
/// slip moved).
pub fn anything_but(behaviour: &str) -> String {
    format!("not {behaviour}")
}

/// Whether behaviour `got` is what `want` asks for: the same, or for [`anything_but`] an answer
/// or a raise other than the one excluded. Not a timeout or a crash, and not `None`: a function
/// that falls off its end (a deleted `return`) has not answered.
pub fn agrees(want: &str, got: &str) -> bool {
    if want == ANY {
        return true;
    }
    if want == SOME_ANSWER {
        return answers(got);
    }
    match want.strip_prefix("not ") {
        Some(excluded) => {
            got != excluded
                && (answers(got)
                    || got
                        .strip_prefix("raise ")
                        .is_some_and(|kind| !UNBOUND.contains(&kind)))
        }
        None => want == got,
    }
}

/// What one program did on one extra input, as compared between candidates.
pub fn behaviour(outcome: &TestOutcome) -> String {
    match outcome.status {
        TestStatus::Passed => format!("= {}", outcome.actual.as_deref().unwrap_or("")),
        TestStatus::Error => format!(
            "raise {}",
            outcome
                .exception
                .as_ref()
                .map(|e| e.kind.as_str())
                .unwrap_or("?")
        ),
        other => other.label().to_string(),
    }
}

/// The groups of agreeing candidates, heaviest first; ties go to the group whose first member
/// came first. `behaviours[i]` holds candidate `i`'s behaviour on every extra input and
/// `weights[i]` its votes: a program the model wrote several times counts once per sample
/// (missing weights count 1).
pub fn groups(behaviours: &[Vec<String>], weights: &[usize]) -> Vec<Vec<usize>> {
    let mut by_signature: HashMap<&[String], usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, sig) in behaviours.iter().enumerate() {
        match by_signature.get(sig.as_slice()) {
            Some(&g) => groups[g].push(i),
            None => {
                by_signature.insert(sig.as_slice(), groups.len());
                groups.push(vec![i]);
            }
        }
    }
    let weight = |g: &Vec<usize>| -> usize {
        g.iter()
            .map(|&i| weights.get(i).copied().unwrap_or(1))
            .sum()
    };
    // Stable: equal weights keep the order of their first members.
    groups.sort_by_key(|g| std::cmp::Reverse(weight(g)));
    groups
}

/// Whether on an input behaviour `b` is an answer (not `None`, which a function that fell off
/// its end gives, nor a raise or a timeout).
pub fn answers(b: &str) -> bool {
    b.starts_with("= ") && b != "= None"
}

/// Each group's support: its own votes, plus the votes of every other group whose programs do
/// what it does wherever they answer, and crashed (see `harden::crashes`) on some input where
/// it answers. A crash is no answer: the program that crashed abstains there and agrees with
/// the group everywhere else (a `list.remove` of a value already removed, on inputs of odd
/// length, is otherwise the same program). Only a group with votes of its own takes others'
/// (an edit of a program that crashed is no vote of that program's). `behaviours` and
/// `crashed` are indexed by voter, `groups` by [`groups`]' order; the members of a group share
/// one behaviour, and its first member's crashes stand for the group's.
pub fn support(
    grouped: &[Vec<usize>],
    behaviours: &[Vec<String>],
    crashed: &[Vec<bool>],
    weights: &[usize],
) -> Vec<usize> {
    let weight = |g: &Vec<usize>| -> usize {
        g.iter()
            .map(|&i| weights.get(i).copied().unwrap_or(1))
            .sum()
    };
    let row = |g: &Vec<usize>| g.first().map(|&i| (&behaviours[i], crashed.get(i)));
    let covers = |mine: &Vec<usize>, theirs: &Vec<usize>| -> bool {
        let (Some((b, _)), Some((other, Some(other_crashed)))) = (row(mine), row(theirs)) else {
            return false;
        };
        let mut abstained = false;
        for (i, (x, y)) in b.iter().zip(other.iter()).enumerate() {
            if x == y {
                continue;
            }
            if other_crashed.get(i).copied().unwrap_or(false) && answers(x) {
                abstained = true;
            } else {
                return false;
            }
        }
        abstained && b.len() == other.len()
    };
    grouped
        .iter()
        .enumerate()
        .map(|(g, mine)| {
            let own = weight(mine);
            if own == 0 {
                return 0;
            }
            own + grouped
                .iter()
                .enumerate()
                .filter(|&(h, theirs)| h != g && covers(mine, theirs))
                .map(|(_, theirs)| weight(theirs))
                .sum::<usize>()
        })
        .collect()
}

/// [`groups`], ordered by [`support`] (most first; ties keep the groups' order), with each
/// group's support.
pub fn ranked_groups(
    behaviours: &[Vec<String>],
    crashed: &[Vec<bool>],
    weights: &[usize],
) -> (Vec<Vec<usize>>, Vec<usize>) {
    let grouped = groups(behaviours, weights);
    let support = support(&grouped, behaviours, crashed, weights);
    let mut ranked: Vec<(Vec<usize>, usize)> = grouped.into_iter().zip(support).collect();
    ranked.sort_by_key(|(_, s)| std::cmp::Reverse(*s));
    ranked.into_iter().unzip()
}

/// How the program is chosen among candidates that pass the visible tests.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SelectRule {
    /// The first of the heaviest group of candidates that agree on every input (AlphaCode).
    #[default]
    Groups,
    /// The candidate that agrees with the most others, input by input (CodeT's consensus):
    /// one input on which programs differ for no good reason (outside the task's domain) does
    /// not split the vote.
    Agreement,
}

impl SelectRule {
    pub fn name(self) -> &'static str {
        match self {
            SelectRule::Groups => "groups",
            SelectRule::Agreement => "agreement",
        }
    }
}

/// Each candidate's agreement score: over the inputs, the votes (weights) of the candidates
/// that behaved the same on that input, itself included.
pub fn agreement_scores(behaviours: &[Vec<String>], weights: &[usize]) -> Vec<usize> {
    let weight = |i: usize| weights.get(i).copied().unwrap_or(1);
    behaviours
        .iter()
        .map(|mine| {
            mine.iter()
                .enumerate()
                .map(|(input, b)| {
                    behaviours
                        .iter()
                        .enumerate()
                        .filter(|(_, other)| other.get(input) == Some(b))
                        .map(|(j, _)| weight(j))
                        .sum::<usize>()
                })
                .sum()
        })
        .collect()
}

/// A short, stable hash of one behaviour (FNV-1a, 32 bits).
pub fn behaviour_hash(behaviour: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in behaviour.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn anything_but_a_raise_accepts_answers_and_other_errors_not_unbound_names_none_or_timeouts() {
        let want = anything_but("raise IndexError");
        assert!(agrees(&want, "= 0"));
        assert!(agrees(&want, "raise ZeroDivisionError"));
        assert!(
            !agrees(&want, "raise UnboundLocalError"),
            "a name unbound is never meant"
        );
        assert!(!agrees(&want, "raise IndexError"));
        assert!(!agrees(&want, "= None"), "falling off the end is no answer");
        assert!(!agrees(&want, "timeout"));
        assert!(agrees("= 1", "= 1") && !agrees("= 1", "= 2"));
        assert!(agrees(ANY, "raise KeyError") && agrees(ANY, "= None"));
        // After falling off the end, only an answer will do.
        assert!(agrees(SOME_ANSWER, "= 0") && agrees(SOME_ANSWER, "= []"));
        assert!(!agrees(SOME_ANSWER, "= None") && !agrees(SOME_ANSWER, "raise IndexError"));
    }

    #[test]
    fn the_majority_group_comes_first() {
        let b = [
            sig(&["= 1", "= 2"]),
            sig(&["= 1", "= 3"]),
            sig(&["= 1", "= 3"]),
            sig(&["raise IndexError", "= 3"]),
            sig(&["= 1", "= 3"]),
        ];
        let g = groups(&b, &[]);
        assert_eq!(g[0], vec![1, 2, 4]);
        assert_eq!(g.len(), 3);
        assert_eq!(g.iter().map(Vec::len).sum::<usize>(), 5);
    }

    #[test]
    fn ties_go_to_the_earliest_candidate() {
        let b = [sig(&["= 2"]), sig(&["= 1"]), sig(&["= 1"]), sig(&["= 2"])];
        assert_eq!(groups(&b, &[]), vec![vec![0, 3], vec![1, 2]]);
        assert!(groups(&[], &[]).is_empty());
    }

    #[test]
    fn agreement_is_counted_input_by_input() {
        // 0 and 1 agree everywhere but on the last input (outside the task's domain, say),
        // where 1 and 2 agree: groups split them all, agreement still prefers 0 or 1.
        let b = [
            sig(&["= 1", "= 2", "raise ValueError"]),
            sig(&["= 1", "= 2", "= 0"]),
            sig(&["= 5", "= 6", "= 0"]),
        ];
        assert_eq!(groups(&b, &[]).len(), 3);
        assert_eq!(agreement_scores(&b, &[]), vec![5, 6, 4]);
        // A program written three times outvotes the pair.
        assert_eq!(agreement_scores(&b, &[1, 1, 3]), vec![5, 8, 10]);
    }

    fn no_crash(rows: usize, inputs: usize) -> Vec<Vec<bool>> {
        vec![vec![false; inputs]; rows]
    }

    #[test]
    fn a_program_that_crashed_where_another_answers_votes_for_it() {
        // HumanEval/70's given program and a fresh one remove the smallest and the largest
        // value twice when one is left (ValueError on lists of odd length); a third program
        // answers there and agrees everywhere else. The pair's two votes go to it.
        let b = [
            sig(&["= [1, 4, 2, 3]", "raise ValueError", "= []"]),
            sig(&["= [1, 4, 2, 3]", "raise ValueError", "= []"]),
            sig(&["= [1, 4, 2, 3]", "= [1, 3, 2]", "= []"]),
        ];
        let mut crashed = no_crash(3, 3);
        crashed[0][1] = true;
        crashed[1][1] = true;
        let (grouped, support) = ranked_groups(&b, &crashed, &[1, 1, 1]);
        assert_eq!(grouped, vec![vec![2], vec![0, 1]]);
        assert_eq!(support, vec![3, 2]);
        // Unranked by crashes, the pair wins.
        assert_eq!(groups(&b, &[1, 1, 1])[0], vec![0, 1]);
    }

    #[test]
    fn a_raise_the_program_means_or_a_different_answer_is_no_abstention() {
        // The raise is the program's own (`raise ValueError`): a different behaviour, not a
        // missing answer.
        let b = [
            sig(&["= 1", "raise ValueError"]),
            sig(&["= 1", "raise ValueError"]),
            sig(&["= 1", "= 0"]),
        ];
        let (grouped, support) = ranked_groups(&b, &no_crash(3, 2), &[1, 1, 1]);
        assert_eq!((grouped[0].clone(), support), (vec![0, 1], vec![2, 1]));
        // A crash, but the pair also answers otherwise elsewhere: no group covers the other.
        let b = [
            sig(&["= 2", "raise IndexError"]),
            sig(&["= 2", "raise IndexError"]),
            sig(&["= 1", "= 0"]),
        ];
        let mut crashed = no_crash(3, 2);
        crashed[0][1] = true;
        crashed[1][1] = true;
        let (grouped, support) = ranked_groups(&b, &crashed, &[1, 1, 1]);
        assert_eq!((grouped[0].clone(), support), (vec![0, 1], vec![2, 1]));
        // `None` (fallen off the end) where the crash was is no answer to take votes with.
        let b = [sig(&["raise IndexError"]), sig(&["= None"])];
        let mut crashed = no_crash(2, 1);
        crashed[0][0] = true;
        assert_eq!(ranked_groups(&b, &crashed, &[1, 1]).1, vec![1, 1]);
    }

    #[test]
    fn an_edit_without_votes_takes_none_from_the_program_it_mended() {
        let b = [sig(&["raise IndexError", "= 1"]), sig(&["= 0", "= 1"])];
        let mut crashed = no_crash(2, 2);
        crashed[0][0] = true;
        let (grouped, support) = ranked_groups(&b, &crashed, &[1, 0]);
        assert_eq!((grouped, support), (vec![vec![0], vec![1]], vec![1, 0]));
    }

    #[test]
    fn a_program_written_again_counts_once_per_sample() {
        // Candidate 1 was sampled three times: its group outweighs the pair.
        let b = [sig(&["= 2"]), sig(&["= 1"]), sig(&["= 2"])];
        assert_eq!(groups(&b, &[1, 3, 1]), vec![vec![1], vec![0, 2]]);
    }
}
