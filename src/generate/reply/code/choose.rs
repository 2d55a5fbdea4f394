//! Choosing among fenced blocks: the one that defines the entry point (with the helpers it calls
//! from other blocks), else the best-looking Python block; and saying why a fenced reply holds no
//! usable program.

use std::collections::{BTreeSet, HashSet};

use rustpython_parser::ast::{self};

use super::bare::extract_bare;
use super::fences::Fence;
use super::{
    defined_names, defines, identifiers, imported_names, is_def, is_definition, is_python_tag,
    looks_like_code, mentions, parse, tidy, ExtractError, Extracted, ExtractionKind,
};
use crate::python::source::SyntaxError;
use crate::python::text::dedent;

/// A non-empty fenced block and what parsing it told us.
pub(super) struct Block {
    pub(super) index: usize,
    pub(super) tag: Option<String>,
    /// The body as written (tidied); a piece of a larger program may only parse in place.
    pub(super) written: String,
    /// The body to use on its own: `written`, or dedented when only that parses.
    pub(super) code: String,
    pub(super) parsed: Result<Facts, SyntaxError>,
}

/// What a parsing block defines and uses at top level.
pub(super) struct Facts {
    /// Names bound by def/class/assignment (what [`defines`] checks).
    pub(super) defined: Vec<String>,
    /// `defined` plus imported names: what this block can supply to another.
    pub(super) provided: HashSet<String>,
    /// Any top-level `def` or `class`: tells a program from a stray expression or data.
    pub(super) has_def: bool,
    /// Only imports, defs, classes, docstrings and literal assignments: safe to prepend, as it
    /// runs nothing at import time.
    pub(super) definitions_only: bool,
    /// Identifiers the block mentions anywhere (over-approximates the names it needs).
    pub(super) used: HashSet<String>,
}

impl Block {
    pub(super) fn new(index: usize, fence: &Fence) -> Option<Self> {
        let code = tidy(&fence.body);
        if code.trim().is_empty() {
            return None;
        }
        let parsed = match parse(&code) {
            Ok(suite) => Ok(suite),
            Err(err) => {
                // Code indented as a whole (e.g. pasted under a list item) is still the program.
                let dedented = dedent(&code);
                match (dedented != code).then(|| parse(&dedented)) {
                    Some(Ok(suite)) => {
                        return Self::from_suite(index, fence, code, dedented, &suite);
                    }
                    _ => Err(err),
                }
            }
        };
        match parsed {
            Ok(suite) => Self::from_suite(index, fence, code.clone(), code, &suite),
            Err(err) => Some(Self {
                index,
                tag: fence.tag.clone(),
                written: code.clone(),
                code,
                parsed: Err(err),
            }),
        }
    }

    pub(super) fn from_suite(
        index: usize,
        fence: &Fence,
        written: String,
        code: String,
        suite: &ast::Suite,
    ) -> Option<Self> {
        // A block of comments only holds no program.
        if suite.is_empty() {
            return None;
        }
        let facts = Facts::of(&code, suite);
        Some(Self {
            index,
            tag: fence.tag.clone(),
            written,
            code,
            parsed: Ok(facts),
        })
    }

    pub(super) fn facts(&self) -> Option<&Facts> {
        self.parsed.as_ref().ok()
    }

    pub(super) fn defines(&self, name: &str) -> bool {
        self.facts()
            .is_some_and(|f| f.defined.iter().any(|n| n == name))
    }
}

impl Facts {
    pub(super) fn of(code: &str, suite: &ast::Suite) -> Self {
        let defined = defined_names(suite);
        let mut provided: HashSet<String> = defined.iter().cloned().collect();
        provided.extend(imported_names(suite));
        Self {
            defined,
            provided,
            has_def: suite.iter().any(is_def),
            definitions_only: suite.iter().all(is_definition),
            used: identifiers(code),
        }
    }
}

