//! Settings of `ldb fix`, `test`, `trace`, `locate`, `cfg`, `report`, `serve` and `model`.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use super::models::ModelSettings;
use super::shared::{
    exec_step, given_beyond_test_and_task, prompts, search_options, SandboxSettings, TaskSource,
};
use crate::cli::args::{
    CfgArgs, FixArgs, ListArgs, LocateArgs, PullArgs, ReportArgs, ServeArgs, TestArgs, TraceArgs,
};
use crate::cli::output::CliError;
use crate::exec::ExecOptions;
use crate::generate::local::catalog::{self, ModelSpec};
use crate::generate::local::download;
use crate::generate::prompts::Prompts;
use crate::locate::TieBreak;
use crate::repair::FixOptions;
use crate::run::TestInput;
use crate::serve::Timeouts;
use crate::trace::sample::SampleConfig;
use crate::trace::{Level, TracerKind};

/// `ldb fix`.
#[derive(Debug, Clone)]
pub struct FixSettings {
    /// The task file, the program (`prog.py[::function]`) or the snippet.
    pub target: PathBuf,
    pub input: FixInput,
    pub seed: SeedChoice,
    /// How each task is debugged (where its seed comes from is `seed`, read with the tasks).
    pub options: FixOptions,
    /// Tasks debugged at once (at least 1).
    pub concurrency: usize,
    /// `--peers`: files and directories of programs others wrote for the task.
    pub peers: Vec<PathBuf>,
    pub out: Option<PathBuf>,
    /// Write the fix back into the `.py` program.
    pub write: bool,
    /// `--unconfirmed`: write a fix nothing independent confirms too.
    pub unconfirmed: bool,
    pub report: Option<PathBuf>,
    /// Print the seed → final diff on stderr.
    pub diff: bool,
    pub quiet: bool,
    pub sandbox: SandboxSettings,
    pub models: ModelSettings,
    pub prompts: Prompts,
}

/// What `ldb fix` debugs.
#[derive(Debug, Clone)]
pub enum FixInput {
    /// A task file's tasks, or a program and its tests.
    Task(TaskSource),
    /// `--make-runnable`: a snippet that runs after the prefix the exec step finds.
    Snippet {
        step: ExecOptions,
        /// `--test`: statements run after the snippet (default: it must run to its end).
        tests: Vec<String>,
        /// `--task TEXT`: what the snippet should do.
        task_text: Option<String>,
    },
}

/// Where the seed comes from, before any file is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeedChoice {
    /// `--seed FILE.py`: one program (for a single task).
    File(PathBuf),
    /// `--seeds FILE.jsonl`: programs by task id.
    Map(PathBuf),
    /// `--seed-cmd CMD`.
    Command(String),
    /// `--generate`.
    Generate,
    /// The task's own seed, else generated.
    TaskOrGenerate,
}

