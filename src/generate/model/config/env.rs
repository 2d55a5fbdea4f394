//! Where settings come from besides flags and the file: environment variables and the default
//! config and cache paths.

use std::path::{Path, PathBuf};

/// The environment as ldb reads it: unset and empty variables are both "not set".
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

pub(super) fn env_var(env: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    env(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// `<config dir>/ldb/config.toml`, where the platform has a config dir.
pub fn default_config_path() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("ldb").join("config.toml"))
}

/// `<cache dir>/ldb/responses`, where the platform has a cache dir.
pub fn default_cache_dir() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("ldb").join("responses"))
}

/// Which config file to read: `--config` if given, else `LDB_CONFIG`, else the default path if
/// that file exists. An explicitly named file that is missing is an error later, when read; a
/// missing default file just means "no file".
pub fn config_path(
    explicit: Option<&Path>,
    env: &impl Fn(&str) -> Option<String>,
) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    if let Some(p) = env_var(env, "LDB_CONFIG") {
        return Some(PathBuf::from(p));
    }
    default_config_path().filter(|p| p.is_file())
}
