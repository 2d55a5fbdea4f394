//! Model flags → the generator and debugger models.
//!
//! Resolution, per role: a `PATH.gguf` runs that file locally; otherwise an OpenAI-compatible
//! endpoint configured by flags, the config file or the environment is used; otherwise the
//! embedded model named by `--model` (or the default one), downloaded on first use.

use std::path::{Path, PathBuf};

use super::output::{CliError, ExitStatus};
use super::settings::ModelSettings;
use crate::generate::local::catalog;
use crate::generate::local::LocalOptions;
use crate::generate::model::config::{
    config_path, endpoint_configured, process_env, ModelConfig, ModelFlags,
};
use crate::generate::model::{ModelError, SharedModel};

impl From<ModelError> for CliError {
    fn from(e: ModelError) -> Self {
        let status = match e {
            ModelError::Config(_) | ModelError::PromptTooLarge { .. } => ExitStatus::BadInput,
            _ => ExitStatus::Backend,
        };
        CliError {
            hint: e.hint().map(str::to_string),
            message: e.to_string(),
            status,
        }
    }
}

/// Why `task` cannot go to `models`: what a model may be shown of it (prompt, seed, tests,
/// source) is longer than the smallest of their contexts can take, named by its largest field.
/// Checked before any model call, so no request is sent for it.
pub fn prompt_too_large(task: &crate::task::Task, models: &[&SharedModel]) -> Option<String> {
    let context = models.iter().filter_map(|m| m.context_tokens()).min();
    let (limit, what) = crate::generate::model::prompt_limit(context);
    let fields = task.shown_fields();
    let total: usize = fields.iter().map(|(_, n)| n).sum();
    if total <= limit {
        return None;
    }
    let (field, bytes) = fields.into_iter().max_by_key(|(_, n)| *n)?;
    Some(format!(
        "task `{}`: field `{field}` is {bytes} bytes ({total} bytes with the rest of what a model \
         is shown), more than the {limit} bytes {what} can take",
        task.task_id
    ))
}

/// The hint of [`prompt_too_large`].
pub const PROMPT_TOO_LARGE_HINT: &str = "shorten that field; if the model's context is larger \
     than assumed, say so with --context-tokens (context_tokens in the config file)";

/// Where one role's model comes from.
#[derive(Debug, Clone, PartialEq)]
enum Choice {
    Remote(ModelFlags),
    /// A GGUF file, with the name shown in reports.
    Local {
        path: PathBuf,
        name: String,
    },
    /// An embedded catalogue model, pulled if missing.
    Embedded(String),
}

/// The generator and the debugger model (one shared instance when both roles resolve
/// alike).
pub fn load(s: &ModelSettings) -> Result<(SharedModel, SharedModel), CliError> {
    let file = config_path(s.config.as_deref(), &process_env);
    let generator = choose(s.generator.clone(), file.as_deref())?;
    let debugger = choose(s.debugger.clone(), file.as_deref())?;
    let generator_model = open(&generator, &s.generator, s)?;
    let debugger_model = if debugger == generator {
        generator_model.clone()
    } else {
        open(&debugger, &s.debugger, s)?
    };
    Ok((generator_model, debugger_model))
}

fn open(choice: &Choice, flags: &ModelFlags, s: &ModelSettings) -> Result<SharedModel, CliError> {
    match choice {
        Choice::Remote(flags) => Ok(ModelConfig::load(flags, s.config.as_deref())?.build()?),
        Choice::Local { path, name } => {
            let model = load_local(path, name, &s.local)?;
            Ok(cached_local(model, path, name, flags, &s.local))
        }
        Choice::Embedded(name) => {
            if !cfg!(feature = "local-model") {
                return Err(without_local_model(name));
            }
            let path = crate::cli::model_cmd::ensure_installed(name)?;
            eprintln!("ldb: using the embedded model {name} ({})", path.display());
            let model = load_local(&path, name, &s.local)?;
            Ok(cached_local(model, &path, name, flags, &s.local))
        }
    }
}

/// A local model behind the on-disk response cache, as endpoints are (`--no-cache` turns it
/// off, `--cache-dir` moves it). A seeded sample of the local model depends on its request
/// alone (prompts are evaluated in fixed chunks), so a request made again, by a rerun or by
/// another task with the same text, gets the reply the model would give, without running it.
fn cached_local(
    model: SharedModel,
    path: &Path,
    name: &str,
    flags: &ModelFlags,
    local: &LocalOptions,
) -> SharedModel {
    let dir = if flags.no_cache {
        None
    } else {
        flags
            .cache_dir
            .clone()
            .or_else(crate::generate::model::config::default_cache_dir)
    };
    match dir {
        Some(dir) => std::sync::Arc::new(
            crate::generate::model::cache::CachedModel::new(model, dir)
                .with_namespace(local_namespace(path, name, local)),
        ),
        None => model,
    }
}

/// What a local model's replies depend on besides the request: the weights (named, and told
/// apart by size), the prompt chunk, which decides which KV entries a prompt reuses, and the
/// attention kernel (flash attention rounds otherwise, and by thread count).
fn local_namespace(path: &Path, name: &str, local: &LocalOptions) -> String {
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let attention = if local.flash_attention {
        "flash attention"
    } else {
        "attention"
    };
    format!(
        "local|{name}|{bytes}|chunk {}|{attention}",
        local.prompt_chunk
    )
}

fn choose(flags: ModelFlags, config_file: Option<&Path>) -> Result<Choice, CliError> {
    if let Some(name) = &flags.model {
        let path = Path::new(name);
        if name.ends_with(".gguf") || (path.is_file() && !endpoint_named(&flags)) {
            if !path.is_file() {
                return Err(CliError::bad_input(
                    format!("model file {name} does not exist"),
                    "give the path of a GGUF file, or an embedded model name (see `ldb model list`)",
                ));
            }
            let shown = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| name.clone());
            return Ok(Choice::Local {
                path: path.to_path_buf(),
                name: shown,
            });
        }
    }
    if endpoint_configured(&flags, config_file, &process_env)? {
        return Ok(Choice::Remote(flags));
    }
    match &flags.model {
        None => Ok(Choice::Embedded(catalog::DEFAULT_MODEL.to_string())),
        Some(name) if catalog::find(name).is_some() => Ok(Choice::Embedded(name.clone())),
        Some(name) => Err(CliError::bad_input(
            format!("model `{name}` is not an embedded model, and no model endpoint is configured"),
            format!(
                "use an embedded model ({}), a PATH.gguf, or point ldb at an OpenAI-compatible \
                 API with --base-url URL (or OPENAI_BASE_URL)",
                catalog::names().join(", ")
            ),
        )),
    }
}

fn endpoint_named(flags: &ModelFlags) -> bool {
    flags.base_url.is_some()
}

#[cfg(feature = "local-model")]
fn load_local(path: &Path, name: &str, local: &LocalOptions) -> Result<SharedModel, CliError> {
    let model = crate::generate::local::llama::LocalModel::load(path, name, local.clone())?;
    Ok(std::sync::Arc::new(model))
}

#[cfg(not(feature = "local-model"))]
fn load_local(_path: &Path, name: &str, _local: &LocalOptions) -> Result<SharedModel, CliError> {
    Err(without_local_model(name))
}

/// A local model asked of a build without llama.cpp.
fn without_local_model(name: &str) -> CliError {
    CliError::bad_input(
        format!("{name} runs on the embedded model backend, and this ldb was built without it"),
        "rebuild with the default features (cargo build --release), or point ldb at an \
         OpenAI-compatible API with --base-url URL (or OPENAI_BASE_URL)",
    )
}
