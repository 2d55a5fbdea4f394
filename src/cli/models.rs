//! Model flags → the generator and debugger models.

use super::output::{CliError, ExitStatus};
use super::ModelArgs;
use crate::model::config::{
    config_path, endpoint_configured, process_env, ModelConfig, ModelFlags,
};
use crate::model::{ModelError, SharedModel};

impl From<ModelError> for CliError {
    fn from(e: ModelError) -> Self {
        let status = match e {
            ModelError::Config(_) => ExitStatus::BadInput,
            _ => ExitStatus::Backend,
        };
        CliError {
            hint: e.hint().map(str::to_string),
            message: e.to_string(),
            status,
        }
    }
}

/// The generator and the debugger model (the same client when both roles resolve alike).
pub fn build(args: &ModelArgs) -> Result<(SharedModel, SharedModel), CliError> {
    let base = ModelFlags {
        profile: args.profile.clone(),
        base_url: args.base_url.clone(),
        api_key: args.api_key.clone(),
        model: args.model.clone(),
        timeout_secs: args.request_timeout,
        max_retries: args.retries,
        no_cache: args.no_cache,
        cache_dir: args.cache_dir.clone(),
    };
    let role = |profile: &Option<String>, model: &Option<String>| ModelFlags {
        profile: profile.clone().or_else(|| base.profile.clone()),
        model: model.clone().or_else(|| base.model.clone()),
        ..base.clone()
    };
    let generator_flags = role(&args.generator_profile, &args.generator_model);
    let debugger_flags = role(&args.debugger_profile, &args.debugger_model);

    let file = config_path(args.config.as_deref(), &process_env);
    let configured = endpoint_configured(&generator_flags, file.as_deref(), &process_env)?
        && endpoint_configured(&debugger_flags, file.as_deref(), &process_env)?;
    if !configured {
        return Err(CliError {
            message: "no model endpoint is configured".into(),
            hint: Some(
                "point ldb at an OpenAI-compatible API: --base-url URL (or OPENAI_BASE_URL), \
                 with OPENAI_API_KEY if it needs a key"
                    .into(),
            ),
            status: ExitStatus::BadInput,
        });
    }
    let generator = ModelConfig::load(&generator_flags, args.config.as_deref())?.build()?;
    let debugger = if debugger_flags == generator_flags {
        generator.clone()
    } else {
        ModelConfig::load(&debugger_flags, args.config.as_deref())?.build()?
    };
    Ok((generator, debugger))
}
