//! Flag groups several commands share: the model, the sandbox, the search's budgets and
//! settings, the `--make-runnable` step, and the flags that make a task of a `.py` program.

use std::path::PathBuf;

use clap::{ArgAction, Args};

use super::parse::{self, Portfolio, RuleList};
use super::values::{PatchFormArg, SelectRuleArg, VerdictFormArg};
use crate::generate::local::LocalOptions;

/// Budgets of every strategy, and the settings of `--strategy search`.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Search")]
pub struct SearchArgs {
    /// Stop a task once its model calls have cost this many tokens.
    ///
    /// Prompt tokens the backend evaluated plus reply tokens; a kept prompt prefix is not counted
    /// again. Applies to every strategy, so strategies can be compared at equal cost.
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1..))]
    pub budget_tokens: Option<u64>,
    /// Search: candidates proposed at most per task.
    #[arg(hide_short_help = true, long, value_name = "N", default_value_t = 24)]
    pub max_candidates: usize,
    /// Seconds a task's search may take.
    ///
    /// Past them no more candidates are proposed and the best found is returned. Default: none; 120
    /// for a project's function no docstring describes, which also gets --budget-tokens 3000 unless
    /// given.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub time_limit: Option<u64>,
    /// Search: the proposers, in the order they run, and the samples each draws.
    ///
    /// Samples per parent program (fresh: per round): mutate (model-free edits at the suspicious
    /// statements; the count is ignored), complete (the model writes the functions left as `pass`
    /// or `return`), patch (the model rewrites the suspicious lines), feedback (repair from the
    /// failing tests), ldb (repair from the trace and block verdicts), fresh (a new program from
    /// the task). Default: mutate,fresh:4; for a project's function no docstring describes,
    /// mutate,patch:2 (nothing to write a fresh program from).
    #[arg(hide_short_help = true, long, value_name = "LIST", value_parser = parse::portfolio)]
    pub proposers: Option<Portfolio>,
    /// Search: programs carried from one round to the next.
    #[arg(hide_short_help = true, long, value_name = "B", default_value_t = 2)]
    pub beam: usize,
    /// Search: after the first candidate that passes the visible tests, propose N more and
    /// return the one most passing candidates agree with on extra inputs (0: the first).
    #[arg(hide_short_help = true, long, value_name = "N", default_value_t = 3)]
    pub select: usize,
    /// Search: when the program already passes the visible tests, draw N fresh programs and
    /// keep it unless more of them agree with each other on extra inputs than with it
    /// (0: a passing program is returned unchecked).
    #[arg(hide_short_help = true, long, value_name = "N", default_value_t = 4)]
    pub verify: usize,
    /// Search: extra inputs made for --select (mutations of the visible tests' arguments, and
    /// two arguments of one kind swapped).
    #[arg(hide_short_help = true, long, value_name = "N", default_value_t = 12)]
    pub extra_inputs: usize,
    /// Search: sampling temperature of the proposals.
    #[arg(hide_short_help = true, long, value_name = "T", default_value_t = 0.8, value_parser = parse::temperature)]
    pub search_temperature: f32,
    /// Search: how the ldb proposer asks for verdicts: only the first wrong block (short, which
    /// localised better with the embedded models), or one per block (full).
    #[arg(hide_short_help = true, long, value_name = "FORM", value_enum, default_value_t = VerdictFormArg::Short)]
    pub verdicts: VerdictFormArg,
    /// Search: how --select chooses among passing candidates: the largest group that agrees on
    /// every extra input, or the most agreement input by input.
    #[arg(hide_short_help = true, long, value_name = "RULE", value_enum, default_value_t = SelectRuleArg::Groups)]
    pub select_by: SelectRuleArg,
    /// Search: draw fresh programs with seeds of their own, several per request, instead of
    /// resampling's seeds in its order (the default, so the search sees every program
    /// `--strategy resample` would at equal temperatures, and adds its checks on top). A
    /// backend that draws several samples in one call (OpenAI's `n`) always gets them together.
    #[arg(hide_short_help = true, long, overrides_with = "fresh_as_resample")]
    pub no_fresh_as_resample: bool,
    /// The default (see --no-fresh-as-resample); accepted so that older command lines still run.
    #[arg(long, hide = true, overrides_with = "no_fresh_as_resample")]
    pub fresh_as_resample: bool,
    /// Let the model write programs from the task alone (resample, the search's fresh
    /// proposer) in full. By default they start with the task's own signature and docstring and
    /// the embedded model writes only the body: on the development sets that cost a third fewer
    /// tokens for the same fixes. A task whose code leaves several functions to write is never
    /// started this way. HTTP endpoints ignore the prefix.
    #[arg(hide_short_help = true, long, overrides_with = "prefill")]
    pub no_prefill: bool,
    /// The default (see --no-prefill); accepted so that older command lines still run.
    #[arg(long, hide = true, overrides_with = "no_prefill")]
    pub prefill: bool,
    /// Base of the sampling seeds: the same base draws the same samples again.
    #[arg(hide_short_help = true, long, value_name = "N", default_value_t = 0)]
    pub rng_seed: u64,
    /// Search, mutate: statements edited per program, most suspicious first.
    #[arg(hide_short_help = true, long, value_name = "N", default_value_t = 8)]
    pub locate_top: usize,
    /// Search, mutate: edits tried per program at most.
    #[arg(hide_short_help = true, long, value_name = "N", default_value_t = 400)]
    pub mutate_limit: usize,
    /// Search, mutate: edits in a row (when no single edit passes, the edits that got
    /// furthest are edited again) [default: 2; 1 for a project's function, whose later rounds
    /// edit the best edits after the model's patches]
    #[arg(hide_short_help = true, long, value_name = "N")]
    pub mutate_depth: Option<usize>,
    /// Search, patch: statements the model rewrites per program, most suspicious first.
    #[arg(hide_short_help = true, long, value_name = "N", default_value_t = 2)]
    pub patch_top: usize,
    /// Search, patch: fill-in-the-middle (the embedded model), a chat prompt with the lines
    /// marked, or auto (the first where the backend takes raw prompts).
    #[arg(hide_short_help = true, long, value_name = "FORM", value_enum, default_value_t = PatchFormArg::Auto)]
    pub patch_form: PatchFormArg,
    /// Search: stop drawing votes (--select, --verify) when the first N fresh programs drawn for
    /// them all fail the visible tests: the model cannot solve the task from its text, and more
    /// samples would cost tokens for nothing (0: draw them all).
    #[arg(hide_short_help = true, long, value_name = "N", default_value_t = 0)]
    pub vote_patience: usize,
    /// Search: when the votes are in and the two heaviest groups of passing programs weigh the
    /// same (the choice would fall to whichever was found first), draw up to N more fresh
    /// programs, one at a time, until one group leads (0: off; it paid on one kind of code
    /// only, see --rules).
    #[arg(hide_short_help = true, long, value_name = "N", default_value_t = 0)]
    pub tie_votes: usize,
    /// Search: draw every vote (--select, --verify) even once those left cannot change the
    /// program chosen (the heaviest group outweighs all the others together by more than the
    /// votes left). By default they are not drawn: the same program, fewer tokens.
    #[arg(hide_short_help = true, long)]
    pub all_votes: bool,
    /// Search: once an edit or a fresh program has passed the visible tests, stop drawing
    /// votes at the first one that passes them too (the rest rarely change the choice).
    #[arg(hide_short_help = true, long, conflicts_with = "all_votes")]
    pub stop_at_passing_vote: bool,
    /// Search: with a backend that draws several samples in one call (`--parallel-samples`),
    /// ask for them together only for votes, and one at a time until a program passes.
    #[arg(hide_short_help = true, long)]
    pub batch_votes_only: bool,
    /// Search: switch rules of the search on (NAME) or off (-NAME), e.g. `harden,-value-edits`.
    ///
    /// On by default: value-edits, edits the failing tests' values guide (a literal as the
    /// expected value has it, a regex class, a mock's argument, call ↔ attribute, a `None`
    /// guard, a broader `except`). Off by default, each having paid on one kind of code only
    /// (benchmarks/experiments/rules-by-set.md): harden, a program that passes the visible
    /// tests but raises an unexpected error (IndexError, NameError, ...) once one of their list,
    /// tuple or string arguments is emptied, or a value beside a sequence is taken from its
    /// first or last element, is edited (single edits, or a guard `if not arg: return EMPTY`)
    /// until it no longer raises there and keeps its other answers, and edits that pass the
    /// visible tests get the same check; counter-start, an edit gives a name the function only
    /// ever updates (`n += 1`) its start (`n = 0`); swapped-args, extra inputs also swap two
    /// arguments of one kind; crash-abstains, a program that crashes on an extra input abstains
    /// there instead of voting for the crash; none-checks, where a failing test raised on a
    /// `None`, a condition first asks that its operand is not `None` (`if x is not None and
    /// len(x) > 0:`).
    #[arg(hide_short_help = true, long, value_name = "LIST", allow_hyphen_values = true, value_parser = parse::rules)]
    pub rules: Option<RuleList>,
    /// The default (see --rules); accepted so that older command lines still run.
    #[arg(long, hide = true, overrides_with = "harden")]
    pub no_harden: bool,
    /// The same as --rules harden.
    #[arg(long, hide = true, overrides_with = "no_harden")]
    pub harden: bool,
}

