//! Every debugging strategy in the same loop, at library level: a buggy seed, scripted model
//! replies, and assertions on what was asked (calls, purposes, prompts), what came back (status,
//! final program, report fields) and what was never sent (hidden tests, and for Self-Debugging
//! any real trace). The runner is the real sandbox.

use std::path::Path;
use std::sync::Arc;

use ldb::generate::model::scripted::ScriptedModel;
use ldb::generate::model::{ChatRequest, ModelError, Role};
use ldb::generate::prompts::Prompts;
use ldb::repair::progress::Silent;
use ldb::repair::record::{FixReport, FixStatus};
use ldb::repair::{FixOptions, Fixer, Strategy};
use ldb::run::sandbox::{Limits, Sandbox};
use ldb::run::Runner;
use ldb::task::{load_tasks, Task};

const FIXED: &str = "def sum_evens(xs: list) -> int:\n    total = 0\n    for x in xs:\n        if x % 2 == 0:\n            total += x\n    return total\n";
/// Passes no visible test: `sum_evens([]) == 0` fails too.
const HOPELESS: &str = "def sum_evens(xs: list) -> int:\n    return -1\n";
const EXPLANATION: &str = "Line 2 sets total to 0. Line 3 loops over the indices from 1, skipping xs[0]. Line 4 keeps even elements. Line 6 returns the total.";
const DRY_RUN: &str =
    "xs = [2, 2, 5]; total = 0; i = 1: xs[1] = 2 is even, total = 2; i = 2: 5 is odd; return 2.";
const VERDICTS: &str = r#"{"verdicts": [{"block": "BLOCK-0", "correct": true, "explanation": "total starts at 0"}, {"block": "BLOCK-1", "correct": false, "explanation": "range(1, len(xs)) skips the first element"}]}"#;

fn program_reply(code: &str) -> String {
    format!("Here is the program:\n```python\n{code}```\n")
}

/// The example task: its seed skips `xs[0]`, so `assert sum_evens([2, 2, 5]) == 4` fails.
fn task() -> Task {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sum_evens/task.json");
    load_tasks(&path)
        .expect("example loads")
        .into_iter()
        .next()
        .expect("one task")
}

struct Run {
    report: FixReport,
    generator: Vec<ChatRequest>,
    debugger: Vec<ChatRequest>,
}

