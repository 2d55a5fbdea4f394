//! Model configuration: where the OpenAI-compatible endpoint is, which model, how patient to be.
//!
//! Values come from, in order of precedence: command-line flags ([`ModelFlags`]), the config file
//! (a `[profiles.NAME]` table when a profile is selected, then the `[model]` table), the environment
//! (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `LDB_MODEL`) and built-in defaults. The file is TOML, by
//! default `<config dir>/ldb/config.toml` (`--config` or `LDB_CONFIG` point elsewhere):
//!
//! ```toml
//! [model]
//! base_url = "http://127.0.0.1:8080/v1"
//! model = "qwen2.5-coder"
//! api_key_env = "MY_KEY_VAR"   # or api_key = "..."
//! timeout_secs = 120
//! max_retries = 4
//! cache = true                 # on-disk response cache (default on)
//! cache_dir = "~/.cache/ldb/responses"
//! context_tokens = 128000      # the model's context: longer prompts are refused unsent
//! fim = true                   # the model takes fill-in-the-middle prompts on `/completions`
//! [model.headers]
//! "X-Title" = "ldb"
//!
//! [profiles.debugger]          # selected with --profile debugger
//! model = "gpt-4o"
//! ```
//!
//! Other top-level tables belong to other parts of ldb and are left alone here.
//!
//! Parts: `file` (the config file), `env` (environment variables and default paths).

mod env;
mod error;
mod file;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::ModelError;

use env::env_var;
use file::{check_base_url, FileConfig};

pub use crate::generate::http::RetryPolicy;
pub use env::{config_path, default_cache_dir, default_config_path, process_env};
pub use error::ConfigError;

/// The endpoint used when none is configured.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The model used against [`DEFAULT_BASE_URL`] when none is named. Other endpoints must name one:
/// a guess there would only fail later with a less helpful error.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
/// Per-request timeout unless configured.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Everything needed to talk to one OpenAI-compatible endpoint.
#[derive(Clone, PartialEq)]
pub struct ModelConfig {
    /// E.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1` (a trailing slash is fine).
    pub base_url: String,
    /// Sent as `Authorization: Bearer …` when set; local servers usually need none.
    pub api_key: Option<String>,
    pub model: String,
    /// Per-request timeout (each attempt, body included).
    pub timeout: Duration,
    pub retry: RetryPolicy,
    /// Extra headers sent with every request (e.g. `X-Title`, or `api-key` for Azure-style hosts).
    pub headers: Vec<(String, String)>,
    /// Response cache directory; `None` disables the cache.
    pub cache_dir: Option<PathBuf>,
    /// The model's context length in tokens, when configured: a request that cannot fit is
    /// refused before it is sent ([`crate::generate::model::prompt_limit`]).
    pub context_tokens: Option<u32>,
    /// The model takes raw fill-in-the-middle prompts (Qwen2.5-Coder's and CodeGemma's
    /// `<|fim_prefix|>`, `<|fim_suffix|>`, `<|fim_middle|>` tokens) on the endpoint's
    /// `/completions`: `patch` then asks there instead of with a chat prompt.
    pub fim: bool,
}

impl fmt::Debug for ModelConfig {
    // Hand-written so that the key and secret-looking headers never reach logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| {
                let shown = if is_sensitive_header(k) {
                    "<redacted>"
                } else {
                    v.as_str()
                };
                (k.as_str(), shown)
            })
            .collect();
        f.debug_struct("ModelConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("headers", &headers)
            .field("cache_dir", &self.cache_dir)
            .field("context_tokens", &self.context_tokens)
            .field("fim", &self.fim)
            .finish()
    }
}

/// Headers whose values are credentials.
pub(crate) fn is_sensitive_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "authorization"
        || n == "proxy-authorization"
        || n == "cookie"
        || n.contains("key")
        || n.contains("token")
        || n.contains("secret")
}

/// Model settings from the command line; `None` means "not given". The CLI fills this in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelFlags {
    /// Select `[profiles.NAME]` from the config file (e.g. a different debugger model).
    pub profile: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub model: Option<String>,
    pub timeout_secs: Option<u64>,
    pub max_retries: Option<u32>,
    /// Disable the response cache.
    pub no_cache: bool,
    pub cache_dir: Option<PathBuf>,
    /// The model's context length in tokens.
    pub context_tokens: Option<u32>,
    /// The endpoint's model takes fill-in-the-middle prompts on `/completions`.
    pub fim: bool,
}

/// One `[model]` or `[profiles.NAME]` table, validated.
#[derive(Debug, Clone, Default)]
struct Section {
    base_url: Option<String>,
    model: Option<String>,
    api_key: Option<String>,
    api_key_env: Option<String>,
    timeout: Option<Duration>,
    max_retries: Option<u32>,
    headers: Vec<(String, String)>,
    cache: Option<bool>,
    cache_dir: Option<PathBuf>,
    context_tokens: Option<u32>,
    fim: Option<bool>,
}

