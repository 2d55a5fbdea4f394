//! A project as real code is (`tests/fixtures/shell_project`): a package whose helpers are
//! registered in a module-level registry by a `functools.wraps` decorator, a method memoized by
//! the `decorator` package, a conftest with an autouse fixture, a test that monkeypatches a
//! module attribute, one that asks psutil for the test process's parent, and three bugs with
//! no docstring to say what is right: a string literal (`quote`), a method's format string
//! (`Fish.info`), and a predicate (`is_command`) where a single edit fixes the failing test
//! and breaks the passing ones.
//!
//! `ldb test` agrees with plain pytest on every node; `ldb fix` fixes the method and the
//! decorated function in place from the failing assertion's values, never returns the edit
//! that breaks a passing test, and finds the function from the failing test alone. The fixes
//! here are model-free edits (`--proposers mutate`); no model is asked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::project::{copy_dir, ldb, snapshot, text};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shell_project")
}

/// A copy of the fixture project, in a directory of its own.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("shelltools-project");
    copy_dir(&fixture(), &root);
    (dir, root)
}

/// `ldb fix` with model-free edits only; an endpoint nobody listens on stands for the model,
/// so a request to it would fail the run.
fn fix(root: &Path, args: &[&str]) -> Output {
    let mut all = vec![
        "fix",
        "--proposers",
        "mutate",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "none",
        "--no-cache",
    ];
    all.extend_from_slice(args);
    ldb(root, &all, &[])
}

