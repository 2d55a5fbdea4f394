//! `ldb fix -h` fits one screen: the search's tuning knobs live in `--help` only.

use crate::common;
use crate::ldb_snapshot;

fn help(args: &[&str]) -> std::process::Output {
    common::ldb().args(args).output().expect("run ldb")
}

#[test]
fn fix_short_help_fits_one_screen() {
    let out = help(&["fix", "-h"]);
    common::assert_success(&out);
    let lines = String::from_utf8_lossy(&out.stdout).lines().count();
    assert!(lines <= 40, "`ldb fix -h` is {lines} lines");
    ldb_snapshot!(out);
}

#[test]
fn a_knob_hidden_from_short_help_is_in_long_help() {
    let short = String::from_utf8_lossy(&help(&["fix", "-h"]).stdout).into_owned();
    let long = String::from_utf8_lossy(&help(&["fix", "--help"]).stdout).into_owned();
    for flag in [
        "--proposers",
        "--peers",
        "--threads",
        "--make-runnable",
        "--io-test",
    ] {
        assert!(!short.contains(flag), "{flag} in -h:\n{short}");
        assert!(long.contains(flag), "{flag} not in --help");
    }
}
