//! `ldb locate TASK|prog.py`: which statements of a failing program are most likely wrong,
//! ranked from what its passing and failing tests executed.

use serde::Serialize;

use super::output::{self, CliError, ExitStatus};
use super::settings::LocateSettings;
use super::test_cmd::load_source;
use crate::locate::{localise, Localisation, LocateError, Signals, TieBreak};
use crate::run::visible_tests;

#[derive(Serialize)]
struct Ranked {
    rank: usize,
    first_line: u32,
    last_line: u32,
    function: String,
    block: usize,
    score: f64,
    ochiai: f64,
    failing_runs: u32,
    passing_runs: u32,
    raised: u32,
    /// Failing runs whose raise a call on this statement led to.
    called: u32,
    code: String,
}

#[derive(Serialize)]
struct LocateReport {
    task_id: String,
    passed: usize,
    total: usize,
    spectrum_blind: bool,
    tie_rule: TieBreak,
    statements: Vec<Ranked>,
}

pub fn run(s: &LocateSettings) -> Result<ExitStatus, CliError> {
    if let crate::cli::settings::TaskSource::Project(tests) = &s.source {
        return run_project(s, tests);
    }
    let (mut tasks, _, runner) = load_source(&s.target, &s.source, s.sandbox.runner()?, false)?;
    if tasks.len() != 1 {
        return Err(CliError::bad_input(
            format!(
                "{} holds {} tasks; ldb locate takes one",
                s.target.display(),
                tasks.len()
            ),
            "pick one with --task-id ID",
        ));
    }
    let task = tasks.remove(0);
    let program = match (&s.program, &task.seed) {
        (Some(path), _) => output::read_source(path)?,
        (None, Some(seed)) => seed.clone(),
        (None, None) => {
            return Err(CliError::bad_input(
                format!(
                    "{}: task `{}` has no `seed` program",
                    s.target.display(),
                    task.task_id
                ),
                "pass --program FILE.py, or add a \"seed\" field to the task",
            ))
        }
    };
    let tests = visible_tests(&task);
    if tests.is_empty() {
        return Err(CliError::bad_input(
            format!("{}: no tests to run", s.target.display()),
            "give --tests, --test or --io-test (or a task with visible tests)",
        ));
    }
    let signals = Signals {
        tie: s.ties,
        ..Signals::default()
    };
    let (loc, outcomes) = localise(&runner, &program, &tests, &signals).map_err(|e| match e {
        LocateError::Syntax { line, message } => CliError::bad_input(
            format!("{}: line {line}: {message}", s.target.display()),
            "localisation runs the program: fix the syntax error first (ldb fix does)",
        ),
        LocateError::Sandbox(e) => e.into(),
    })?;
    let passed = outcomes.iter().filter(|o| o.passed()).count();
    let report = LocateReport {
        task_id: task.task_id.clone(),
        passed,
        total: outcomes.len(),
        spectrum_blind: loc.spectrum_blind(),
        tie_rule: loc.tie_rule,
        statements: ranked(&loc, &program, s.top),
    };
    if s.json {
        output::print_json(&report)?;
    } else {
        output::print(&render(&report, &loc));
    }
    Ok(if passed == outcomes.len() {
        ExitStatus::Success
    } else {
        ExitStatus::TestsFailed
    })
}

fn ranked(loc: &Localisation, program: &str, top: usize) -> Vec<Ranked> {
    let lines: Vec<&str> = program.lines().collect();
    loc.suspects
        .iter()
        .take(top)
        .enumerate()
        .map(|(i, s)| {
            let st = &loc.statements[s.stmt];
            Ranked {
                rank: i + 1,
                first_line: st.first,
                last_line: st.last,
                function: st.function.clone(),
                block: st.block,
                score: s.score,
                ochiai: s.ochiai,
                failing_runs: s.failing,
                passing_runs: s.passing,
                raised: s.raised,
                called: s.called,
                code: lines
                    .get(st.first as usize - 1)
                    .map(|l| l.trim().to_string())
                    .unwrap_or_default(),
            }
        })
        .collect()
}

