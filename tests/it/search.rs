//! Repair by search at library level, with scripted models and the real sandbox: each proposer
//! alone, deduplication (a program is never run twice), the beam, the token budget, selection
//! by agreement on extra inputs, and that no prompt carries a hidden test.

use std::path::Path;
use std::sync::{Arc, Mutex};

use ldb::generate::model::scripted::ScriptedModel;
use ldb::generate::model::{ChatRequest, Role};
use ldb::generate::prompts::Prompts;
use ldb::repair::progress::Silent;
use ldb::repair::record::{FixReport, FixStatus};
use ldb::repair::search::{Proposer, SearchOptions};
use ldb::repair::{FixOptions, Fixer, Strategy};
use ldb::run::sandbox::{Limits, Sandbox};
use ldb::run::Runner;
use ldb::task::{load_tasks, Task};

const FIXED: &str = "def sum_evens(xs: list) -> int:\n    total = 0\n    for x in xs:\n        if x % 2 == 0:\n            total += x\n    return total\n";
/// Passes the visible tests, differs from FIXED on other inputs (negative evens are dropped).
const FIXED_POSITIVE_ONLY: &str =
    "def sum_evens(xs: list) -> int:\n    return sum(x for x in xs if x % 2 == 0 and x >= 0)\n";
/// FIXED written differently: the same behaviour everywhere.
const FIXED_OTHER: &str =
    "def sum_evens(xs: list) -> int:\n    return sum(x for x in xs if x % 2 == 0)\n";
/// FIXED with other formatting, a comment and a docstring: the same program.
const FIXED_REFORMATTED: &str = "def sum_evens( xs: list ) -> int:\n    \"\"\"Sum of the even elements.\"\"\"\n    total = 0  # running sum\n\n    for x in xs:\n        if x % 2 == 0:\n            total += x\n    return total\n";
const HOPELESS: &str = "def sum_evens(xs: list) -> int:\n    return -1\n";
const VERDICTS: &str = r#"{"verdicts": [{"block": "BLOCK-0", "correct": true, "explanation": "total starts at 0"}, {"block": "BLOCK-1", "correct": false, "explanation": "range(1, len(xs)) skips the first element"}]}"#;

fn program_reply(code: &str) -> String {
    format!("Here is the program:\n```python\n{code}```\n")
}

fn task() -> Task {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sum_evens/task.json");
    load_tasks(&path)
        .expect("example loads")
        .into_iter()
        .next()
        .expect("one task")
}

