//! The votes' decision as plain data: which passing program they pick and what backs it, whether
//! the heaviest groups tie, whether the votes still to come could change the pick. Pure, so every
//! outcome has a table test; `choose` runs the programs, asks here, and acts on the answer
//! (bringing an edit into a heaviest group that holds none runs programs and the model).

use crate::repair::record::{Confirmation, ConfirmationStatus};
use crate::repair::search::peers::Voters;
use crate::repair::search::select::{self, SelectRule};

/// A passing candidate, as the decision sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Contender {
    pub id: usize,
    /// An edit of the given program: it votes nothing, and is what a group returns first.
    pub derived: bool,
    /// Lines it changes in the given program.
    pub diff_lines: usize,
}

/// What the decision is made on: the passing candidates beside the peers, grouped by behaviour
/// on the extra inputs.
pub(super) struct Ballot {
    /// In `passing` order: voter `i` below `voters.candidates` is `contenders[i]`.
    pub contenders: Vec<Contender>,
    pub voters: Voters,
    /// How many extra inputs they ran on.
    pub inputs: usize,
    pub rule: SelectRule,
    /// Groups of voters, most supported first (`Voters::ranked`), and their support.
    pub grouped: Vec<Vec<usize>>,
    pub support: Vec<usize>,
}

/// What the votes decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Decision {
    /// No extra inputs to compare on: the first passing program (the given one when none
    /// passes), nothing reported.
    NoInputs { pick: usize },
    /// Chosen outright.
    Chosen(Choice),
    /// The heaviest group holds no edit of the given program: one is to be brought in, then
    /// [`Ballot::after_bringing_in`] chooses.
    BringIn(Heaviest),
}

/// The program returned and what backs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Choice {
    pub pick: usize,
    pub backing: Backing,
}

/// What backs a choice. The counts are votes: `agreeing` behave like the pick (its own vote
/// not counted), `disagreeing` otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Backing {
    /// The agreement rule's pick (fresh samples only): nothing said about it.
    Agreement,
    /// No independent votes: the smallest edit, the first found among equals (else the first
    /// passing program).
    Unconfirmed,
    /// The smallest edit in the heaviest group (or one brought into it).
    Confirmed { agreeing: usize, disagreeing: usize },
    /// The heaviest group's first candidate, none of its edits: the group wrote it.
    Majority { agreeing: usize, disagreeing: usize },
    /// The heaviest group is peers alone and nothing joined it: the heaviest group with a
    /// candidate gives the program.
    Outvoted { agreeing: usize, disagreeing: usize },
}

impl Backing {
    /// As the report gives it.
    pub fn confirmation(self) -> Option<Confirmation> {
        let (agreeing, disagreeing, status) = match self {
            Backing::Agreement => return None,
            Backing::Unconfirmed => (0, 0, ConfirmationStatus::Unconfirmed),
            Backing::Confirmed {
                agreeing,
                disagreeing,
            } => (agreeing, disagreeing, ConfirmationStatus::Confirmed),
            Backing::Majority {
                agreeing,
                disagreeing,
            } => (agreeing, disagreeing, ConfirmationStatus::Majority),
            Backing::Outvoted {
                agreeing,
                disagreeing,
            } => (agreeing, disagreeing, ConfirmationStatus::Outvoted),
        };
        Some(Confirmation {
            agreeing,
            disagreeing,
            status,
        })
    }
}

/// The heaviest group when it holds no edit of the given program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Heaviest {
    /// Its members, as voters (peers among them).
    pub members: Vec<usize>,
    /// Its first candidate (what the majority wrote); `None` when only peers behave so.
    pub majority: Option<usize>,
    /// Its support, and every vote cast.
    pub support: usize,
    pub total: usize,
    /// Where peers are among its members: the smallest passing edit, to edit again towards
    /// the group when edits of the given program do not reach it (two slips: the smallest
    /// passing edit mends one). With fresh votes alone their program stays the choice.
    pub second_try: Option<usize>,
}

impl Heaviest {
    /// Whether an edit is worth bringing in: not when the given program is the group's own
    /// candidate (it passed, and the group agrees with it).
    pub fn wants_an_edit(&self) -> bool {
        self.majority != Some(0)
    }
}

