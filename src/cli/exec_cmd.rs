//! `ldb exec FILE|-`: find prefixes that make a snippet run, and print the best prefix, the
//! minimal covering set, per-line coverage, the tree of attempts, tokens and time. Also the
//! glue other commands use to make a snippet runnable first (`--make-runnable`).

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::output::{self, CliError, ExitStatus};
use super::{ModelArgs, SandboxArgs};
use crate::exec::{make_runnable, ExecError, ExecOptions, ExecReport, Snippet, MAX_SNIPPET_BYTES};
use crate::model::SharedModel;
use crate::prompts::Prompts;
use crate::runner::Runner;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// Settings of the prefix search, shared by `ldb exec` and `ldb eval exec`.
#[derive(Debug, Clone, Args)]
pub struct ExecSearchArgs {
    /// Prefixes asked for per prompt (Treefix: 10).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub n: usize,
    /// Coverage-guidance rounds at most (Treefix: 10).
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub k: usize,
    /// Modules the snippet or the prefix imports that are not installed get stand-in objects
    /// instead of failing the run (never a standard-library name).
    #[arg(long)]
    pub allow_missing: bool,
    /// Stop asking the model once its calls cost this many tokens.
    #[arg(long, value_name = "TOKENS")]
    pub budget_tokens: Option<u64>,
    /// Sampling temperature of every prefix after the first of a prompt (the first is greedy).
    #[arg(long, value_name = "T", default_value_t = 0.8)]
    pub temperature: f32,
    /// Base of the sampling seeds: the same base draws the same samples.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub rng_seed: u64,
    /// Do not try the model-free prefixes that bind every undefined name to a permissive
    /// stand-in object before asking the model (Treefix's method alone).
    #[arg(long)]
    pub no_standins: bool,
    /// Run all 96 variants of the stand-in prefixes, not the seven chosen on a held-out set:
    /// more coverage, for about 14 times the stand-in runs (a second or so each).
    #[arg(long, conflicts_with = "no_standins")]
    pub all_variants: bool,
    /// After the stand-in variants, this many runs (fewer once every statement is covered) in
    /// which each place in the code answers its own way first, by a seed; 0 runs none.
    #[arg(long, value_name = "RUNS", default_value_t = crate::exec::EXPLORE, conflicts_with = "no_standins")]
    pub explore: usize,
    /// Run only the snippet as it is and the stand-in prefixes: no model is loaded or asked
    /// (fast and offline; a floor for what the model adds).
    #[arg(long, conflicts_with = "no_standins")]
    pub no_model: bool,
}

