//! What the flags mean, resolved once: the parsed command line ([`crate::cli::args`]) becomes the
//! settings a command works with, and the commands see only these.
//!
//! Resolution checks what clap cannot declare (a flag that only makes sense for a `.py`
//! program, a mode that contradicts another flag), loads the prompt templates, checks the
//! sandbox's import path and turns the model flags into [`ModelSettings`]. It reads no task and
//! starts nothing: the sandbox runner and the models, which cost time and may not be needed
//! (`ldb check --mode predict` runs nothing; `ldb eval --strategy none` asks no model), are
//! made from their settings by the command that uses them.

mod commands;
mod eval;
mod models;
mod shared;
mod tools;

pub use commands::{
    default_index_url, model_spec, CfgFormat, CfgSettings, FixInput, FixSettings, ListSettings,
    LocateSettings, PullSettings, ReportSettings, SeedChoice, ServeSettings, TestSettings,
    TraceSettings,
};
pub use eval::{
    EvalCheckSettings, EvalExecSettings, EvalReportSettings, EvalSettings, MergeSettings,
    RescoreSettings,
};
pub use shared::{is_program, program_file, shell_env, ProgramTests, SandboxSettings, TaskSource};
pub use tools::{CheckSettings, ExecSettings};

pub use models::ModelSettings;

use super::args::{Command, EvalCommand, ModelCommand};
use super::output::CliError;

/// One command's settings.
#[derive(Debug)]
pub enum Settings {
    Fix(Box<FixSettings>),
    Test(TestSettings),
    Trace(TraceSettings),
    Locate(LocateSettings),
    Cfg(CfgSettings),
    Schema,
    Report(ReportSettings),
    ModelPull(PullSettings),
    ModelList(ListSettings),
    Serve(Box<ServeSettings>),
    Eval(Box<EvalSettings>),
    EvalReport(Box<EvalReportSettings>),
    EvalMerge(MergeSettings),
    EvalRescore(Box<RescoreSettings>),
    EvalExec(Box<EvalExecSettings>),
    EvalCheck(Box<EvalCheckSettings>),
    Exec(Box<ExecSettings>),
    Check(Box<CheckSettings>),
}

impl Settings {
    /// The settings of the parsed `command`.
    pub fn resolve(command: &Command) -> Result<Self, CliError> {
        Ok(match command {
            Command::Fix(a) => Settings::Fix(Box::new(FixSettings::resolve(a)?)),
            Command::Test(a) => Settings::Test(TestSettings::resolve(a)?),
            Command::Trace(a) => Settings::Trace(TraceSettings::resolve(a)?),
            Command::Locate(a) => Settings::Locate(LocateSettings::resolve(a)?),
            Command::Cfg(a) => Settings::Cfg(CfgSettings::resolve(a)),
            Command::Schema => Settings::Schema,
            Command::Report(a) => Settings::Report(ReportSettings::resolve(a)),
            Command::Model(ModelCommand::Pull(a)) => Settings::ModelPull(PullSettings::resolve(a)?),
            Command::Model(ModelCommand::List(a)) => Settings::ModelList(ListSettings::resolve(a)),
            Command::Serve(a) => Settings::Serve(Box::new(ServeSettings::resolve(a))),
            Command::Exec(a) => Settings::Exec(Box::new(ExecSettings::resolve(a)?)),
            Command::Check(a) => Settings::Check(Box::new(CheckSettings::resolve(a)?)),
            Command::Eval(a) => match &a.command {
                None => Settings::Eval(Box::new(EvalSettings::resolve(a)?)),
                Some(EvalCommand::Report(r)) => {
                    Settings::EvalReport(Box::new(EvalReportSettings::resolve(r)?))
                }
                Some(EvalCommand::Merge(m)) => Settings::EvalMerge(MergeSettings::resolve(m)),
                Some(EvalCommand::Rescore(r)) => {
                    Settings::EvalRescore(Box::new(RescoreSettings::resolve(r)?))
                }
                Some(EvalCommand::Exec(e)) => {
                    Settings::EvalExec(Box::new(EvalExecSettings::resolve(e)?))
                }
                Some(EvalCommand::Check(c)) => {
                    Settings::EvalCheck(Box::new(EvalCheckSettings::resolve(c)?))
                }
            },
        })
    }
}

#[cfg(test)]
mod tests;
