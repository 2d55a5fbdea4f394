//! Selective sampling of a long trace, as in the paper: keep the first and the last units and say
//! how many were left out, then shrink further to fit a token budget.

use serde::{Deserialize, Serialize};

use super::{Level, RawTrace, UnitInstance};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleConfig {
    /// Instances kept from the start of the run.
    pub head: usize,
    /// Instances kept from the end of the run.
    pub tail: usize,
    /// Upper bound on the rendered trace, in estimated tokens.
    pub token_budget: usize,
}

impl SampleConfig {
    /// The paper's choices: blocks 5 + 5, lines 25 + 25, calls (entry/exit) 5 + 5.
    pub fn for_level(level: Level) -> Self {
        let (head, tail) = match level {
            Level::Line => (25, 25),
            Level::Block | Level::Function => (5, 5),
        };
        SampleConfig {
            head,
            tail,
            token_budget: 3_000,
        }
    }
}

/// One entry of a sampled trace: a unit instance, or a marker for instances left out.
#[derive(Debug, Clone, PartialEq)]
pub enum Sampled {
    Unit(UnitInstance),
    Omitted(u64),
}

/// First `head` and last `tail` instances, with explicit markers wherever instances are missing.
pub fn sample(raw: &RawTrace, cfg: &SampleConfig) -> Vec<Sampled> {
    let n = raw.instances.len();
    let keep: Vec<&UnitInstance> = if n <= cfg.head + cfg.tail {
        raw.instances.iter().collect()
    } else {
        raw.instances[..cfg.head]
            .iter()
            .chain(raw.instances[n - cfg.tail..].iter())
            .collect()
    };
    with_markers(keep.into_iter().cloned(), raw.total_instances)
}

/// Insert `Omitted` markers for gaps in the sequence numbers (and for a missing end).
fn with_markers(items: impl Iterator<Item = UnitInstance>, total: u64) -> Vec<Sampled> {
    let mut out = Vec::new();
    let mut next_seq = 0u64;
    for inst in items {
        if inst.seq > next_seq {
            out.push(Sampled::Omitted(inst.seq - next_seq));
        }
        next_seq = inst.seq + 1;
        out.push(Sampled::Unit(inst));
    }
    if total > next_seq {
        out.push(Sampled::Omitted(total - next_seq));
    }
    out
}

/// Drop instances from the middle outwards until `fits` accepts the sample, keeping at least the
/// first and the last instance (where the run starts and where it goes wrong).
pub fn fit(mut items: Vec<Sampled>, total: u64, fits: impl Fn(&[Sampled]) -> bool) -> Vec<Sampled> {
    loop {
        if fits(&items) {
            return items;
        }
        let units: Vec<usize> = items
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s, Sampled::Unit(_)))
            .map(|(i, _)| i)
            .collect();
        if units.len() <= 2 {
            return items;
        }
        // Remove the unit closest to the middle, preferring the earlier half: the end of a
        // failing run is usually where the evidence is.
        let victim = units[(units.len() - 1) / 2];
        items.remove(victim);
        let kept = items.into_iter().filter_map(|s| match s {
            Sampled::Unit(u) => Some(u),
            Sampled::Omitted(_) => None,
        });
        items = with_markers(kept, total);
    }
}