/// The config sections that apply, most specific first.
fn sections<'a>(
    file: Option<&'a FileConfig>,
    profile: Option<&str>,
) -> Result<Vec<&'a Section>, ModelError> {
    let mut out = Vec::new();
    match (file, profile) {
        (Some(f), Some(name)) => {
            out.push(f.profile(name)?);
            out.push(&f.model);
        }
        (Some(f), None) => out.push(&f.model),
        (None, Some(name)) => {
            return Err(ConfigError::NoConfigFile {
                name: name.to_string(),
                expected: default_config_path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "a config file".to_string()),
            }
            .into())
        }
        (None, None) => {}
    }
    Ok(out)
}

fn first<T: Clone>(sections: &[&Section], get: impl Fn(&Section) -> Option<T>) -> Option<T> {
    sections.iter().find_map(|s| get(s))
}

/// Whether flags, the config file or the environment point at an OpenAI-compatible endpoint at
/// all (a base URL or an API key somewhere). When not, ldb falls back to its embedded local
/// model. A model name alone does not count: it may name a local model.
pub fn endpoint_configured(
    flags: &ModelFlags,
    config_file: Option<&Path>,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<bool, ModelError> {
    if flags.base_url.is_some() || flags.api_key.is_some() {
        return Ok(true);
    }
    let file = config_file.map(FileConfig::read).transpose()?;
    let secs = sections(file.as_ref(), flags.profile.as_deref())?;
    if secs
        .iter()
        .any(|s| s.base_url.is_some() || s.api_key.is_some() || s.api_key_env.is_some())
    {
        return Ok(true);
    }
    Ok(env_var(env, "OPENAI_API_KEY").is_some() || env_var(env, "OPENAI_BASE_URL").is_some())
}

impl ModelConfig {
    /// A config with defaults for everything but the endpoint and model; no key, no cache.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        ModelConfig {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::default(),
            headers: Vec::new(),
            cache_dir: None,
            context_tokens: None,
            fim: false,
        }
    }

    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn with_cache_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.cache_dir = dir;
        self
    }

    pub fn with_context_tokens(mut self, tokens: Option<u32>) -> Self {
        self.context_tokens = tokens;
        self
    }

    pub fn with_fim(mut self, fim: bool) -> Self {
        self.fim = fim;
        self
    }

    /// Resolve flags > config file (selected profile, then `[model]`) > environment > defaults.
    /// `config_file` is read when given (see [`config_path`]); a missing or malformed file is a
    /// [`ModelError::Config`] naming the file, the key and the fix.
    ///
    /// As with OpenAI's own clients, `OPENAI_API_KEY` is sent to whatever base URL is chosen
    /// unless a key is configured more specifically.
    pub fn resolve(
        flags: &ModelFlags,
        config_file: Option<&Path>,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<ModelConfig, ModelError> {
        let file = config_file.map(FileConfig::read).transpose()?;
        let secs = sections(file.as_ref(), flags.profile.as_deref())?;
        let file_name = || {
            file.as_ref()
                .map(|f| f.path.display().to_string())
                .unwrap_or_default()
        };

        let (base_url, base_from_default) = if let Some(url) = &flags.base_url {
            check_base_url(url).map_err(|why| {
                ModelError::from(ConfigError::BaseUrlFlag {
                    why: why.to_string(),
                })
            })?;
            (url.trim().to_string(), false)
        } else if let Some(url) = first(&secs, |s| s.base_url.clone()) {
            (url, false)
        } else if let Some(url) = env_var(env, "OPENAI_BASE_URL") {
            check_base_url(&url).map_err(|why| {
                ModelError::from(ConfigError::BaseUrlVariable {
                    why: why.to_string(),
                })
            })?;
            (url, false)
        } else {
            (DEFAULT_BASE_URL.to_string(), true)
        };

        // The most specific source that says anything about the key wins, including a file's
        // `api_key_env`, which must then name a variable that is set.
        let api_key = if let Some(k) = flags
            .api_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
        {
            Some(k.to_string())
        } else if let Some(section) = secs
            .iter()
            .find(|s| s.api_key.is_some() || s.api_key_env.is_some())
        {
            match (&section.api_key, &section.api_key_env) {
                (Some(k), _) => Some(k.clone()),
                (None, Some(var)) => Some(env_var(env, var).ok_or_else(|| {
                    ModelError::from(ConfigError::KeyVariableUnset {
                        file: file_name(),
                        var: var.clone(),
                    })
                })?),
                (None, None) => None,
            }
        } else {
            env_var(env, "OPENAI_API_KEY")
        };

        let model = flags
            .model
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(str::to_string)
            .or_else(|| first(&secs, |s| s.model.clone()))
            .or_else(|| env_var(env, "LDB_MODEL"));
        let model = match model {
            Some(m) => m,
            None if base_from_default || is_openai(&base_url) => DEFAULT_OPENAI_MODEL.to_string(),
            None => {
                return Err(ConfigError::NoModel {
                    endpoint: display_url(&base_url),
                }
                .into())
            }
        };

        let timeout = match flags.timeout_secs {
            Some(0) => return Err(ConfigError::Timeout.into()),
            Some(s) => Duration::from_secs(s),
            None => first(&secs, |s| s.timeout).unwrap_or(DEFAULT_TIMEOUT),
        };

        let retry = RetryPolicy {
            max_retries: flags
                .max_retries
                .or_else(|| first(&secs, |s| s.max_retries))
                .unwrap_or(RetryPolicy::default().max_retries),
            ..RetryPolicy::default()
        };

        // Headers merge: `[model.headers]` first, a profile's headers replace same-named ones.
        let mut headers: Vec<(String, String)> = Vec::new();
        for section in secs.iter().rev() {
            for (k, v) in &section.headers {
                headers.retain(|(old, _)| !old.eq_ignore_ascii_case(k));
                headers.push((k.clone(), v.clone()));
            }
        }

        let cache_dir = if flags.no_cache {
            None
        } else if let Some(dir) = &flags.cache_dir {
            Some(dir.clone())
        } else if first(&secs, |s| s.cache) == Some(false) {
            None
        } else {
            first(&secs, |s| s.cache_dir.clone()).or_else(default_cache_dir)
        };

        let context_tokens = match flags.context_tokens {
            Some(0) => return Err(ConfigError::ContextTokens.into()),
            Some(n) => Some(n),
            None => first(&secs, |s| s.context_tokens),
        };
        let fim = flags.fim || first(&secs, |s| s.fim).unwrap_or(false);

        Ok(ModelConfig {
            base_url,
            api_key,
            model,
            timeout,
            retry,
            headers,
            cache_dir,
            context_tokens,
            fim,
        })
    }

    /// [`ModelConfig::resolve`] against the process environment and the config file chosen by
    /// `--config` (pass `None` when not given), `LDB_CONFIG` or the default location.
    pub fn load(flags: &ModelFlags, config_flag: Option<&Path>) -> Result<ModelConfig, ModelError> {
        let path = config_path(config_flag, &process_env);
        ModelConfig::resolve(flags, path.as_deref(), &process_env)
    }
}