/// Pick among fenced blocks; `None` when no fenced block parses, so other routes are tried.
pub(super) fn choose_fenced(
    text: &str,
    blocks: &[Block],
    entry_point: Option<&str>,
) -> Option<Result<Extracted, ExtractError>> {
    let parsing: Vec<&Block> = blocks.iter().filter(|b| b.facts().is_some()).collect();
    let Some(entry) = entry_point else {
        let best = best_block(&parsing)?;
        return Some(Ok(fenced(best)));
    };
    let defining: Vec<&Block> = parsing
        .iter()
        .copied()
        .filter(|b| b.defines(entry))
        .collect();
    if let Some(best) = best_block(&defining) {
        return Some(Ok(with_helpers(best, blocks, entry)));
    }
    // No single block defines the entry point: maybe the blocks are pieces of one program.
    if blocks.len() > 1 {
        let written: Vec<&str> = blocks.iter().map(|b| b.written.as_str()).collect();
        let joined = tidy(&written.concat());
        if defines(&joined, entry) {
            return Some(Ok(Extracted {
                code: joined,
                how: ExtractionKind::Merged,
            }));
        }
    }
    // A broken block that mentions the entry point is the attempt at it: report its error.
    if blocks
        .iter()
        .any(|b| b.facts().is_none() && mentions(&b.code, entry))
    {
        return None;
    }
    let best = best_block(&parsing)?;
    // The fences may hold only tests or output, with the program itself unfenced.
    let bare = extract_bare(text, Some(entry));
    if bare.is_ok() {
        return Some(bare);
    }
    Some(Err(ExtractError::MissingEntryPoint {
        name: entry.to_string(),
        code: best.code.clone(),
    }))
}

/// Programs before data, then longer before shorter; on a tie the later block, since models
/// usually quote the old code before giving the new.
pub(super) fn best_block<'a>(blocks: &[&'a Block]) -> Option<&'a Block> {
    blocks
        .iter()
        .copied()
        .max_by_key(|b| (b.facts().is_some_and(|f| f.has_def), b.code.len(), b.index))
}

pub(super) fn fenced(block: &Block) -> Extracted {
    Extracted {
        code: block.code.clone(),
        how: ExtractionKind::Fenced {
            tag: block.tag.clone(),
        },
    }
}

/// `best` plus any blocks that supply names it uses but does not define (imports, helpers),
/// joined in reply order. A supplier must only define things, so joining runs no example code;
/// one that also defines the entry point is allowed only before `best`, which then overrides it.
pub(super) fn with_helpers(best: &Block, blocks: &[Block], entry: &str) -> Extracted {
    let mut chosen = BTreeSet::from([best.index]);
    loop {
        let mut needed: HashSet<&str> = HashSet::new();
        let mut provided: HashSet<&str> = HashSet::new();
        for b in blocks.iter().filter(|b| chosen.contains(&b.index)) {
            if let Some(f) = b.facts() {
                needed.extend(f.used.iter().map(String::as_str));
                provided.extend(f.provided.iter().map(String::as_str));
            }
        }
        needed.retain(|n| !provided.contains(n));
        let before = chosen.len();
        for b in blocks {
            let Some(f) = b.facts() else { continue };
            let usable = f.definitions_only && (!b.defines(entry) || b.index < best.index);
            if !chosen.contains(&b.index)
                && usable
                && f.provided.iter().any(|n| needed.contains(n.as_str()))
            {
                chosen.insert(b.index);
            }
        }
        if chosen.len() == before {
            break;
        }
    }
    if chosen.len() == 1 {
        return fenced(best);
    }
    let joined = join(blocks.iter().filter(|b| chosen.contains(&b.index)));
    if defines(&joined, entry) {
        Extracted {
            code: joined,
            how: ExtractionKind::Merged,
        }
    } else {
        fenced(best)
    }
}

pub(super) fn join<'a>(blocks: impl Iterator<Item = &'a Block>) -> String {
    let parts: Vec<&str> = blocks.map(|b| b.code.as_str()).collect();
    tidy(&parts.join("\n"))
}

/// The error to report when fenced blocks hold code but none of it parses.
pub(super) fn broken_fenced(blocks: &[Block], entry_point: Option<&str>) -> Option<ExtractError> {
    let broken: Vec<&Block> = blocks
        .iter()
        .filter(|b| {
            b.facts().is_none() && (is_python_tag(b.tag.as_deref()) || looks_like_code(&b.code))
        })
        .collect();
    let mentioning: Vec<&Block> = match entry_point {
        Some(entry) => broken
            .iter()
            .copied()
            .filter(|b| mentions(&b.code, entry))
            .collect(),
        None => Vec::new(),
    };
    let pool = if mentioning.is_empty() {
        &broken
    } else {
        &mentioning
    };
    let worst = pool.iter().max_by_key(|b| (b.code.len(), b.index))?;
    let error = worst.parsed.as_ref().err()?.clone();
    Some(ExtractError::DoesNotParse {
        code: worst.code.clone(),
        error,
    })
}