impl Ballot {
    pub fn new(
        contenders: Vec<Contender>,
        voters: Voters,
        inputs: usize,
        rule: SelectRule,
    ) -> Self {
        // Groups in order of support: a program that crashed where another answers, and
        // agrees with it elsewhere, votes for it (`select::support`).
        let (grouped, support) = voters.ranked();
        Ballot {
            contenders,
            voters,
            inputs,
            rule,
            grouped,
            support,
        }
    }

    /// The first passing program; the given one when none passes.
    fn first(&self) -> usize {
        self.contenders.first().map_or(0, |c| c.id)
    }

    /// The contenders among voters `members` (peers left out).
    fn candidates_in<'a>(&'a self, members: &'a [usize]) -> impl Iterator<Item = Contender> + 'a {
        members
            .iter()
            .filter(|&&i| !self.voters.is_peer(i))
            .filter_map(|&i| self.contenders.get(i).copied())
    }

    /// The edit with the smallest change among `contenders`, the first found among equals.
    fn smallest_edit(contenders: impl Iterator<Item = Contender>) -> Option<Contender> {
        contenders
            .filter(|c| c.derived)
            .min_by_key(|c| (c.diff_lines, c.id))
    }

    /// What the votes decide (see `choose`'s overview).
    pub fn decide(&self) -> Decision {
        let first = self.first();
        if self.inputs == 0 {
            return Decision::NoInputs { pick: first };
        }
        let voters = &self.voters;
        let chosen = |pick, backing| Decision::Chosen(Choice { pick, backing });
        if self.rule == SelectRule::Agreement && !self.contenders.iter().any(|c| c.derived) {
            let scores = select::agreement_scores(&voters.behaviours, &voters.weights);
            // Peers score the candidates; only a candidate is returned.
            let scores = scores.get(..voters.candidates).unwrap_or(&scores);
            let best = scores.iter().copied().max().unwrap_or(0);
            let pick = scores
                .iter()
                .position(|&s| s == best)
                .and_then(|i| self.contenders.get(i))
                .map_or(first, |c| c.id);
            return chosen(pick, Backing::Agreement);
        }
        let top_weight = self.support.first().copied().unwrap_or(0);
        let total: usize = voters.weights.iter().sum();
        let top = match self.grouped.first() {
            Some(top) if top_weight > 0 => top,
            // Nothing independent to compare with: the smallest edit, the first found (at the
            // most suspicious statement) among equals. On the development runs this was right
            // more often than the edit that changes the given program's behaviour least
            // (benchmarks/experiments/unconfirmed-edit.md).
            _ => {
                let pick =
                    Self::smallest_edit(self.contenders.iter().copied()).map_or(first, |c| c.id);
                return chosen(pick, Backing::Unconfirmed);
            }
        };
        if let Some(edit) = Self::smallest_edit(self.candidates_in(top)) {
            return chosen(
                edit.id,
                Backing::Confirmed {
                    agreeing: top_weight,
                    disagreeing: total.saturating_sub(top_weight),
                },
            );
        }
        // Only where peers vote, where it was measured
        // (benchmarks/experiments/peers.md).
        let second_try = if top.iter().any(|&i| voters.is_peer(i)) {
            Self::smallest_edit(self.contenders.iter().copied()).map(|c| c.id)
        } else {
            None
        };
        Decision::BringIn(Heaviest {
            members: top.clone(),
            majority: self.candidates_in(top).next().map(|c| c.id),
            support: top_weight,
            total,
            second_try,
        })
    }

    /// What the heaviest group without an edit gives once `joined` (an edit, or a program set
    /// aside before the votes, brought into it) is known.
    pub fn after_bringing_in(&self, heaviest: &Heaviest, joined: Option<usize>) -> Choice {
        let Some(pick) = joined.or(heaviest.majority) else {
            return self.outvoted();
        };
        let own = usize::from(Some(pick) == heaviest.majority);
        let agreeing = heaviest.support.saturating_sub(own);
        let disagreeing = heaviest.total.saturating_sub(heaviest.support);
        let backing = if own == 1 {
            Backing::Majority {
                agreeing,
                disagreeing,
            }
        } else {
            Backing::Confirmed {
                agreeing,
                disagreeing,
            }
        };
        Choice { pick, backing }
    }