impl FixSettings {
    pub fn resolve(args: &FixArgs) -> Result<Self, CliError> {
        let input = match exec_step(&args.snippet) {
            Some(step) => {
                if let Some(flag) = given_beyond_test_and_task(&args.file) {
                    return Err(CliError::bad_input(
                        format!("{flag} cannot be combined with --make-runnable"),
                        "a snippet takes --test STMT (run after it) and --task TEXT; give a test \
                         file to a complete program instead: ldb fix prog.py --tests test_prog.py",
                    ));
                }
                FixInput::Snippet {
                    step,
                    tests: args.file.test.clone(),
                    task_text: args.file.task_text.clone(),
                }
            }
            None => {
                let source = TaskSource::resolve(
                    args.task.as_deref(),
                    &args.file,
                    args.task_id.as_deref(),
                    args.strict,
                )?;
                let mut source = source;
                if let TaskSource::Program(tests) | TaskSource::Project(tests) = &mut source {
                    tests.keep_passing = args.keep_passing.into();
                }
                if args.write && matches!(source, TaskSource::Tasks { .. }) {
                    return Err(CliError::bad_input(
                        format!(
                            "--write writes a fixed .py program back, but {} is a task file",
                            args.task.as_deref().unwrap_or(Path::new("")).display()
                        ),
                        "use --out FILE (or redirect stdout) for a task file's result",
                    ));
                }
                FixInput::Task(source)
            }
        };
        let seed = if let Some(path) = &args.seed {
            SeedChoice::File(path.clone())
        } else if let Some(path) = &args.seeds {
            SeedChoice::Map(path.clone())
        } else if let Some(cmd) = &args.seed_cmd {
            SeedChoice::Command(cmd.clone())
        } else if args.generate {
            SeedChoice::Generate
        } else {
            SeedChoice::TaskOrGenerate
        };
        let level: Level = args.level.into();
        let mut sample = SampleConfig::for_level(level);
        sample.token_budget = args.budget;
        let options = FixOptions {
            strategy: args.strategy.into(),
            level,
            max_iters: args.max_iters,
            sample,
            value_chars: 120,
            temperature: args.temperature,
            resample_temperature: args.resample_temperature,
            budget_tokens: args.search.budget_tokens,
            rng_seed: args.search.rng_seed,
            search: search_options(&args.search),
            prefill: !args.search.no_prefill,
        };
        Ok(FixSettings {
            target: args.task.clone().unwrap_or_default(),
            input,
            seed,
            options,
            concurrency: args.concurrency.max(1),
            peers: args.peers.clone(),
            out: args.out.clone(),
            write: args.write,
            unconfirmed: args.unconfirmed,
            report: args.report.clone(),
            diff: !args.no_diff,
            quiet: args.quiet,
            sandbox: SandboxSettings::resolve(&args.sandbox)?,
            models: ModelSettings::resolve(&args.model),
            prompts: prompts(args.model.prompts.as_deref())?,
        })
    }
}

/// `ldb test`.
#[derive(Debug)]
pub struct TestSettings {
    pub target: PathBuf,
    pub source: TaskSource,
    /// `--program FILE.py`: test this program instead of the task's seed.
    pub program: Option<PathBuf>,
    /// Run the hidden tests too.
    pub hidden: bool,
    pub json: bool,
    pub sandbox: SandboxSettings,
}

impl TestSettings {
    pub fn resolve(args: &TestArgs) -> Result<Self, CliError> {
        Ok(TestSettings {
            source: TaskSource::resolve(
                args.task.as_deref(),
                &args.file,
                args.task_id.as_deref(),
                args.strict,
            )?,
            target: args.task.clone().unwrap_or_default(),
            program: args.program.clone(),
            hidden: args.hidden,
            json: args.json,
            sandbox: SandboxSettings::resolve(&args.sandbox)?,
        })
    }
}

/// `ldb trace`.
#[derive(Debug)]
pub struct TraceSettings {
    /// The program (default with `task`: the task's seed).
    pub file: Option<PathBuf>,
    /// `--test STMT` or `--call EXPR`.
    pub test: Option<TestInput>,
    pub task: Option<PathBuf>,
    pub task_id: Option<String>,
    /// Which visible test of the task (default: the first failing one).
    pub index: Option<usize>,
    pub level: Level,
    pub tracer: TracerKind,
    /// Steps kept from the start and the end, and the token budget.
    pub sample: SampleConfig,
    pub value_chars: usize,
    pub json: bool,
    /// A file run before the program, in its namespace.
    pub prefix: Option<PathBuf>,
    pub sandbox: SandboxSettings,
}

impl TraceSettings {
    pub fn resolve(args: &TraceArgs) -> Result<Self, CliError> {
        let level: Level = args.level.into();
        let mut sample = SampleConfig::for_level(level);
        sample.head = args.head.unwrap_or(sample.head);
        sample.tail = args.tail.or(args.head).unwrap_or(sample.tail);
        sample.token_budget = args.budget;
        let test = match (&args.test, &args.call) {
            (Some(t), _) => Some(TestInput::Code { source: t.clone() }),
            (None, Some(c)) => Some(TestInput::Call { expr: c.clone() }),
            (None, None) => None,
        };
        Ok(TraceSettings {
            file: args.file.clone(),
            test,
            task: args.task.clone(),
            task_id: args.task_id.clone(),
            index: args.index,
            level,
            tracer: args.tracer.into(),
            sample,
            value_chars: args.value_chars,
            json: args.json,
            prefix: args.prefix.clone(),
            sandbox: SandboxSettings::resolve(&args.sandbox)?,
        })
    }
}

