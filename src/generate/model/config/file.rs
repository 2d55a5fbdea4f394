//! The config file (`[model]` and `[profiles.NAME]` tables): read by serde into typed
//! sections with unknown keys refused, paths resolved against the file, base URLs checked.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{ConfigError, Section};
use crate::generate::model::ModelError;

/// The parts of a config file this module reads.
#[derive(Debug, Clone, Default)]
pub(super) struct FileConfig {
    pub(super) path: PathBuf,
    pub(super) model: Section,
    pub(super) profiles: Vec<(String, Section)>,
}

impl FileConfig {
    pub(super) fn read(path: &Path) -> Result<FileConfig, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ModelError::from(ConfigError::Unreadable {
                path: path.to_path_buf(),
                source: e,
            })
        })?;
        FileConfig::parse(path, &text)
    }

    pub(super) fn parse(path: &Path, text: &str) -> Result<FileConfig, ModelError> {
        let document = toml::Deserializer::parse(text).map_err(|e| {
            ModelError::from(ConfigError::NotToml {
                path: path.to_path_buf(),
                message: e.to_string().trim_end().to_string(),
            })
        })?;
        let raw: RawFile = serde_path_to_error::deserialize(document).map_err(|e| {
            let key = e.path().to_string();
            let name = key.rsplit('.').next().unwrap_or(&key).to_string();
            ModelError::from(ConfigError::Key {
                path: path.to_path_buf(),
                problem: e.inner().message().to_string(),
                fix: example(&name),
                key,
            })
        })?;
        let base_dir = path.parent().unwrap_or(Path::new("."));
        let mut file = FileConfig {
            path: path.to_path_buf(),
            ..FileConfig::default()
        };
        if let Some(section) = raw.model {
            file.model = check_section(path, base_dir, "model", section)?;
        }
        for (name, section) in raw.profiles {
            let prefix = format!("profiles.{name}");
            file.profiles
                .push((name, check_section(path, base_dir, &prefix, section)?));
        }
        Ok(file)
    }

    pub(super) fn profile(&self, name: &str) -> Result<&Section, ModelError> {
        self.profiles
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
            .ok_or_else(|| {
                let known: Vec<&str> = self.profiles.iter().map(|(n, _)| n.as_str()).collect();
                let known = if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                };
                ModelError::from(ConfigError::UnknownProfile {
                    name: name.to_string(),
                    path: self.path.clone(),
                    known,
                })
            })
    }
}

pub(super) fn bad_key(path: &Path, key: &str, expected: &'static str, example: &str) -> ModelError {
    ModelError::from(ConfigError::Value {
        path: path.to_path_buf(),
        key: key.to_string(),
        expected,
        example: example.to_string(),
    })
}

/// The tables of a config file this module reads; other tables (`[sandbox]`, ...) belong to
/// other parts of ldb.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct RawFile {
    #[serde(default)]
    pub(super) model: Option<RawSection>,
    #[serde(default)]
    pub(super) profiles: std::collections::BTreeMap<String, RawSection>,
}

/// `[model]` or `[profiles.NAME]` as written: an unknown key is an error that names it and the
/// known ones.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSection {
    pub(super) base_url: Option<String>,
    pub(super) model: Option<String>,
    pub(super) api_key: Option<String>,
    pub(super) api_key_env: Option<String>,
    pub(super) timeout_secs: Option<f64>,
    pub(super) max_retries: Option<i64>,
    #[serde(default)]
    pub(super) headers: std::collections::BTreeMap<String, String>,
    pub(super) cache: Option<bool>,
    pub(super) cache_dir: Option<String>,
    pub(super) context_tokens: Option<i64>,
    pub(super) fim: Option<bool>,
}

/// How a key is written, for the `fix:` of an error about it.
pub(super) fn example(key: &str) -> String {
    match key {
        "base_url" => "e.g. `base_url = \"http://127.0.0.1:8080/v1\"`".into(),
        "model" | "api_key" | "api_key_env" => format!("e.g. `{key} = \"...\"`"),
        "timeout_secs" => "e.g. `timeout_secs = 120`".into(),
        "max_retries" => "e.g. `max_retries = 4`".into(),
        "headers" => "e.g. `[model.headers]` with `\"X-Title\" = \"ldb\"`".into(),
        "cache" => "e.g. `cache = true`".into(),
        "cache_dir" => "e.g. `cache_dir = \"~/.cache/ldb/responses\"`".into(),
        "context_tokens" => "e.g. `context_tokens = 128000`".into(),
        "fim" => "e.g. `fim = true`".into(),
        "profiles" => "e.g. `[profiles.NAME]`".into(),
        _ => "remove it, or rename it to one of the keys named above".into(),
    }
}