impl ExecSearchArgs {
    pub fn options(&self) -> Result<ExecOptions, CliError> {
        if self.n == 0 {
            return Err(CliError::bad_input(
                "--n 0 asks for no prefix",
                "e.g. --n 3",
            ));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(CliError::bad_input(
                format!("--temperature {} is outside 0..=2", self.temperature),
                "e.g. --temperature 0.8",
            ));
        }
        Ok(ExecOptions {
            n: self.n,
            k: self.k,
            allow_missing: self.allow_missing,
            temperature: self.temperature,
            rng_seed: self.rng_seed,
            budget_tokens: self.budget_tokens,
            standins: !self.no_standins,
            all_variants: self.all_variants,
            explore: self.explore,
            use_model: !self.no_model,
            ..ExecOptions::default()
        })
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 the best prefix runs the snippet to its end, 1 no prefix \
                        did, 2 bad input (not Python, empty, binary, too large), 3 model backend \
                        failure, 4 sandbox failure."
)]
pub struct ExecArgs {
    /// The snippet: a Python file, or `-` for stdin.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write the best prefix to this file (for `ldb trace FILE --prefix PREFIX.py`).
    #[arg(long, value_name = "PREFIX.py")]
    pub write_prefix: Option<PathBuf>,
    /// Only warnings and errors on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub search: ExecSearchArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

impl From<ExecError> for CliError {
    fn from(e: ExecError) -> Self {
        let status = match &e {
            e if e.is_input() => ExitStatus::BadInput,
            ExecError::Prompt(_) => ExitStatus::BadInput,
            _ => ExitStatus::Sandbox,
        };
        match e {
            ExecError::Model(m) => m.into(),
            e => CliError {
                hint: e.hint(),
                message: e.to_string(),
                status,
            },
        }
    }
}

pub fn run(args: &ExecArgs) -> Result<ExitStatus, CliError> {
    let options = args.search.options()?;
    let snippet = read_snippet(&args.file)?;
    let runner = args.sandbox.runner()?;
    let prompts = load_prompts(&args.model)?;
    let generator = search_model(&args.model, &options)?;
    let report = run_search(&snippet, generator, &runner, &prompts, &options, args.quiet)?;
    if let (Some(path), Some(best)) = (&args.write_prefix, &report.best) {
        std::fs::write(path, format!("{}\n", best.prefix.trim_end())).map_err(|e| {
            CliError::bad_input(
                format!("cannot write {}: {e}", path.display()),
                "check that the directory exists and is writable",
            )
        })?;
    }
    match args.format {
        Format::Json => output::print_json(&report)?,
        Format::Text => output::print(&report.to_text()),
    }
    Ok(if report.runs() {
        ExitStatus::Success
    } else {
        ExitStatus::TestsFailed
    })
}

/// The model the search asks; with `--no-model` none is loaded.
fn search_model(args: &ModelArgs, options: &ExecOptions) -> Result<SharedModel, CliError> {
    if !options.use_model {
        return Ok(std::sync::Arc::new(crate::exec::NoModel));
    }
    Ok(super::models::build(args)?.0)
}

/// The search on a fresh runtime, with progress lines on stderr unless `quiet`.
pub fn run_search(
    snippet: &Snippet,
    model: SharedModel,
    runner: &Runner,
    prompts: &Prompts,
    options: &ExecOptions,
    quiet: bool,
) -> Result<ExecReport, CliError> {
    let runtime = super::runtime()?;
    let progress = move |line: String| {
        if !quiet {
            eprintln!("exec: {line}");
        }
    };
    Ok(runtime.block_on(make_runnable(
        snippet, &*model, runner, prompts, options, &progress,
    ))?)
}

pub fn load_prompts(model: &ModelArgs) -> Result<Prompts, CliError> {
    match &model.prompts {
        Some(dir) => Prompts::from_dir(dir).map_err(|e| {
            CliError::bad_input(
                e.to_string(),
                "--prompts DIR holds NAME.j2 files named like the templates in prompts/",
            )
        }),
        None => Prompts::new().map_err(|e| CliError::sandbox(e.to_string())),
    }
}

/// Read and check a snippet from a file or stdin (`-`).
pub fn read_snippet(path: &Path) -> Result<Snippet, CliError> {
    let (name, bytes) = if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_SNIPPET_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| {
                CliError::bad_input(
                    format!("cannot read the snippet from stdin: {e}"),
                    "pipe a Python file in, or pass its path",
                )
            })?;
        ("<stdin>".to_string(), bytes)
    } else {
        let bytes = match crate::files::read_bytes(path, MAX_SNIPPET_BYTES as u64) {
            Ok(bytes) => bytes,
            Err(crate::files::ReadError::TooLarge { size, .. }) => {
                return Err(ExecError::TooLarge {
                    name: path.display().to_string(),
                    bytes: usize::try_from(size).unwrap_or(usize::MAX),
                    limit: MAX_SNIPPET_BYTES,
                }
                .into())
            }
            Err(e) => return Err(e.into()),
        };
        (path.display().to_string(), bytes)
    };
    Ok(Snippet::from_bytes(name, &bytes)?)
}

/// Which records of the Treefix sample to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Subset {
    /// Every record (those that are not Python 3 get a "not Python" result).
    #[default]
    All,
    /// Stack Overflow snippets.
    So,
    /// Open-source function bodies.
    Functions,
}

