//! On-disk response cache: wraps any [`ChatModel`] so that reruns are reproducible and free.
//!
//! The key is the SHA-256 of a canonical JSON of (namespace, full [`ChatRequest`]); the namespace
//! names the backend (base URL and model for HTTP endpoints). Each entry is one JSON file,
//! `<dir>/<2 hex>/<64 hex>.json`, written to a temporary file and renamed into place so readers
//! never see half an entry. Unreadable entries are misses and get replaced; the cache never makes
//! a call fail. Errors are not cached.
//!
//! Greedy requests (`temperature: Some(0.0)`) always map to the same entry, and so do seeded
//! ones: the seed names the sample, so the same request with the same seed is the same sample
//! wherever it is made (another task with the same text, a later run). Unseeded sampled requests
//! would all return the first sample if keyed the same way, which breaks repeated sampling; so the
//! n-th identical unseeded request of a process gets entry n, and a rerun replays the same
//! sequence of samples.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{ChatModel, ChatRequest, ChatResponse, ModelError};

/// Bumped when the key material or the entry format changes, so old entries are simply missed.
const CACHE_VERSION: u32 = 1;

/// Counters of one cache since it was created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    /// Entries that could not be written (full disk, permissions); the calls still succeeded.
    pub write_errors: u64,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    version: u32,
    key: String,
    namespace: String,
    /// Kept for people reading the cache; lookups go by `key`.
    request: ChatRequest,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sample: Option<u32>,
    response: ChatResponse,
}

/// A [`ChatModel`] that answers from disk when it has seen the request before.
pub struct CachedModel<M: ChatModel> {
    inner: M,
    dir: PathBuf,
    namespace: String,
    /// How often each sampled request has been made in this process.
    seen: Mutex<HashMap<String, u32>>,
    hits: AtomicU64,
    misses: AtomicU64,
    write_errors: AtomicU64,
}

impl<M: ChatModel> CachedModel<M> {
    /// Cache `inner` under `dir` (created on first write), namespaced by `inner.name()`.
    pub fn new(inner: M, dir: impl Into<PathBuf>) -> Self {
        let namespace = inner.name();
        CachedModel {
            inner,
            dir: dir.into(),
            namespace,
            seen: Mutex::new(HashMap::new()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            write_errors: AtomicU64::new(0),
        }
    }

    /// Use `namespace` instead of the backend's name in the key (e.g. the full base URL + model,
    /// so two servers that serve the same model name do not share entries).
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    pub fn inner(&self) -> &M {
        &self.inner
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            write_errors: self.write_errors.load(Ordering::Relaxed),
        }
    }

    /// The entry file for a key.
    pub fn entry_path(&self, key: &str) -> PathBuf {
        let shard = key.get(..2).unwrap_or("xx");
        self.dir.join(shard).join(format!("{key}.json"))
    }

    /// Which sample of an unseeded sampled request this call is (`None` for greedy and seeded
    /// requests, which name their sample).
    fn sample_index(&self, request: &ChatRequest) -> Option<u32> {
        if is_greedy(request) || request.seed.is_some() {
            return None;
        }
        let base = cache_key(&self.namespace, request, None);
        // A poisoned lock only means another call panicked mid-increment; the map is still fine.
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let n = seen.entry(base).or_insert(0);
        let index = *n;
        *n += 1;
        Some(index)
    }

    async fn lookup(&self, path: &Path, key: &str) -> Option<ChatResponse> {
        let bytes = tokio::fs::read(path).await.ok()?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        (entry.version == CACHE_VERSION && entry.key == key).then_some(entry.response)
    }