    /// The heaviest group is peers alone and nothing joined it: the heaviest group that holds a
    /// candidate gives the program (its smallest edit, else its first), with that group's
    /// weight less the program's own vote.
    fn outvoted(&self) -> Choice {
        let voters = &self.voters;
        let weight_of = |i: usize| voters.weights.get(i).copied().unwrap_or(0);
        let total: usize = voters.weights.iter().sum();
        let (pick, agreeing) = self
            .grouped
            .iter()
            .find_map(|g| {
                let members: Vec<usize> =
                    g.iter().copied().filter(|&i| !voters.is_peer(i)).collect();
                let &head = members.first()?;
                let index = members
                    .iter()
                    .copied()
                    .filter(|&i| self.contenders.get(i).is_some_and(|c| c.derived))
                    .min_by_key(|&i| self.contenders.get(i).map(|c| (c.diff_lines, c.id)))
                    .unwrap_or(head);
                let weight: usize = g.iter().map(|&i| weight_of(i)).sum();
                let pick = self.contenders.get(index).map_or(self.first(), |c| c.id);
                Some((pick, weight.saturating_sub(weight_of(index))))
            })
            .unwrap_or((self.first(), 0));
        Choice {
            pick,
            backing: Backing::Outvoted {
                agreeing,
                disagreeing: total.saturating_sub(agreeing),
            },
        }
    }
}

/// The two heaviest groups weigh the same: how many groups share the heaviest support, and
/// that support.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Tie {
    pub groups: usize,
    pub support: usize,
}

/// Whether the votes tie: the choice would fall to whichever group was found first.
pub(super) fn tie(voters: &Voters) -> Option<Tie> {
    let (_, support) = voters.ranked();
    match support.as_slice() {
        [a, b, ..] if *a > 0 && a == b => Some(Tie {
            groups: support.iter().filter(|&s| s == a).count(),
            support: *a,
        }),
        _ => None,
    }
}

/// A vote the votes still to come cannot change: the heaviest group's support, against the
/// other groups' weight together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Settled {
    pub lead: usize,
    pub others: usize,
}

