//! Code without fences: the region of a reply between lines of prose that parses as Python.

use rustpython_parser::ast::{Expr, Stmt};

use super::{
    defined_names, is_def, looks_like_code, mentions, parse, tidy, ExtractError, Extracted,
    ExtractionKind,
};
use crate::python::source::SyntaxError;

/// Parse attempts on whole regions are bounded in total bytes, so a huge reply of near-code
/// cannot make the region search quadratic.
pub(super) const REGION_BYTE_BUDGET: usize = 4 << 20;
/// Cuts from the end per start line. An error on the last line (an unclosed bracket, say)
/// moves the end back one line at a time, which rarely helps after a few tries.
pub(super) const MAX_CUTS: usize = 8;

/// Code without fences: the largest run of lines that parses (preferring one that defines the
/// entry point), found by dropping prose lines before and after it.
pub(super) fn extract_bare(
    text: &str,
    entry_point: Option<&str>,
) -> Result<Extracted, ExtractError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut budget = REGION_BYTE_BUDGET;
    let mut best: Option<Region> = None;
    let mut first_error: Option<(String, SyntaxError)> = None;
    'starts: for (start, line) in lines.iter().enumerate() {
        if let Some(b) = best.as_ref().filter(|b| b.defines_entry) {
            // Later starts only give shorter regions.
            if lines.len() - start <= b.lines {
                break;
            }
        }
        if !plausible_start(line) {
            continue;
        }
        let mut end = lines.len();
        for _ in 0..=MAX_CUTS {
            if end <= start {
                break;
            }
            let code = tidy(&lines.get(start..end).unwrap_or_default().join("\n"));
            let Some(left) = budget.checked_sub(code.len()) else {
                break 'starts;
            };
            budget = left;
            match parse(&code) {
                Ok(suite) => {
                    if !suite.is_empty() {
                        let region = Region {
                            defines_entry: entry_point
                                .is_none_or(|e| defined_names(&suite).iter().any(|n| n == e)),
                            has_def: suite.iter().any(is_def),
                            lines: end - start,
                            code,
                        };
                        if best.as_ref().is_none_or(|b| region.rank() > b.rank()) {
                            best = Some(region);
                        }
                    }
                    break;
                }
                Err(err) => {
                    let err_line = usize::try_from(err.line).unwrap_or(usize::MAX);
                    if first_error.is_none() && looks_like_code(&code) {
                        first_error = Some((code, err));
                    }
                    // The error's line and everything after it go; lines before it may parse.
                    let cut = start.saturating_add(err_line.saturating_sub(1));
                    if cut <= start {
                        break;
                    }
                    end = cut.min(end - 1);
                    while end > start && lines.get(end - 1).is_some_and(|l| l.trim().is_empty()) {
                        end -= 1;
                    }
                }
            }
        }
    }
    let broken = || {
        first_error.clone().or_else(|| {
            // Code-like lines that never start a region (all indented, say): report the text
            // from the first of them on.
            let from = text.lines().position(looks_like_code)?;
            let code = tidy(&text.lines().skip(from).collect::<Vec<_>>().join("\n"));
            parse(&code).err().map(|e| (code, e))
        })
    };
    match best {
        Some(region) if region.defines_entry => Ok(Extracted {
            code: region.code,
            how: ExtractionKind::Bare,
        }),
        Some(region) => {
            let name = entry_point.unwrap_or_default().to_string();
            // A broken attempt at the entry point says more than code that lacks it.
            match broken() {
                Some((code, error)) if mentions(&code, &name) => {
                    Err(ExtractError::DoesNotParse { code, error })
                }
                _ => Err(ExtractError::MissingEntryPoint {
                    name,
                    code: region.code,
                }),
            }
        }
        None => match broken() {
            Some((code, error)) => Err(ExtractError::DoesNotParse { code, error }),
            None => Err(ExtractError::NoCode),
        },
    }
}

/// A run of reply lines that parses.
pub(super) struct Region {
    /// True also when no entry point was asked for.
    pub(super) defines_entry: bool,
    pub(super) has_def: bool,
    pub(super) lines: usize,
    pub(super) code: String,
}

impl Region {
    pub(super) fn rank(&self) -> (bool, bool, usize) {
        (self.defines_entry, self.has_def, self.lines)
    }
}

/// Could a top-level statement begin on this line? Cheap per-line checks that reject prose
/// ("Here is the fixed code:") without parsing the rest of the reply from every line.
pub(super) fn plausible_start(line: &str) -> bool {
    if line.trim().is_empty() || line.starts_with([' ', '\t']) {
        return false;
    }
    let t = line.trim_end();
    if t.starts_with('@') || t.starts_with('#') || t.ends_with('\\') {
        return true;
    }
    // Definitions and block headers count even when broken, so their error gets reported.
    if t.starts_with("\"\"\"") || t.starts_with("'''") || looks_like_code(t) {
        return true;
    }
    match parse(t) {
        // A lone word ("Solution") parses as an expression but is prose, and would fail with
        // NameError when the program runs.
        Ok(suite) => {
            !matches!(suite.as_slice(), [Stmt::Expr(e)] if matches!(*e.value, Expr::Name(_)))
        }
        Err(_) => {
            if t.ends_with(':') {
                return parse(&format!("{t}\n    pass")).is_ok();
            }
            let opens = t.chars().filter(|c| matches!(c, '(' | '[' | '{')).count();
            let closes = t.chars().filter(|c| matches!(c, ')' | ']' | '}')).count();
            opens > closes
        }
    }
}
