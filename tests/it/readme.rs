//! The README is a newcomer's page: short, and every command in it is run as written by a
//! script or a test. The commands are those of its ```sh blocks (a trailing `# comment`
//! dropped) and the `$ ` lines of its ```console blocks; a command that is itself one of the
//! scripts under `scripts/` counts as run. `cargo install --path .` is written in prose, not in
//! a block: it is a release build with llama.cpp, minutes of CPU for what `scripts/demo.sh`'s
//! `cargo build --release` already checks.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// Every command in the README's code blocks, in order.
fn readme_commands(text: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut block: Option<&str> = None;
    for line in text.lines() {
        if let Some(fence) = line.strip_prefix("```") {
            block = match block {
                None => Some(fence.trim()),
                Some(_) => None,
            };
            continue;
        }
        let command = match block {
            Some("sh") => Some(line),
            Some("console") => line.strip_prefix("$ "),
            _ => None,
        };
        let Some(command) = command else { continue };
        let command = match command.find(" #") {
            Some(at) => &command[..at],
            None => command,
        };
        let command = command.trim();
        if !command.is_empty() {
            commands.push(command.to_string());
        }
    }
    commands
}

/// The text of every file under `dir`, but this test's own source.
fn texts(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            texts(&path, out);
            continue;
        }
        if path == root().join("tests/it/readme.rs") {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(&path) {
            out.push((path, text));
        }
    }
}

#[test]
fn the_readme_is_short_and_sets_up_first() {
    let text = readme();
    assert!(
        text.len() <= 15_500,
        "README.md is {} bytes; keep it under ~15 KB",
        text.len()
    );
    let commands = readme_commands(&text);
    assert_eq!(
        commands[..2],
        ["scripts/demo.sh", "scripts/test.sh"],
        "the set-up commands come first"
    );
    let first_fix = commands
        .iter()
        .position(|c| c.starts_with("ldb fix "))
        .expect("an `ldb fix`");
    let line = text
        .lines()
        .position(|l| l.contains(&commands[first_fix]))
        .unwrap();
    assert!(
        line < 60,
        "the first `ldb fix` is on line {}: keep it within the first screen",
        line + 1
    );
}

#[test]
fn every_readme_command_is_run_as_written_by_a_script_or_a_test() {
    let commands = readme_commands(&readme());
    assert!(
        commands.len() >= 10,
        "the README's commands were not found: {commands:?}"
    );
    let mut files = Vec::new();
    for dir in ["scripts", "tests", ".ci"] {
        texts(&root().join(dir), &mut files);
    }
    let missing: Vec<&String> = commands
        .iter()
        .filter(|command| {
            let script = command.split_whitespace().next().unwrap_or_default();
            let is_script = script.starts_with("scripts/") && root().join(script).is_file();
            !is_script
                && !files
                    .iter()
                    .any(|(_, text)| text.contains(command.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "README commands no script or test runs as written (add them to scripts/walkthrough.sh): \
         {missing:#?}"
    );
}

/// The README's commands that need no model, run as written (`scripts/walkthrough.sh
/// --no-model`) with this build's `ldb`.
#[test]
fn the_readme_commands_that_need_no_model_run() {
    let out = common::scrub(&mut Command::new("bash"))
        .arg(root().join("scripts/walkthrough.sh"))
        .arg("--no-model")
        .env("LDB", env!("CARGO_BIN_EXE_ldb"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scripts/walkthrough.sh --no-model failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
