//! `ldb check`: find the runtime error in a program, by running it or by predicting its run.
//!
//! Three modes over one report ([`CheckReport`]): **exec** runs the program in the sandbox under
//! the tracer and reports what happened ([`exec`]); **predict** asks a model to walk the CFG
//! block by block with a symbol table, as ORCA does, and reports what it predicts ([`predict`]);
//! **hybrid** executes what can be executed and predicts only the rest: a run that needs input
//! it was not given, a name no import resolves, a module that is not installed, or a timeout
//! ([`hybrid`]). Snippets (`--incomplete`) get the standard-library imports they leave out from
//! name analysis ([`crate::python::names::free`], [`crate::python::stdlib`]); line numbers always refer to the code as given.
//!
//! Evaluation against ORCA's data and the runtime-error data: [`orca`], [`runtime_errors`], [`metrics`],
//! [`crate::eval::check`].

pub mod cfg_text;
pub mod classes;
pub mod exec;
pub mod hybrid;
pub mod metrics;
pub mod orca;
pub mod predict;
pub mod program;
pub mod runtime_errors;

use serde::{Deserialize, Serialize};

pub use classes::RuntimeErrorKind;
pub use program::{InputError, Program};

use crate::generate::model::{ChatModel, ModelError, Usage};
use crate::generate::prompts::{PromptError, Prompts};
use crate::run::sandbox::SandboxError;
use crate::run::Runner;

/// How `ldb check` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Run it in the sandbox under the tracer.
    Exec,
    /// Ask the model to walk the CFG (no execution).
    Predict,
    /// Run what can run; predict only what cannot.
    #[default]
    Hybrid,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Exec => "exec",
            Mode::Predict => "predict",
            Mode::Hybrid => "hybrid",
        }
    }
}

/// Whether a fact was seen in a real run or guessed by the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Executed,
    Predicted,
}

/// One variable and its value (Python `repr`, possibly shortened).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VarState {
    pub name: String,
    pub value: String,
}

/// One visit of one CFG block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockStep {
    /// `B3` for a module block, `f:B2` for a block of function `f` (numbers as `ldb cfg`).
    pub block: String,
    pub scope: usize,
    pub number: usize,
    /// First lines of the statements run in this visit, in order.
    pub lines: Vec<u32>,
    /// Variables after the visit (for the visit that raised: when it raised).
    pub state: Vec<VarState>,
    pub source: Source,
}

/// What `ldb check` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    pub file: String,
    pub mode: Mode,
    pub is_error: bool,
    pub error_class: Option<RuntimeErrorKind>,
    /// The exception message (real or predicted).
    pub message: Option<String>,
    /// Line of the error in the program as given.
    pub line: Option<u32>,
    /// Block of the error (label as in `block_trace`).
    pub block: Option<String>,
    /// Whether the verdict was seen (`executed`) or guessed (`predicted`).
    pub source: Source,
    /// The CFG blocks in the order they ran, with the variables after each.
    pub block_trace: Vec<BlockStep>,
    /// Steps left out of `block_trace` (a long run keeps its first and last steps).
    pub omitted_steps: u64,
    /// Imports added before running a snippet (`--incomplete`).
    pub added_imports: Vec<String>,
    /// Names the snippet uses that neither it nor an added import defines.
    pub unresolved_names: Vec<String>,
    /// Why a hybrid check had to predict (absent when everything ran).
    pub predicted_because: Option<String>,
    /// Anything else the user should know (in the order it happened).
    pub notes: Vec<String>,
    /// Model tokens spent (predictions only).
    pub usage: Option<Usage>,
    /// The model's reply as it came (predictions only), to audit a prediction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_reply: Option<String>,
}

impl CheckReport {
    /// First lines of the statements in the order they ran (all blocks concatenated).
    pub fn line_trace(&self) -> Vec<u32> {
        self.block_trace
            .iter()
            .flat_map(|s| s.lines.iter().copied())
            .collect()
    }
}

/// What to check and how.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOptions {
    pub mode: Mode,
    /// The program's standard input (`--stdin`); `None`: none was given.
    pub stdin: Option<String>,
    /// A description of the input, for predictions (`--input-desc`).
    pub input_desc: Option<String>,
    /// A snippet: names may be undefined; add the standard-library imports it leaves out.
    pub incomplete: bool,
    /// Block steps a prediction may take at most.
    pub max_steps: usize,
    /// Reply tokens a prediction may use at most.
    pub max_tokens: u32,
    /// Characters kept per variable value.
    pub value_chars: usize,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            mode: Mode::Hybrid,
            stdin: None,
            input_desc: None,
            incomplete: false,
            max_steps: 40,
            max_tokens: 1500,
            value_chars: 120,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("sandbox: {0}")]
    Sandbox(#[from] SandboxError),
    #[error("the sandbox could not run the program: {0}")]
    SandboxFailure(String),
    #[error("model: {0}")]
    Model(#[from] ModelError),
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error("{mode} mode needs a model, and none is configured")]
    NoModel { mode: &'static str },
}

/// Everything a check needs: a sandbox runner, and for predictions a model and the prompts.
pub struct Checker<'a> {
    pub runner: &'a Runner,
    pub model: Option<&'a dyn ChatModel>,
    pub prompts: &'a Prompts,
}

impl Checker<'_> {
    /// Check `program` in the mode `options` asks for.
    pub async fn check(
        &self,
        program: &Program,
        options: &CheckOptions,
    ) -> Result<CheckReport, CheckError> {
        match options.mode {
            Mode::Exec => exec::check(self.runner, program, options),
            Mode::Predict => {
                let model = self.model.ok_or(CheckError::NoModel { mode: "predict" })?;
                let prepared = exec::prepare(program, options.incomplete);
                predict::check(model, self.prompts, program, &prepared, options, None).await
            }
            Mode::Hybrid => hybrid::check(self, program, options).await,
        }
    }
}

/// The label of block `number` of scope `scope`: `B3` in the module, `f:B2` in function `f`.
pub fn block_label(cfg: &crate::python::cfg::ProgramCfg, scope: usize, number: usize) -> String {
    match cfg.scopes.get(scope) {
        Some(s) if scope > 0 => format!("{}:B{number}", s.qualname),
        _ => format!("B{number}"),
    }
}
