//! The embedded local model: llama.cpp in-process through `llama-cpp-2`.
//!
//! One worker thread owns the model and its context and serves requests in order; the async
//! side talks to it through a channel. Consecutive calls in a debugging session repeat a long
//! prefix (system prompt, task, program, the previous exchange), so the KV cache of the longest
//! shared token prefix is kept and only the new tail is evaluated. Decoding is greedy unless a
//! temperature is given; a JSON schema becomes a grammar that constrains sampling.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::session::LlamaStateSeqFlags;
use llama_cpp_2::context::session::SeqState;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

pub use super::options::LocalOptions;
use super::prompt_cache::{reusable, shared_prefix, PromptCache};
use super::step::{pick, GenStats, Reply, Step};
use crate::generate::model::{ChatModel, ChatRequest, ChatResponse, ModelError, Role, Usage};

/// What the last call cost, for benchmarks and reports.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CallStats {
    pub prompt_tokens: usize,
    /// Prompt tokens whose KV entries were reused from the previous call or a snapshot.
    pub reused_tokens: usize,
    /// Whether the reused tokens came from a prompt snapshot rather than the live cache.
    pub restored: bool,
    /// Prompt tokens actually evaluated.
    pub evaluated_tokens: usize,
    pub prompt_secs: f64,
    pub generated_tokens: usize,
    pub generation_secs: f64,
    /// Of `generation_secs`: the model's forward passes.
    pub decode_secs: f64,
    /// Of `generation_secs`: choosing tokens from the logits (grammar included).
    pub sample_secs: f64,
    /// Forward passes during generation (fewer than the tokens when drafts are kept).
    pub decodes: usize,
    /// Drafted tokens decoded, and of them the ones kept.
    pub drafted_tokens: usize,
    pub accepted_tokens: usize,
    /// Steps where the grammar rejected the most likely token and filtered the vocabulary.
    pub grammar_full_passes: usize,
}

struct Job {
    request: ChatRequest,
    /// Samples wanted; more than one are decoded together ([`Session::generate_many`]), sample
    /// `j` with seed `nth_seed(request.seed, first + j)`.
    n: usize,
    first: usize,
    reply: tokio::sync::oneshot::Sender<Result<Vec<(String, Usage)>, ModelError>>,
}

/// A GGUF model served by a dedicated thread.
pub struct LocalModel {
    jobs: Mutex<mpsc::Sender<Job>>,
    name: String,
    stats: Arc<Mutex<CallStats>>,
    load_secs: f64,
    threads: u32,
    context_len: u32,
    /// [`LocalOptions::default_max_tokens`].
    reply_limit: u32,
    /// [`LocalOptions::parallel_samples`].
    parallel: usize,
}

/// llama.cpp's backend may be initialised once per process.
fn backend() -> Result<&'static LlamaBackend, ModelError> {
    static BACKEND: OnceLock<Result<LlamaBackend, llama_cpp_2::LlamaCppError>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(
                llama_cpp_2::LogOptions::default().with_logs_enabled(false),
            );
            LlamaBackend::init()
        })
        .as_ref()
        .map_err(|e| ModelError::Local(format!("cannot initialise llama.cpp: {e}")))
}

