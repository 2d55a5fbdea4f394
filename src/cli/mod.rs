//! The command line: [`args`] declares what can be typed, [`settings`] resolves it once into
//! what each command works with, and each command's module does the work with those settings.
//! Everything below the CLI is library code that returns errors instead of printing them.
//!
//! A command line flows one way: `Cli::parse` (clap) → [`Settings::resolve`] → the command's
//! `run(settings)` → an [`ExitStatus`] (or a [`CliError`] with its `hint:` and status).

pub mod args;
mod cfg_cmd;
mod check_cmd;
mod eval;
mod exec_cmd;
mod fix_cmd;
mod locate_cmd;
mod model_cmd;
mod models;
mod output;
mod progress;
mod report_cmd;
mod serve_cmd;
pub mod settings;
mod test_cmd;
mod trace_cmd;

pub use args::{Cli, Command, ModelCommand};
pub use output::{CliError, ExitStatus};
pub use settings::Settings;

/// The process's one async runtime, made on first use: a command that needs several async steps
/// (a snippet made runnable, then fixed) shares it. It is never dropped, so a run stopped early
/// (Ctrl-C) does not wait for work still in flight.
pub(crate) fn runtime() -> Result<&'static tokio::runtime::Runtime, CliError> {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::internal(format!("cannot start the async runtime: {e}")))?;
    Ok(RUNTIME.get_or_init(|| rt))
}

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<ExitStatus, CliError> {
    match Settings::resolve(&cli.command)? {
        Settings::Fix(s) => fix_cmd::run(*s),
        Settings::Test(s) => test_cmd::run(&s),
        Settings::Trace(s) => trace_cmd::run(&s),
        Settings::Locate(s) => locate_cmd::run(&s),
        Settings::Cfg(s) => cfg_cmd::run(&s),
        Settings::Report(s) => report_cmd::run(&s),
        Settings::ModelPull(s) => model_cmd::pull(&s),
        Settings::ModelList(s) => model_cmd::list(&s),
        Settings::Serve(s) => serve_cmd::run(*s),
        Settings::Eval(s) => eval::fix::run(*s),
        Settings::EvalReport(s) => eval::report::report(&s),
        Settings::EvalMerge(s) => eval::fix::merge(&s),
        Settings::EvalRescore(s) => eval::fix::rescore(&s),
        Settings::EvalExec(s) => eval::exec::run(&s),
        Settings::EvalCheck(s) => eval::check::run(&s),
        Settings::Exec(s) => exec_cmd::run(&s),
        Settings::Check(s) => check_cmd::run(*s),
        Settings::Schema => {
            let schema = crate::repair::record::report_schema().map_err(|e| {
                CliError::internal(format!("cannot encode the report's schema: {e}"))
            })?;
            output::print_json(&schema)?;
            Ok(ExitStatus::Success)
        }
    }
}