/// `ldb eval exec`: `ldb exec` over Treefix's snippets, scored with Treefix's metric.
#[derive(Debug, Args)]
#[command(
    after_help = "Results are appended to --out one record at a time; running the same \
                        command again skips the records already there (resumes).\n\
                        Example: ldb eval exec --data-dir ../shared/datasets --model qwen2.5-coder-0.5b"
)]
pub struct EvalExecArgs {
    /// The Treefix sample (treefix_sample.jsonl).
    #[arg(long, value_name = "FILE", conflicts_with = "data_dir")]
    pub data: Option<PathBuf>,
    /// Folder holding treefix/treefix_sample.jsonl (default: LDB_DATA_DIR).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Results file (JSONL; default: results/exec-treefix-<model>-n<N>-k<K>.jsonl).
    #[arg(long, short = 'o', value_name = "FILE.jsonl")]
    pub out: Option<PathBuf>,
    /// Records to run.
    #[arg(long, value_enum, default_value_t = Subset::All)]
    pub subset: Subset,
    /// Only these record ids (comma-separated or repeated).
    #[arg(long, value_name = "ID,...", value_delimiter = ',')]
    pub ids: Vec<String>,
    /// Run at most N records that are not done yet (a slice; rerun to continue).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Run records recorded as failed (backend or sandbox) again.
    #[arg(long)]
    pub retry_errors: bool,
    /// Only print the table of the results already in --out.
    #[arg(long)]
    pub summary_only: bool,
    /// Only warnings and errors on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub search: ExecSearchArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

pub fn eval(args: &EvalExecArgs) -> Result<ExitStatus, CliError> {
    use crate::exec::eval::RecordStatus;
    use crate::exec::eval::{append_result, load_records, load_results, run_record, summary};

    let options = args.search.options()?;
    let out = args.out.clone().unwrap_or_else(|| {
        let model = (!options.use_model)
            .then(|| "none".to_string())
            .or_else(|| args.model.model.clone());
        let model = model
            .as_deref()
            .map(|m| {
                Path::new(m)
                    .file_stem()
                    .map_or(m.to_string(), |s| s.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "default".into());
        let missing = if options.allow_missing {
            "-allow-missing"
        } else {
            ""
        };
        let standins = if options.standins { "" } else { "-no-standins" };
        PathBuf::from(format!(
            "results/exec-treefix-{model}-n{}-k{}{missing}{standins}.jsonl",
            options.n, options.k
        ))
    });
    let bad_data = |e: crate::exec::eval::DataError| {
        CliError::bad_input(
            e.to_string(),
            "pass the Treefix sample with --data FILE, or its folder's parent with --data-dir \
             (e.g. --data-dir ../shared/datasets)",
        )
    };
    let done = load_results(&out).map_err(bad_data)?;
    if args.summary_only {
        output::print(&summary(&done));
        return Ok(ExitStatus::Success);
    }
    let data = match (&args.data, &args.data_dir) {
        (Some(file), _) => file.clone(),
        (None, Some(dir)) => dir.join("treefix/treefix_sample.jsonl"),
        (None, None) => match std::env::var_os("LDB_DATA_DIR") {
            Some(dir) => PathBuf::from(dir).join("treefix/treefix_sample.jsonl"),
            None => {
                return Err(CliError::bad_input(
                    "no data: pass --data FILE or --data-dir DIR",
                    "e.g. --data-dir ../shared/datasets (or set LDB_DATA_DIR)",
                ))
            }
        },
    };
    let records = load_records(&data).map_err(bad_data)?;
    let finished: std::collections::HashSet<&str> = done
        .iter()
        .filter(|r| !(args.retry_errors && r.status == RecordStatus::Error))
        .map(|r| r.id.as_str())
        .collect();
    let todo: Vec<&crate::exec::eval::Record> = records
        .iter()
        .filter(|r| match args.subset {
            Subset::All => true,
            Subset::So => r.subset() == "so",
            Subset::Functions => r.subset() == "functions",
        })
        .filter(|r| args.ids.is_empty() || args.ids.contains(&r.id))
        // Treefix scored these; the rest are the README's negative cases (not Python 3) and
        // records without Treefix's instrumented file.
        .filter(|r| r.scorable() || Snippet::new(r.id.clone(), r.code.clone()).is_err())
        .filter(|r| !finished.contains(r.id.as_str()))
        .take(args.limit.unwrap_or(usize::MAX))
        .collect();
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::bad_input(
                format!("cannot create {}: {e}", dir.display()),
                "pass a writable --out path",
            )
        })?;
    }
    if !args.quiet {
        eprintln!(
            "eval exec: {} records to run, {} already in {}",
            todo.len(),
            done.len(),
            out.display()
        );
    }
    if !todo.is_empty() {
        let runner = args.sandbox.runner()?;
        let prompts = load_prompts(&args.model)?;
        let generator = search_model(&args.model, &options)?;
        let runtime = super::runtime()?;
        let quiet = args.quiet;
        for (i, record) in todo.iter().enumerate() {
            let id = record.id.clone();
            let progress = move |line: String| {
                if !quiet {
                    eprintln!("  {id}: {line}");
                }
            };
            let result = runtime.block_on(run_record(
                record,
                &*generator,
                &runner,
                &prompts,
                &options,
                &progress,
            ));
            if !args.quiet {
                let figures = result.ldb.as_ref().map_or_else(
                    || result.detail.clone().unwrap_or_default(),
                    |m| {
                        format!(
                            "set {:.1}% best {:.1}% as-is {:.1}% ({} calls, {:.0} s)",
                            m.set * 100.0,
                            m.best * 100.0,
                            m.as_is * 100.0,
                            result.model_calls,
                            result.elapsed_ms as f64 / 1000.0
                        )
                    },
                );
                eprintln!(
                    "[{}/{}] {} {:?}: {figures}",
                    i + 1,
                    todo.len(),
                    record.id,
                    result.status
                );
            }
            append_result(&out, &result)
                .map_err(|e| CliError::sandbox(format!("cannot write {}: {e}", out.display())))?;
        }
    }
    let all = load_results(&out).map_err(bad_data)?;
    output::print(&summary(&all));
    Ok(ExitStatus::Success)
}

