//! `ldb cfg FILE.py`: the control-flow graph of every scope, as text, DOT or JSON.

use super::output::{self, CliError, ExitStatus};
use super::CfgArgs;
use crate::python::cfg::ProgramCfg;
use crate::python::source::SourceFile;

pub fn run(args: &CfgArgs) -> Result<ExitStatus, CliError> {
    let src = SourceFile::new(output::read_source(&args.file)?);
    let cfg = ProgramCfg::build(&src).map_err(|e| {
        CliError::bad_input(
            format!(
                "{}:{}:{}: {}",
                args.file.display(),
                e.line,
                e.column,
                e.message
            ),
            "fix the syntax error; ldb reads Python 3.11 syntax",
        )
    })?;
    if args.json {
        output::print_json(&cfg)?;
    } else if args.dot {
        output::print(&cfg.render_dot(&src));
    } else {
        output::print(&cfg.render_text(&src));
    }
    Ok(ExitStatus::Success)
}
