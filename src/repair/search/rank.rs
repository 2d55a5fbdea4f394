//! An answer the visible tests imply on inputs they do not make: the rank of a value in a
//! sorted sequence.
//!
//! Where to insert a value into a sorted sequence (a search, a bisection, a count of the
//! smaller elements) is a common task, and its visible tests pin the convention for a value the
//! sequence holds: `search(5, (1, 5, 10)) == 1` puts it before its equal. A program that passes
//! them often breaks that convention at the ends (`x >= seq[-1]: return len(seq)`), where no
//! visible test looks. When every visible test that compares a call (of two arguments) with a
//! literal compares it with the same rank (the count of elements smaller than the value, or of
//! elements not larger), and the tests hold both a value the sequence holds and one it does
//! not, that rank is owed on a call with a sorted sequence where the tests pin it: a value the
//! sequence holds once, and a value beyond its ends (or an empty sequence) on a side some test
//! passes such a value. Between two elements an index-or-length program fits the same tests, so
//! nothing is owed there unless a test passes a value between two. `harden` checks passing
//! programs against it.

use super::inputs::{call_sites, calls_in_test, CallSite, Lit};
use crate::run::TestInput;

/// Which rank the visible tests give: the argument positions of the value and the sequence,
/// whether equal elements come before the value, and where the tests pass values the sequence
/// does not hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rank {
    value: usize,
    sequence: usize,
    /// `true`: the count of elements not larger (after equals); `false`: smaller (before).
    after_equals: bool,
    /// A test passes a value above the last element (or an empty sequence).
    above: bool,
    /// A test passes a value below the first element.
    below: bool,
    /// A test passes a value between two elements.
    between: bool,
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

/// Where a value lies against a sorted sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Held exactly once.
    Held,
    /// Held more than once: the tests never say which equal comes first.
    Repeated,
    /// Above the last element, or the sequence is empty (an insertion at the end).
    Above,
    Below,
    Between,
}

fn place(v: &Key, xs: &[Key]) -> Place {
    match xs.iter().filter(|x| *x == v).count() {
        1 => Place::Held,
        0 => match (xs.first(), xs.last()) {
            (Some(first), _) if v < first => Place::Below,
            (_, Some(last)) if v < last => Place::Between,
            _ => Place::Above,
        },
        _ => Place::Repeated,
    }
}

impl Rank {
    /// The rank the visible tests give, if they give exactly one (see the module's overview).
    pub fn from_tests(tests: &[TestInput], entry: &str) -> Option<Rank> {
        if entry.is_empty() {
            return None;
        }
        let sites = call_sites(tests, entry);
        // Two arguments: with more, the others (a range's bounds, a length) may change the
        // answer on inputs the tests never pass.
        if sites.is_empty() || sites.iter().any(|s| s.positional.len() != 2) {
            return None;
        }
        let mut found = None;
        for (value, sequence) in [(0, 1), (1, 0)] {
            let before = Rank::fit(&sites, value, sequence, false);
            let after = Rank::fit(&sites, value, sequence, true);
            let rank = match (before, after) {
                (Some(rank), None) | (None, Some(rank)) => rank,
                _ => continue,
            };
            if found.is_some() {
                // Both orders fit: the tests do not say which argument is which.
                return None;
            }
            found = Some(rank);
        }
        found
    }

    /// The rank at these positions, if every answered site agrees with it and among them the
    /// sequence holds some value once and some other not at all.
    fn fit(sites: &[CallSite], value: usize, sequence: usize, after_equals: bool) -> Option<Rank> {
        let mut rank = Rank {
            value,
            sequence,
            after_equals,
            above: false,
            below: false,
            between: false,
        };
        let mut held = false;
        for site in sites {
            let Some(answer) = &site.answer else {
                continue;
            };
            // A call this rank cannot speak for (an unsorted sequence, an answer that is not a
            // count): not this task.
            let (v, xs) = value_and_sorted(site, value, sequence)?;
            let Lit::Int(n) = answer else {
                return None;
            };
            if i128::try_from(count(&v, &xs, after_equals)).ok() != Some(*n) {
                return None;
            }
            match place(&v, &xs) {
                Place::Held => held = true,
                Place::Repeated => {}
                Place::Above => rank.above = true,
                Place::Below => rank.below = true,
                Place::Between => rank.between = true,
            }
        }
        (held && (rank.above || rank.below || rank.between)).then_some(rank)
    }

    /// The behaviour owed on `call` (a call of `entry` as source), `= N`; `None` where the tests
    /// do not pin it (see the module's overview), the sequence is unsorted or the values are of
    /// other kinds.
    pub fn owed(&self, call: &str, entry: &str) -> Option<String> {
        let sites = calls_in_test(call, entry);
        let site = sites.first()?;
        if site.positional.len() != 2 {
            return None;
        }
        let (v, xs) = value_and_sorted(site, self.value, self.sequence)?;
        let pinned = match place(&v, &xs) {
            Place::Held => true,
            Place::Repeated => false,
            Place::Above => self.above,
            Place::Below => self.below,
            Place::Between => self.between,
        };
        pinned.then(|| format!("= {}", count(&v, &xs, self.after_equals)))
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

    fn owed(rank: &Rank, call: &str) -> Option<String> {
        rank.owed(call, "search")
    }

    #[test]
    fn a_value_placed_before_its_equal_owes_the_count_of_smaller_elements() {
        let rank = Rank::from_tests(&search_tests(), "search").expect("a rank");
        assert_eq!(
            owed(&rank, "search(10, (1, 5, 10))").as_deref(),
            Some("= 2")
        );
        assert_eq!(owed(&rank, "search(1, (1, 5, 10))").as_deref(), Some("= 0"));
        assert_eq!(owed(&rank, "search(42, [])").as_deref(), Some("= 0"));
        assert_eq!(owed(&rank, "search(43, [1, 5])").as_deref(), Some("= 2"));
        // An unsorted sequence: the rank says nothing.
        assert_eq!(owed(&rank, "search(5, (10, 5, 1))"), None);
        // Where the tests never pass such a value: below the first element, between two, a
        // value held twice. An index-or-length program fits the same tests there.
        assert_eq!(owed(&rank, "search(0, (1, 5, 10))"), None);
        assert_eq!(owed(&rank, "search(7, (1, 5, 10))"), None);
        assert_eq!(owed(&rank, "search(5, (1, 5, 5, 10))"), None);
    }

    #[test]
    fn a_value_between_two_elements_is_owed_where_a_test_passes_one() {
        let mut tests = search_tests();
        tests.push(code("assert search(7, [1, 5, 10]) == 2"));
        let rank = Rank::from_tests(&tests, "search").expect("a rank");
        assert_eq!(owed(&rank, "search(3, (1, 5, 10))").as_deref(), Some("= 1"));
        assert_eq!(owed(&rank, "search(-3, (1, 5, 10))"), None);
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
    fn no_rank_with_more_than_two_arguments() {
        let tests = vec![
            code("assert search(42, [1, 5, 10], 0) == 3"),
            code("assert search(5, [1, 5, 10], 0) == 1"),
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