/// The test a snippet gets when the user gives none: it must run to its end.
pub const RUNS_TO_THE_END: &str = "pass  # the code runs to its end without an exception";

/// The `--make-runnable` step: the best prefix for `snippet`, announced on stderr.
pub fn find_prefix(
    snippet: &Snippet,
    args: &super::ExecStepArgs,
    model: SharedModel,
    runner: &Runner,
    prompts: &Prompts,
    quiet: bool,
) -> Result<String, CliError> {
    if args.exec_n == 0 {
        return Err(CliError::bad_input(
            "--exec-n 0 asks for no prefix",
            "e.g. --exec-n 3",
        ));
    }
    let options = ExecOptions {
        n: args.exec_n,
        k: args.exec_k,
        allow_missing: args.allow_missing,
        // Debugging reads the values the prefix made: stand-ins answer everything with more
        // stand-ins, so the prefix here is one the model wrote.
        standins: false,
        ..ExecOptions::default()
    };
    let report = run_search(snippet, model, runner, prompts, &options, quiet)?;
    let Some(best) = report.best.clone() else {
        return Err(CliError {
            message: format!("no prefix made {} run", snippet.name),
            hint: Some("run `ldb exec` on it to see the attempts".into()),
            status: ExitStatus::TestsFailed,
        });
    };
    if !quiet {
        eprintln!(
            "make-runnable: prefix #{} ({}/{} statements covered; the search made {} model \
             calls, {} prompt + {} reply tokens) runs before the snippet:",
            best.node,
            best.coverage.covered,
            best.coverage.total,
            report.usage.calls,
            report.usage.prompt_tokens,
            report.usage.completion_tokens
        );
        for line in best.prefix.lines() {
            eprintln!("    {line}");
        }
    }
    Ok(best.prefix)
}

/// `ldb fix --make-runnable`: find the best prefix for `snippet` and turn the snippet into a
/// task whose seed is the snippet itself. Returns the task and the prefix (to run before the
/// snippet).
pub fn runnable_task(
    snippet: &Snippet,
    args: &super::MakeRunnableArgs,
    file: &super::file_task::FileTaskArgs,
    model: SharedModel,
    runner: &Runner,
    prompts: &Prompts,
    quiet: bool,
) -> Result<(crate::task::Task, String), CliError> {
    let prefix = find_prefix(snippet, &args.step, model, runner, prompts, quiet)?;
    let id = Path::new(&snippet.name).file_stem().map_or_else(
        || snippet.name.clone(),
        |s| s.to_string_lossy().into_owned(),
    );
    let what = file
        .task_text
        .as_deref()
        .unwrap_or("Make this code run correctly.");
    let prompt = format!(
        "{what}\n\nThe code runs after this set-up code, which defines the names it uses; the \
         set-up code is not part of the program and stays as it is:\n```python\n{}\n```",
        prefix.trim_end()
    );
    let tests = if file.test.is_empty() {
        vec![RUNS_TO_THE_END.to_string()]
    } else {
        file.test.clone()
    };
    let task = crate::task::Task {
        task_id: id,
        prompt,
        entry_point: String::new(),
        visible_tests: tests,
        hidden_tests: None,
        seed: Some(snippet.text.clone()),
        source: None,
        io_tests: Vec::new(),
        scope: Default::default(),
        pytest_nodes: Vec::new(),
    };
    Ok((task, prefix))
}
