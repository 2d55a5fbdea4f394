//! Prompt templates: files in `prompts/`, embedded at build time and rendered with minijinja.
//!
//! Rendering is strict: a variable the template uses but the caller did not pass is an error,
//! never an empty string in a prompt.

use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

/// Every template, by name (the file name in `prompts/` without `.j2`).
const TEMPLATES: &[(&str, &str)] = &[
    ("system", include_str!("../prompts/system.j2")),
    // Shared opening of the feedback prompts (task, program, test results); included by them.
    ("context", include_str!("../prompts/context.j2")),
    ("generate", include_str!("../prompts/generate.j2")),
    ("translate", include_str!("../prompts/translate.j2")),
    ("debug", include_str!("../prompts/debug.j2")),
    (
        "selfdebug_expl",
        include_str!("../prompts/selfdebug_expl.j2"),
    ),
    (
        "selfdebug_trace",
        include_str!("../prompts/selfdebug_trace.j2"),
    ),
    ("regenerate", include_str!("../prompts/regenerate.j2")),
    (
        "repair_feedback",
        include_str!("../prompts/repair_feedback.j2"),
    ),
    ("repair_code", include_str!("../prompts/repair_code.j2")),
    (
        "repair_verdicts",
        include_str!("../prompts/repair_verdicts.j2"),
    ),
];

#[derive(Debug, thiserror::Error)]
#[error("prompt template `{name}`: {detail}")]
pub struct PromptError {
    pub name: String,
    pub detail: String,
}

/// The loaded templates.
pub struct Prompts {
    env: Environment<'static>,
}

impl std::fmt::Debug for Prompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prompts")
    }
}

impl Prompts {
    pub fn new() -> Result<Self, PromptError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_keep_trailing_newline(false);
        for (name, source) in TEMPLATES {
            env.add_template(name, source).map_err(|e| PromptError {
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
