//! Pulling a Python program out of a model's reply.
//!
//! Models wrap code in Markdown fences with any tag (or none), leave fences open when output is
//! cut short, split a program over several blocks, or answer with bare code between lines of
//! prose. [`extract_program`] picks the program and says how it found it; when it cannot, the
//! [`ExtractError`] text is worded so it can go straight back to the model in a repair request.
//!
//! The code is returned as the reply has it: nothing is added (no import header, which would
//! silently change the baseline) and nothing inside a chosen block is removed. Only line ends
//! are normalised (`\r\n` → `\n`), blank lines around the code dropped and a final newline
//! ensured.

use std::collections::{BTreeSet, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};

use rustpython_parser::ast::{self, Constant, Expr, Stmt};
use rustpython_parser::{lexer, Mode, Tok};

use crate::python::source::{parse_module, SourceFile, SyntaxError};
use crate::python::text::dedent;

/// A program found in a reply.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Extracted {
    /// The program text: `\n` line ends, no surrounding blank lines, one final newline.
    pub code: String,
    pub how: ExtractionKind,
}

/// Where in the reply the program came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtractionKind {
    /// One fenced block; `tag` is the fence's info word as written (`python`, `py`, …), if any.
    Fenced { tag: Option<String> },
    /// Unfenced code, possibly with prose lines before or after it dropped.
    Bare,
    /// Several fenced blocks joined in reply order (e.g. helpers in one, the function in the next).
    Merged,
}

/// Why no program could be taken from a reply. `Display` is addressed to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    #[error(
        "No Python code was found in your reply. Reply with the complete program in a single \
         ```python code block."
    )]
    NoCode,
    #[error(
        "The code in your reply is not valid Python: {error}. Reply with the complete, corrected \
         program in a single ```python code block."
    )]
    DoesNotParse { code: String, error: SyntaxError },
    #[error(
        "The code in your reply does not define `{name}` at the top level. Reply with the complete \
         program, including `def {name}(...)`, in a single ```python code block."
    )]
    MissingEntryPoint { name: String, code: String },
}

/// Take the Python program out of `reply`.
///
/// Fenced blocks come first. With `entry_point`, a block that defines that name at top level
/// wins over longer blocks, and takes along earlier or later blocks that only define things it
/// uses (imports, helpers); if no single block defines it, all blocks joined may. Without
/// `entry_point` the longest parsing block wins (blocks with a `def` or `class` first). With no
/// usable fence, the largest run of lines that parses is taken, prose around it dropped.
pub fn extract_program(reply: &str, entry_point: Option<&str>) -> Result<Extracted, ExtractError> {
    let text = normalize_newlines(reply);
    let fences = fenced_blocks(&text);
    let blocks: Vec<Block> = fences
        .iter()
        .enumerate()
        .filter_map(|(index, fence)| Block::new(index, fence))
        .collect();
    if let Some(found) = choose_fenced(&text, &blocks, entry_point) {
        return found;
    }
    // Fenced code that does not parse is the model's answer with a mistake in it; searching the
    // surrounding prose for something else that parses would only hide that mistake.
    if let Some(err) = broken_fenced(&blocks, entry_point) {
        return Err(err);
    }
    extract_bare(&text, entry_point)
}

/// Whether `code` defines `name` at top level: `def`, `async def`, `class`, or an assignment
/// (`name = ...`, `name: T = ...`, or `name` as one target of an unpacking).
pub fn defines(code: &str, name: &str) -> bool {
    match parse(&normalize_newlines(code)) {
        Ok(suite) => defined_names(&suite).iter().any(|n| n == name),
        Err(_) => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Fences

/// A fenced block as written: its info word and body (indentation of the fence removed).
struct Fence {
    tag: Option<String>,
    body: String,
}

struct FenceOpen {
    marker: char,
    len: usize,
    indent: usize,
    tag: Option<String>,
}

/// All fenced blocks in `text`, in order. A fence still open at the end takes the rest of the
/// text, since truncated output is the usual reason for a missing closing fence.
fn fenced_blocks(text: &str) -> Vec<Fence> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(open) = lines.get(i).and_then(|l| fence_open(l)) else {
            i += 1;
            continue;
        };
        let mut body: Vec<&str> = Vec::new();
        let mut j = i + 1;
        while let Some(line) = lines.get(j) {
            if closes(line, &open) {
                break;
            }
            body.push(strip_indent(line, open.indent));
            j += 1;
        }
        out.push(Fence {
            tag: open.tag,
            body: body.join("\n"),
        });
        i = j + 1;
    }
    out
}

fn fence_open(line: &str) -> Option<FenceOpen> {
    let rest = line.trim_start_matches([' ', '\t']);
    let indent = line.len() - rest.len();
    let marker = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.chars().take_while(|c| *c == marker).count();
    if len < 3 {
        return None;
    }
    // The marker is ASCII, so `len` characters are `len` bytes.
    let info = rest.get(len..).unwrap_or("").trim();
    // A backtick "fence" with more backticks on the line is inline code, not a block.
    if marker == '`' && info.contains('`') {
        return None;
    }
    let tag = info
        .split_whitespace()
        .next()
        .map(|w| w.trim_matches(|c| c == '{' || c == '}' || c == '.'))
        .filter(|w| !w.is_empty())
        .map(str::to_string);
    Some(FenceOpen {
        marker,
        len,
        indent,
        tag,
    })
}

