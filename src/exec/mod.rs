//! `ldb exec`: make an incomplete snippet run (Treefix's method), so it can be traced and
//! debugged.
//!
//! A snippet (a Stack Overflow answer, a function body pulled out of a project) uses names it never
//! defines. A *prefix* — imports and initialisations, with stand-in objects where a real value is
//! impractical — makes it run. The prefix search ([`prefix_search`]) asks a model for prefixes in
//! three steps: from the undefined names ([`crate::python::names::undefined`]), refined from the
//! error a prefix ran into, and aimed at the statements no prefix has covered yet. Every prefix
//! runs with the snippet in the sandbox, never in this process; coverage is measured by the tracer
//! per statement of the snippet, in the snippet's own line numbers ([`coverage`]). The prefixes
//! form a tree ([`tree`]); the result ([`report`]) is the single best prefix and the smallest set
//! of prefixes that together reach the best coverage. [`crate::eval::exec`] scores it on Treefix's
//! data.
//!
//! [`make_runnable`] is the entry point for other commands (`ldb fix --make-runnable`): it
//! returns the report, whose best prefix then runs before the snippet as the runner's prelude.

pub mod coverage;

pub mod prefix;
pub mod prefix_search;
pub mod report;
pub mod standins;
pub mod tree;

use crate::generate::model::{ChatModel, ModelError};
use crate::generate::prompts::{PromptError, Prompts};
use crate::python::source::SourceFile;
use crate::run::sandbox::SandboxError;
use crate::run::Runner;

pub use crate::python::names::undefined::{undefined_names, Undefined};
pub use coverage::{Ending, Execution, LineStatus, Statements};
pub use prefix::Prefix;
pub use prefix_search::Stop;
pub use report::ExecReport;

/// Snippets larger than this are refused: a snippet is a piece of code, not a project.
pub const MAX_SNIPPET_BYTES: usize = 256 * 1024;

/// Seeded stand-in runs at most, by default ([`ExecOptions::explore`]).
pub const EXPLORE: usize = 64;

/// Settings of the search.
#[derive(Debug, Clone)]
pub struct ExecOptions {
    /// Prefixes asked for per prompt.
    pub n: usize,
    /// Coverage-guidance rounds at most.
    pub k: usize,
    /// Modules the snippet or the prefix imports that are not installed get stand-ins instead
    /// of failing the run (never a standard-library name).
    pub allow_missing: bool,
    /// Temperature of every sample but the first of a prompt (the first is greedy).
    pub temperature: f32,
    /// Base of the sampling seeds: the same base draws the same samples.
    pub rng_seed: u64,
    /// Reply tokens at most per prefix.
    pub max_reply_tokens: u32,
    /// Stop asking the model once its calls cost this many tokens.
    pub budget_tokens: Option<u64>,
    /// Try the model-free stand-in prefixes ([`standins`]) before asking the model.
    pub standins: bool,
    /// Run all 96 stand-in variants, not the seven [`standins::VARIANTS`].
    pub all_variants: bool,
    /// Seeded stand-in runs at most after the variants ([`standins::seeded`]); they stop early
    /// once every statement is covered. 0 runs none.
    pub explore: usize,
    /// Ask the model at all; without it only the snippet as it is and the stand-ins run.
    pub use_model: bool,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            n: 3,
            k: 3,
            allow_missing: false,
            temperature: 0.8,
            rng_seed: 0,
            max_reply_tokens: 768,
            budget_tokens: None,
            standins: true,
            all_variants: false,
            explore: EXPLORE,
            use_model: true,
        }
    }
}

/// The model of a search run with `use_model` off: it is never asked, and says so if it is.
pub struct NoModel;

#[async_trait::async_trait]
impl ChatModel for NoModel {
    async fn chat(
        &self,
        _request: &crate::generate::model::ChatRequest,
    ) -> Result<crate::generate::model::ChatResponse, ModelError> {
        Err(ModelError::Local(
            "the prefix search runs without a model here (--no-model)".into(),
        ))
    }