/// Each node's outcome under plain `python3 -m pytest`, from its `-rA` summary.
fn plain_pytest(root: &Path) -> BTreeMap<String, String> {
    // The Python ldb embeds, with Debian's pytest (scripts/setup.sh installs both).
    let out = std::process::Command::new("/usr/bin/python3.11")
        .args(["-m", "pytest", "-rA", "-q", "-p", "no:cacheprovider"])
        .current_dir(root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run pytest");
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .filter_map(|l| {
            let (outcome, rest) = l.split_once(' ')?;
            let node = rest.split(" - ").next()?.trim();
            matches!(outcome, "PASSED" | "FAILED" | "ERROR" | "SKIPPED" | "XFAIL")
                .then(|| (node.to_string(), outcome.to_string()))
        })
        .collect()
}

#[test]
fn ldb_test_agrees_with_plain_pytest_on_every_node() {
    let (_dir, root) = project();
    let plain = plain_pytest(&root);
    assert_eq!(plain.len(), 12, "{plain:?}");
    let before = snapshot(&root);
    let out = ldb(
        &root,
        &[
            "test",
            "shelltools/shells.py::quote",
            "--tests",
            "tests/",
            "--json",
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    let reports: serde_json::Value = serde_json::from_str(&stdout).expect(&stderr);
    let mine: BTreeMap<String, String> = reports[0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let status = match r["status"].as_str().unwrap_or_default() {
                "passed" => "PASSED",
                "skipped" => "SKIPPED",
                "x_failed" => "XFAIL",
                _ => "FAILED",
            };
            (
                r["test"]["node_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                status.to_string(),
            )
        })
        .collect();
    assert_eq!(mine, plain, "{stderr}");
    // The node that asks for the parent process passes as it does under pytest: the test
    // process has one in the sandbox.
    assert_eq!(
        mine.get("tests/test_shells.py::test_parent_shell_has_a_name")
            .map(String::as_str),
        Some("PASSED")
    );
    assert_eq!(snapshot(&root), before, "the project changed");
}

#[test]
fn a_decorated_function_and_a_method_are_fixed_in_place_from_the_expected_values() {
    let (_dir, root) = project();
    let module = root.join("shelltools/shells.py");
    let original = std::fs::read_to_string(&module).expect("read");
    // `quote`, registered by a functools.wraps decorator: `'a b"` where `'a b'` is expected.
    let out = fix(
        &root,
        &[
            "shelltools/shells.py::quote",
            "--tests",
            "tests/test_shells.py::test_quote",
            "--write",
            "--unconfirmed",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    // `Fish.info`, memoized by the decorator package: `'Fish Shell, version 3.5.9'` where
    // `'Fish Shell 3.5.9'` is expected; its format fields stay.
    let out = fix(
        &root,
        &[
            "shelltools/shells.py::Fish.info",
            "--tests",
            "tests/test_shells.py::test_info",
            "--write",
        ],
    );
    let (stdout, stderr) = text(&out);
    // A regression test of the file runs `Fish.info` too and guards the fix.
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let fixed = std::fs::read_to_string(&module).expect("read");
    let expected = original
        .replace(
            "    return \"'\" + arg + '\"'\n",
            "    return \"'\" + arg + \"'\"\n",
        )
        .replace(
            "        return u'{}, version {}'.format(",
            "        return u'{} {}'.format(",
        );
    assert_eq!(fixed, expected, "{stderr}");
    // Both nodes pass now, and so does the memoized method's other test.
    let out = ldb(
        &root,
        &[
            "test",
            "shelltools/shells.py::quote",
            "--tests",
            "tests/",
            "-k",
            "quote or info",
        ],
        &[],
    );
    let (stdout, _) = text(&out);
    assert!(stdout.contains("4 tests: 4 passed"), "{stdout}");
}

#[test]
fn an_edit_that_breaks_a_passing_test_is_never_returned() {
    // `is_command('lsof', ['ls'])` answers True where False is expected. `return True` made
    // `return False` makes that node pass and breaks one that passed; no single edit fixes
    // the function (`startswith` should be `==`).
    let failing = "tests/test_shells.py::test_a_longer_word_is_not_the_command";
    let target = "shelltools/shells.py::is_command";
    let (_dir, root) = project();
    let module = root.join("shelltools/shells.py");
    let original = std::fs::read_to_string(&module).expect("read");
    let out = fix(&root, &[target, "--tests", failing, "--write"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    // The wait for the file's other tests is announced before they run.
    let announced = stderr
        .find("running the 11 other tests of the tests' files once on the given program")
        .expect(&stderr);
    let found = stderr
        .find("2 passing tests of the tests' files run `is_command`")
        .expect(&stderr);
    assert!(announced < found, "{stderr}");
    assert!(stderr.contains("NotFixed"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&module).expect("read"),
        original,
        "nothing is written"
    );

    // Without the regression tests, that edit passes the failing test and nothing backs it:
    // it is printed, not written (exit 6) ...
    let unguarded = [
        target,
        "--tests",
        failing,
        "--keep-passing",
        "none",
        "--write",
    ];
    let out = fix(&root, &unguarded);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    assert_eq!(std::fs::read_to_string(&module).expect("read"), original);
    // ... and with `--unconfirmed` it is written: what the regression tests guard against.
    let out = fix(&root, &[&unguarded[..], &["--unconfirmed"]].concat());
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    let written = std::fs::read_to_string(&module).expect("read");
    assert!(
        written.contains("            return False\n    return False\n"),
        "{written}"
    );
    let after = ldb(
        &root,
        &["test", target, "--tests", "tests/", "-k", "command"],
        &[],
    );
    let (stdout, _) = text(&after);
    assert!(stdout.contains("3 tests: 2 passed, 1 failed"), "{stdout}");
}

#[test]
fn with_no_function_named_the_failing_test_leads_to_it() {
    // Two modules: `registry` (its functions run at import) and `shells`; the failing test
    // calls `quote` in `shells`.
    let (_dir, root) = project();
    let out = ldb(
        &root,
        &[
            "locate",
            "--tests",
            "tests/test_shells.py::test_quote",
            "--json",
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    let report: serde_json::Value = serde_json::from_str(&stdout).expect(&stderr);
    assert_eq!(report["functions"][0]["function"], "quote", "{stdout}");
    assert!(
        report["functions"][0]["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("shelltools/shells.py")),
        "{stdout}"
    );
    let module = root.join("shelltools/shells.py");
    let out = fix(
        &root,
        &[
            "--tests",
            "tests/test_shells.py::test_quote",
            "--write",
            "--unconfirmed",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("ldb: fixing shelltools/shells.py::quote"),
        "{stderr}"
    );
    let fixed = std::fs::read_to_string(&module).expect("read");
    assert!(
        fixed.contains("    return \"'\" + arg + \"'\"\n"),
        "{fixed}"
    );
}

#[test]
fn the_readme_project_example_is_fixed_by_the_range_its_expected_value_needs() {
    // examples/textkit: `slugify`'s regular expression drops digits; the failing assertion
    // expects 'top-10-tips' where it got 'top-tips'. The class gains `0-9`, found from the
    // failing test alone, with the two passing tests of its file kept passing.
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("textkit");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/textkit"),
        &root,
    );
    let out = fix(
        &root,
        &[
            "--tests",
            "tests/test_slug.py::test_numbers_are_kept",
            "--write",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("2 of 2 regression tests that passed before"),
        "{stderr}"
    );
    let fixed = std::fs::read_to_string(root.join("textkit/slug.py")).expect("read");
    assert!(
        fixed.contains(r#"re.findall(r"[a-z0-9]+", title.lower())"#),
        "{fixed}"
    );
}
