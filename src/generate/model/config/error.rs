//! Why a model configuration cannot be used: one variant per kind of mistake, each naming where
//! the bad value came from (flag, environment variable, or config file and key) and the fix.

use std::path::PathBuf;

/// A configuration mistake. `Display` is the message shown to the user, fix included.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {}: {source}; fix the path given by --config / LDB_CONFIG", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {} is not valid TOML: {message}", path.display())]
    NotToml { path: PathBuf, message: String },
    /// A key whose value cannot be used.
    #[error("config file {}: key `{key}`: {problem}; fix: {fix}", path.display())]
    Key {
        path: PathBuf,
        key: String,
        problem: String,
        fix: String,
    },
    /// A key whose value has the wrong form.
    #[error("config file {}: key `{key}` must be {expected}; fix: e.g. `{example}`", path.display())]
    Value {
        path: PathBuf,
        key: String,
        expected: &'static str,
        example: String,
    },
    #[error("config file {}: keys `{prefix}.api_key` and `{prefix}.api_key_env` are both set; fix: keep only one", path.display())]
    TwoKeys { path: PathBuf, prefix: String },
    #[error("config file {file}: key `api_key_env` names environment variable `{var}`, which is not set; fix: export {var}=<your key>, or change api_key_env")]
    KeyVariableUnset { file: String, var: String },
    #[error("profile `{name}` is not defined in config file {} (defined: {known}); add a [profiles.{name}] table or choose another --profile", path.display())]
    UnknownProfile {
        name: String,
        path: PathBuf,
        known: String,
    },
    #[error("profile `{name}` was selected but there is no config file; fix: create {expected} with a [profiles.{name}] table, or pass --config")]
    NoConfigFile { name: String, expected: String },
    #[error("--base-url: {why}; fix: e.g. --base-url http://127.0.0.1:8080/v1")]
    BaseUrlFlag { why: String },
    #[error("environment variable OPENAI_BASE_URL: {why}; fix: unset it or set it to e.g. https://api.openai.com/v1")]
    BaseUrlVariable { why: String },
    #[error(
        "base URL `{url}` is not a URL ({why}); fix: e.g. --base-url http://127.0.0.1:8080/v1"
    )]
    NotAUrl { url: String, why: String },
    #[error("base URL scheme `{scheme}` is not http or https")]
    Scheme { scheme: String },
    #[error("no model named for endpoint {endpoint}; fix: pass --model, set `model` under [model] in the config file, or set LDB_MODEL")]
    NoModel { endpoint: String },
    #[error("--timeout must be at least 1 second")]
    Timeout,
    #[error("--context-tokens must be at least 1")]
    ContextTokens,
    #[error("header name `{name}` is not a valid HTTP header name")]
    HeaderName { name: String },
    #[error("the value of header `{name}` contains characters not allowed in HTTP headers (e.g. a newline)")]
    HeaderValue { name: String },
    #[error("the API key contains characters not allowed in an HTTP header (e.g. a trailing newline); check --api-key / api_key / OPENAI_API_KEY")]
    ApiKey,
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(String),
    /// A fill-in-the-middle request for an endpoint not said to take them.
    #[error("a fill-in-the-middle prompt was asked of endpoint {endpoint}, which is not said to take them; fix: pass --fim (`fim = true` in the config file) if its model takes `<|fim_prefix|>` prompts on /completions, else --patch-form chat")]
    NoFim { endpoint: String },
    /// A run started without a model (`--strategy none` with seeds from a file) needed one.
    #[error("this run was started without a model, but a task needed one")]
    NoModelForRun,
}
