//! The tree of attempts, the best prefix, and the smallest set of prefixes that together reach
//! the best coverage.
//!
//! The root is the snippet run as it is (the empty prefix). Then come the two stand-in
//! prefixes (no model), and every other node is one prefix the model proposed: from the
//! undefined names (step 1), as a refinement of a node whose run
//! raised (step 2), or aimed at lines no node has covered yet (step 3); its parent is the node
//! it refines. The covering set is chosen exactly (smallest number of prefixes whose union
//! equals the union of all nodes) while the candidates are few, and greedily beyond that.

use std::collections::BTreeSet;

use serde::Serialize;

use super::coverage::Execution;
use super::prefix::Prefix;

/// Which kind of guidance produced a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// The snippet as given, with an empty prefix.
    AsIs,
    /// Before the model: every undefined name bound to a stand-in ([`crate::exec::standins`]).
    StandIns,
    /// Step 1: initialise the undefined names.
    Undefined,
    /// Step 2: fix the error a prefix ran into.
    Error,
    /// Step 3: reach lines not covered yet.
    Coverage,
}

impl Step {
    pub fn label(self) -> &'static str {
        match self {
            Step::AsIs => "as is",
            Step::StandIns => "stand-ins",
            Step::Undefined => "undefined names",
            Step::Error => "error",
            Step::Coverage => "coverage",
        }
    }
}

/// One attempt.
#[derive(Debug, Clone, Serialize)]
pub struct Node {
    pub id: usize,
    pub parent: Option<usize>,
    pub step: Step,
    /// The prefix that ran: the proposed one, less any statements taken out.
    pub prefix: Prefix,
    /// The prefix as the model proposed it (repeats are recognised by it).
    #[serde(skip)]
    pub proposed: Prefix,
    /// The model's reply this prefix came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// Why the model's reply gave no prefix to run (then there is no execution).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_problem: Option<String>,
    /// Entries of the reply left out: they did not parse, or repeated the snippet's own
    /// statements.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_entries: Vec<String>,
    /// Statements of the prefix that raised and were taken out before the final run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed_statements: Vec<String>,
    /// An earlier node with the same prefix (this one was not run again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<Execution>,
    /// Covered statements (indices) of this node's run.
    pub covered: BTreeSet<usize>,
}

impl Node {
    pub fn new(id: usize, parent: Option<usize>, step: Step, prefix: Prefix) -> Self {
        Node {
            id,
            parent,
            step,
            proposed: prefix.clone(),
            prefix,
            reply: None,
            reply_problem: None,
            dropped_entries: Vec::new(),
            removed_statements: Vec::new(),
            duplicate_of: None,
            execution: None,
            covered: BTreeSet::new(),
        }
    }

    /// Whether the snippet ran to its end after this prefix.
    pub fn finished(&self) -> bool {
        self.execution.as_ref().is_some_and(|e| e.ending.finished())
    }
}

/// All attempts, in the order they were made.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tree {
    pub nodes: Vec<Node>,
}