impl LocalModel {
    /// Load `path` (a GGUF file) and start the worker thread.
    pub fn load(path: &Path, name: &str, options: LocalOptions) -> Result<LocalModel, ModelError> {
        if !path.is_file() {
            return Err(ModelError::Local(format!(
                "model file {} does not exist",
                path.display()
            )));
        }
        let threads = options.threads.unwrap_or_else(idle_cores).max(1);
        let context_len = options.context_len;
        let reply_limit = options.default_max_tokens;
        let parallel = options.parallel_samples.clamp(1, MAX_SEQUENCES);
        let (tx, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<f64, ModelError>>();
        let stats = Arc::new(Mutex::new(CallStats::default()));
        let worker_stats = stats.clone();
        let path: PathBuf = path.to_path_buf();
        std::thread::Builder::new()
            .name("ldb-llama".into())
            .spawn(move || serve(&path, &options, threads, rx, ready_tx, worker_stats))
            .map_err(|e| ModelError::Local(format!("cannot start the model thread: {e}")))?;
        let load_secs = ready_rx
            .recv()
            .map_err(|_| ModelError::Local("the model thread stopped while loading".into()))??;
        Ok(LocalModel {
            jobs: Mutex::new(tx),
            name: format!("local:{name}"),
            stats,
            load_secs,
            threads,
            context_len,
            reply_limit,
            parallel,
        })
    }

    pub fn last_stats(&self) -> CallStats {
        self.stats.lock().map(|s| *s).unwrap_or_default()
    }

    pub fn load_secs(&self) -> f64 {
        self.load_secs
    }

    pub fn threads(&self) -> u32 {
        self.threads
    }

    fn send(&self, job: Job) -> Result<(), ModelError> {
        self.jobs
            .lock()
            .map_err(|_| ModelError::Local("model channel poisoned".into()))?
            .send(job)
            .map_err(|_| ModelError::Local("the model thread has stopped".into()))
    }
}

#[async_trait::async_trait]
impl ChatModel for LocalModel {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        // Before tokenizing: a prompt far past the context is refused at once.
        crate::generate::model::check_prompt_size(request, self.context_tokens())?;
        let started = Instant::now();
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job = Job {
            request: request.clone(),
            n: 1,
            first: 0,
            reply,
        };
        self.send(job)?;
        let replies = answer
            .await
            .map_err(|_| ModelError::Local("the model thread dropped the request".into()))??;
        let (content, usage) = replies
            .into_iter()
            .next()
            .ok_or_else(|| ModelError::Local("the model thread returned no reply".into()))?;
        Ok(ChatResponse {
            content,
            usage,
            latency: started.elapsed(),
            model: self.name.clone(),
            cached: false,
            attempts: 1,
        })
    }

    /// With [`LocalOptions::parallel_samples`] above one, the samples are decoded together,
    /// that many at a time, sample `i` with seed `nth_seed(request.seed, i)` as when drawn one
    /// by one (the same prompt, a sampler each; the batched arithmetic may round differently,
    /// so a sample need not be the one drawn alone).
    async fn chat_n(
        &self,
        request: &ChatRequest,
        n: usize,
    ) -> Result<Vec<ChatResponse>, ModelError> {
        let parallel = self.parallel.max(1);
        if parallel == 1
            || n <= 1
            || request.seed.is_none()
            || request.temperature.is_none_or(|t| t <= 0.0)
        {
            return crate::generate::model::samples_one_by_one(self, request, n).await;
        }
        crate::generate::model::check_prompt_size(request, self.context_tokens())?;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let started = Instant::now();
            let k = (n - out.len()).min(parallel);
            let (reply, answer) = tokio::sync::oneshot::channel();
            self.send(Job {
                request: request.clone(),
                n: k,
                first: out.len(),
                reply,
            })?;
            let replies = answer
                .await
                .map_err(|_| ModelError::Local("the model thread dropped the request".into()))??;
            let latency = started.elapsed();
            for (content, usage) in replies {
                out.push(ChatResponse {
                    content,
                    usage,
                    latency,
                    model: self.name.clone(),
                    cached: false,
                    attempts: 1,
                });
            }
        }
        Ok(out)
    }

    fn batches(&self) -> bool {
        self.parallel > 1
    }

    fn fills_in_middle(&self) -> bool {
        true
    }

    fn context_tokens(&self) -> Option<usize> {
        Some(self.context_len as usize)
    }

    fn reply_limit(&self) -> Option<u32> {
        Some(self.reply_limit)
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

fn serve(
    path: &Path,
    options: &LocalOptions,
    threads: u32,
    jobs: mpsc::Receiver<Job>,
    ready: mpsc::Sender<Result<f64, ModelError>>,
    stats: Arc<Mutex<CallStats>>,
) {
    let started = Instant::now();
    let loaded = (|| {
        let backend = backend()?;
        let params = LlamaModelParams::default().with_use_mmap(options.use_mmap);
        let model = LlamaModel::load_from_file(backend, path, &params)
            .map_err(|e| ModelError::Local(format!("cannot load {}: {e}", path.display())))?;
        Ok::<_, ModelError>((backend, model))
    })();
    let (backend, model) = match loaded {
        Ok(x) => x,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let batch_threads = std::thread::available_parallelism()
        .map(|n| n.get() as i32)
        .unwrap_or(1);
    let parallel = options.parallel_samples.clamp(1, MAX_SEQUENCES);
    let ctx_params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(options.context_len))
        .with_n_batch(512)
        // Samples decoded together are sequences of one cache, all of the context theirs. Only
        // then: the cache's layout for several sequences changes a single sequence's arithmetic
        // (a seeded sample drawn alone is not the same program with it).
        .with_n_seq_max(parallel as u32)
        .with_kv_unified(parallel > 1)
        .with_n_threads(threads as i32)
        .with_n_threads_batch(batch_threads)
        .with_flash_attention_policy(if options.flash_attention {
            llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_AUTO
        } else {
            llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_DISABLED
        });
    let mut ctx = match model.new_context(backend, ctx_params) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(ModelError::Local(format!(
                "cannot create a context: {e}"
            ))));
            return;
        }
    };
    let _ = ready.send(Ok(started.elapsed().as_secs_f64()));
    let mut session = Session {
        model: &model,
        cached: Vec::new(),
        whole: 0,
        snapshots: PromptCache::new(options.prompt_snapshots, options.snapshot_bytes),
        options,
    };
    while let Ok(job) = jobs.recv() {
        let result = if job.n > 1 {
            session.generate_many(&mut ctx, &job.request, job.first, job.n)
        } else {
            session
                .generate(&mut ctx, &job.request)
                .map(|(text, usage, call)| (vec![(text, usage)], call))
        };
        let result = result.map(|(replies, call)| {
            if let Ok(mut s) = stats.lock() {
                *s = call;
            }
            replies
        });
        if result.is_err() {
            // A failed call may leave the cache half-written (and, decoding samples together,
            // other sequences in it); start clean next time.
            session.cached.clear();
            session.whole = 0;
            session.snapshots.clear();
            let _ = ctx.clear_kv_cache_seq(None, None, None);
        }
        let _ = job.reply.send(result);
    }
}