    async fn store(&self, path: PathBuf, entry: Entry) {
        let written = tokio::task::spawn_blocking(move || write_atomically(&path, &entry)).await;
        if !matches!(written, Ok(Ok(()))) {
            self.write_errors.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn write_atomically(path: &Path, entry: &Entry) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("cache entry path has no parent"))?;
    std::fs::create_dir_all(dir)?;
    let bytes = serde_json::to_vec_pretty(entry).map_err(std::io::Error::other)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(&bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Temperature exactly 0: the same request should get the same answer.
fn is_greedy(request: &ChatRequest) -> bool {
    request.temperature == Some(0.0)
}

/// The cache key of `request` under `namespace` (lowercase SHA-256 hex). `sample` distinguishes
/// repeated sampled requests.
pub fn cache_key(namespace: &str, request: &ChatRequest, sample: Option<u32>) -> String {
    let material = serde_json::json!({
        "version": CACHE_VERSION,
        "namespace": namespace,
        "request": request,
        "sample": sample,
    });
    let digest = Sha256::digest(canonical_json(&material).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// JSON with object keys sorted at every level, so equal values always hash equally whatever
/// order their maps were built in.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                write_canonical(&map[k.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[async_trait::async_trait]
impl<M: ChatModel> ChatModel for CachedModel<M> {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let sample = self.sample_index(request);
        let key = cache_key(&self.namespace, request, sample);
        let path = self.entry_path(&key);
        if let Some(mut hit) = self.lookup(&path, &key).await {
            self.hits.fetch_add(1, Ordering::Relaxed);
            hit.cached = true;
            hit.latency = Duration::ZERO;
            hit.attempts = 1;
            return Ok(hit);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let response = self.inner.chat(request).await?;
        let entry = Entry {
            version: CACHE_VERSION,
            key,
            namespace: self.namespace.clone(),
            request: request.clone(),
            sample,
            response: ChatResponse {
                cached: false,
                ..response.clone()
            },
        };
        self.store(path, entry).await;
        Ok(response)
    }

    /// Each sample is cached under its own seed; when none is cached they are drawn from the
    /// backend in one batch, so an endpoint that honours `n` still samples them together.
    async fn chat_n(
        &self,
        request: &ChatRequest,
        n: usize,
    ) -> Result<Vec<ChatResponse>, ModelError> {
        if n <= 1 || request.seed.is_none() {
            return crate::generate::model::samples_one_by_one(self, request, n).await;
        }
        let mut out: Vec<Option<ChatResponse>> = vec![None; n];
        let mut misses: Vec<(usize, ChatRequest, Option<u32>, String)> = Vec::new();
        for (i, slot) in out.iter_mut().enumerate() {
            let mut r = request.clone();
            r.seed = crate::generate::model::nth_seed(request.seed, i);
            let sample = self.sample_index(&r);
            let key = cache_key(&self.namespace, &r, sample);
            match self.lookup(&self.entry_path(&key), &key).await {
                Some(mut hit) => {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    hit.cached = true;
                    hit.latency = Duration::ZERO;
                    hit.attempts = 1;
                    *slot = Some(hit);
                }
                None => misses.push((i, r, sample, key)),
            }
        }
        if !misses.is_empty() {
            self.misses
                .fetch_add(misses.len() as u64, Ordering::Relaxed);
            // Sample i of a batch has seed nth_seed(seed, i): only a batch of all n draws the
            // samples the cached ones were keyed by; a few missing ones are drawn one by one,
            // each with its own seed, so a partly cached batch gets the samples a cold one would.
            let drawn = if misses.len() == n {
                self.inner.chat_n(request, n).await?
            } else {
                let mut drawn = Vec::with_capacity(misses.len());
                for (_, r, _, _) in &misses {
                    drawn.extend(self.inner.chat_n(r, 1).await?);
                }
                drawn
            };
            for ((i, r, sample, key), response) in misses.into_iter().zip(drawn) {
                let entry = Entry {
                    version: CACHE_VERSION,
                    key: key.clone(),
                    namespace: self.namespace.clone(),
                    request: r,
                    sample,
                    response: ChatResponse {
                        cached: false,
                        ..response.clone()
                    },
                };
                self.store(self.entry_path(&key), entry).await;
                out[i] = Some(response);
            }
        }
        out.into_iter()
            .map(|r| {
                r.ok_or_else(|| {
                    ModelError::InvalidResponse("the backend returned fewer samples".into())
                })
            })
            .collect()
    }

    fn batches(&self) -> bool {
        self.inner.batches()
    }

    fn fills_in_middle(&self) -> bool {
        self.inner.fills_in_middle()
    }
    fn context_tokens(&self) -> Option<usize> {
        self.inner.context_tokens()
    }

    fn reply_limit(&self) -> Option<u32> {
        self.inner.reply_limit()
    }

    fn name(&self) -> String {
        self.inner.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_everywhere() {
        let a = json!({"b": 1, "a": {"y": [1, {"d": 2, "c": 3}], "x": "s"}});
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":"s","y":[1,{"c":3,"d":2}]},"b":1}"#
        );
    }

    #[test]
    fn keys_depend_on_everything() {
        let r = ChatRequest::new(vec![super::super::Message::user("hi")]);
        let k = cache_key("ns", &r, None);
        assert_eq!(k.len(), 64);
        assert_eq!(k, cache_key("ns", &r, None));
        assert_ne!(k, cache_key("other", &r, None));
        assert_ne!(k, cache_key("ns", &r, Some(0)));
        let mut r2 = r.clone();
        r2.max_tokens = Some(5);
        assert_ne!(k, cache_key("ns", &r2, None));
    }
}