fn closes(line: &str, open: &FenceOpen) -> bool {
    let t = line.trim();
    t.len() >= open.len && t.chars().all(|c| c == open.marker)
}

/// Remove up to `n` bytes of leading spaces/tabs (the fence's own indentation).
fn strip_indent(line: &str, n: usize) -> &str {
    let ws = line.len() - line.trim_start_matches([' ', '\t']).len();
    line.get(ws.min(n)..).unwrap_or(line)
}

// ---------------------------------------------------------------------------------------------
// Candidate blocks

/// A non-empty fenced block and what parsing it told us.
struct Block {
    index: usize,
    tag: Option<String>,
    /// The body as written (tidied); a piece of a larger program may only parse in place.
    written: String,
    /// The body to use on its own: `written`, or dedented when only that parses.
    code: String,
    parsed: Result<Facts, SyntaxError>,
}

/// What a parsing block defines and uses at top level.
struct Facts {
    /// Names bound by def/class/assignment (what [`defines`] checks).
    defined: Vec<String>,
    /// `defined` plus imported names: what this block can supply to another.
    provided: HashSet<String>,
    /// Any top-level `def` or `class`: tells a program from a stray expression or data.
    has_def: bool,
    /// Only imports, defs, classes, docstrings and literal assignments: safe to prepend, as it
    /// runs nothing at import time.
    definitions_only: bool,
    /// Identifiers the block mentions anywhere (over-approximates the names it needs).
    used: HashSet<String>,
}