/// A URL as safe to show: without user, password, query or fragment, no trailing slash.
pub fn display_url(url: &str) -> String {
    match reqwest::Url::parse(url.trim()) {
        Ok(mut u) => {
            // These only fail for URLs that cannot have credentials, where there are none.
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string().trim_end_matches('/').to_string()
        }
        Err(_) => {
            let cut = url.split(['?', '#']).next().unwrap_or_default();
            match cut.rsplit_once('@') {
                Some((_, rest)) => rest.to_string(),
                None => cut.to_string(),
            }
        }
    }
}

fn is_openai(base_url: &str) -> bool {
    reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(|h| h == "api.openai.com"))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy {
            max_retries: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            max_retry_after: Duration::from_secs(60),
        };
        for retry in 0..10 {
            let full = (100u64 << retry).min(1000);
            let d = p.backoff(retry).as_millis() as u64;
            assert!(d >= full / 2 && d <= full, "retry {retry}: {d} ms");
        }
        assert_eq!(
            p.retry_after(Duration::from_secs(600)),
            Duration::from_secs(60)
        );
    }

    #[test]
    fn debug_hides_secrets() {
        let c = ModelConfig::new(DEFAULT_BASE_URL, "m")
            .with_api_key("sk-very-secret")
            .with_header("X-Api-Key", "hdr-secret")
            .with_header("X-Title", "ldb");
        let shown = format!("{c:?}");
        assert!(!shown.contains("sk-very-secret") && !shown.contains("hdr-secret"));
        assert!(shown.contains("X-Title") && shown.contains("ldb"));
    }

    #[test]
    fn relative_cache_dir_is_relative_to_the_file() {
        let f = FileConfig::parse(
            Path::new("/etc/ldb/config.toml"),
            "[model]\ncache_dir = \"responses\"\n",
        )
        .unwrap();
        assert_eq!(f.model.cache_dir, Some(PathBuf::from("/etc/ldb/responses")));
    }

    #[test]
    fn other_top_level_tables_are_ignored() {
        let f = FileConfig::parse(Path::new("c.toml"), "[sandbox]\nmemory_mb = 512\n").unwrap();
        assert!(f.model.model.is_none());
    }
}