/// A prompt evaluated into sequence 0 ([`Session::evaluate_prompt`]).
pub(super) struct Evaluated {
    pub(super) tokens: Vec<LlamaToken>,
    pub(super) reused: usize,
    pub(super) restored: bool,
    /// Prompt tokens evaluated by this call.
    pub(super) evaluated: usize,
    pub(super) prompt_secs: f64,
    /// The position of the first reply token.
    pub(super) pos: i32,
    /// The batch index of the last prompt token's logits.
    pub(super) logits: i32,
    /// What the reply starts with (the request's reply prefix).
    pub(super) prefix: String,
}

impl Evaluated {
    /// What a call with this prompt cost, given its generation's work.
    pub(super) fn stats(
        &self,
        generated: usize,
        generation_secs: f64,
        work: &GenStats,
    ) -> CallStats {
        CallStats {
            prompt_tokens: self.tokens.len(),
            reused_tokens: self.reused,
            restored: self.restored,
            evaluated_tokens: self.evaluated,
            prompt_secs: self.prompt_secs,
            generated_tokens: generated,
            generation_secs,
            decode_secs: work.decode_secs,
            sample_secs: work.sample_secs,
            decodes: work.decodes,
            drafted_tokens: work.drafted,
            accepted_tokens: work.accepted,
            grammar_full_passes: work.grammar_full_passes,
        }
    }
}

pub(super) fn local_error(what: &str, e: &dyn std::fmt::Display) -> ModelError {
    ModelError::Local(format!("{what}: {e}"))
}

fn batch_size(ctx: &LlamaContext<'_>) -> usize {
    ctx.n_batch().max(1) as usize
}

pub(super) struct Session<'m> {
    pub(super) model: &'m LlamaModel,
    /// Tokens whose KV entries are in sequence 0 of the context, in order.
    pub(super) cached: Vec<LlamaToken>,
    /// Leading cached tokens evaluated in whole prompt chunks (`LocalOptions::prompt_chunk`);
    /// only these are reused.
    pub(super) whole: usize,
    /// KV states of earlier prompts, restored when a prompt shares more with one of them.
    snapshots: PromptCache<LlamaToken, SeqState>,
    pub(super) options: &'m LocalOptions,
}