/// Limits for sandboxed runs.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Sandbox")]
pub struct SandboxArgs {
    /// Wall-clock limit per test run, in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECS", value_parser = parse::seconds)]
    pub timeout: f64,
    /// Address-space limit per test run, in MiB.
    #[arg(
        hide_short_help = true,
        long,
        default_value_t = 1024,
        value_name = "MIB"
    )]
    pub memory: u64,
    /// Space a test run may write, in MiB: its work dir, /tmp, /var/tmp and /dev/shm together
    /// (kept in memory and gone with the run).
    #[arg(hide_short_help = true, long, default_value_t = 128, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..))]
    pub disk: u64,
    /// Tests run at once (default: number of CPUs).
    #[arg(hide_short_help = true, long, short = 'j')]
    pub jobs: Option<usize>,
    /// A directory programs may import from too (repeatable).
    ///
    /// E.g. a virtualenv's site-packages, or `pip install --target DIR numpy`; searched before the
    /// interpreter's own.
    #[arg(hide_short_help = true, long = "python-path", value_name = "DIR")]
    pub python_path: Vec<PathBuf>,
    /// Start a fresh worker process for every test run instead of forking it from a warm
    /// worker that started Python once (same isolation; about 5x the start-up cost per test).
    #[arg(hide_short_help = true, long)]
    pub fresh_workers: bool,
}