/// The checks types cannot express: non-empty strings, a usable URL, ranges.
pub(super) fn check_section(
    path: &Path,
    base_dir: &Path,
    prefix: &str,
    raw: RawSection,
) -> Result<Section, ModelError> {
    let text = |key: &str, value: Option<String>| -> Result<Option<String>, ModelError> {
        match value {
            None => Ok(None),
            Some(v) if !v.trim().is_empty() => Ok(Some(v.trim().to_string())),
            Some(_) => Err(bad_key(
                path,
                &format!("{prefix}.{key}"),
                "a non-empty string",
                &format!("{key} = \"...\""),
            )),
        }
    };
    let mut s = Section::default();
    if let Some(v) = text("base_url", raw.base_url)? {
        check_base_url(&v).map_err(|why| {
            ModelError::from(ConfigError::Key {
                path: path.to_path_buf(),
                key: format!("{prefix}.base_url"),
                problem: why.to_string(),
                fix: "e.g. `base_url = \"http://127.0.0.1:8080/v1\"`".to_string(),
            })
        })?;
        s.base_url = Some(v);
    }
    s.model = text("model", raw.model)?;
    s.api_key = text("api_key", raw.api_key)?;
    s.api_key_env = text("api_key_env", raw.api_key_env)?;
    if let Some(secs) = raw.timeout_secs {
        if !(secs.is_finite() && secs > 0.0 && secs <= 86_400.0) {
            return Err(bad_key(
                path,
                &format!("{prefix}.timeout_secs"),
                "a positive number of seconds",
                "timeout_secs = 120",
            ));
        }
        s.timeout = Some(Duration::from_secs_f64(secs));
    }
    if let Some(n) = raw.max_retries {
        if !(0..=100).contains(&n) {
            return Err(bad_key(
                path,
                &format!("{prefix}.max_retries"),
                "an integer from 0 to 100",
                "max_retries = 4",
            ));
        }
        s.max_retries = Some(n as u32);
    }
    if let Some(n) = raw.context_tokens {
        if !(1..=i64::from(u32::MAX)).contains(&n) {
            return Err(bad_key(
                path,
                &format!("{prefix}.context_tokens"),
                "a positive number of tokens",
                "context_tokens = 128000",
            ));
        }
        s.context_tokens = Some(n as u32);
    }
    s.headers = raw.headers.into_iter().collect();
    s.cache = raw.cache;
    s.fim = raw.fim;
    if let Some(dir) = text("cache_dir", raw.cache_dir)? {
        s.cache_dir = Some(resolve_path(base_dir, &dir));
    }
    if s.api_key.is_some() && s.api_key_env.is_some() {
        return Err(ConfigError::TwoKeys {
            path: path.to_path_buf(),
            prefix: prefix.to_string(),
        }
        .into());
    }
    Ok(s)
}

/// `~/x` → home, relative → relative to the config file's directory.
pub(super) fn resolve_path(base_dir: &Path, raw: &str) -> PathBuf {
    if let Some(rest) = raw.strip_prefix("~/") {
        if let Some(home) = dirs::home_dir() {
            return home.join(rest);
        }
    }
    let p = PathBuf::from(raw);
    if p.is_absolute() {
        p
    } else {
        base_dir.join(p)
    }
}

/// Why a base URL cannot be one.
#[derive(Debug, thiserror::Error)]
pub(super) enum BadBaseUrl {
    #[error("`{url}` is not a URL ({reason})")]
    NotUrl { url: String, reason: String },
    #[error("scheme `{0}` is not http or https")]
    Scheme(String),
}

/// Why `url` cannot be a base URL, if it cannot.
pub(super) fn check_base_url(url: &str) -> Result<(), BadBaseUrl> {
    let parsed = reqwest::Url::parse(url).map_err(|e| BadBaseUrl::NotUrl {
        url: url.to_string(),
        reason: e.to_string(),
    })?;
    match parsed.scheme() {
        "http" | "https" => Ok(()),
        other => Err(BadBaseUrl::Scheme(other.to_string())),
    }
}