fn render(r: &LocateReport, loc: &Localisation) -> String {
    let mut out = format!("{}: {} of {} tests pass\n", r.task_id, r.passed, r.total);
    if r.passed == r.total {
        out.push_str("every test passes: nothing to localise\n");
        return out;
    }
    out.push_str(&format!(
        "statements the failing tests ran, most suspicious first (Ochiai over {} passing and {} \
         failing runs, plus 1 where a failing test raised):\n",
        loc.passed_runs, loc.failed_runs
    ));
    out.push_str("  rank  line   score  fail/pass  where        code\n");
    for s in &r.statements {
        let lines = if s.first_line == s.last_line {
            s.first_line.to_string()
        } else {
            format!("{}-{}", s.first_line, s.last_line)
        };
        out.push_str(&format!(
            "  {:<4}  {:<5}  {:>5.2}  {:>4}/{:<4}  {:<11}  {}{}\n",
            s.rank,
            lines,
            s.score,
            s.failing_runs,
            s.passing_runs,
            format!("{} B{}", s.function, s.block),
            s.code,
            if s.raised > 0 {
                "   <- raised here"
            } else if s.called > 0 {
                "   <- called where it raised"
            } else {
                ""
            }
        ));
    }
    if r.spectrum_blind {
        out.push_str(
            "note: every test fails, so what the tests executed cannot tell these statements \
             apart: the statement that raised comes first, then ties go to later statements \
             (--ties)\n",
        );
    }
    out
}

#[derive(Serialize)]
struct ProjectLine {
    file: std::path::PathBuf,
    function: String,
    line: u32,
    score: f64,
}

#[derive(Serialize)]
struct ProjectReport<'a> {
    root: &'a std::path::Path,
    given: usize,
    failing: usize,
    others: usize,
    others_passing: usize,
    functions: &'a [crate::locate::project::RankedFunction],
    /// Lines of the ranked functions, the first function's first.
    lines: Vec<ProjectLine>,
}

/// `ldb locate --tests NODE` with no program: the project's functions, then their lines.
fn run_project(
    s: &LocateSettings,
    tests: &crate::cli::settings::ProgramTests,
) -> Result<ExitStatus, CliError> {
    let located = crate::load::project::locate(tests, s.sandbox.runner()?, false)?;
    let functions: Vec<_> = located.ranked.iter().take(s.top).cloned().collect();
    let lines: Vec<ProjectLine> = functions
        .iter()
        .flat_map(|f| {
            f.lines.iter().map(|(line, score)| ProjectLine {
                file: f.file.clone(),
                function: f.function.clone(),
                line: *line,
                score: *score,
            })
        })
        .collect();
    let report = ProjectReport {
        root: &located.root,
        given: located.given,
        failing: located.failing,
        others: located.others,
        others_passing: located.others_passing,
        functions: &functions,
        lines,
    };
    if s.json {
        output::print_json(&report)?;
    } else {
        output::print(&render_project(&report));
    }
    Ok(if located.failing == 0 {
        ExitStatus::Success
    } else {
        ExitStatus::TestsFailed
    })
}

fn render_project(r: &ProjectReport<'_>) -> String {
    let mut out = format!(
        "{} of {} given test{} fail{}; {} of the {} other test{} of their files pass (project {})\n",
        r.failing,
        r.given,
        if r.given == 1 { "" } else { "s" },
        if r.failing == 1 { "s" } else { "" },
        r.others_passing,
        r.others,
        if r.others == 1 { "" } else { "s" },
        r.root.display()
    );
    if r.failing == 0 {
        out.push_str("every given test passes: nothing to localise\n");
        return out;
    }
    out.push_str(
        "functions the failing tests ran, most suspicious first (Ochiai over their body lines; \
         ties: the innermost frame of a traceback, then a function the failing test called \
         itself):\n",
    );
    out.push_str("  rank  score  fail/pass  function\n");
    let cwd = std::env::current_dir().unwrap_or_default();
    for (i, f) in r.functions.iter().enumerate() {
        let file = f.file.strip_prefix(&cwd).unwrap_or(&f.file);
        let mut why = Vec::new();
        if let Some(d) = f.traceback_depth {
            why.push(if d == 1 {
                "raised here".to_string()
            } else {
                format!("in the traceback, {d} frames out")
            });
        }
        if f.called_by_test {
            why.push("called by the failing test".into());
        }
        out.push_str(&format!(
            "  {:<4}  {:>5.2}  {:>4}/{:<4}  {}::{} (lines {}-{}){}\n",
            i + 1,
            f.score,
            f.failing_runs,
            f.passing_runs,
            file.display(),
            f.function,
            f.first_line,
            f.last_line,
            if why.is_empty() {
                String::new()
            } else {
                format!("  <- {}", why.join(", "))
            }
        ));
        if i == 0 {
            let top: Vec<String> = f
                .lines
                .iter()
                .take(5)
                .map(|(l, sc)| format!("{l} ({sc:.2})"))
                .collect();
            out.push_str(&format!(
                "        most suspicious lines: {}\n",
                top.join(", ")
            ));
        }
    }
    out
}
