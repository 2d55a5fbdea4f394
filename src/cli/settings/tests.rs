use clap::Parser;

use super::*;
use crate::cli::args::Cli;
use crate::cli::output::ExitStatus;

fn resolve(argv: &[&str]) -> Result<Settings, CliError> {
    let cli = Cli::try_parse_from(std::iter::once("ldb").chain(argv.iter().copied()))
        .unwrap_or_else(|e| panic!("{argv:?} parses: {e}"));
    Settings::resolve(&cli.command)
}

fn refused(argv: &[&str]) -> String {
    match resolve(argv) {
        Err(e) => {
            assert_eq!(e.status, ExitStatus::BadInput, "{argv:?}: {}", e.message);
            e.message
        }
        Ok(s) => panic!("{argv:?} resolves: {s:?}"),
    }
}

#[test]
fn program_flags_are_refused_on_a_task_file() {
    for (flag, argv) in [
        ("--tests", vec!["fix", "tasks.jsonl", "--tests", "t.py"]),
        ("--entry", vec!["test", "tasks.jsonl", "--entry", "f"]),
        ("--io-test", vec!["locate", "t.json", "--io-test", "1", "2"]),
    ] {
        let message = refused(&argv);
        assert!(message.starts_with(flag), "{message}");
    }
    let Ok(Settings::Test(s)) = resolve(&["test", "prog.py::f", "--test", "assert f() == 1"])
    else {
        panic!("a program takes --test");
    };
    assert!(matches!(&s.source, TaskSource::Program(t) if t.test.len() == 1));
}

#[test]
fn fix_refuses_what_contradicts_its_input() {
    assert!(refused(&["fix", "tasks.jsonl", "--write"]).contains("--write"));
    assert!(
        refused(&["fix", "s.py", "--make-runnable", "--tests", "t.py"]).contains("--make-runnable")
    );
    let Ok(Settings::Fix(s)) = resolve(&["fix", "s.py", "--make-runnable", "--test", "x"]) else {
        panic!("a snippet takes --test");
    };
    assert!(matches!(&s.input, FixInput::Snippet { tests, .. } if tests == &["x"]));
}

#[test]
fn check_refuses_two_readers_of_stdin_and_a_run_without_execution() {
    assert!(refused(&["check", "-", "--stdin", "-"]).contains("stdin"));
    assert!(
        refused(&["check", "p.py", "--make-runnable", "--mode", "predict"])
            .contains("--make-runnable")
    );
    assert!(refused(&[
        "eval",
        "check",
        "--dataset",
        "orca-complete",
        "--data-dir",
        "d",
        "--no-model",
        "--mode",
        "predict"
    ])
    .contains("--no-model"));
}

#[test]
fn declared_constraints_are_checked_while_parsing() {
    for argv in [
        &["fix", "p.py", "-k", "x"][..],
        &["fix", "p.py", "--search-temperature", "3"],
        &["fix", "t.json", "--budget-tokens", "0"],
        &["test", "t.json", "--timeout", "0"],
        &["test", "t.json", "--disk", "0"],
        &["exec", "s.py", "--n", "0"],
        &["fix", "s.py", "--exec-n", "1"],
        &["serve", "--host", "localhost"],
    ] {
        let parsed = Cli::try_parse_from(std::iter::once("ldb").chain(argv.iter().copied()));
        assert!(parsed.is_err(), "{argv:?}");
    }
}

#[test]
fn trace_keeps_as_many_steps_at_the_end_as_at_the_start_unless_told() {
    let Ok(Settings::Trace(s)) = resolve(&["trace", "p.py", "--head", "7"]) else {
        panic!("resolves");
    };
    assert_eq!((s.sample.head, s.sample.tail), (7, 7));
    let Ok(Settings::Trace(s)) = resolve(&["trace", "p.py", "--head", "7", "--tail", "2"]) else {
        panic!("resolves");
    };
    assert_eq!((s.sample.head, s.sample.tail), (7, 2));
}

#[test]
fn eval_runs_each_strategy_once_and_needs_a_dataset() {
    assert!(refused(&["eval"]).contains("--dataset"));
    let Ok(Settings::Eval(s)) = resolve(&[
        "eval",
        "--dataset",
        "humaneval",
        "--strategy",
        "none,ldb",
        "--strategy",
        "none",
    ]) else {
        panic!("resolves");
    };
    let labels: Vec<String> = s.strategies.iter().map(|s| s.label()).collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
}
