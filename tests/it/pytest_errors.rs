//! What `ldb test` says when a project's pytest suite cannot run as given, each an `error:`
//! with a `hint:` (a node id that does not exist, a collection error, a test importing a
//! missing module, a virtualenv without pytest), and the virtualenv it runs in (one under
//! `/tmp` is used as it is).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::project::{ldb, project, text, TARGET};
use crate::ldb_snapshot;

#[test]
fn a_node_id_that_does_not_exist_is_an_error_with_a_hint() {
    let (_dir, root) = project();
    let out = ldb(
        &root,
        &["test", TARGET, "--tests", "tests/test_stats.py::test_nope"],
        &[],
    );
    ldb_snapshot!(out);
}

#[test]
fn a_collection_error_is_an_error_with_a_hint() {
    let (_dir, root) = project();
    std::fs::write(
        root.join("tests/test_broken.py"),
        "CASES = undefined_name\n\ndef test_a():\n    pass\n",
    )
    .expect("test file");
    let out = ldb(&root, &["test", TARGET, "--tests", "tests/"], &[]);
    ldb_snapshot!(out);
}

#[test]
fn a_test_importing_a_missing_module_is_an_error_with_a_hint() {
    let (_dir, root) = project();
    std::fs::write(
        root.join("tests/test_missing.py"),
        "import scorelib_not_installed\n\ndef test_a():\n    pass\n",
    )
    .expect("test file");
    let out = ldb(&root, &["test", TARGET, "--tests", "tests/"], &[]);
    ldb_snapshot!(out);
}

/// A virtualenv made without pip (no network needed): `--system-site-packages` or not.
fn venv(dir: &Path, system_site: bool) -> PathBuf {
    let venv = dir.join("venv");
    let mut cmd = Command::new("/usr/bin/python3.11");
    cmd.args(["-m", "venv", "--without-pip"]);
    if system_site {
        cmd.arg("--system-site-packages");
    }
    let status = cmd.arg(&venv).status().expect("python3.11 -m venv");
    assert!(status.success(), "python3.11 -m venv failed");
    venv
}

#[test]
fn a_virtualenv_without_pytest_is_an_error_with_a_hint() {
    let (dir, root) = project();
    let venv = venv(dir.path(), false);
    let venv_text = venv.display().to_string();
    let out = ldb(
        &root,
        &["test", TARGET, "--tests", "tests/"],
        &[("VIRTUAL_ENV", &venv_text)],
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: tests/: these tests need pytest (a test directory), and the virtualenv {venv_text} (VIRTUAL_ENV) has none (ModuleNotFoundError: No module named 'pytest')"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "hint: install it in the virtualenv: {venv_text}/bin/pip install pytest"
        )),
        "{stderr}"
    );
}

/// A virtualenv under /tmp, which the sandbox covers with scratch space: it is shown where it
/// is, read-only, and its packages (and their .pth files) import as in the virtualenv.
#[test]
fn a_virtualenv_under_tmp_is_used_as_it_is() {
    let (dir, root) = project();
    let venv = venv(dir.path(), true);
    assert!(venv.starts_with(std::env::temp_dir()), "{}", venv.display());
    let site = venv.join("lib/python3.11/site-packages");
    let extra = dir.path().join("extra");
    std::fs::create_dir_all(&extra).expect("extra");
    std::fs::write(extra.join("venv_only.py"), "ANSWER = 42\n").expect("module");
    std::fs::write(site.join("extra.pth"), format!("{}\n", extra.display())).expect("pth");
    // The virtualenv's packages come before the system's, as in the virtualenv itself.
    std::fs::write(
        root.join("tests/test_env.py"),
        format!(
            "import sys\nimport venv_only\n\n\ndef test_venv():\n    assert venv_only.ANSWER == 42\n\n\ndef test_venv_first():\n    assert sys.path.index({:?}) < sys.path.index('/usr/lib/python3/dist-packages')\n",
            site.display().to_string()
        ),
    )
    .expect("test file");
    let venv_text = venv.display().to_string();
    let out = ldb(
        &root,
        &["test", TARGET, "--tests", "tests/test_env.py"],
        &[("VIRTUAL_ENV", &venv_text)],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("PASS     tests/test_env.py::test_venv"),
        "{stdout}"
    );
    assert!(
        stderr.contains(&format!("the virtualenv {venv_text} (VIRTUAL_ENV)")),
        "{stderr}"
    );
    // Without it, the module is not there.
    let out = ldb(
        &root,
        &["test", TARGET, "--tests", "tests/test_env.py"],
        &[],
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("imports `venv_only`"), "{stderr}");
}

/// Without a mount namespace of its own a run would import the user's file, not the program:
/// as an unprivileged user, either the program reaches the tests (user namespaces allowed) or
/// ldb says it cannot, never tests the user's file in the program's place.
#[test]
fn an_unprivileged_run_tests_the_program_or_says_it_cannot() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !Path::new("/usr/bin/setpriv").exists() {
        eprintln!("skipped: needs root and setpriv to run ldb as an unprivileged user");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ranking");
    common::project::copy_dir(&common::project::fixture(), &root);
    let module = std::fs::read_to_string(root.join("src/ranking/stats.py")).expect("read");
    let start = module.find("def second_largest").expect("def");
    let fixed = format!(
        "{}def second_largest(scores):\n    distinct = sorted(set(clean(scores)))\n    if len(distinct) < 2:\n        raise ValueError(\"need two distinct scores\")\n    return distinct[-2]\n",
        &module[..start]
    );
    std::fs::write(dir.path().join("fixed.py"), fixed).expect("write");
    let status = Command::new("chmod")
        .args(["-R", "a+rwX", &dir.path().display().to_string()])
        .status()
        .expect("chmod");
    assert!(status.success());
    let fixed_path = dir.path().join("fixed.py").display().to_string();
    let out = common::scrub(&mut Command::new("/usr/bin/setpriv"))
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_ldb"))
        .args([
            "test",
            TARGET,
            "--tests",
            "tests/",
            "--program",
            &fixed_path,
        ])
        .current_dir(&root)
        .env("HOME", dir.path())
        .output()
        .expect("run ldb as nobody");
    let (stdout, stderr) = text(&out);
    match out.status.code() {
        Some(0) => assert!(
            stdout.contains("10 passed, 1 skipped, 1 xfailed"),
            "{stdout}"
        ),
        Some(4) => {
            assert!(
                stderr.contains("no file system view of its own"),
                "{stderr}"
            );
            assert!(
                stderr.contains("hint: pytest runs need the sandbox's mount namespace"),
                "{stderr}"
            );
        }
        other => panic!("exit {other:?}: {stdout}\n{stderr}"),
    }
}