impl Block {
    fn new(index: usize, fence: &Fence) -> Option<Self> {
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

    fn from_suite(
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

    fn facts(&self) -> Option<&Facts> {
        self.parsed.as_ref().ok()
    }

    fn defines(&self, name: &str) -> bool {
        self.facts()
            .is_some_and(|f| f.defined.iter().any(|n| n == name))
    }
}

impl Facts {
    fn of(code: &str, suite: &ast::Suite) -> Self {
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
fn choose_fenced(
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
fn best_block<'a>(blocks: &[&'a Block]) -> Option<&'a Block> {
    blocks
        .iter()
        .copied()
        .max_by_key(|b| (b.facts().is_some_and(|f| f.has_def), b.code.len(), b.index))
}

fn fenced(block: &Block) -> Extracted {
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
fn with_helpers(best: &Block, blocks: &[Block], entry: &str) -> Extracted {
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

fn join<'a>(blocks: impl Iterator<Item = &'a Block>) -> String {
    let parts: Vec<&str> = blocks.map(|b| b.code.as_str()).collect();
    tidy(&parts.join("\n"))
}

/// The error to report when fenced blocks hold code but none of it parses.
fn broken_fenced(blocks: &[Block], entry_point: Option<&str>) -> Option<ExtractError> {
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

// ---------------------------------------------------------------------------------------------
// Bare code

/// Parse attempts on whole regions are bounded in total bytes, so a huge reply of near-code
/// cannot make the region search quadratic.
const REGION_BYTE_BUDGET: usize = 4 << 20;
/// Cuts from the end per start line. An error on the last line (an unclosed bracket, say)
/// moves the end back one line at a time, which rarely helps after a few tries.
const MAX_CUTS: usize = 8;

/// Code without fences: the largest run of lines that parses (preferring one that defines the
/// entry point), found by dropping prose lines before and after it.
fn extract_bare(text: &str, entry_point: Option<&str>) -> Result<Extracted, ExtractError> {
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
struct Region {
    /// True also when no entry point was asked for.
    defines_entry: bool,
    has_def: bool,
    lines: usize,
    code: String,
}

impl Region {
    fn rank(&self) -> (bool, bool, usize) {
        (self.defines_entry, self.has_def, self.lines)
    }
}

/// Could a top-level statement begin on this line? Cheap per-line checks that reject prose
/// ("Here is the fixed code:") without parsing the rest of the reply from every line.
fn plausible_start(line: &str) -> bool {
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

// ---------------------------------------------------------------------------------------------
// Python facts

/// Parse with the project parser; a panic anywhere in lexing or parsing counts as an error.
fn parse(code: &str) -> Result<ast::Suite, SyntaxError> {
    let src = SourceFile::new(code);
    match catch_unwind(AssertUnwindSafe(|| parse_module(&src))) {
        Ok(result) => result,
        Err(_) => Err(SyntaxError {
            line: 1,
            column: 1,
            message: "internal parser error".to_string(),
        }),
    }
}

fn is_def(stmt: &Stmt) -> bool {
    matches!(
        stmt,
        Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)
    )
}

/// Names bound at top level by def, class or assignment.
fn defined_names(suite: &ast::Suite) -> Vec<String> {
    let mut out = Vec::new();
    for stmt in suite {
        match stmt {
            Stmt::FunctionDef(d) => out.push(d.name.to_string()),
            Stmt::AsyncFunctionDef(d) => out.push(d.name.to_string()),
            Stmt::ClassDef(d) => out.push(d.name.to_string()),
            Stmt::Assign(a) => a.targets.iter().for_each(|t| target_names(t, &mut out)),
            Stmt::AnnAssign(a) if a.value.is_some() => target_names(&a.target, &mut out),
            _ => {}
        }
    }
    out
}

fn target_names(target: &Expr, out: &mut Vec<String>) {
    match target {
        Expr::Name(n) => out.push(n.id.to_string()),
        Expr::Tuple(t) => t.elts.iter().for_each(|e| target_names(e, out)),
        Expr::List(l) => l.elts.iter().for_each(|e| target_names(e, out)),
        Expr::Starred(s) => target_names(&s.value, out),
        _ => {}
    }
}

/// Names bound at top level by imports (`import a.b` binds `a`).
fn imported_names(suite: &ast::Suite) -> Vec<String> {
    let mut out = Vec::new();
    for stmt in suite {
        let aliases = match stmt {
            Stmt::Import(i) => &i.names,
            Stmt::ImportFrom(i) => &i.names,
            _ => continue,
        };
        for alias in aliases {
            let bound = match &alias.asname {
                Some(as_name) => as_name.to_string(),
                None => alias.name.split('.').next().unwrap_or_default().to_string(),
            };
            if bound != "*" {
                out.push(bound);
            }
        }
    }
    out
}

fn is_definition(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::FunctionDef(_)
        | Stmt::AsyncFunctionDef(_)
        | Stmt::ClassDef(_)
        | Stmt::Import(_)
        | Stmt::ImportFrom(_) => true,
        Stmt::Assign(a) => is_literal(&a.value),
        Stmt::AnnAssign(a) => a.value.as_deref().is_none_or(is_literal),
        Stmt::Expr(e) => {
            matches!(&*e.value, Expr::Constant(c) if matches!(c.value, Constant::Str(_)))
        }
        _ => false,
    }
}

/// Constants and containers/arithmetic of constants: evaluating them cannot fail or call code.
fn is_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Constant(_) => true,
        Expr::UnaryOp(u) => is_literal(&u.operand),
        Expr::BinOp(b) => is_literal(&b.left) && is_literal(&b.right),
        Expr::Tuple(t) => t.elts.iter().all(is_literal),
        Expr::List(l) => l.elts.iter().all(is_literal),
        Expr::Set(s) => s.elts.iter().all(is_literal),
        Expr::Dict(d) => d.keys.iter().flatten().all(is_literal) && d.values.iter().all(is_literal),
        _ => false,
    }
}

/// Every identifier token in `code`.
fn identifiers(code: &str) -> HashSet<String> {
    let lexed = catch_unwind(AssertUnwindSafe(|| {
        lexer::lex(code, Mode::Module)
            .map_while(Result::ok)
            .filter_map(|(tok, _)| match tok {
                Tok::Name { name } => Some(name),
                _ => None,
            })
            .collect::<HashSet<String>>()
    }));
    lexed.unwrap_or_default()
}

/// `name` appears in `code` as a whole identifier.
fn mentions(code: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let is_ident = |c: char| c == '_' || c.is_alphanumeric();
    code.match_indices(name).any(|(at, _)| {
        let before = code.get(..at).and_then(|s| s.chars().next_back());
        let after = code.get(at + name.len()..).and_then(|s| s.chars().next());
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

fn is_python_tag(tag: Option<&str>) -> bool {
    tag.is_some_and(|t| {
        let t = t.to_ascii_lowercase();
        t.starts_with("py") || t == "ipython" || t == "sage"
    })
}

/// Rough test for text meant as Python, used only to choose between "does not parse" and
/// "no code": a line that starts like a definition, import or block statement.
fn looks_like_code(text: &str) -> bool {
    const STARTS: [&str; 6] = ["def ", "async def ", "class ", "import ", "from ", "return"];
    const BLOCKS: [&str; 6] = ["if ", "for ", "while ", "elif ", "with ", "try"];
    text.lines().any(|line| {
        let t = line.trim();
        STARTS.iter().any(|s| t.starts_with(s))
            || (t.ends_with(':') && BLOCKS.iter().any(|s| t.starts_with(s)))
    })
}

// ---------------------------------------------------------------------------------------------
// Text normalisation

fn normalize_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Drop blank lines at both ends and trailing whitespace; end with exactly one newline.
fn tidy(code: &str) -> String {
    let trimmed = code.trim_end();
    // Start at the first line that has something on it, keeping that line's indentation.
    let start = trimmed
        .char_indices()
        .find(|(_, c)| !c.is_whitespace())
        .map_or(trimmed.len(), |(i, _)| {
            trimmed
                .get(..i)
                .and_then(|s| s.rfind('\n'))
                .map_or(0, |nl| nl + 1)
        });
    let body = trimmed.get(start..).unwrap_or("");
    if body.is_empty() {
        String::new()
    } else {
        format!("{body}\n")
    }
}
