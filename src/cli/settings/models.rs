//! The model flags resolved for each role (generator, debugger). Nothing is loaded here:
//! `cli::models::load` opens the models when a command first needs them.

use std::path::PathBuf;

use crate::cli::args::ModelArgs;
use crate::generate::local::LocalOptions;
use crate::generate::model::config::ModelFlags;

/// The flags of each role, the config file named on the command line and the embedded
/// model's settings.
#[derive(Debug, Clone)]
pub struct ModelSettings {
    pub generator: ModelFlags,
    pub debugger: ModelFlags,
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    pub local: LocalOptions,
    /// `--model` as given (it names results files).
    pub model: Option<String>,
}

impl ModelSettings {
    pub fn resolve(args: &ModelArgs) -> Self {
        let base = ModelFlags {
            profile: args.profile.clone(),
            base_url: args.base_url.clone(),
            api_key: args.api_key.clone(),
            model: args.model.clone(),
            timeout_secs: args.request_timeout,
            max_retries: args.retries,
            no_cache: args.no_cache,
            cache_dir: args.cache_dir.clone(),
            context_tokens: args.context_tokens,
            fim: args.fim,
        };
        let role = |profile: &Option<String>, model: &Option<String>| ModelFlags {
            profile: profile.clone().or_else(|| base.profile.clone()),
            model: model.clone().or_else(|| base.model.clone()),
            ..base.clone()
        };
        let local = &args.local;
        ModelSettings {
            generator: role(&args.generator_profile, &args.generator_model),
            debugger: role(&args.debugger_profile, &args.debugger_model),
            config: args.config.clone(),
            local: LocalOptions {
                threads: local.threads,
                context_len: local.context,
                use_mmap: !local.no_mmap,
                prompt_snapshots: local.prompt_snapshots,
                prompt_chunk: local.prompt_chunk,
                flash_attention: local.flash_attention,
                draft_max: local.draft,
                parallel_samples: local.parallel_samples,
                ..Default::default()
            },
            model: args.model.clone(),
        }
    }
}