/// Run the loop like `ldb fix` does, with separate scripted generator and debugger models.
async fn run(
    task: &Task,
    strategy: Strategy,
    max_iters: usize,
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
            strategy,
            max_iters,
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

fn no_replies() -> ScriptedModel {
    ScriptedModel::new(Vec::<String>::new())
}

/// Every message of a request, joined.
fn text(request: &ChatRequest) -> String {
    request
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn last_user(request: &ChatRequest) -> &str {
    request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .unwrap_or_default()
}

fn assert_no_hidden_tests(task: &Task, run: &Run) {
    let hidden = task
        .hidden_tests
        .as_deref()
        .expect("the example has hidden tests");
    for request in run.generator.iter().chain(&run.debugger) {
        let text = text(request);
        for line in hidden.lines().map(str::trim).filter(|l| l.len() > 8) {
            assert!(
                !text.contains(line),
                "hidden test text `{line}` was sent: {text}"
            );
        }
    }
}

fn purposes(report: &FixReport, iteration: usize) -> Vec<&'static str> {
    report.iterations[iteration]
        .calls
        .iter()
        .map(|c| c.purpose.name())
        .collect()
}

/// No real execution information of LDB's kind may reach a Self-Debugging prompt.
fn assert_no_trace(request: &ChatRequest) {
    let text = text(request);
    for marker in [
        "[BLOCK-",
        "state before",
        "Execution of a failing test",
        "verdicts",
    ] {
        assert!(
            !text.contains(marker),
            "`{marker}` in a Self-Debugging prompt: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn none_tests_the_seed_and_stops() {
    let run = run(&task(), Strategy::None, 10, no_replies(), no_replies()).await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::NotFixed);
    assert_eq!(report.strategy, Strategy::None);
    assert_eq!(
        report.iterations.len(),
        1,
        "one iteration: the seed's test run"
    );
    assert_eq!(report.iterations[0].passed, 2);
    assert_eq!(report.final_program, task().seed.expect("seed"));
    assert_eq!(report.final_passed, 2);
    assert!(run.generator.is_empty() && run.debugger.is_empty());
    assert_eq!(report.usage.calls, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn none_reports_a_passing_seed_as_already_passing() {
    let mut task = task();
    task.seed = Some(FIXED.to_string());
    let run = run(&task, Strategy::None, 10, no_replies(), no_replies()).await;
    assert_eq!(run.report.status, FixStatus::AlreadyPassing);
    assert_eq!(run.report.iterations.len(), 1);
    assert!(run.generator.is_empty() && run.debugger.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn none_calls_the_model_only_to_generate_a_missing_seed() {
    let mut task = task();
    let buggy = task.seed.take().expect("seed");
    let generator = ScriptedModel::new([program_reply(&buggy)]);
    let run = run(&task, Strategy::None, 10, generator, no_replies()).await;
    assert_eq!(run.report.status, FixStatus::NotFixed);
    assert_eq!(run.generator.len(), 1);
    assert!(run.debugger.is_empty());
    assert_eq!(run.report.seed.origin, "generated");
    assert_eq!(run.report.usage.calls, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn selfdebug_expl_explains_then_fixes_in_one_conversation() {
    let debugger = ScriptedModel::new([EXPLANATION.to_string(), program_reply(FIXED)]);
    let run = run(&task(), Strategy::SelfdebugExpl, 3, no_replies(), debugger).await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed);
    assert_eq!(report.strategy, Strategy::SelfdebugExpl);
    assert_eq!(report.final_program, FIXED);
    assert_eq!(report.iterations.len(), 2);
    assert!(run.generator.is_empty());
    assert_eq!(run.debugger.len(), 2);
    assert_eq!(purposes(report, 0), ["explain", "regenerate"]);

    // 1: task, program, test results with actual vs expected, and the explanation request.
    let ask = &run.debugger[0];
    assert_eq!(ask.messages.len(), 2, "system + user");
    let first = last_user(ask);
    assert!(first.contains(task().prompt.trim()), "{first}");
    assert!(first.contains("range(1, len(xs))"), "{first}");
    assert!(first.contains("got 2, expected 4"), "{first}");
    assert!(
        first.contains("PASS `assert sum_evens([]) == 0`"),
        "{first}"
    );
    assert!(
        first.contains("Explain the program line by line"),
        "{first}"
    );
    assert!(ask.json_schema.is_none());
    assert_eq!(ask.temperature, Some(0.0));
    assert_no_trace(ask);

    // 2: the same conversation, with the explanation, then the request for the fixed program.
    let fix = &run.debugger[1];
    let roles: Vec<Role> = fix.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::System, Role::User, Role::Assistant, Role::User]
    );
    assert_eq!(fix.messages[1].content, first);
    assert_eq!(fix.messages[2].content, EXPLANATION);
    let request = last_user(fix);
    assert!(request.contains("your explanation"), "{request}");
    assert!(request.contains("```python"), "{request}");
    assert_no_trace(fix);

    let it = &report.iterations[0];
    assert_eq!(it.explanation.as_deref(), Some(EXPLANATION));
    assert!(it.trace.is_none() && it.verdicts.is_empty() && it.traced_test.is_none());
    assert!(it
        .diff
        .as_deref()
        .is_some_and(|d| d.contains("+    for x in xs:")));
    assert_eq!(report.iterations[1].passed, 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn selfdebug_trace_dry_runs_the_failing_test_then_fixes() {
    let debugger = ScriptedModel::new([DRY_RUN.to_string(), program_reply(FIXED)]);
    let run = run(&task(), Strategy::SelfdebugTrace, 3, no_replies(), debugger).await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed);
    assert_eq!(report.strategy, Strategy::SelfdebugTrace);
    assert_eq!(report.final_program, FIXED);
    assert_eq!(run.debugger.len(), 2);
    assert_eq!(purposes(report, 0), ["dry_run", "regenerate"]);

    let first = last_user(&run.debugger[0]);
    assert!(first.contains("Dry-run the program"), "{first}");
    assert!(
        first.contains("was run on `assert sum_evens([2, 2, 5]) == 4`: FAIL (got 2, expected 4)"),
        "{first}"
    );
    assert!(!first.contains("line by line"), "{first}");
    assert_no_trace(&run.debugger[0]);

    let fix = &run.debugger[1];
    assert_eq!(fix.messages[2].content, DRY_RUN);
    assert!(
        last_user(fix).contains("your dry run"),
        "{}",
        last_user(fix)
    );
    assert_no_trace(fix);

    let it = &report.iterations[0];
    assert_eq!(it.explanation.as_deref(), Some(DRY_RUN));
    assert_eq!(
        it.traced_test.as_deref(),
        Some("assert sum_evens([2, 2, 5]) == 4")
    );
    assert!(it.trace.is_none() && it.verdicts.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn selfdebug_repairs_a_reply_without_code_once() {
    let debugger = ScriptedModel::new([
        EXPLANATION.to_string(),
        "The loop should start at 0.".to_string(),
        program_reply(FIXED),
    ]);
    let run = run(&task(), Strategy::SelfdebugExpl, 3, no_replies(), debugger).await;
    assert_eq!(run.report.status, FixStatus::Fixed);
    assert_eq!(
        purposes(&run.report, 0),
        ["explain", "regenerate", "repair_program"]
    );
    assert!(last_user(&run.debugger[2]).contains("could not use your reply"));
    assert!(run.report.iterations[0].regeneration_problem.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn selfdebug_keeps_the_seed_when_the_backend_fails() {
    let debugger = ScriptedModel::with_results([Err(ModelError::RetriesExhausted {
        attempts: 2,
        last: "503".into(),
    })]);
    let run = run(&task(), Strategy::SelfdebugTrace, 3, no_replies(), debugger).await;
    assert_eq!(run.report.status, FixStatus::Error);
    assert!(run
        .report
        .error
        .as_deref()
        .is_some_and(|e| e.contains("gave up")));
    assert_eq!(run.report.final_program, task().seed.expect("seed"));
    assert_eq!(run.report.iterations.len(), 1);
    assert!(run.report.iterations[0].explanation.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn resample_draws_fresh_programs_from_the_generate_prompt_without_feedback() {
    let generator = ScriptedModel::new([program_reply(HOPELESS), program_reply(FIXED)]);
    let run = run(&task(), Strategy::Resample, 3, generator, no_replies()).await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed);
    assert_eq!(report.strategy, Strategy::Resample);
    assert_eq!(report.final_program, FIXED);
    assert_eq!(report.iterations.len(), 3);
    assert_eq!(report.iterations[1].program, HOPELESS);
    assert!(
        run.debugger.is_empty(),
        "resampling asks the program generator"
    );
    assert_eq!(run.generator.len(), 2);
    assert_eq!(purposes(report, 0), ["resample"]);
    assert_eq!(purposes(report, 1), ["resample"]);

    let prompts = Prompts::new().expect("templates load");
    let generate = prompts
        .render(
            "generate",
            serde_json::json!({
                "task_prompt": task().prompt,
                "entry_point": "sum_evens",
                "visible_tests": task().visible_tests,
            }),
        )
        .expect("renders");
    for request in &run.generator {
        assert_eq!(request.temperature, Some(0.8));
        assert_eq!(
            request.messages.len(),
            2,
            "system + the generate prompt only"
        );
        assert_eq!(request.messages[1].content, generate);
        // No feedback: neither the failing program nor any test result.
        let text = text(request);
        assert!(
            !text.contains("range(1, len(xs))") && !text.contains("return -1"),
            "{text}"
        );
        assert!(
            !text.contains("got 2, expected 4") && !text.contains("FAIL"),
            "{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn regression_resample_rounds_ask_with_different_seeds() {
    // The embedded model seeded every sampled call the same way, so every round of `resample`
    // drew the same program from the same prompt.
    let generator = ScriptedModel::new([
        program_reply(HOPELESS),
        program_reply(HOPELESS),
        program_reply(HOPELESS),
    ]);
    let run = run(&task(), Strategy::Resample, 3, generator, no_replies()).await;
    let seeds: Vec<Option<u64>> = run.generator.iter().map(|r| r.seed).collect();
    assert_eq!(seeds.len(), 3);
    assert!(seeds.iter().all(Option::is_some), "{seeds:?}");
    assert!(
        seeds[0] != seeds[1] && seeds[1] != seeds[2] && seeds[0] != seeds[2],
        "{seeds:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_budget_ends_the_loop_of_any_strategy() {
    // Each scripted call costs more than one token, so a budget of 1 allows one round.
    let generator = ScriptedModel::new([program_reply(HOPELESS), program_reply(FIXED)]);
    let generator = Arc::new(generator.with_name("generator"));
    let fixer = Fixer {
        seed: Default::default(),
        generator: generator.clone(),
        debugger: Arc::new(no_replies()),
        runner: Runner::new(Sandbox::new(env!("CARGO_BIN_EXE_ldb"), Limits::default())),
        prompts: Prompts::new().expect("templates load"),
        options: FixOptions {
            strategy: Strategy::Resample,
            max_iters: 5,
            budget_tokens: Some(1),
            ..FixOptions::default()
        },
    };
    let report = fixer.fix(&task(), &Silent).await;
    assert_eq!(report.status, FixStatus::NotFixed);
    assert_eq!(generator.calls(), 1, "the second round was never started");
    assert_eq!(report.iterations.len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn resample_keeps_the_best_program_when_the_budget_runs_out() {
    let generator = ScriptedModel::new([program_reply(HOPELESS), program_reply(HOPELESS)]);
    let run = run(&task(), Strategy::Resample, 2, generator, no_replies()).await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::NotFixed);
    assert_eq!(report.iterations.len(), 3);
    assert_eq!(report.iterations[2].passed, 0);
    // The seed passed two tests, the samples none.
    assert_eq!(report.final_program, task().seed.expect("seed"));
    assert_eq!(report.final_passed, 2);
    assert_eq!(run.generator.len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn ldb_is_unchanged_in_the_shared_loop() {
    let debugger = ScriptedModel::new([VERDICTS.to_string(), program_reply(FIXED)]);
    let run = run(&task(), Strategy::Ldb, 3, no_replies(), debugger).await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed);
    assert_eq!(report.strategy, Strategy::Ldb);
    assert_eq!(purposes(report, 0), ["debug", "regenerate"]);
    let debug = text(&run.debugger[0]);
    assert!(
        debug.contains("[BLOCK-1]") && debug.contains("got 2, expected 4"),
        "{debug}"
    );
    assert!(run.debugger[0].json_schema.is_some());
    assert!(last_user(&run.debugger[1]).contains("skips the first element"));
    assert!(report.iterations[0].explanation.is_none());
}

/// `ldb fix`'s settings, resolved from a command line (`ldb fix task.json ...`).
fn fix_settings(extra: &[&str]) -> Result<ldb::cli::settings::FixSettings, String> {
    use clap::Parser;
    let argv = ["ldb", "fix", "task.json"].iter().chain(extra).copied();
    let cli = ldb::cli::Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
    match ldb::cli::Settings::resolve(&cli.command) {
        Ok(ldb::cli::Settings::Fix(s)) => Ok(*s),
        Ok(other) => Err(format!("not fix: {other:?}")),
        Err(e) => Err(e.message),
    }
}

#[test]
fn the_cli_takes_a_strategy() {
    let fix = |extra: &[&str]| fix_settings(extra).unwrap_or_else(|e| panic!("parses: {e}"));
    let settings = fix(&["--strategy", "selfdebug-trace"]);
    assert_eq!(settings.options.strategy, Strategy::SelfdebugTrace);
    assert_eq!(
        fix(&[]).options.strategy,
        Strategy::Search,
        "search is the default"
    );
    assert_eq!(settings.options.resample_temperature, 0.8);
    for name in ["none", "ldb", "selfdebug-expl", "resample", "search"] {
        assert!(fix_settings(&["--strategy", name]).is_ok(), "{name}");
    }
    assert!(fix_settings(&["--strategy", "guess"]).is_err());
}

/// The measured defaults: edits of the given program, its unwritten functions written, then
/// fresh samples started from the task's own signature and docstring; `--no-prefill` writes
/// whole programs, and the older `--prefill` still parses.
#[test]
fn the_cli_defaults_to_edits_then_fresh_samples_with_the_prompt_prefilled() {
    let fix = |extra: &[&str]| fix_settings(extra).unwrap_or_else(|e| panic!("parses: {e}"));
    let default = fix(&[]);
    assert_eq!(
        default.options.search.portfolio,
        ldb::repair::search::SearchOptions::parse_portfolio("mutate,fresh:4").expect("valid")
    );
    assert!(default.options.prefill);
    // The rules that paid on one kind of code only are off; --rules names them.
    use ldb::repair::search::Rule;
    let search = &default.options.search;
    assert_eq!(
        Rule::ALL.map(|r| search.rule(r)),
        [false, false, false, false, true, false],
        "harden, counter-start, swapped-args, crash-abstains, none-checks off; value-edits on"
    );
    assert_eq!(search.tie_votes, 0);
    let on = fix(&[
        "--rules",
        "harden,counter-start,swapped-args,crash-abstains,-value-edits,none-checks",
    ]);
    assert!(!fix(&["--rules", "-value-edits"]).options.search.value_edits);
    assert_eq!(
        Rule::ALL.map(|r| on.options.search.rule(r)),
        [true, true, true, true, false, true]
    );
    assert!(fix(&["--harden"]).options.search.harden);
    assert!(fix_settings(&["--rules", "rank"]).is_err_and(|e| e.contains("unknown rule `rank`")));
    assert_eq!(
        default.options.search.portfolio,
        ldb::repair::search::SearchOptions::default().portfolio
    );
    assert!(!fix(&["--no-prefill"]).options.prefill);
    assert!(!fix(&["--prefill", "--no-prefill"]).options.prefill);
    assert!(fix(&["--no-prefill", "--prefill"]).options.prefill);
    assert!(ldb::repair::FixOptions::default().prefill);
    // A program that already passes is checked against 4 fresh ones (measured on the
    // development sets: 3 wrong seeds of 30 replaced by right programs, no right seed of 30
    // lost); --verify 0 returns it unchecked.
    let options = default.options.search;
    assert_eq!(options.verify, 4);
    assert_eq!(
        options.verify,
        ldb::repair::search::SearchOptions::default().verify
    );
    assert_eq!(fix(&["--verify", "0"]).options.search.verify, 0);
}