/// Whether the vote is settled with `left` votes still to come: the heaviest group outweighs
/// every other group together by more than those, its programs answer on every extra input (a
/// program that crashed where a later one answers would lend that one its votes,
/// `select::support`), and it holds a candidate (a group of peers alone gives no program: the
/// choice then falls among the others).
pub(super) fn settled(voters: &Voters, left: usize) -> Option<Settled> {
    let (grouped, support) = voters.ranked();
    let (top, &lead) = (grouped.first()?, support.first()?);
    let weight = |g: &Vec<usize>| -> usize {
        g.iter()
            .map(|&i| voters.weights.get(i).copied().unwrap_or(1))
            .sum()
    };
    let others: usize = grouped.iter().skip(1).map(weight).sum();
    let answers_everywhere = top
        .first()
        .and_then(|&i| voters.crashed.get(i))
        .is_some_and(|c| !c.iter().any(|&x| x));
    let has_candidate = top.iter().any(|&i| !voters.is_peer(i));
    if lead == 0 || !answers_everywhere || !has_candidate || lead <= others + left {
        return None;
    }
    Some(Settled { lead, others })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repair::search::peers::Runs;
    use Backing::{Agreement, Unconfirmed};

    /// A passing candidate: id, lines changed if it is an edit of the given program, votes, and
    /// what it did on each extra input ("crash E": it crashed raising E).
    struct Row(usize, Option<usize>, usize, &'static [&'static str]);

    fn runs(did: &[&[&str]]) -> Runs {
        let (behaviours, crashed) = did
            .iter()
            .map(|d| {
                d.iter()
                    .map(|x| match x.strip_prefix("crash ") {
                        Some(kind) => (format!("raise {kind}"), true),
                        None => (x.to_string(), false),
                    })
                    .unzip()
            })
            .unzip();
        Runs {
            behaviours,
            crashed,
        }
    }

    fn ballot(rule: SelectRule, rows: &[Row], peers: &[&[&str]]) -> Ballot {
        let contenders = rows
            .iter()
            .map(|&Row(id, edit, _, _)| Contender {
                id,
                derived: edit.is_some(),
                diff_lines: edit.unwrap_or(0),
            })
            .collect();
        let did: Vec<&[&str]> = rows.iter().map(|r| r.3).collect();
        let weights = rows.iter().map(|r| r.2).collect();
        let voters = Voters::new(runs(&did), weights).with_peers(runs(peers));
        let inputs = did.first().map_or(0, |d| d.len());
        Ballot::new(contenders, voters, inputs, rule)
    }

    fn groups(rows: &[Row], peers: &[&[&str]]) -> Ballot {
        ballot(SelectRule::Groups, rows, peers)
    }

    fn voters(rows: &[Row], peers: &[&[&str]]) -> Voters {
        groups(rows, peers).voters
    }

    fn chosen(pick: usize, backing: Backing) -> Decision {
        Decision::Chosen(Choice { pick, backing })
    }

    fn confirmed(agreeing: usize, disagreeing: usize) -> Backing {
        Backing::Confirmed {
            agreeing,
            disagreeing,
        }
    }

    fn majority(agreeing: usize, disagreeing: usize) -> Backing {
        Backing::Majority {
            agreeing,
            disagreeing,
        }
    }

    fn outvoted(agreeing: usize, disagreeing: usize) -> Backing {
        Backing::Outvoted {
            agreeing,
            disagreeing,
        }
    }

    /// Lines an edit changes.
    const EDIT: Option<usize> = Some(2);

    #[test]
    fn every_outcome_of_the_vote() {
        let bring_in = |members: &[usize], majority, support, total, second_try| {
            Decision::BringIn(Heaviest {
                members: members.to_vec(),
                majority,
                support,
                total,
                second_try,
            })
        };
        #[rustfmt::skip]
        let cases: Vec<(&str, Ballot, Decision)> = vec![
            ("no extra inputs: the first passing program",
             groups(&[Row(4, EDIT, 0, &[]), Row(2, None, 1, &[])], &[]),
             Decision::NoInputs { pick: 4 }),
            ("nothing passes: the given program",
             groups(&[], &[]),
             Decision::NoInputs { pick: 0 }),
            ("edits alone: the smallest, unconfirmed",
             groups(&[Row(3, Some(4), 0, &["= 1"]), Row(5, Some(1), 0, &["= 2"]),
                      Row(7, Some(3), 0, &["= 1"])], &[]),
             chosen(5, Unconfirmed)),
            ("edits alone, equal changes: the first found",
             groups(&[Row(6, EDIT, 0, &["= 1"]), Row(3, EDIT, 0, &["= 2"])], &[]),
             chosen(3, Unconfirmed)),
            ("no votes and no edit: the first passing program, unconfirmed",
             groups(&[Row(8, None, 0, &["= 1"]), Row(2, None, 0, &["= 2"])], &[]),
             chosen(8, Unconfirmed)),
            ("an edit in the heaviest group: its smallest, confirmed",
             groups(&[Row(3, Some(5), 0, &["= 1", "= 2"]), Row(4, None, 1, &["= 1", "= 3"]),
                      Row(6, Some(1), 0, &["= 1", "= 2"]), Row(7, None, 1, &["= 1", "= 2"]),
                      Row(9, None, 1, &["= 1", "= 2"])], &[]),
             chosen(6, confirmed(2, 1))),
            ("peers vote beside the candidates; of equal groups, the first found",
             groups(&[Row(3, EDIT, 0, &["= 1"]), Row(4, EDIT, 0, &["= 2"]),
                      Row(5, None, 1, &["= 1"])], &[&["= 2"], &["= 2"], &["= 1"]]),
             chosen(3, confirmed(2, 2))),
            ("programs that crashed where an edit's group answers vote for it",
             groups(&[Row(0, None, 1, &["crash IndexError", "= 1"]),
                      Row(2, None, 1, &["crash IndexError", "= 1"]),
                      Row(3, EDIT, 0, &["= 0", "= 1"]), Row(5, None, 1, &["= 0", "= 1"])], &[]),
             chosen(3, confirmed(3, 0))),
            ("the heaviest group holds no edit: bring one in",
             groups(&[Row(3, EDIT, 0, &["= 1"]), Row(4, None, 1, &["= 2"]),
                      Row(5, None, 1, &["= 2"])], &[]),
             bring_in(&[1, 2], Some(4), 2, 2, None)),
            ("the heaviest group is peers alone: bring an edit in, the smallest edited again",
             groups(&[Row(3, Some(4), 0, &["= 1"]), Row(4, Some(2), 0, &["= 1"]),
                      Row(5, None, 1, &["= 3"])], &[&["= 2"], &["= 2"]]),
             bring_in(&[3, 4], None, 2, 3, Some(4))),
            ("the seed in the heaviest group: it is the majority's",
             groups(&[Row(0, None, 1, &["= 2"]), Row(3, EDIT, 0, &["= 1"]),
                      Row(4, None, 1, &["= 2"])], &[&["= 1"]]),
             bring_in(&[0, 2], Some(0), 2, 3, None)),
            ("the agreement rule, fresh samples only: peers score, a candidate is picked",
             ballot(SelectRule::Agreement,
                    &[Row(0, None, 1, &["= 1", "raise ValueError"]),
                      Row(2, None, 1, &["= 1", "= 0"]), Row(3, None, 1, &["= 5", "= 0"])],
                    &[&["= 5", "= 0"], &["= 5", "= 0"]]),
             chosen(3, Agreement)),
            ("the agreement rule with an edit: the groups decide",
             ballot(SelectRule::Agreement,
                    &[Row(2, EDIT, 0, &["= 1"]), Row(3, None, 1, &["= 1"])], &[]),
             chosen(2, confirmed(1, 0))),
        ];
        for (what, ballot, want) in cases {
            assert_eq!(ballot.decide(), want, "{what}");
        }
    }

    #[test]
    fn what_the_heaviest_group_without_an_edit_gives() {
        let fresh = groups(
            &[
                Row(3, EDIT, 0, &["= 1"]),
                Row(4, None, 1, &["= 2"]),
                Row(5, None, 1, &["= 2"]),
                Row(6, None, 1, &["= 1"]),
            ],
            &[],
        );
        let peers = groups(
            &[
                Row(3, Some(4), 0, &["= 1"]),
                Row(4, Some(2), 0, &["= 1"]),
                Row(5, None, 1, &["= 1"]),
                Row(6, None, 1, &["= 3"]),
            ],
            &[&["= 2"], &["= 2"], &["= 2"]],
        );
        let peers_no_edit = groups(
            &[Row(3, None, 1, &["= 1"]), Row(4, None, 2, &["= 1"])],
            &[&["= 2"], &["= 2"], &["= 2"], &["= 2"]],
        );
        let seed = groups(
            &[
                Row(0, None, 1, &["= 2"]),
                Row(3, EDIT, 0, &["= 1"]),
                Row(4, None, 1, &["= 2"]),
            ],
            &[&["= 1"]],
        );
        let heaviest = |b: &Ballot| match b.decide() {
            Decision::BringIn(h) => h,
            other => panic!("no group to bring an edit into: {other:?}"),
        };
        #[rustfmt::skip]
        let cases: Vec<(&str, &Ballot, Option<usize>, usize, Backing)> = vec![
            ("an edit joined: confirmed by the whole group", &fresh, Some(11), 11, confirmed(2, 1)),
            ("none joined: the majority's own program, its vote not counted",
             &fresh, None, 4, majority(1, 1)),
            ("the seed in the majority: kept, backed by the rest", &seed, None, 0, majority(1, 1)),
            ("an edit joined the peers", &peers, Some(12), 12, confirmed(3, 2)),
            ("peers alone and none joined: outvoted, the next group's smallest edit",
             &peers, None, 4, outvoted(1, 4)),
            ("peers alone, none joined, no edit: the next group's first, less its own vote",
             &peers_no_edit, None, 3, outvoted(2, 5)),
        ];
        for (what, ballot, joined, pick, backing) in cases {
            let got = ballot.after_bringing_in(&heaviest(ballot), joined);
            assert_eq!(got, Choice { pick, backing }, "{what}");
        }
        assert!(heaviest(&fresh).wants_an_edit());
        assert!(
            !heaviest(&seed).wants_an_edit(),
            "the seed is the majority's"
        );
    }

    #[test]
    fn confirmations_as_the_report_gives_them() {
        let c = |agreeing, disagreeing, status| {
            Some(Confirmation {
                agreeing,
                disagreeing,
                status,
            })
        };
        use ConfirmationStatus as S;
        assert_eq!(Agreement.confirmation(), None);
        assert_eq!(Unconfirmed.confirmation(), c(0, 0, S::Unconfirmed));
        assert_eq!(confirmed(2, 1).confirmation(), c(2, 1, S::Confirmed));
        assert_eq!(majority(2, 1).confirmation(), c(2, 1, S::Majority));
        assert_eq!(outvoted(2, 1).confirmation(), c(2, 1, S::Outvoted));
    }

    #[test]
    fn ties() {
        let tie_of = |groups, support| Some(Tie { groups, support });
        #[rustfmt::skip]
        let cases: Vec<(&str, Voters, Option<Tie>)> = vec![
            ("two groups of one",
             voters(&[Row(2, None, 1, &["= 1"]), Row(3, None, 1, &["= 2"])], &[]),
             tie_of(2, 1)),
            ("three groups of two, one of them peers",
             voters(&[Row(2, None, 2, &["= 1"]), Row(3, None, 1, &["= 2"]),
                      Row(4, None, 1, &["= 2"]), Row(5, None, 1, &["= 4"])],
                    &[&["= 3"], &["= 3"]]),
             tie_of(3, 2)),
            ("one group ahead",
             voters(&[Row(2, None, 1, &["= 1"]), Row(3, None, 1, &["= 2"]),
                      Row(4, None, 1, &["= 2"])], &[]),
             None),
            ("a program that crashed lends its vote: no tie",
             voters(&[Row(2, None, 1, &["crash IndexError", "= 1"]),
                      Row(3, None, 1, &["= 0", "= 1"])], &[]),
             None),
            ("edits alone: no votes to tie",
             voters(&[Row(2, EDIT, 0, &["= 1"]), Row(3, EDIT, 0, &["= 2"])], &[]),
             None),
            ("one group",
             voters(&[Row(2, None, 1, &["= 1"]), Row(3, None, 1, &["= 1"])], &[]),
             None),
        ];
        for (what, voters, want) in cases {
            assert_eq!(tie(&voters), want, "{what}");
        }
    }

    #[test]
    fn settled_votes() {
        let ahead = || {
            voters(
                &[
                    Row(2, None, 1, &["= 1"]),
                    Row(3, None, 1, &["= 1"]),
                    Row(4, EDIT, 0, &["= 1"]),
                    Row(5, None, 1, &["= 2"]),
                ],
                &[&["= 1"]],
            )
        };
        #[rustfmt::skip]
        let cases: Vec<(&str, Voters, usize, Option<Settled>)> = vec![
            ("three against one, one vote left", ahead(), 1, Some(Settled { lead: 3, others: 1 })),
            ("two votes left could tie it", ahead(), 2, None),
            ("the lead crashed on an input: a later program may take its votes",
             voters(&[Row(2, None, 1, &["crash IndexError", "= 1"]),
                      Row(3, None, 1, &["crash IndexError", "= 1"]),
                      Row(4, None, 1, &["crash IndexError", "= 1"])], &[]),
             0, None),
            ("the lead is peers alone",
             voters(&[Row(2, EDIT, 0, &["= 1"])], &[&["= 2"], &["= 2"]]), 0, None),
            ("no votes", voters(&[Row(2, EDIT, 0, &["= 1"])], &[]), 0, None),
            ("no voters", voters(&[], &[]), 0, None),
        ];
        for (what, voters, left, want) in cases {
            assert_eq!(settled(&voters, left), want, "{what}");
        }
    }
}
