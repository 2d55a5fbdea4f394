//! An answer the visible tests imply on inputs they do not make: the rank of a value in a
//! sorted sequence.
//!
//! Where to insert a value into a sorted sequence (a search, a bisection, a count of the
//! smaller elements) is a common task, and its visible tests pin the convention for a value the
//! sequence holds: `search(5, (1, 5, 10)) == 1` puts it before its equal. A program that passes
//! them often breaks that convention at the ends (`x >= seq[-1]: return len(seq)`), where no
//! visible test looks. When every visible test that compares a call with a number agrees with
//! exactly one rank (the count of elements smaller than the value, or of elements not larger),
//! and the tests hold both a value the sequence holds and one it does not, that rank is the
//! answer owed on any call with a sorted sequence. `harden` checks passing programs against it.

use super::inputs::{call_sites, calls_in_test, CallSite, Lit};
use crate::run::TestInput;

/// Which rank the visible tests give: the argument positions of the value and the sequence,
/// and whether equal elements come before the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rank {
    value: usize,
    sequence: usize,
    /// `true`: the count of elements not larger (after equals); `false`: smaller (before).
    after_equals: bool,
}

/// A value comparable with the others of its kind: numbers with numbers, strings with strings.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
enum Key {
    Number(f64),
    Text(String),
}

fn key(l: &Lit) -> Option<Key> {
    match l {
        // Exact for the integers tests write; a rank only compares.
        Lit::Int(n) => Some(Key::Number(*n as f64)),
        Lit::Float(x) if x.is_finite() => Some(Key::Number(*x)),
        Lit::Str(s) => Some(Key::Text(s.clone())),
        _ => None,
    }
}

fn same_kind(a: &Key, b: &Key) -> bool {
    matches!(
        (a, b),
        (Key::Number(_), Key::Number(_)) | (Key::Text(_), Key::Text(_))
    )
}

/// The value and the sorted sequence of `site` at the given positions, as comparable keys.
fn value_and_sorted(site: &CallSite, value: usize, sequence: usize) -> Option<(Key, Vec<Key>)> {
    let v = key(site.positional.get(value)?)?;
    let xs = match site.positional.get(sequence)? {
        Lit::List(xs) | Lit::Tuple(xs) => xs,
        _ => return None,
    };
    let keys: Vec<Key> = xs.iter().map(key).collect::<Option<_>>()?;
    if !keys.iter().all(|k| same_kind(k, &v)) {
        return None;
    }
    if keys.windows(2).any(|w| w[0] > w[1]) {
        return None;
    }
    Some((v, keys))
}

fn count(v: &Key, xs: &[Key], after_equals: bool) -> usize {
    xs.iter()
        .filter(|x| if after_equals { *x <= v } else { *x < v })
        .count()
}

impl Rank {
    /// The rank the visible tests give, if they give exactly one (see the module's overview).
    pub fn from_tests(tests: &[TestInput], entry: &str) -> Option<Rank> {
        if entry.is_empty() {
            return None;
        }
        let sites = call_sites(tests, entry);
        let arity = sites.first()?.positional.len();
        if arity < 2 || sites.iter().any(|s| s.positional.len() != arity) {
            return None;
        }
        let mut found = None;
        for value in 0..arity {
            for sequence in (0..arity).filter(|&j| j != value) {
                let fits: Vec<bool> = [false, true]
                    .into_iter()
                    .map(|after_equals| {
                        let rank = Rank {
                            value,
                            sequence,
                            after_equals,
                        };
                        rank.fits(&sites)
                    })
                    .collect();
                let one = match (fits[0], fits[1]) {
                    (true, false) => false,
                    (false, true) => true,
                    _ => continue,
                };
                if found.is_some() {
                    // Two pairs of arguments fit: the tests do not say which.
                    return None;
                }
                found = Some(Rank {
                    value,
                    sequence,
                    after_equals: one,
                });
            }
        }
        found
    }

