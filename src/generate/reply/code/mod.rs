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
//!
//! Parts: `fences` (finding fenced blocks), `choose` (which block, with which helpers), `bare`
//! (code without fences).

mod bare;
mod choose;
mod fences;

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};

use rustpython_parser::ast::{self, Constant, Expr, Stmt};
use rustpython_parser::{lexer, Mode, Tok};

use crate::python::source::{parse_module, SourceFile, SyntaxError};
use crate::python::walk::target_names;

use bare::extract_bare;
use choose::{broken_fenced, choose_fenced, Block};
use fences::fenced_blocks;

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
    // A method (`Cls.method`): the method written alone, else its class.
    if let Some(path) = entry_point.filter(|e| e.contains('.')) {
        let leaf = path.rsplit('.').next().unwrap_or(path);
        let class = path.split('.').next().unwrap_or(path);
        return extract_program(reply, Some(leaf))
            .or_else(|first| extract_program(reply, Some(class)).map_err(|_| first));
    }
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