/// `ldb locate`.
#[derive(Debug)]
pub struct LocateSettings {
    pub target: PathBuf,
    pub source: TaskSource,
    pub program: Option<PathBuf>,
    /// Statements shown.
    pub top: usize,
    pub ties: TieBreak,
    pub json: bool,
    pub sandbox: SandboxSettings,
}

impl LocateSettings {
    pub fn resolve(args: &LocateArgs) -> Result<Self, CliError> {
        Ok(LocateSettings {
            source: TaskSource::resolve(
                args.task.as_deref(),
                &args.file,
                args.task_id.as_deref(),
                false,
            )?,
            target: args.task.clone().unwrap_or_default(),
            program: args.program.clone(),
            top: args.top,
            ties: args.ties.into(),
            json: args.json,
            sandbox: SandboxSettings::resolve(&args.sandbox)?,
        })
    }
}

/// How `ldb cfg` prints the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CfgFormat {
    Text,
    Dot,
    Json,
}

/// `ldb cfg`.
#[derive(Debug)]
pub struct CfgSettings {
    pub file: PathBuf,
    pub format: CfgFormat,
}

impl CfgSettings {
    pub fn resolve(args: &CfgArgs) -> Self {
        let format = if args.json {
            CfgFormat::Json
        } else if args.dot {
            CfgFormat::Dot
        } else {
            CfgFormat::Text
        };
        CfgSettings {
            file: args.file.clone(),
            format,
        }
    }
}

/// `ldb report`.
#[derive(Debug)]
pub struct ReportSettings {
    pub report: PathBuf,
    pub html: PathBuf,
}

impl ReportSettings {
    pub fn resolve(args: &ReportArgs) -> Self {
        ReportSettings {
            report: args.report.clone(),
            html: args.html.clone(),
        }
    }
}

/// `ldb serve`.
#[derive(Debug)]
pub struct ServeSettings {
    pub ip: IpAddr,
    pub port: u16,
    /// The model id clients see (default: the model's name).
    pub served_name: Option<String>,
    pub timeouts: Timeouts,
    pub models: ModelSettings,
}

impl ServeSettings {
    pub fn resolve(args: &ServeArgs) -> Self {
        ServeSettings {
            ip: args.host,
            port: args.port,
            served_name: args.served_name.clone(),
            timeouts: Timeouts {
                header: std::time::Duration::from_secs_f64(args.header_timeout),
                body: std::time::Duration::from_secs_f64(args.body_timeout),
            },
            models: ModelSettings::resolve(&args.model),
        }
    }
}

/// `ldb model pull`.
#[derive(Debug)]
pub struct PullSettings {
    pub spec: ModelSpec,
    /// The models directory.
    pub dir: PathBuf,
    /// The package index's JSON API.
    pub index_url: String,
}

impl PullSettings {
    pub fn resolve(args: &PullArgs) -> Result<Self, CliError> {
        Ok(PullSettings {
            spec: model_spec(&args.name)?,
            dir: args.dir.clone().unwrap_or_else(catalog::models_dir),
            index_url: args.index_url.clone().unwrap_or_else(default_index_url),
        })
    }
}

/// `ldb model list`.
#[derive(Debug)]
pub struct ListSettings {
    pub dir: PathBuf,
    pub json: bool,
}

impl ListSettings {
    pub fn resolve(args: &ListArgs) -> Self {
        ListSettings {
            dir: args.dir.clone().unwrap_or_else(catalog::models_dir),
            json: args.json,
        }
    }
}

/// The catalogue's model named `name`.
pub fn model_spec(name: &str) -> Result<ModelSpec, CliError> {
    catalog::resolve(name).map_err(|e| {
        CliError::bad_input(
            format!("unknown model `{}`", e.name),
            format!(
                "known models: {} (see `ldb model list`)",
                e.known.join(", ")
            ),
        )
    })
}

/// `$LDB_PYPI_URL`, else the public index.
pub fn default_index_url() -> String {
    std::env::var(download::INDEX_URL_ENV)
        .ok()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| download::DEFAULT_INDEX_URL.to_string())
}