    /// Whether every answered site agrees with this rank, with at least one value the sequence
    /// holds and one it does not among them.
    fn fits(&self, sites: &[CallSite]) -> bool {
        let (mut member, mut other) = (false, false);
        for site in sites {
            let Some(answer) = &site.answer else {
                continue;
            };
            let Some((v, xs)) = value_and_sorted(site, self.value, self.sequence) else {
                // A call this rank cannot speak for (an unsorted sequence): not this task.
                return false;
            };
            let Lit::Int(n) = answer else {
                return false;
            };
            if i128::try_from(count(&v, &xs, self.after_equals)).ok() != Some(*n) {
                return false;
            }
            if xs.contains(&v) {
                member = true;
            } else {
                other = true;
            }
        }
        member && other
    }

    /// The behaviour owed on `call` (a call of `entry` as source), `= N`; `None` where the rank
    /// says nothing (the sequence unsorted, other kinds of values).
    pub fn owed(&self, call: &str, entry: &str) -> Option<String> {
        let sites = calls_in_test(call, entry);
        let site = sites.first()?;
        let (v, xs) = value_and_sorted(site, self.value, self.sequence)?;
        Some(format!("= {}", count(&v, &xs, self.after_equals)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(s: &str) -> TestInput {
        TestInput::Code { source: s.into() }
    }

    fn search_tests() -> Vec<TestInput> {
        vec![
            code("assert search(42, (-5, 1, 3, 5, 7, 10)) == 6"),
            code("assert search(42, [1, 5, 10]) == 3"),
            code("assert search(5, (1, 5, 10)) == 1"),
        ]
    }

    #[test]
    fn a_value_placed_before_its_equal_owes_the_count_of_smaller_elements() {
        let rank = Rank::from_tests(&search_tests(), "search").expect("a rank");
        assert_eq!(
            rank.owed("search(10, (1, 5, 10))", "search").as_deref(),
            Some("= 2")
        );
        assert_eq!(
            rank.owed("search(1, (1, 5, 10))", "search").as_deref(),
            Some("= 0")
        );
        assert_eq!(
            rank.owed("search(42, [])", "search").as_deref(),
            Some("= 0")
        );
        // An unsorted sequence: the rank says nothing.
        assert_eq!(rank.owed("search(5, (10, 5, 1))", "search"), None);
    }

    #[test]
    fn a_value_placed_after_its_equal_owes_the_count_of_elements_not_larger() {
        let tests = vec![
            code("assert insert_at([1, 5, 10], 42) == 3"),
            code("assert 2 == insert_at([1, 5, 10], 5)"),
        ];
        let rank = Rank::from_tests(&tests, "insert_at").expect("a rank");
        assert_eq!(
            rank.owed("insert_at([1, 5, 10], 1)", "insert_at")
                .as_deref(),
            Some("= 1")
        );
    }

    #[test]
    fn no_rank_without_both_a_held_value_and_another() {
        // Never a value the sequence holds: before or after equals is not pinned.
        let tests = vec![
            code("assert search(42, [1, 5, 10]) == 3"),
            code("assert search(0, [1, 5, 10]) == 0"),
        ];
        assert_eq!(Rank::from_tests(&tests, "search"), None);
        // Only held values: an index of the value fits as well.
        let tests = vec![
            code("assert search(5, [1, 5, 10]) == 1"),
            code("assert search(1, [1, 5, 10]) == 0"),
        ];
        assert_eq!(Rank::from_tests(&tests, "search"), None);
    }

    #[test]
    fn no_rank_where_one_answer_disagrees_or_a_sequence_is_unsorted() {
        let mut tests = search_tests();
        tests.push(code("assert search(7, [1, 5, 10]) == 3"));
        assert_eq!(Rank::from_tests(&tests, "search"), None);
        let mut tests = search_tests();
        tests.push(code("assert search(7, [10, 5, 1]) == 1"));
        assert_eq!(Rank::from_tests(&tests, "search"), None);
        // A count of larger elements is no rank.
        let tests = vec![
            code("assert above(42, [1, 5, 10]) == 0"),
            code("assert above(5, [1, 5, 10]) == 1"),
        ];
        assert_eq!(Rank::from_tests(&tests, "above"), None);
    }
}
