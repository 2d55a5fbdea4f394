//! `ldb cfg FILE.py`: the control-flow graph of every scope, as text, DOT or JSON.

use super::output::{self, CliError, ExitStatus};
use super::settings::{CfgFormat, CfgSettings};
use crate::python::cfg::ProgramCfg;
use crate::python::source::SourceFile;

pub fn run(s: &CfgSettings) -> Result<ExitStatus, CliError> {
    let src = SourceFile::new(output::read_source(&s.file)?);
    let cfg = ProgramCfg::build(&src).map_err(|e| {
        CliError::bad_input(
            format!(
                "{}:{}:{}: {}",
                s.file.display(),
                e.line,
                e.column,
                e.message
            ),
            "fix the syntax error; ldb reads Python 3.11 syntax",
        )
    })?;
    match s.format {
        CfgFormat::Json => output::print_json(&cfg)?,
        CfgFormat::Dot => output::print(&cfg.render_dot(&src)),
        CfgFormat::Text => output::print(&cfg.render_text(&src)),
    }
    Ok(ExitStatus::Success)
}