impl Session<'_> {
    /// Evaluate the request's prompt (the reply prefix included) into sequence 0, reusing what
    /// the cache holds; the logits of its last token are at `Evaluated::logits` of `batch`.
    pub(super) fn evaluate_prompt(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        request: &ChatRequest,
        batch: &mut LlamaBatch,
    ) -> Result<Evaluated, ModelError> {
        let local = local_error;
        // A raw prompt (fill-in-the-middle) goes as is; its special tokens are parsed below.
        let (mut prompt, prefix) = match &request.raw_prompt {
            Some(raw) => (raw.clone(), ""),
            None => (
                self.render(request)?,
                request.reply_prefix.as_deref().unwrap_or(""),
            ),
        };
        prompt.push_str(prefix);
        let vocab = self.model.vocab();
        let tokens = vocab.tokenize(prompt.as_bytes(), vocab.should_add_bos(), true);
        let n_ctx = ctx.n_ctx() as usize;
        if tokens.is_empty() || tokens.len() + 16 >= n_ctx {
            return Err(ModelError::Local(format!(
                "the prompt has {} tokens; the context holds {n_ctx} (raise the context length)",
                tokens.len()
            )));
        }

        // Reuse the longest shared prefix (in whole chunks: `reusable`); always evaluate at
        // least the last prompt token so there are logits to sample from. A chunk is one
        // batch at most.
        let n_batch = batch_size(ctx);
        let chunk = self.options.prompt_chunk.min(n_batch);
        if !self.options.reuse_prefix {
            self.cached.clear();
            self.whole = 0;
        }
        let live = reusable(
            shared_prefix(&self.cached, &tokens),
            self.whole,
            tokens.len(),
            chunk,
        );
        let mut restored = false;
        if self.options.reuse_prefix {
            // Restoring costs a copy of the state: only worth it for a real gain.
            if let Some(hit) = self.snapshots.best(&tokens, live + MIN_SNAPSHOT_TOKENS) {
                ctx.clear_kv_cache_seq(Some(0), None, None)
                    .map_err(|e| local("KV cache", &e))?;
                self.cached.clear();
                ctx.state_seq_set(hit.state, 0)
                    .map_err(|e| local("restoring a prompt snapshot", &e))?;
                self.cached.extend_from_slice(hit.tokens);
                // A snapshot is taken right after its prompt was evaluated.
                self.whole = whole_chunks(hit.tokens.len(), chunk);
                restored = true;
            }
        }
        let reused = reusable(
            shared_prefix(&self.cached, &tokens),
            self.whole,
            tokens.len(),
            chunk,
        );
        ctx.clear_kv_cache_seq(Some(0), Some(reused as u32), None)
            .map_err(|e| local("KV cache", &e))?;
        self.cached.truncate(reused);

        let t_prompt = Instant::now();
        // `reused` is a multiple of the chunk, so these chunks sit at multiples of it too.
        let step = if chunk > 1 { chunk } else { n_batch };
        let tail = &tokens[reused..];
        let mut pos = reused as i32;
        for (ci, piece) in tail.chunks(step).enumerate() {
            batch.clear();
            let last_chunk = (ci + 1) * step >= tail.len();
            for (i, &tok) in piece.iter().enumerate() {
                let wants_logits = last_chunk && i + 1 == piece.len();
                batch
                    .add(tok, pos, &[0], wants_logits)
                    .map_err(|e| local("batch", &e))?;
                pos += 1;
            }
            ctx.decode(batch).map_err(|e| local("decode", &e))?;
        }
        self.cached.extend_from_slice(tail);
        self.whole = whole_chunks(tokens.len(), chunk);
        if self.options.reuse_prefix
            && self.options.prompt_snapshots > 0
            && tail.len() >= MIN_SNAPSHOT_TOKENS
        {
            let state = ctx
                .state_seq_get(0, LlamaStateSeqFlags::empty())
                .map_err(|e| local("saving a prompt snapshot", &e))?;
            let bytes = state.byte_len();
            self.snapshots.insert(tokens.clone(), state, bytes);
        }
        let prompt_secs = t_prompt.elapsed().as_secs_f64();
        let evaluated = tail.len();
        Ok(Evaluated {
            tokens,
            reused,
            restored,
            evaluated,
            prompt_secs,
            pos,
            logits: batch.n_tokens() - 1,
            prefix: prefix.to_string(),
        })
    }

    fn generate(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        request: &ChatRequest,
    ) -> Result<(String, Usage, CallStats), ModelError> {
        let local = local_error;
        let mut batch = LlamaBatch::new(batch_size(ctx), 1);
        let ev = self.evaluate_prompt(ctx, request, &mut batch)?;
        let (tokens, prefix, mut pos) = (&ev.tokens, ev.prefix.as_str(), ev.pos);
        let vocab = self.model.vocab();
        let n_ctx = ctx.n_ctx() as usize;
        let mut sampler = self.sampler(request)?;
        // Greedy under a grammar: the grammar need only check the most likely token (see
        // `sample_greedy_first`).
        let greedy_grammar =
            request.json_schema.is_some() && !request.temperature.is_some_and(|t| t > 0.0);
        let budget = request
            .max_tokens
            .unwrap_or(self.options.default_max_tokens) as usize;
        let budget = budget.min(n_ctx.saturating_sub(tokens.len() + 1));
        let t_gen = Instant::now();
        // The reply as returned: the prefix the model continued, then what it wrote.
        let mut reply = Reply {
            bytes: prefix.as_bytes().to_vec(),
            prefix_len: prefix.len(),
            generated: 0,
        };
        let mut work = GenStats::default();
        let draft_max = self.options.draft_max;
        // Prompt and reply so far, where drafts are looked up; kept only when drafting.
        let mut history = if draft_max > 0 {
            tokens.clone()
        } else {
            Vec::new()
        };
        let (longest, shortest) = self.options.draft_ngram;
        let mut next = pick(&mut sampler, ctx, ev.logits, greedy_grammar, &mut work);
        'reply: while reply.generated < budget {
            // `next` is sampled, not yet decoded.
            if vocab.is_eog(next) || reply.push(&vocab, next, request) == Step::Stop {
                // Not decoded: it has no KV entry and must not count as cached (a follow-up
                // prompt that repeats the reply would otherwise skip it and leave a gap).
                break;
            }
            if reply.generated >= budget {
                break;
            }
            let draft = if draft_max > 0 {
                history.push(next);
                let room = draft_max.min(budget - reply.generated);
                super::draft::lookup(&history, shortest, longest, room).to_vec()
            } else {
                Vec::new()
            };
            batch.clear();
            for (i, &tok) in std::iter::once(&next).chain(&draft).enumerate() {
                batch
                    .add(tok, pos + i as i32, &[0], true)
                    .map_err(|e| local("batch", &e))?;
            }
            let t = Instant::now();
            ctx.decode(&mut batch).map_err(|e| local("decode", &e))?;
            work.decode_secs += t.elapsed().as_secs_f64();
            work.decodes += 1;
            work.drafted += draft.len();
            self.cached.push(next);
            pos += 1;
            // Keep the drafted tokens the model samples itself, in order; the first token it
            // samples otherwise is the next one to decode.
            for (i, &guess) in draft.iter().enumerate() {
                let token = pick(&mut sampler, ctx, i as i32, greedy_grammar, &mut work);
                let stop = token != guess
                    || vocab.is_eog(token)
                    || reply.push(&vocab, token, request) == Step::Stop
                    || reply.generated >= budget;
                if stop {
                    // The guesses from here on were decoded but are not the reply's.
                    ctx.clear_kv_cache_seq(Some(0), Some(pos as u32), None)
                        .map_err(|e| local("KV cache", &e))?;
                    if token != guess {
                        next = token;
                        continue 'reply;
                    }
                    break 'reply;
                }
                work.accepted += 1;
                history.push(token);
                self.cached.push(token);
                pos += 1;
            }
            next = pick(
                &mut sampler,
                ctx,
                draft.len() as i32,
                greedy_grammar,
                &mut work,
            );
        }
        let generated = reply.generated;
        let bytes = reply.bytes;
        let stats = ev.stats(generated, t_gen.elapsed().as_secs_f64(), &work);
        let usage = Usage {
            prompt_tokens: tokens.len() as u64,
            completion_tokens: generated as u64,
            cached_prompt_tokens: ev.reused as u64,
        };
        Ok((String::from_utf8_lossy(&bytes).into_owned(), usage, stats))
    }

    /// The model's own chat template applied to the messages, ending with the assistant turn.
    fn render(&self, request: &ChatRequest) -> Result<String, ModelError> {
        let messages = request
            .messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                LlamaChatMessage::new(role.to_string(), m.content.clone())
                    .map_err(|e| ModelError::Local(format!("message: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let template = self
            .model
            .chat_template(None)
            .map_err(|e| ModelError::Local(format!("the model has no chat template: {e}")))?;
        self.model
            .apply_chat_template(&template, &messages, true)
            .map_err(|e| ModelError::Local(format!("chat template: {e}")))
    }

    pub(super) fn sampler(&self, request: &ChatRequest) -> Result<LlamaSampler, ModelError> {
        let mut chain = Vec::new();
        if let Some(schema) = &request.json_schema {
            let grammar = llama_cpp_2::json_schema_to_grammar(&schema.schema.to_string())
                .map_err(|e| ModelError::Local(format!("JSON schema to grammar: {e}")))?;
            chain.push(
                LlamaSampler::grammar(self.model, &grammar, "root")
                    .map_err(|e| ModelError::Local(format!("grammar: {e}")))?,
            );
        }
        match request.temperature {
            Some(t) if t > 0.0 => {
                // llama.cpp's own defaults: a small model's long tail is mostly noise.
                chain.push(LlamaSampler::top_k(40));
                chain.push(LlamaSampler::top_p(0.95, 1));
                chain.push(LlamaSampler::min_p(0.05, 1));
                chain.push(LlamaSampler::temp(t));
                // The request's seed, so that K samples of one prompt differ (one fixed seed
                // made every sample of a prompt the same program) and a rerun repeats them.
                let seed = request
                    .seed
                    .map(|s| (s ^ (s >> 32)) as u32)
                    .unwrap_or(self.options.seed);
                chain.push(LlamaSampler::dist(seed));
            }
            _ => chain.push(LlamaSampler::greedy()),
        }
        Ok(LlamaSampler::chain_simple(chain))
    }
}

/// The most samples decoded together ([`LocalOptions::parallel_samples`]).
pub const MAX_SEQUENCES: usize = 4;

/// Prompts (or prompt tails) shorter than this are cheaper to evaluate again than to snapshot.
const MIN_SNAPSHOT_TOKENS: usize = 32;

/// Leading tokens of an evaluated prompt of `len` tokens that lie in whole chunks (all of them
/// when prompts are not chunked).
fn whole_chunks(len: usize, chunk: usize) -> usize {
    if chunk > 1 {
        len / chunk * chunk
    } else {
        len
    }
}

/// Cores not busy with other work, measured over a short window: generation threads that
/// compete with a busy process for a core slow down sharply, so leave busy cores alone.
pub fn idle_cores() -> u32 {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1);
    let sample = || -> Option<(u64, u64)> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        let fields: Vec<u64> = text
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .filter_map(|f| f.parse().ok())
            .collect();
        let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
        Some((fields.iter().sum(), idle))
    };
    let (Some((t0, i0)), Some((t1, i1))) = (sample(), {
        std::thread::sleep(Duration::from_millis(200));
        sample()
    }) else {
        return cores;
    };
    let total = t1.saturating_sub(t0).max(1) as f64;
    let busy = 1.0 - i1.saturating_sub(i0) as f64 / total;
    // A core counts as taken only when mostly busy: brief kernel work must not halve the
    // threads of a model that will run for minutes.
    let busy_cores = (busy * cores as f64 + 0.25).floor() as u32;
    cores.saturating_sub(busy_cores).max(1)
}
