//! The pytest fixture project (`tests/fixtures/pytest_project`) for the tests that run it:
//! a copy of it per test, `ldb` run in it, and a snapshot of its files to show nothing changed.

use std::path::{Path, PathBuf};
use std::process::Output;

/// The node the tests debug: `second_largest` of the project's `ranking.stats`.
pub const TARGET: &str = "src/ranking/stats.py::second_largest";

pub fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pytest_project")
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// A copy of the fixture project, in a directory of its own.
pub fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ranking");
    copy_dir(&fixture(), &root);
    (dir, root)
}

pub fn ldb(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    super::ldb()
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .expect("run ldb")
}

pub fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every file under `dir` with its bytes, sorted.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir") {
            let entry = entry.expect("entry");
            if entry.file_type().expect("type").is_dir() {
                stack.push(entry.path());
                out.push((entry.path(), Vec::new()));
            } else {
                out.push((entry.path(), std::fs::read(entry.path()).expect("read")));
            }
        }
    }
    out.sort();
    out
}
