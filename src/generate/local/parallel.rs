//! Several samples of one prompt decoded together: the prompt is evaluated once into sequence
//! 0 and its cache entries shared with the other sequences; then each step decodes one token of
//! every unfinished sample in one batch. On a CPU a step of four sequences costs well under four
//! steps of one (the weights are read once a step: 1.7 here), but a batch lasts as long as its
//! longest reply, and in the search that ate the gain (benchmarks/experiments/parallel-samples.md):
//! off by default.

use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::sampling::LlamaSampler;

use super::llama::{local_error, CallStats, Session, MAX_SEQUENCES};
use super::step::{pick, GenStats, Reply, Step};
use crate::generate::model::{nth_seed, ChatRequest, ModelError, Usage};

/// A sample being written: its sequence's sampler, reply, next token (sampled, not yet
/// decoded) and position.
struct Sample {
    sampler: LlamaSampler,
    reply: Reply,
    next: llama_cpp_2::token::LlamaToken,
    pos: i32,
    done: bool,
}

impl Session<'_> {
    /// `n` samples of `request` (sample `j` seeded `nth_seed(request.seed, first + j)`), decoded
    /// together as sequences 0..n of the context. Afterwards only the prompt stays cached (in
    /// sequence 0): the next call is most often another sample of it.
    pub(super) fn generate_many(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        request: &ChatRequest,
        first: usize,
        n: usize,
    ) -> Result<(Vec<(String, Usage)>, CallStats), ModelError> {
        let local = local_error;
        let n = n.clamp(1, MAX_SEQUENCES);
        let mut batch = LlamaBatch::new(ctx.n_batch().max(1) as usize, 1);
        let ev = self.evaluate_prompt(ctx, request, &mut batch)?;
        let (tokens, prefix) = (&ev.tokens, ev.prefix.as_str());
        let vocab = self.model.vocab();
        let n_ctx = ctx.n_ctx() as usize;
        // The sequences share the context: each reply gets an equal part of what is left.
        let budget = (request
            .max_tokens
            .unwrap_or(self.options.default_max_tokens) as usize)
            .min(n_ctx.saturating_sub(tokens.len() + 1) / n);
        let t_gen = Instant::now();
        let mut work = GenStats::default();
        let mut samples = Vec::with_capacity(n);
        for j in 0..n {
            let seq = j as i32;
            if j > 0 {
                ctx.clear_kv_cache_seq(Some(seq as u32), None, None)
                    .map_err(|e| local("KV cache", &e))?;
                ctx.copy_kv_cache_seq(0, seq, None, None)
                    .map_err(|e| local("KV cache", &e))?;
            }
            let mut r = request.clone();
            r.seed = nth_seed(request.seed, first + j);
            let mut sampler = self.sampler(&r)?;
            // Every sample's first token comes from the prompt's last logits.
            let next = pick(&mut sampler, ctx, ev.logits, false, &mut work);
            samples.push(Sample {
                sampler,
                reply: Reply {
                    bytes: prefix.as_bytes().to_vec(),
                    prefix_len: prefix.len(),
                    generated: 0,
                },
                next,
                pos: ev.pos,
                done: false,
            });
        }
        let mut rows: Vec<usize> = Vec::with_capacity(n);
        loop {
            batch.clear();
            rows.clear();
            for (j, s) in samples.iter_mut().enumerate() {
                if s.done {
                    continue;
                }
                // `next` is sampled, not yet decoded: a stop leaves it undecoded.
                if s.reply.generated >= budget || vocab.is_eog(s.next) {
                    s.done = true;
                    continue;
                }
                let stop = s.reply.push(&vocab, s.next, request) == Step::Stop;
                if stop || s.reply.generated >= budget {
                    s.done = true;
                    continue;
                }
                batch
                    .add(s.next, s.pos, &[j as i32], true)
                    .map_err(|e| local("batch", &e))?;
                rows.push(j);
            }
            if rows.is_empty() {
                break;
            }
            let t = Instant::now();
            ctx.decode(&mut batch).map_err(|e| local("decode", &e))?;
            work.decode_secs += t.elapsed().as_secs_f64();
            work.decodes += 1;
            for (row, &j) in rows.iter().enumerate() {
                let s = &mut samples[j];
                s.pos += 1;
                s.next = pick(&mut s.sampler, ctx, row as i32, false, &mut work);
            }
        }
        // Keep the prompt alone: drop the other sequences and sequence 0's reply.
        for j in 1..n {
            ctx.clear_kv_cache_seq(Some(j as u32), None, None)
                .map_err(|e| local("KV cache", &e))?;
        }
        ctx.clear_kv_cache_seq(Some(0), Some(tokens.len() as u32), None)
            .map_err(|e| local("KV cache", &e))?;
        self.cached.truncate(tokens.len());
        let generated: usize = samples.iter().map(|s| s.reply.generated).sum();
        let stats = ev.stats(generated, t_gen.elapsed().as_secs_f64(), &work);
        let replies = samples
            .into_iter()
            .enumerate()
            .map(|(j, s)| {
                let usage = Usage {
                    prompt_tokens: tokens.len() as u64,
                    completion_tokens: s.reply.generated as u64,
                    // The first sample pays for the prompt; the others share it.
                    cached_prompt_tokens: if j == 0 { ev.reused } else { tokens.len() } as u64,
                };
                (String::from_utf8_lossy(&s.reply.bytes).into_owned(), usage)
            })
            .collect();
        Ok((replies, stats))
    }
}