fn text(request: &ChatRequest) -> String {
    request
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn last_user(request: &ChatRequest) -> String {
    request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map(|m| m.content.clone())
        .unwrap_or_default()
}

struct Run {
    report: FixReport,
    generator: Vec<ChatRequest>,
    debugger: Vec<ChatRequest>,
}

async fn search(
    task: &Task,
    options: SearchOptions,
    budget_tokens: Option<u64>,
    generator: ScriptedModel,
    debugger: ScriptedModel,
) -> Run {
    let generator = Arc::new(generator.with_name("generator"));
    let debugger = Arc::new(debugger.with_name("debugger"));
    let fixer = Fixer {
        seed: Default::default(),
        generator: generator.clone(),
        debugger: debugger.clone(),
        runner: Runner::new(Sandbox::new(env!("CARGO_BIN_EXE_ldb"), Limits::default())),
        prompts: Prompts::new().expect("templates load"),
        options: FixOptions {
            strategy: Strategy::Search,
            max_iters: 4,
            budget_tokens,
            search: options,
            ..FixOptions::default()
        },
    };
    let report = fixer.fix(task, &Silent).await;
    let run = Run {
        report,
        generator: generator.requests(),
        debugger: debugger.requests(),
    };
    assert_no_hidden_tests(task, &run);
    run
}

fn assert_no_hidden_tests(task: &Task, run: &Run) {
    let hidden = task.hidden_tests.as_deref().expect("hidden tests");
    for request in run.generator.iter().chain(&run.debugger) {
        let text = text(request);
        for line in hidden.lines().map(str::trim).filter(|l| l.len() > 8) {
            assert!(
                !text.contains(line),
                "hidden test `{line}` was sent: {text}"
            );
        }
    }
}

fn only(proposer: Proposer, k: usize) -> SearchOptions {
    SearchOptions {
        portfolio: vec![(proposer, k)],
        beam: 1,
        select: 0,
        // A verdict per block, the scripted replies' form; the short form has its own test.
        verdicts: ldb::generate::reply::VerdictForm::Full,
        ..SearchOptions::default()
    }
}

fn no_replies() -> ScriptedModel {
    ScriptedModel::new(Vec::<String>::new())
}

#[tokio::test(flavor = "multi_thread")]
async fn feedback_proposer_shows_every_failing_test_and_fixes() {
    let debugger = ScriptedModel::new([program_reply(HOPELESS), program_reply(FIXED)]);
    let run = search(
        &task(),
        only(Proposer::Feedback, 2),
        None,
        no_replies(),
        debugger,
    )
    .await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed, "{report:#?}");
    assert_eq!(report.strategy, Strategy::Search);
    assert_eq!(report.final_program, FIXED);
    assert!(run.generator.is_empty());
    assert_eq!(run.debugger.len(), 2);
    let ask = last_user(&run.debugger[0]);
    assert!(ask.contains("Find the mistake"), "{ask}");
    assert!(
        ask.contains("got 2, expected 4"),
        "actual vs expected: {ask}"
    );
    assert!(ask.contains("range(1, len(xs))"), "the program: {ask}");
    // The two samples of one prompt carry different seeds and the search temperature.
    let (a, b) = (&run.debugger[0], &run.debugger[1]);
    assert_eq!(a.messages, b.messages, "one prompt, sampled twice");
    assert!(
        a.seed.is_some() && a.seed != b.seed,
        "{:?} {:?}",
        a.seed,
        b.seed
    );
    assert_eq!(a.temperature, Some(0.8));
    // Seed, HOPELESS, FIXED.
    let c = &report.candidates;
    assert_eq!(c.len(), 3);
    assert_eq!(c[0].proposer, Proposer::Seed);
    assert_eq!(c[0].visible_passed, Some(2));
    assert_eq!(c[1].proposer, Proposer::Feedback);
    assert_eq!(c[1].parent, Some(0));
    assert_eq!(c[1].visible_passed, Some(0));
    assert_eq!(c[2].visible_passed, Some(3));
    assert!(c[1].tokens > 0 && c[2].tokens > 0);
    // The last iteration shows the returned program.
    let last = report.iterations.last().expect("iterations");
    assert_eq!(last.program, FIXED);
    assert_eq!(last.passed, 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn ldb_proposer_traces_judges_with_label_enum_and_regenerates() {
    let debugger = ScriptedModel::new([VERDICTS.to_string(), program_reply(FIXED)]);
    let run = search(
        &task(),
        only(Proposer::Ldb, 1),
        None,
        no_replies(),
        debugger,
    )
    .await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed, "{report:#?}");
    assert_eq!(run.debugger.len(), 2);
    let verdict_request = &run.debugger[0];
    assert_eq!(
        verdict_request.temperature,
        Some(0.0),
        "verdicts are greedy"
    );
    let schema = &verdict_request.json_schema.as_ref().expect("schema").schema;
    let labels = &schema["properties"]["verdicts"]["items"]["properties"]["block"]["enum"];
    assert!(
        labels.as_array().is_some_and(|l| !l.is_empty()
            && l.iter()
                .all(|x| x.as_str().is_some_and(|s| s.starts_with("BLOCK-")))),
        "block labels as an enum: {schema}"
    );
    assert!(
        last_user(verdict_request).contains("[BLOCK-"),
        "the trace is shown"
    );
    let regen = &run.debugger[1];
    assert!(last_user(regen).contains("range(1, len(xs)) skips the first element"));
    assert!(regen.temperature.is_some_and(|t| t > 0.0));
    let it = &report.iterations[1];
    assert!(it.trace.is_some() && !it.verdicts.is_empty(), "{it:#?}");
    assert_eq!(report.candidates[1].proposer, Proposer::Ldb);
}

#[tokio::test(flavor = "multi_thread")]
async fn ldb_proposer_with_short_verdicts_names_one_block_and_repairs_from_it() {
    let debugger = ScriptedModel::new([
        r#"{"block": "BLOCK-1", "explanation": "the loop starts at 1 and skips xs[0]"}"#
            .to_string(),
        program_reply(FIXED),
    ]);
    let options = SearchOptions {
        verdicts: ldb::generate::reply::VerdictForm::Short,
        ..only(Proposer::Ldb, 1)
    };
    let run = search(&task(), options, None, no_replies(), debugger).await;
    assert_eq!(run.report.status, FixStatus::Fixed, "{:#?}", run.report);
    let ask = &run.debugger[0];
    let schema = &ask.json_schema.as_ref().expect("schema").schema;
    assert!(
        schema["properties"]["block"]["enum"]
            .as_array()
            .is_some_and(|l| l.iter().any(|x| x == "BLOCK-1")),
        "one block, from the labels shown: {schema}"
    );
    assert!(last_user(ask).contains("find the first one whose result is wrong"));
    assert!(last_user(&run.debugger[1]).contains("[BLOCK-1] the loop starts at 1 and skips xs[0]"));
    let verdicts = &run.report.iterations[1].verdicts;
    assert_eq!(verdicts.len(), 1);
    assert!(!verdicts[0].correct);
}

#[tokio::test(flavor = "multi_thread")]
async fn once_a_candidate_passes_the_votes_come_from_fresh_samples() {
    // Round 1: feedback repairs the seed and passes; the select phase then draws fresh programs
    // only (independent votes), and the one written twice outvotes the first pass.
    let debugger = ScriptedModel::new([program_reply(FIXED_POSITIVE_ONLY)]);
    let generator = ScriptedModel::new([program_reply(FIXED), program_reply(FIXED_REFORMATTED)]);
    let options = SearchOptions {
        portfolio: vec![(Proposer::Feedback, 1), (Proposer::Fresh, 1)],
        beam: 1,
        select: 2,
        ..SearchOptions::default()
    };
    let run = search(&task(), options, None, generator, debugger).await;
    let report = &run.report;
    assert_eq!(run.debugger.len(), 1, "no repair after the first pass");
    assert_eq!(run.generator.len(), 2);
    let proposers: Vec<Proposer> = report.candidates.iter().map(|c| c.proposer).collect();
    assert_eq!(
        proposers,
        [
            Proposer::Seed,
            Proposer::Feedback,
            Proposer::Fresh,
            Proposer::Fresh
        ]
    );
    assert_eq!(report.candidates[3].duplicate_of, Some(2));
    let selection = report.selection.as_ref().expect("selection ran");
    assert_eq!(selection.first_passing, 1);
    assert_eq!(selection.chosen, 2, "{selection:#?}");
    assert_eq!(report.final_program, FIXED);
}

/// One round of the search with `model` as generator and debugger, the rest of `options` kept.
fn one_model_search(model: Arc<ScriptedModel>, options: FixOptions) -> Fixer {
    Fixer {
        seed: Default::default(),
        generator: model.clone(),
        debugger: model,
        runner: Runner::new(Sandbox::new(env!("CARGO_BIN_EXE_ldb"), Limits::default())),
        prompts: Prompts::new().expect("templates load"),
        options: FixOptions {
            strategy: Strategy::Search,
            max_iters: 1,
            ..options
        },
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backend_that_batches_gets_a_jobs_samples_in_one_call() {
    let one_by_one = Arc::new(ScriptedModel::from_fn(|_| Ok(program_reply(HOPELESS))));
    let batching = Arc::new(ScriptedModel::from_fn(|_| Ok(program_reply(HOPELESS))).batching());
    for (model, sizes) in [(one_by_one, vec![1, 1, 1]), (batching, vec![3])] {
        let fixer = one_model_search(
            model.clone(),
            FixOptions {
                search: only(Proposer::Feedback, 3),
                ..FixOptions::default()
            },
        );
        let report = fixer.fix(&task(), &Silent).await;
        assert_eq!(model.batch_sizes(), sizes);
        // Three samples of the same prompt: distinct seeds either way.
        let mut seeds: Vec<_> = model.requests().iter().map(|r| r.seed).collect();
        seeds.dedup();
        assert_eq!(seeds.len(), 3, "{seeds:?}");
        assert_eq!(report.candidates.len(), 4);
    }
}

/// `batch_votes_only`: a backend that batches is asked for one sample at a time until a program
/// passes, then for the votes together; without it, for the round's samples in one call.
#[tokio::test(flavor = "multi_thread")]
async fn votes_only_are_asked_for_together_with_batch_votes_only() {
    for (votes_only, sizes) in [(true, vec![1, 1, 2]), (false, vec![4])] {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let model = Arc::new(
            ScriptedModel::from_fn(move |_| {
                let i = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Ok(program_reply(if i == 0 { HOPELESS } else { FIXED }))
            })
            .batching(),
        );
        let fixer = one_model_search(
            model.clone(),
            FixOptions {
                search: SearchOptions {
                    batch_votes_only: votes_only,
                    select: 2,
                    ..only(Proposer::Fresh, 4)
                },
                ..FixOptions::default()
            },
        );
        let report = fixer.fix(&task(), &Silent).await;
        assert_eq!(model.batch_sizes(), sizes, "votes only: {votes_only}");
        assert_eq!(report.status, FixStatus::Fixed);
    }
}

/// Fresh samples follow resampling's seeds one at a time (the default), except on a backend
/// that batches: one call with `n` pays the prompt once.
#[tokio::test(flavor = "multi_thread")]
async fn fresh_samples_come_one_by_one_unless_the_backend_batches() {
    let one_by_one = Arc::new(ScriptedModel::from_fn(|_| Ok(program_reply(HOPELESS))));
    let batching = Arc::new(ScriptedModel::from_fn(|_| Ok(program_reply(HOPELESS))).batching());
    for (model, sizes) in [(one_by_one, vec![1, 1, 1]), (batching, vec![3])] {
        let fixer = one_model_search(
            model.clone(),
            FixOptions {
                rng_seed: 5,
                search: SearchOptions {
                    fresh_as_resample: true,
                    ..only(Proposer::Fresh, 3)
                },
                ..FixOptions::default()
            },
        );
        fixer.fix(&task(), &Silent).await;
        assert_eq!(model.batch_sizes(), sizes);
        let seeds: Vec<_> = model.requests().iter().map(|r| r.seed).collect();
        if sizes.len() == 3 {
            // Resampling's seeds, in its order.
            assert_eq!(seeds, [Some(5), Some(6), Some(7)]);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repair_that_gives_the_parent_back_is_not_asked_again() {
    // The model returns the failing seed unchanged: the same prompt would do it again.
    let seed = task().seed.expect("seed");
    let unchanged = ScriptedModel::from_fn(move |_| Ok(program_reply(&seed)));
    let run = search(
        &task(),
        only(Proposer::Feedback, 3),
        None,
        no_replies(),
        unchanged,
    )
    .await;
    assert_eq!(
        run.debugger.len(),
        1,
        "asked once, not 3 samples x 4 rounds"
    );
    assert_eq!(run.report.candidates[1].duplicate_of, Some(0));
    assert_eq!(run.report.status, FixStatus::NotFixed);
}

#[tokio::test(flavor = "multi_thread")]
async fn ldb_proposer_judges_a_parent_once_across_rounds() {
    // Round 1: verdicts + a hopeless program; round 2 repairs the same parent (the seed stays
    // the best) from the same verdicts, without a second verdict call.
    let debugger = ScriptedModel::new([
        VERDICTS.to_string(),
        program_reply(HOPELESS),
        program_reply(FIXED),
    ]);
    let run = search(
        &task(),
        only(Proposer::Ldb, 1),
        None,
        no_replies(),
        debugger,
    )
    .await;
    assert_eq!(run.report.status, FixStatus::Fixed, "{:#?}", run.report);
    let purposes: Vec<_> = run
        .report
        .iterations
        .iter()
        .flat_map(|i| i.calls.iter().map(|c| c.purpose.name()))
        .collect();
    assert_eq!(purposes, ["debug", "regenerate", "regenerate"]);
    assert_ne!(
        run.debugger[1].seed, run.debugger[2].seed,
        "new seed each round"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn fresh_proposer_asks_the_generator_with_the_task_alone() {
    let generator = ScriptedModel::new([program_reply(FIXED)]);
    let run = search(
        &task(),
        only(Proposer::Fresh, 1),
        None,
        generator,
        no_replies(),
    )
    .await;
    assert_eq!(run.report.status, FixStatus::Fixed);
    assert!(run.debugger.is_empty());
    assert_eq!(run.generator.len(), 1);
    let ask = text(&run.generator[0]);
    assert!(
        !ask.contains("range(1, len(xs))"),
        "no program in a fresh prompt: {ask}"
    );
    assert!(ask.contains(task().prompt.trim()));
    assert_eq!(run.report.candidates[1].parent, None);
}

/// Regression: a fresh reply that ran away (a loop of text, no program, cut at the embedded
/// model's reply limit) was followed by a repair request carrying the whole runaway back as
/// prompt, and HumanEval/17 spent 5,232 tokens of a 3,000-token budget on it. A reply cut at
/// the backend's limit now gets no repair request.
#[tokio::test(flavor = "multi_thread")]
async fn a_runaway_reply_cut_at_the_cap_gets_no_repair_request() {
    let runaway = "I will think about it again. ".repeat(400);
    let generator = ScriptedModel::new([runaway, program_reply(FIXED)]).with_reply_limit(1536);
    let run = search(
        &task(),
        only(Proposer::Fresh, 2),
        None,
        generator,
        no_replies(),
    )
    .await;
    assert_eq!(run.report.status, FixStatus::Fixed, "{:#?}", run.report);
    // Two samples, no repair request between them.
    assert_eq!(run.generator.len(), 2);
    // Nothing is asked of the backend beyond what it does on its own.
    assert!(run.generator.iter().all(|r| r.max_tokens.is_none()));
    let cut = &run.report.candidates[1];
    assert!(cut.program.is_none());
    let problem = cut.problem.as_deref().unwrap_or_default();
    assert!(problem.contains("cut at"), "{problem}");
    assert!(text(&run.generator[1]).matches("think about it").count() == 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_seen_before_is_never_run_again() {
    // The seed itself and the seed reformatted come back; neither is tested again.
    let seed = task().seed.expect("seed");
    let reformatted = seed.replace("    total = 0\n", "    total = 0  # start\n\n");
    // Fresh programs: a repair that gives its parent back ends its job (see below).
    let generator = ScriptedModel::new([
        program_reply(&seed),
        program_reply(&reformatted),
        program_reply(FIXED),
        program_reply(FIXED_REFORMATTED),
    ]);
    let mut options = only(Proposer::Fresh, 4);
    options.select = 1;
    let run = search(&task(), options, None, generator, no_replies()).await;
    let c = &run.report.candidates;
    assert_eq!(c.len(), 5, "{c:#?}");
    assert_eq!(c[1].duplicate_of, Some(0));
    assert_eq!(c[1].visible_passed, None, "not run");
    assert_eq!(c[2].duplicate_of, Some(0));
    assert_eq!(c[3].duplicate_of, None);
    assert_eq!(c[3].visible_passed, Some(3));
    assert_eq!(c[4].duplicate_of, Some(3));
    assert_eq!(run.report.final_program, FIXED);
    // Tests ran for the seed and FIXED only: 2 of the 5 candidates.
    assert_eq!(c.iter().filter(|c| c.visible_passed.is_some()).count(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn selection_returns_the_majority_of_agreeing_candidates() {
    // The first passing candidate is the odd one out; two others agree on every extra input.
    let debugger = ScriptedModel::new([
        program_reply(FIXED_POSITIVE_ONLY),
        program_reply(FIXED_OTHER),
        program_reply(FIXED),
    ]);
    let mut options = only(Proposer::Feedback, 3);
    options.select = 2;
    let run = search(&task(), options, None, no_replies(), debugger).await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed);
    let selection = report.selection.as_ref().expect("selection ran");
    assert_eq!(selection.first_passing, 1);
    assert_eq!(selection.first_passing_program, FIXED_POSITIVE_ONLY);
    assert_eq!(selection.groups[0], vec![2, 3], "{selection:#?}");
    assert_eq!(selection.chosen, 2);
    assert_eq!(report.final_program, FIXED_OTHER);
    assert!(!selection.inputs.is_empty());
    assert_eq!(report.candidates[1].group, Some(1));
    assert_eq!(report.candidates[2].group, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn without_select_the_first_passing_candidate_ends_the_search() {
    let debugger = ScriptedModel::new([program_reply(FIXED_POSITIVE_ONLY), program_reply(FIXED)]);
    let run = search(
        &task(),
        only(Proposer::Feedback, 2),
        None,
        no_replies(),
        debugger,
    )
    .await;
    assert_eq!(run.debugger.len(), 1, "stopped at the first pass");
    assert_eq!(run.report.final_program, FIXED_POSITIVE_ONLY);
    assert!(run.report.selection.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_budget_stops_the_search() {
    // Long replies (about 250 tokens each), as a real model's are: the prompt is paid once
    // (the backend keeps it) and every reply costs.
    let long = || program_reply(&format!("{HOPELESS}{}", "# think again\n".repeat(70)));
    let replies = Arc::new(Mutex::new(0usize));
    let counter = replies.clone();
    let debugger = ScriptedModel::from_fn(move |_| {
        *counter.lock().expect("lock") += 1;
        Ok(long())
    });
    // Unbounded, the search repairs round after round.
    let open = search(
        &task(),
        only(Proposer::Feedback, 3),
        None,
        no_replies(),
        ScriptedModel::from_fn(move |_| Ok(long())),
    )
    .await;
    let first_call = open.report.candidates[1].tokens;
    assert!(open.debugger.len() >= 4, "{}", open.debugger.len());
    // A budget of a first call and about two replies more (the estimate of a first reply is
    // 300 tokens) stops it early, at most one call past the budget.
    let budget = first_call + 600;
    let run = search(
        &task(),
        only(Proposer::Feedback, 3),
        Some(budget),
        no_replies(),
        debugger,
    )
    .await;
    assert_eq!(run.report.status, FixStatus::NotFixed);
    let calls = *replies.lock().expect("lock");
    assert!(calls >= 1 && calls < open.debugger.len(), "{calls} calls");
    let spent: u64 = run.report.candidates.iter().map(|c| c.tokens).sum();
    assert!(spent <= budget + first_call, "{spent} spent of {budget}");
    // A budget that cannot pay for a single request makes none.
    let none = search(
        &task(),
        only(Proposer::Feedback, 2),
        Some(1),
        no_replies(),
        ScriptedModel::from_fn(|_| Ok(program_reply(HOPELESS))),
    )
    .await;
    assert!(none.debugger.is_empty(), "{:?}", none.debugger.len());
    // The best program is still the seed (2 of 3), not the hopeless candidate.
    assert_eq!(run.report.final_program, task().seed.expect("seed"));
    assert_eq!(run.report.final_passed, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn verdicts_the_budget_cannot_pay_for_are_not_asked() {
    let options = SearchOptions {
        portfolio: vec![(Proposer::Fresh, 1), (Proposer::Ldb, 1)],
        beam: 1,
        select: 0,
        ..SearchOptions::default()
    };
    let hopeless = || ScriptedModel::from_fn(|_| Ok(program_reply(HOPELESS)));
    // Verdict requests carry a schema; program requests do not.
    let verdicts_then_hopeless = || {
        ScriptedModel::from_fn(|r| {
            Ok(if r.json_schema.is_some() {
                VERDICTS.to_string()
            } else {
                program_reply(HOPELESS)
            })
        })
    };
    // Unbounded, round 1 costs a fresh sample and then the verdicts and a repair.
    let open = search(
        &task(),
        options.clone(),
        None,
        hopeless(),
        verdicts_then_hopeless(),
    )
    .await;
    assert!(!open.debugger.is_empty());
    let fresh_cost = open.report.candidates[1].tokens;
    assert_eq!(open.report.candidates[1].proposer, Proposer::Fresh);
    // With room for the fresh sample only (the estimate of a first reply is 300 tokens), the
    // verdicts, whose prompt is far longer, are never asked for.
    let tight = search(
        &task(),
        options,
        Some(fresh_cost + 320),
        hopeless(),
        verdicts_then_hopeless(),
    )
    .await;
    assert!(
        tight.debugger.is_empty(),
        "{} debugger calls",
        tight.debugger.len()
    );
    assert!(!tight.generator.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn max_candidates_bounds_the_search_and_the_beam_keeps_the_best() {
    let debugger = ScriptedModel::from_fn(|_| Ok(program_reply(HOPELESS)));
    let mut options = only(Proposer::Feedback, 3);
    options.max_candidates = 5;
    let run = search(&task(), options, None, no_replies(), debugger).await;
    assert_eq!(run.report.status, FixStatus::NotFixed);
    // One new program (HOPELESS), then duplicates of it; 5 proposals in all.
    assert_eq!(run.report.candidates.len(), 6);
    assert_eq!(run.debugger.len(), 5);
    // Every repair is of the seed: HOPELESS (0 of 3) never enters a beam of one.
    assert!(run.report.candidates[1..]
        .iter()
        .all(|c| c.parent == Some(0)));
}

#[tokio::test(flavor = "multi_thread")]
async fn without_verify_a_seed_that_passes_is_returned_without_a_call() {
    let mut task = task();
    task.seed = Some(FIXED.to_string());
    let run = search(
        &task,
        SearchOptions {
            verify: 0,
            ..SearchOptions::default()
        },
        None,
        no_replies(),
        no_replies(),
    )
    .await;
    assert_eq!(run.report.status, FixStatus::AlreadyPassing);
    assert!(run.generator.is_empty() && run.debugger.is_empty());
    assert_eq!(run.report.candidates.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_replaces_a_passing_seed_that_fresh_programs_outvote() {
    // The seed passes the visible tests but drops negative evens; two of three fresh
    // programs agree with each other, not with it.
    let mut task = task();
    task.seed = Some(FIXED_POSITIVE_ONLY.to_string());
    let generator = ScriptedModel::new([
        program_reply(FIXED),
        program_reply(HOPELESS),
        program_reply(FIXED_OTHER),
    ]);
    let mut options = only(Proposer::Fresh, 3);
    options.verify = 3;
    let run = search(&task, options, None, generator, no_replies()).await;
    assert_eq!(run.generator.len(), 3, "three votes drawn");
    let report = &run.report;
    let selection = report.selection.as_ref().expect("selection ran");
    assert_eq!(selection.first_passing, 0, "the seed was the first to pass");
    assert_eq!(selection.groups[0], vec![1, 3], "{selection:#?}");
    assert_eq!(selection.chosen, 1);
    assert_eq!(report.final_program, FIXED);
    assert_eq!(report.status, FixStatus::Fixed);
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_keeps_a_passing_seed_on_a_tie_when_no_more_votes_are_drawn() {
    // One fresh program agrees with the seed, one disagrees: 2 against 1, the seed stays; and
    // with a 1-1 tie (the other vote fails a visible test) it stays as well when no tie-break
    // votes are drawn (`tie_votes` 0; `repair::a_tied_vote_draws_one_more_before_choosing` has
    // them).
    for (votes, groups) in [
        (
            vec![FIXED_OTHER, FIXED_POSITIVE_ONLY],
            vec![vec![0, 1], vec![2]],
        ),
        (vec![FIXED_POSITIVE_ONLY, HOPELESS], vec![vec![0], vec![1]]),
    ] {
        let mut task = task();
        task.seed = Some(FIXED.to_string());
        let generator = ScriptedModel::new(votes.iter().map(|p| program_reply(p)));
        let mut options = only(Proposer::Fresh, 2);
        options.verify = 2;
        options.tie_votes = 0;
        // Both votes drawn, to see them counted.
        options.settle_votes = false;
        let run = search(&task, options, None, generator, no_replies()).await;
        let report = &run.report;
        let selection = report.selection.as_ref().expect("selection ran");
        assert_eq!(selection.groups, groups, "{selection:#?}");
        assert_eq!(selection.chosen, 0);
        assert_eq!(report.final_program, FIXED);
        assert_eq!(report.status, FixStatus::AlreadyPassing);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn votes_that_cannot_change_the_choice_are_not_drawn() {
    // The seed passes and the first vote agrees with it: two votes against the one left, which
    // cannot outweigh them, so it is not drawn; the same program is chosen as with every vote.
    // With two left (`verify` 3) the vote is open, and after a disagreeing vote (2 against 1,
    // one left) still open: all three are drawn (the third writes the first again, a vote for
    // it).
    for (verify, settle, drawn, groups) in [
        (2, true, 1, vec![vec![0, 1]]),
        (2, false, 2, vec![vec![0, 1], vec![2]]),
        (3, true, 3, vec![vec![0, 1], vec![2]]),
    ] {
        let mut task = task();
        task.seed = Some(FIXED.to_string());
        let generator = ScriptedModel::new([
            program_reply(FIXED_OTHER),
            program_reply(FIXED_POSITIVE_ONLY),
            program_reply(FIXED_OTHER),
        ]);
        let mut options = only(Proposer::Fresh, 3);
        options.verify = verify;
        options.tie_votes = 0;
        options.settle_votes = settle;
        let run = search(&task, options, None, generator, no_replies()).await;
        assert_eq!(
            run.generator.len(),
            drawn,
            "verify {verify}, settle {settle}"
        );
        let report = &run.report;
        let selection = report.selection.as_ref().expect("selection ran");
        assert_eq!(selection.groups, groups, "{selection:#?}");
        assert_eq!(selection.chosen, 0);
        assert_eq!(report.status, FixStatus::AlreadyPassing);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_passing_vote_after_a_fresh_program_passed_ends_the_votes_when_asked() {
    // A fresh program passes first; the first vote fails, the second passes but disagrees (one
    // vote each, one left: the vote is open). `--stop-at-passing-vote` stops there; without it
    // the last vote is drawn.
    for (stop, drawn) in [(true, 3), (false, 4)] {
        let generator = ScriptedModel::new([
            program_reply(FIXED),
            program_reply(HOPELESS),
            program_reply(FIXED_POSITIVE_ONLY),
            program_reply(FIXED_OTHER),
        ]);
        let mut options = only(Proposer::Fresh, 4);
        options.select = 3;
        options.tie_votes = 0;
        options.stop_at_passing_vote = stop;
        let run = search(&task(), options, None, generator, no_replies()).await;
        assert_eq!(run.generator.len(), drawn, "stop {stop}");
        assert_eq!(run.report.status, FixStatus::Fixed);
    }
}

/// FIXED, but crashing (an index out of range inside it) on a list whose first element is
/// larger than its last, which no visible test has: `[4, 3, 2, 1]`, a visible list reversed.
const CRASHES_ON_DESCENDING: &str = "def sum_evens(xs: list) -> int:\n    if xs and xs[0] > xs[-1]:\n        xs = xs[len(xs):][0]\n    return sum(x for x in xs if x % 2 == 0)\n";
/// CRASHES_ON_DESCENDING written differently: the same crash, the same answers elsewhere.
const CRASHES_ON_DESCENDING_OTHER: &str = "def sum_evens(xs: list) -> int:\n    total = 0\n    if xs and xs[0] > xs[-1]:\n        total += xs[len(xs)]\n    for x in xs:\n        if x % 2 == 0:\n            total += x\n    return total\n";

#[tokio::test(flavor = "multi_thread")]
async fn verify_replaces_a_passing_seed_whose_votes_crash_where_another_program_answers() {
    // HumanEval/70's given program and a fresh one crashed on lists of odd length where a
    // third program answered, and agreed with it everywhere else: 2 votes against 1 kept the
    // given program. A crash is no answer, so the pair votes for the program that answers.
    let mut task = task();
    task.seed = Some(CRASHES_ON_DESCENDING.to_string());
    let generator = ScriptedModel::new([
        program_reply(CRASHES_ON_DESCENDING_OTHER),
        program_reply(FIXED_OTHER),
    ]);
    let mut options = only(Proposer::Fresh, 2);
    options.verify = 2;
    options.tie_votes = 0;
    // Off by default (it paid on one kind of code only): then the crashes are answers, and
    // the two that agree on them keep the given program.
    let replies = || {
        ScriptedModel::new([
            program_reply(CRASHES_ON_DESCENDING_OTHER),
            program_reply(FIXED_OTHER),
        ])
    };
    let kept = search(&task, options.clone(), None, replies(), no_replies()).await;
    assert_eq!(
        kept.report.final_program, CRASHES_ON_DESCENDING,
        "{:#?}",
        kept.report.selection
    );
    options.crash_abstains = true;
    let run = search(&task, options, None, generator, no_replies()).await;
    let report = &run.report;
    let selection = report.selection.as_ref().expect("selection ran");
    assert_eq!(
        selection.groups,
        vec![vec![2], vec![0, 1]],
        "{selection:#?}"
    );
    assert_eq!(selection.chosen, 2);
    assert_eq!(report.final_program, FIXED_OTHER);
    assert_eq!(report.status, FixStatus::Fixed);
    let confirmation = report.confirmation.as_ref().expect("confirmation");
    assert_eq!(
        (confirmation.agreeing, confirmation.status.as_str()),
        (2, "majority"),
        "the pair's votes count for it"
    );
    assert!(
        selection.inputs.iter().any(|i| i.contains("[4, 3, 2, 1]")),
        "the reversed list is among the extra inputs: {:?}",
        selection.inputs
    );
}

/// With `fresh_as_resample` the search's fresh samples are resampling's: the same requests
/// (prompt, temperature, seed) in the same order, so the search sees every program
/// `--strategy resample` would.
#[tokio::test(flavor = "multi_thread")]
async fn fresh_samples_as_resample_ask_what_resampling_asks() {
    let replies = || {
        ScriptedModel::new([
            program_reply(HOPELESS),
            program_reply(&HOPELESS.replace("-1", "-2")),
            program_reply(FIXED),
        ])
    };
    let generator = Arc::new(replies().with_name("generator"));
    let resample = Fixer {
        seed: Default::default(),
        generator: generator.clone(),
        debugger: Arc::new(no_replies()),
        runner: Runner::new(Sandbox::new(env!("CARGO_BIN_EXE_ldb"), Limits::default())),
        prompts: Prompts::new().expect("templates load"),
        options: FixOptions {
            strategy: Strategy::Resample,
            max_iters: 3,
            rng_seed: 7,
            ..FixOptions::default()
        },
    };
    let report = resample.fix(&task(), &Silent).await;
    assert_eq!(report.status, FixStatus::Fixed);
    let resampled = generator.requests();

    let generator = Arc::new(replies().with_name("generator"));
    let searcher = Fixer {
        seed: Default::default(),
        generator: generator.clone(),
        options: FixOptions {
            strategy: Strategy::Search,
            search: SearchOptions {
                fresh_as_resample: true,
                ..only(Proposer::Fresh, 2)
            },
            ..resample.options.clone()
        },
        ..resample
    };
    let report = searcher.fix(&task(), &Silent).await;
    assert_eq!(report.status, FixStatus::Fixed);
    let searched = generator.requests();

    let key = |r: &ChatRequest| (text(r), r.temperature, r.seed);
    assert_eq!(resampled.len(), 3);
    assert_eq!(
        resampled.iter().map(key).collect::<Vec<_>>(),
        searched.iter().map(key).collect::<Vec<_>>()
    );
    assert_eq!(
        resampled.iter().map(|r| r.seed).collect::<Vec<_>>(),
        [Some(7), Some(8), Some(9)]
    );
}

/// With `prefill`, programs written from the task alone (resampling, the search's fresh
/// proposer) start with the task's code prompt, so the embedded model writes only the body; a
/// repair request after an unusable reply starts from scratch.
#[tokio::test(flavor = "multi_thread")]
async fn prefill_starts_fresh_programs_with_the_task_prompt_and_repairs_without_it() {
    let expected = format!("```python\n{}\n", task().prompt.trim_end());
    for strategy in [Strategy::Resample, Strategy::Search] {
        let generator = Arc::new(
            ScriptedModel::new(["I cannot write that.".to_string(), program_reply(FIXED)])
                .with_name("generator"),
        );
        let fixer = Fixer {
            seed: Default::default(),
            generator: generator.clone(),
            debugger: Arc::new(no_replies()),
            runner: Runner::new(Sandbox::new(env!("CARGO_BIN_EXE_ldb"), Limits::default())),
            prompts: Prompts::new().expect("templates load"),
            options: FixOptions {
                strategy,
                max_iters: 2,
                prefill: true,
                search: only(Proposer::Fresh, 1),
                ..FixOptions::default()
            },
        };
        let report = fixer.fix(&task(), &Silent).await;
        assert_eq!(report.status, FixStatus::Fixed, "{strategy:?}");
        let requests = generator.requests();
        assert_eq!(requests.len(), 2, "{strategy:?}");
        assert_eq!(
            requests[0].reply_prefix.as_deref(),
            Some(expected.as_str()),
            "{strategy:?}"
        );
        assert!(
            last_user(&requests[1]).contains("could not use your reply"),
            "{strategy:?}: the second request is the repair: {}",
            last_user(&requests[1])
        );
        assert_eq!(requests[1].reply_prefix, None, "{strategy:?}");
    }
    // Off by default, and never for a task whose prompt is not its code.
    let mut prose = task();
    prose.prompt = "Sum the even numbers of a list.".into();
    let generator = Arc::new(ScriptedModel::new([program_reply(FIXED)]).with_name("generator"));
    let fixer = Fixer {
        seed: Default::default(),
        generator: generator.clone(),
        debugger: Arc::new(no_replies()),
        runner: Runner::new(Sandbox::new(env!("CARGO_BIN_EXE_ldb"), Limits::default())),
        prompts: Prompts::new().expect("templates load"),
        options: FixOptions {
            strategy: Strategy::Resample,
            max_iters: 1,
            prefill: true,
            ..FixOptions::default()
        },
    };
    fixer.fix(&prose, &Silent).await;
    assert_eq!(generator.requests()[0].reply_prefix, None);
}