/// Which model to talk to. Precedence: flags, then the config file, then the environment
/// (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `LDB_MODEL`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Model")]
pub struct ModelArgs {
    /// Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8080/v1.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// API key (prefer OPENAI_API_KEY or the config file: flags show up in process lists).
    #[arg(hide_short_help = true, long, value_name = "KEY")]
    pub api_key: Option<String>,
    /// The model: a name the endpoint serves, an embedded model, or PATH.gguf.
    ///
    /// For both generation and debugging. Embedded models: qwen2.5-coder-1.5b, qwen2.5-coder-0.5b.
    /// With no endpoint configured, the embedded qwen2.5-coder-1.5b is used (downloaded on first
    /// use).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Model that writes seed programs and the programs written from the task alone: the
    /// search's fresh programs and resampling's (default: --model).
    #[arg(hide_short_help = true, long, value_name = "NAME")]
    pub generator_model: Option<String>,
    /// Model that gives verdicts and regenerates (default: --model).
    #[arg(hide_short_help = true, long, value_name = "NAME")]
    pub debugger_model: Option<String>,
    /// Config file (default: ~/.config/ldb/config.toml, or LDB_CONFIG).
    #[arg(hide_short_help = true, long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Profile of the config file for both roles ([profiles.NAME]).
    #[arg(hide_short_help = true, long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Profile for the generator role.
    #[arg(hide_short_help = true, long, value_name = "NAME")]
    pub generator_profile: Option<String>,
    /// Profile for the debugger role.
    #[arg(hide_short_help = true, long, value_name = "NAME")]
    pub debugger_profile: Option<String>,
    /// Seconds before a model request times out (it is then retried).
    #[arg(hide_short_help = true, long, value_name = "SECS")]
    pub request_timeout: Option<u64>,
    /// Retries on 429, 5xx and timeouts.
    #[arg(hide_short_help = true, long, value_name = "N")]
    pub retries: Option<u32>,
    /// The endpoint model's context length in tokens: a prompt that cannot fit is refused
    /// before it is sent (default: only prompts no model can take, over 8 MiB).
    #[arg(hide_short_help = true, long, value_name = "TOKENS")]
    pub context_tokens: Option<u32>,
    /// The endpoint's model takes fill-in-the-middle prompts (Qwen2.5-Coder's or CodeGemma's
    /// `<|fim_prefix|>` tokens) on `/completions`: `patch` asks there instead of with a chat
    /// prompt (`fim = true` in the config file; `ldb serve` takes them).
    #[arg(hide_short_help = true, long)]
    pub fim: bool,
    /// Do not read or write the on-disk response cache.
    #[arg(hide_short_help = true, long)]
    pub no_cache: bool,
    /// Directory of prompt templates replacing the built-in ones: NAME.j2 replaces
    /// prompts/NAME.j2 (see `prompts/` in the source for the names and variables).
    #[arg(hide_short_help = true, long, value_name = "DIR")]
    pub prompts: Option<PathBuf>,
    /// Directory of the response cache.
    #[arg(hide_short_help = true, long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    #[command(flatten)]
    pub local: LocalArgs,
}