    fn name(&self) -> String {
        "none".into()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("{name} is empty: there is no code to run")]
    Empty { name: String },
    #[error("{name} is not text (it holds NUL bytes or is not UTF-8)")]
    Binary { name: String },
    #[error("{name} is {bytes} bytes; ldb exec takes snippets up to {limit} bytes")]
    TooLarge {
        name: String,
        bytes: usize,
        limit: usize,
    },
    #[error("{name} is not Python 3: line {line}, column {column}: {message}")]
    NotPython {
        name: String,
        line: u32,
        column: u32,
        message: String,
    },
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error("internal error: {0}")]
    Internal(String),
}

impl ExecError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            ExecError::Empty { .. } => "pass a file that holds Python statements".into(),
            ExecError::Binary { .. } => "pass a Python source file saved as UTF-8 text".into(),
            ExecError::TooLarge { .. } => "cut the snippet down to the code you want to run".into(),
            ExecError::NotPython { .. } => "ldb exec runs Python 3 code; a Python 2 `print x` \
                 becomes `print(x)`, and prose or shell commands are not code"
                .into(),
            ExecError::Model(e) => return e.hint().map(str::to_string),
            _ => return None,
        })
    }

    /// Whether the input is at fault (as opposed to the model backend or the sandbox).
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            ExecError::Empty { .. }
                | ExecError::Binary { .. }
                | ExecError::TooLarge { .. }
                | ExecError::NotPython { .. }
        )
    }
}

/// A snippet ready to run: its text, statements and undefined names.
#[derive(Debug, Clone)]
pub struct Snippet {
    /// Where it came from, for messages (a file name, `-`, a record id).
    pub name: String,
    pub text: String,
    pub statements: Statements,
    pub undefined: Undefined,
}

impl Snippet {
    /// Check and analyse `bytes`: text, not empty, not enormous, Python 3.
    pub fn from_bytes(name: impl Into<String>, bytes: &[u8]) -> Result<Self, ExecError> {
        let name = name.into();
        if bytes.len() > MAX_SNIPPET_BYTES {
            return Err(ExecError::TooLarge {
                name,
                bytes: bytes.len(),
                limit: MAX_SNIPPET_BYTES,
            });
        }
        let text = match std::str::from_utf8(bytes) {
            Ok(t) if !t.contains('\0') => t.to_string(),
            _ => return Err(ExecError::Binary { name }),
        };
        Self::new(name, text)
    }

    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Result<Self, ExecError> {
        let name = name.into();
        let text: String = text.into();
        if text.len() > MAX_SNIPPET_BYTES {
            return Err(ExecError::TooLarge {
                name,
                bytes: text.len(),
                limit: MAX_SNIPPET_BYTES,
            });
        }
        if text.contains('\0') {
            return Err(ExecError::Binary { name });
        }
        let src = SourceFile::new(text.clone());
        let not_python = |e: crate::python::SyntaxError| ExecError::NotPython {
            name: name.clone(),
            line: e.line,
            column: e.column,
            message: e.message,
        };
        let undefined = undefined_names(&src).map_err(not_python)?;
        let statements = Statements::build(&src).map_err(not_python)?;
        if statements.is_empty() {
            return Err(ExecError::Empty { name });
        }
        Ok(Snippet {
            name,
            text,
            statements,
            undefined,
        })
    }

    /// The text of every statement (headers alone for compound ones), whitespace collapsed.
    pub fn statement_texts(&self) -> std::collections::HashSet<String> {
        let lines: Vec<&str> = self.text.lines().collect();
        self.statements
            .list
            .iter()
            .filter_map(|s| {
                let first = (s.first as usize).checked_sub(1)?;
                let text = lines
                    .get(first..(s.last as usize).min(lines.len()))?
                    .join("\n");
                Some(prefix::collapse(&text))
            })
            .collect()
    }
}

/// Find prefixes that make `snippet` run: the search of [`prefix_search`], summarised. The prefixes
/// run in `runner`'s sandbox; `progress` gets one line per step.
pub async fn make_runnable(
    snippet: &Snippet,
    model: &dyn ChatModel,
    runner: &Runner,
    prompts: &Prompts,
    options: &ExecOptions,
    progress: prefix_search::Progress<'_>,
) -> Result<ExecReport, ExecError> {
    let started = std::time::Instant::now();
    let searched = prefix_search::run(snippet, model, runner, prompts, options, progress).await?;
    Ok(ExecReport::build(snippet, searched, started.elapsed()))
}
