//! Prompt templates: files in `prompts/`, embedded at build time and rendered with minijinja.
//!
//! Rendering is strict: a variable the template uses but the caller did not pass is an error,
//! never an empty string in a prompt.

use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

/// Every template, by name (the file name in `prompts/` without `.j2`).
const TEMPLATES: &[(&str, &str)] = &[
    ("system", include_str!("../../prompts/system.j2")),
    // Shared opening of the feedback prompts (task, program, test results); included by them.
    ("context", include_str!("../../prompts/context.j2")),
    ("generate", include_str!("../../prompts/generate.j2")),
    ("translate", include_str!("../../prompts/translate.j2")),
    // `ldb exec`: prefixes that make a snippet run (the response form is included by the rest).
    ("exec_system", include_str!("../../prompts/exec_system.j2")),
    (
        "exec_response",
        include_str!("../../prompts/exec_response.j2"),
    ),
    (
        "exec_undefined",
        include_str!("../../prompts/exec_undefined.j2"),
    ),
    ("exec_error", include_str!("../../prompts/exec_error.j2")),
    (
        "exec_coverage",
        include_str!("../../prompts/exec_coverage.j2"),
    ),
    ("debug", include_str!("../../prompts/debug.j2")),
    ("debug_short", include_str!("../../prompts/debug_short.j2")),
    (
        "selfdebug_expl",
        include_str!("../../prompts/selfdebug_expl.j2"),
    ),
    (
        "selfdebug_trace",
        include_str!("../../prompts/selfdebug_trace.j2"),
    ),
    ("regenerate", include_str!("../../prompts/regenerate.j2")),
    (
        "repair_feedback",
        include_str!("../../prompts/repair_feedback.j2"),
    ),
    ("repair_code", include_str!("../../prompts/repair_code.j2")),
    // The `patch` proposer: the header of a fill-in-the-middle prompt, and the chat form.
    ("patch_fim", include_str!("../../prompts/patch_fim.j2")),
    ("patch_chat", include_str!("../../prompts/patch_chat.j2")),
    (
        "repair_verdicts",
        include_str!("../../prompts/repair_verdicts.j2"),
    ),
    // `ldb check --mode predict|hybrid`: the CFG walk.
    (
        "check_system",
        include_str!("../../prompts/check_system.j2"),
    ),
    (
        "check_predict",
        include_str!("../../prompts/check_predict.j2"),
    ),
];

#[derive(Debug, thiserror::Error)]
#[error("prompt template `{name}`: {detail}")]
pub struct PromptError {
    pub name: String,
    pub detail: String,
}

/// The loaded templates.
#[derive(Clone)]
pub struct Prompts {
    env: Environment<'static>,
}

impl std::fmt::Debug for Prompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prompts")
    }
}

impl Prompts {
    /// The built-in templates.
    pub fn new() -> Result<Self, PromptError> {
        Self::with_overrides(&[])
    }

    /// The built-in templates, with each `NAME.j2` of `dir` replacing the template NAME (so a
    /// prompt can be tuned for a model without rebuilding). A file that names no template is
    /// an error, so a typo cannot silently leave the built-in prompt in place.
    pub fn from_dir(dir: &std::path::Path) -> Result<Self, PromptError> {
        let err = |detail: String| PromptError {
            name: dir.display().to_string(),
            detail,
        };
        let entries = std::fs::read_dir(dir)
            .map_err(|e| err(format!("cannot read the prompt directory: {e}")))?;
        let mut overrides: Vec<(&'static str, String)> = Vec::new();
        for entry in entries {
            let path = entry.map_err(|e| err(e.to_string()))?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("j2") {
                continue;
            }
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            let Some(name) = Self::names().find(|n| *n == stem) else {
                return Err(err(format!(
                    "{} names no template; the templates are: {}",
                    path.display(),
                    Self::names().collect::<Vec<_>>().join(", ")
                )));
            };
            let text = std::fs::read_to_string(&path)
                .map_err(|e| err(format!("{}: {e}", path.display())))?;
            overrides.push((name, text));
        }
        Self::with_overrides(&overrides)
    }

    fn with_overrides(overrides: &[(&'static str, String)]) -> Result<Self, PromptError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_keep_trailing_newline(false);
        for (name, source) in TEMPLATES {
            let source = overrides
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, text)| text.clone())
                .unwrap_or_else(|| source.to_string());
            env.add_template_owned(*name, source)
                .map_err(|e| PromptError {
                    name: name.to_string(),
                    detail: e.to_string(),
                })?;
        }
        Ok(Prompts { env })
    }

    /// Render template `name` with `vars` (any serializable struct or map).
    pub fn render(&self, name: &str, vars: impl Serialize) -> Result<String, PromptError> {
        let err = |e: minijinja::Error| PromptError {
            name: name.to_string(),
            detail: match e.detail() {
                Some(d) => format!("{e}: {d}"),
                None => e.to_string(),
            },
        };
        let template = self.env.get_template(name).map_err(err)?;
        let text = template.render(vars).map_err(err)?;
        Ok(text.trim().to_string() + "\n")
    }

    pub fn names() -> impl Iterator<Item = &'static str> {
        TEMPLATES.iter().map(|(n, _)| *n)
    }
}
