//! Settings of the embedded model, apart from the backend so that a build without llama.cpp
//! still parses them.

/// Settings of the local backend.
#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// Threads for generation; `None` picks from the cores idle when the model loads.
    pub threads: Option<u32>,
    /// Context length in tokens (prompt + reply).
    pub context_len: u32,
    /// Map the model file instead of reading it into memory (lower RSS when off: see README).
    pub use_mmap: bool,
    /// Reply length when the request does not say.
    pub default_max_tokens: u32,
    /// Sampling seed for non-zero temperatures when the request names none.
    pub seed: u32,
    /// Keep the KV cache of the longest prefix shared with the previous call (off only to
    /// measure what it saves).
    pub reuse_prefix: bool,
    /// Prompts are evaluated in chunks of this many tokens at fixed positions and only whole
    /// chunks are reused, so a request's reply does not depend on the requests before it
    /// (`prompt_cache::reusable`); 0 reuses any shared prefix and evaluates the rest at once.
    pub prompt_chunk: usize,
    /// Evaluated prompts whose KV state is kept for later calls (`PromptCache`); 0 keeps
    /// only the live cache.
    pub prompt_snapshots: usize,
    /// Bytes of KV state the snapshots may hold.
    pub snapshot_bytes: usize,
    /// llama.cpp's flash attention. Its CPU kernel splits a KV cache of 512 cells or more
    /// across the generation threads and sums the parts, so with it a seeded sample depends on
    /// the thread count (the cores idle at load, by default). Off, the sample does not, and
    /// this CPU build generated faster (benchmarks/experiments/flash-attention.md).
    pub flash_attention: bool,
    /// Prompt-lookup drafting (`draft`): at most this many guessed tokens decoded with each
    /// sampled one; 0 (the default) turns it off. The reply's tokens are the model's own either
    /// way; it did not pay on the default search's calls (benchmarks/experiments/model-time.md).
    pub draft_max: usize,
    /// The longest and shortest suffix of the text so far that a draft is looked up by.
    pub draft_ngram: (usize, usize),
    /// Samples of one prompt decoded together, as sequences of one batch (at most 4). A step
    /// of several sequences costs less than as many steps of one (the weights are read once),
    /// but a batch waits for its longest reply; 1 (the default) draws them one by one
    /// (benchmarks/experiments/parallel-samples.md).
    pub parallel_samples: usize,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            threads: None,
            context_len: 8192,
            use_mmap: true,
            default_max_tokens: 1536,
            seed: 1234,
            reuse_prefix: true,
            prompt_chunk: 32,
            prompt_snapshots: 8,
            snapshot_bytes: 384 << 20,
            flash_attention: false,
            draft_max: 0,
            draft_ngram: (4, 2),
            parallel_samples: 1,
        }
    }
}
