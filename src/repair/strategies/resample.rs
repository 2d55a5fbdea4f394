//! Repeated sampling, the paper's simplest comparison: when the visible tests fail, sample a
//! fresh program from the program generator with the seed prompt, with no feedback at all.

use crate::repair::progress::Phase;
use crate::repair::record::CallPurpose;
use crate::repair::seed;
use crate::repair::AgentError;

use crate::repair::strategies::Round;

/// Sample a new program at `options.resample_temperature`.
pub(super) async fn round(r: &mut Round<'_>) -> Result<Option<String>, AgentError> {
    let fixer = r.fixer;
    r.phase(Phase::Resampling);
    let mut conv = r.conversation()?;
    // Greedy decoding would return the same program every round.
    conv.temperature = fixer.options.resample_temperature;
    // A new seed each round: with one seed, a backend that honours it (the embedded model
    // does) would return the same program every round.
    conv.seed = Some(
        fixer
            .options
            .rng_seed
            .wrapping_add(r.iteration.index as u64),
    );
    conv.user(seed::request(r.task, &fixer.prompts)?);
    if fixer.options.prefill {
        conv.reply_prefix = seed::reply_prefix(r.task);
    }
    let outcome = conv
        .ask_program(
            &*fixer.generator,
            &r.task.entry_point,
            CallPurpose::Resample,
            CallPurpose::RepairResample,
            &fixer.prompts,
        )
        .await;
    r.iteration.calls = conv.calls;
    let (program, problem) = outcome?;
    r.iteration.regeneration_problem = problem;
    Ok(program)
}
