//! One step of the embedded model's generation: the next token picked from the logits (a
//! grammar asked about the most likely token first), and the reply's text as it grows, with
//! the rules that end it (a line limit, a closed code block, the model's own tests).

use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;

use crate::generate::model::ChatRequest;

/// Time and work of one reply's generation.
#[derive(Default)]
pub(super) struct GenStats {
    pub(super) decode_secs: f64,
    pub(super) sample_secs: f64,
    pub(super) decodes: usize,
    pub(super) drafted: usize,
    pub(super) accepted: usize,
    pub(super) grammar_full_passes: usize,
}

/// The next token from the logits at batch index `idx`.
pub(super) fn pick(
    sampler: &mut LlamaSampler,
    ctx: &LlamaContext,
    idx: i32,
    greedy_grammar: bool,
    work: &mut GenStats,
) -> LlamaToken {
    let t = Instant::now();
    let token = if greedy_grammar {
        let (token, full) = sample_greedy_first(sampler, ctx, idx);
        work.grammar_full_passes += usize::from(full);
        token
    } else {
        sampler.sample(ctx, idx)
    };
    work.sample_secs += t.elapsed().as_secs_f64();
    token
}

#[derive(PartialEq)]
pub(super) enum Step {
    Go,
    Stop,
}

/// The reply's text as it is written.
pub(super) struct Reply {
    pub(super) bytes: Vec<u8>,
    pub(super) prefix_len: usize,
    pub(super) generated: usize,
}

impl Reply {
    /// Append a sampled token; `Stop` once the reply is complete (line limit, closed code
    /// block). The token counts as generated either way.
    pub(super) fn push(
        &mut self,
        vocab: &llama_cpp_2::vocab::LlamaVocab<'_>,
        token: LlamaToken,
        request: &ChatRequest,
    ) -> Step {
        let piece = vocab.token_to_piece(token, false, None);
        let backtick = piece.contains(&b'`');
        self.bytes.extend_from_slice(&piece);
        self.generated += 1;
        if let Some(max) = request.max_lines {
            let lines = self.bytes[self.prefix_len..]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            if lines >= max as usize {
                return Step::Stop;
            }
        }
        // Only the model's own text can close the block (the prefix opens it).
        if let (true, Some(needle)) = (backtick, &request.stop_after_code) {
            if crate::generate::model::has_closed_code_block(
                &String::from_utf8_lossy(&self.bytes),
                needle,
            ) {
                return Step::Stop;
            }
        }
        if let Some(entry) = &request.stop_at_self_tests {
            if self.ends_in_self_test(entry, piece.len()) {
                return Step::Stop;
            }
        }
        Step::Go
    }

    /// When the last token (`new` bytes) started the model's own tests of `entry`
    /// ([`crate::generate::model::self_test_reply_end`]), cut them, close the code block and
    /// say so: the reply then reads as the program alone.
    fn ends_in_self_test(&mut self, entry: &str, new: usize) -> bool {
        let Some(keep) =
            crate::generate::model::self_test_reply_end(&self.bytes, new, self.prefix_len, entry)
        else {
            return false;
        };
        self.bytes.truncate(keep);
        self.bytes.extend_from_slice(b"```\n");
        true
    }
}

/// The token a greedy `chain` that starts with a grammar picks, with the grammar asked about the
/// most likely token alone: only when it rejects that token does it filter the whole vocabulary
/// (150k tokens a step, which cost more than the model's own step). The grammar passes the most
/// likely token most of the time, and when it does that token is also the most likely allowed
/// one, so the choice is the same as filtering first. llama.cpp's own sampler does the same.
/// The second value says whether the whole vocabulary was filtered.
fn sample_greedy_first(
    chain: &mut LlamaSampler,
    ctx: &LlamaContext,
    idx: i32,
) -> (LlamaToken, bool) {
    let logits = ctx.get_logits_ith(idx);
    // The first of the highest logits, as llama.cpp's greedy sampler takes it.
    let mut best = 0;
    for (i, &l) in logits.iter().enumerate() {
        if l > logits[best] {
            best = i;
        }
    }
    let (Ok(id), Some(&logit)) = (i32::try_from(best), logits.get(best)) else {
        return (chain.sample(ctx, idx), true);
    };
    let token = LlamaToken(id);
    let mut one = LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, logit, 0.0)], false);
    chain.apply(&mut one);
    if one.data.first().is_some_and(|d| d.logit().is_finite()) {
        chain.accept(token);
        (token, false)
    } else {
        (chain.sample(ctx, idx), true)
    }
}