/// Settings of the embedded (llama.cpp) model.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Embedded model")]
pub struct LocalArgs {
    /// Generation threads of the embedded model (default: the cores idle when it loads).
    #[arg(hide_short_help = true, long, value_name = "N")]
    pub threads: Option<u32>,
    /// Context length of the embedded model, in tokens.
    #[arg(
        hide_short_help = true,
        long,
        value_name = "TOKENS",
        default_value_t = 8192
    )]
    pub context: u32,
    /// Read the model into memory instead of mapping it (lower RSS; slower start).
    #[arg(hide_short_help = true, long)]
    pub no_mmap: bool,
    /// Evaluated prompts the embedded model keeps to restore later, so that returning to a
    /// prompt does not evaluate it again (0: only the live cache).
    #[arg(hide_short_help = true, long, value_name = "N", default_value_t = 8)]
    pub prompt_snapshots: usize,
    /// Evaluate prompts in chunks of this many tokens at fixed positions and reuse only whole
    /// chunks, so that a request draws the same reply whatever came before it (0: reuse any
    /// shared prefix; fewer tokens evaluated, but a seed's sample may then depend on the
    /// requests before it).
    #[arg(
        hide_short_help = true,
        long,
        value_name = "TOKENS",
        default_value_t = 32
    )]
    pub prompt_chunk: usize,
    /// Use llama.cpp's flash attention. Its CPU kernel splits the work by thread, so a seed's
    /// sample then depends on the thread count (--threads, or the cores idle at load).
    #[arg(hide_short_help = true, long)]
    pub flash_attention: bool,
    /// Prompt-lookup drafting: decode up to N tokens copied from earlier text with each
    /// generated one and keep those the model writes itself (0: off). Replies are the same
    /// either way; only their cost changes.
    #[arg(
        hide_short_help = true,
        long,
        value_name = "N",
        default_value_t = LocalOptions::default().draft_max
    )]
    pub draft: usize,
    /// Samples of one prompt the embedded model decodes together (1-4; 1: one by one). A search
    /// then asks for a round's fresh programs, or its votes, in one call.
    #[arg(
        hide_short_help = true,
        long,
        value_name = "N",
        default_value_t = LocalOptions::default().parallel_samples,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=4)
    )]
    pub parallel_samples: usize,
}