impl Tree {
    pub fn push(&mut self, mut node: Node) -> usize {
        node.id = self.nodes.len();
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    pub fn get(&self, id: usize) -> Option<&Node> {
        self.nodes.get(id)
    }

    /// Statements covered by any node.
    pub fn union(&self) -> BTreeSet<usize> {
        self.nodes
            .iter()
            .flat_map(|n| n.covered.iter().copied())
            .collect()
    }

    /// The node that covers most; ties go to a run that finished, then to the earlier node.
    pub fn best(&self) -> Option<usize> {
        self.best_where(|_| true)
    }

    /// [`Tree::best`] among the nodes `keep` accepts.
    pub fn best_where(&self, keep: impl Fn(&Node) -> bool) -> Option<usize> {
        self.nodes
            .iter()
            .filter(|n| n.execution.is_some() && keep(n))
            .max_by(|a, b| {
                (a.covered.len(), a.finished(), std::cmp::Reverse(a.id)).cmp(&(
                    b.covered.len(),
                    b.finished(),
                    std::cmp::Reverse(b.id),
                ))
            })
            .map(|n| n.id)
    }

    /// A smallest set of nodes whose covered statements together equal [`Tree::union`].
    pub fn minimal_set(&self) -> Vec<usize> {
        let sets: Vec<(usize, &BTreeSet<usize>)> =
            self.nodes.iter().map(|n| (n.id, &n.covered)).collect();
        minimal_cover(&sets)
    }
}

/// Above this many candidate sets the exact search gives way to the greedy one.
const EXACT_LIMIT: usize = 24;

/// A smallest selection of `sets` (by id) whose union equals the union of all of them. Empty
/// sets are never chosen; among equally small selections the one with the earliest ids wins.
pub fn minimal_cover(sets: &[(usize, &BTreeSet<usize>)]) -> Vec<usize> {
    let universe: BTreeSet<usize> = sets.iter().flat_map(|(_, s)| s.iter().copied()).collect();
    if universe.is_empty() {
        return Vec::new();
    }
    // Drop duplicates and sets contained in another: some smallest cover avoids them.
    let mut candidates: Vec<(usize, &BTreeSet<usize>)> = Vec::new();
    for (i, (id, set)) in sets.iter().enumerate() {
        if set.is_empty() {
            continue;
        }
        let dominated = sets.iter().enumerate().any(|(j, (_, other))| {
            j != i && set.is_subset(other) && (set.len() < other.len() || j < i)
        });
        if !dominated {
            candidates.push((*id, set));
        }
    }
    if candidates.len() <= EXACT_LIMIT {
        for size in 1..=candidates.len() {
            if let Some(found) = cover_of_size(&candidates, &universe, size) {
                return found;
            }
        }
    }
    greedy_cover(&candidates, &universe)
}

/// The first selection (in lexicographic order of positions) of `size` candidates covering
/// `universe`.
fn cover_of_size(
    candidates: &[(usize, &BTreeSet<usize>)],
    universe: &BTreeSet<usize>,
    size: usize,
) -> Option<Vec<usize>> {
    fn search(
        candidates: &[(usize, &BTreeSet<usize>)],
        universe: &BTreeSet<usize>,
        start: usize,
        left: usize,
        chosen: &mut Vec<usize>,
        covered: &BTreeSet<usize>,
    ) -> bool {
        if covered.len() == universe.len() {
            return true;
        }
        if left == 0 {
            return false;
        }
        for i in start..candidates.len() {
            let Some((_, set)) = candidates.get(i) else {
                break;
            };
            if set.is_subset(covered) {
                continue;
            }
            let next: BTreeSet<usize> = covered.union(set).copied().collect();
            chosen.push(i);
            if search(candidates, universe, i + 1, left - 1, chosen, &next) {
                return true;
            }
            chosen.pop();
        }
        false
    }
    let mut chosen = Vec::new();
    search(candidates, universe, 0, size, &mut chosen, &BTreeSet::new()).then(|| {
        chosen
            .into_iter()
            .filter_map(|i| candidates.get(i).map(|(id, _)| *id))
            .collect()
    })
}

fn greedy_cover(
    candidates: &[(usize, &BTreeSet<usize>)],
    universe: &BTreeSet<usize>,
) -> Vec<usize> {
    let mut covered = BTreeSet::new();
    let mut chosen = Vec::new();
    while covered.len() < universe.len() {
        let best = candidates
            .iter()
            .filter(|(id, _)| !chosen.contains(id))
            .max_by_key(|(id, set)| (set.difference(&covered).count(), std::cmp::Reverse(*id)));
        match best {
            Some((id, set)) if set.difference(&covered).count() > 0 => {
                chosen.push(*id);
                covered.extend(set.iter().copied());
            }
            _ => break,
        }
    }
    chosen.sort_unstable();
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[usize]) -> BTreeSet<usize> {
        items.iter().copied().collect()
    }

    #[test]
    fn the_smallest_cover_beats_the_greedy_one() {
        // Greedy takes the largest set first and then needs both others (3 prefixes); the two
        // smaller sets alone cover everything.
        let a = set(&[0, 1, 2, 3]);
        let b = set(&[0, 1, 4]);
        let c = set(&[2, 3, 5]);
        let sets = [(0, &a), (1, &b), (2, &c)];
        let universe = set(&[0, 1, 2, 3, 4, 5]);
        assert_eq!(greedy_cover(&sets, &universe), [0, 1, 2]);
        assert_eq!(minimal_cover(&sets), [1, 2]);
    }

    #[test]
    fn duplicates_subsets_and_empty_sets_are_never_chosen() {
        let empty = set(&[]);
        let small = set(&[1]);
        let big = set(&[1, 2]);
        let same = set(&[1, 2]);
        let sets = [(0, &empty), (1, &small), (2, &big), (3, &same)];
        assert_eq!(minimal_cover(&sets), [2]);
        assert!(minimal_cover(&[(0, &empty)]).is_empty());
    }

    #[test]
    fn many_candidates_fall_back_to_greedy_and_still_cover() {
        let owned: Vec<BTreeSet<usize>> = (0..40).map(|i| set(&[i, i + 1])).collect();
        let sets: Vec<(usize, &BTreeSet<usize>)> = owned.iter().enumerate().collect();
        let chosen = minimal_cover(&sets);
        let union: BTreeSet<usize> = chosen
            .iter()
            .flat_map(|&i| owned[i].iter().copied())
            .collect();
        assert_eq!(union.len(), 41);
    }
}
