//! A tested program of the search, how the beam ranks it, and the size of its change from the
//! seed.

use crate::repair::Tested;

/// A tested program that can be a parent.
pub(super) struct Node {
    pub(super) id: usize,
    pub(super) tested: Tested,
    pub(super) errors: usize,
    pub(super) diff_lines: usize,
}

impl Node {
    /// Beam order: more visible tests passed, fewer errors, smaller change, older.
    pub(super) fn rank(&self) -> (std::cmp::Reverse<usize>, usize, usize, usize) {
        (
            std::cmp::Reverse(self.tested.passed),
            self.errors,
            self.diff_lines,
            self.id,
        )
    }
}

/// Lines added or removed going from `a` to `b`.
pub(super) fn changed_lines(a: &str, b: &str) -> usize {
    similar::TextDiff::from_lines(a, b)
        .iter_all_changes()
        .filter(|c| c.tag() != similar::ChangeTag::Equal)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_lines_counts_additions_and_removals() {
        assert_eq!(changed_lines("a\nb\n", "a\nb\n"), 0);
        assert_eq!(changed_lines("a\nb\n", "a\nc\n"), 2);
        assert_eq!(changed_lines("a\n", "a\nb\n"), 1);
    }
}