/// The `ldb exec` step other commands run first on a snippet (`--make-runnable`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Snippets")]
pub struct ExecStepArgs {
    /// The file is a snippet that uses names it never defines: make it run first.
    ///
    /// As `ldb exec` does, a prefix that defines them is found first; it then runs before every run
    /// of the snippet.
    #[arg(hide_short_help = true, long)]
    pub make_runnable: bool,
    /// With --make-runnable: prefixes asked for per prompt.
    #[arg(hide_short_help = true,
        long,
        value_name = "N",
        default_value_t = 3,
        requires = "make_runnable",
        value_parser = parse::at_least_one()
    )]
    pub exec_n: usize,
    /// With --make-runnable: coverage-guidance rounds at most.
    #[arg(
        hide_short_help = true,
        long,
        value_name = "K",
        default_value_t = 3,
        requires = "make_runnable"
    )]
    pub exec_k: usize,
    /// With --make-runnable: modules that cannot be imported get stand-ins.
    #[arg(hide_short_help = true, long, requires = "make_runnable")]
    pub allow_missing: bool,
}

/// Flags for a `.py` program given in place of a task file.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Tests of a program")]
pub struct FileTaskArgs {
    /// A test statement, e.g. 'assert f(1) == 2' (repeatable).
    ///
    /// With --make-runnable, a statement run after the snippet, e.g. 'assert total == 6'.
    #[arg(long = "test", value_name = "STMT")]
    pub test: Vec<String>,
    /// A test file, a test directory or a pytest node id (repeatable).
    ///
    /// A node id is written tests/test_x.py::test_y; several nodes or files run with pytest. A
    /// plain file (asserts and test_* functions importing the program as `from prog import f`) runs
    /// without pytest; fixtures, parametrize, conftest.py and the project's own modules run with
    /// the project's pytest.
    #[arg(long = "tests", value_name = "PATH", action = ArgAction::Append)]
    pub tests: Vec<PathBuf>,
    /// A stdin/stdout test: the input and the expected output (repeatable).
    ///
    /// For a .py program that reads its input.
    #[arg(hide_short_help = true, long = "io-test", num_args = 2, value_names = ["INPUT", "EXPECTED"], action = ArgAction::Append)]
    pub io_test: Vec<String>,
    /// The function under test (also written `prog.py::NAME`).
    ///
    /// Default: the one the failing tests call.
    #[arg(long, value_name = "NAME")]
    pub entry: Option<String>,
    /// Only the pytest tests whose names match EXPR (pytest's -k).
    #[arg(short = 'k', value_name = "EXPR", requires = "tests")]
    pub keyword: Option<String>,
    /// The virtualenv whose pytest and packages the tests use.
    ///
    /// Default: the active one, $VIRTUAL_ENV; it must be a Python 3.11 one.
    #[arg(long, value_name = "DIR")]
    pub venv: Option<PathBuf>,
    /// Run the tests with pytest even where ldb could read the file without it.
    #[arg(
        hide_short_help = true,
        long,
        conflicts_with = "no_pytest",
        requires = "tests"
    )]
    pub pytest: bool,
    /// Read the test file without pytest (plain asserts and test functions only).
    #[arg(hide_short_help = true, long)]
    pub no_pytest: bool,
    /// What the program should do (default: the entry function's docstring, else the module's).
    #[arg(hide_short_help = true, long = "task", value_name = "TEXT")]
    pub task_text: Option<String>,
}
