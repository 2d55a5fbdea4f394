//! Answers out of the program's reach: a seed with no algorithm that looks up its task's hidden
//! asserts where the host keeps them (the `ldb` image through `/proc/self/exe` or its own
//! memory, a task file on disk) scores as a failure under `ldb eval`; the sandbox shows the
//! program the interpreter, its libraries, `--python-path` directories and its work dir, not the
//! host's tree.

use crate::common;

use std::path::Path;
use std::time::Duration;

use ldb::run::sandbox::{Limits, Sandbox};
use ldb::run::{Runner, TestInput, TestStatus};

/// `final_hidden_pass` of each task in `dir/run/none.jsonl`.
fn hidden_passes(dir: &Path) -> Vec<(String, bool)> {
    let text = std::fs::read_to_string(dir.join("run/none.jsonl")).expect("results");
    text.lines()
        .skip(1)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("record"))
        .map(|r| {
            (
                r["task_id"].as_str().unwrap_or_default().to_string(),
                r["final_hidden_pass"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

/// Python that reads `/proc/self/exe` and every file mapped into the process's own memory, and
/// tables the `assert candidate(NUMBERS, THRESHOLD) == BOOL` lines of HumanEval/0's check.
const IMAGE_FORGERY: &str = r#"
import ast, ctypes, re

def _sources():
    found = []
    try:
        found.append(open("/proc/self/exe", "rb").read())
    except OSError:
        pass
    # Every file the process maps (the image it runs from among them), read in place.
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if "r" not in fields[1] or len(fields) < 6 or not fields[5].startswith("/"):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            found.append(ctypes.string_at(start, end - start))
    return found

def _answers():
    table = {}
    pattern = re.compile(rb"assert candidate\((\[[^\]]*\], [0-9.]+)\) == (True|False)")
    for blob in _sources():
        for m in pattern.finditer(blob):
            try:
                numbers, threshold = ast.literal_eval(m.group(1).decode())
            except Exception:
                continue
            table[(tuple(numbers), threshold)] = m.group(2) == b"True"
    return table

ANSWERS = _answers()

def has_close_elements(numbers, threshold):
    return ANSWERS.get((tuple(numbers), threshold), False)
"#;

#[test]
fn a_seed_reading_its_answers_from_the_ldb_image_scores_as_a_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = serde_json::json!({"task_id": "HumanEval/0", "solution": IMAGE_FORGERY});
    std::fs::write(dir.path().join("seeds.jsonl"), format!("{seed}\n")).expect("seeds");
    let out = common::ldb_in(
        dir.path(),
        &[
            "eval",
            "--dataset",
            "humaneval",
            "--strategy",
            "none",
            "--seeds",
            "seeds.jsonl",
            "--tasks",
            "HumanEval/0",
            "--out",
            "run",
            "--quiet",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        hidden_passes(dir.path()),
        vec![("HumanEval/0".to_string(), false)]
    );
}

#[test]
fn a_seed_reading_its_answers_from_the_task_file_scores_as_a_failure() {
    // A task file anyone may read, where a per-run user could open it on a shared file system.
    let dir = common::visible_dir("answers-task-file");
    let tasks = dir.join("tasks.jsonl");
    let forgery = format!(
        r#"
import json, re
TABLE = {{}}
for line in open({path:?}):
    for m in re.finditer(r"assert secret\((\d+)\) == '(\w+)'", json.loads(line)["hidden_tests"]):
        TABLE[int(m.group(1))] = m.group(2)

def secret(x):
    return TABLE.get(x, "")
"#,
        path = tasks.display().to_string()
    );
    let task = serde_json::json!({
        "task_id": "forge/0",
        "prompt": "def secret(x):\n    \"\"\"The word of x.\"\"\"\n",
        "entry_point": "secret",
        "visible_tests": ["assert secret(0) == ''"],
        "hidden_tests": "assert secret(1) == 'kx81'\nassert secret(2) == 'qzv'\n",
        "seed": forgery,
    });
    std::fs::write(&tasks, format!("{task}\n")).expect("task file");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tasks, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let work = tempfile::tempdir().expect("tempdir");
    let out = common::ldb_in(
        work.path(),
        &[
            "eval",
            "--dataset",
            &tasks.display().to_string(),
            "--strategy",
            "none",
            "--out",
            "run",
            "--quiet",
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        hidden_passes(work.path()),
        vec![("forge/0".to_string(), false)]
    );
}

fn runner(python_path: Vec<std::path::PathBuf>) -> Runner {
    let sandbox = Sandbox::new(
        env!("CARGO_BIN_EXE_ldb"),
        Limits::default().with_wall(Duration::from_secs(20)),
    )
    .with_python_path(python_path);
    let fresh = std::env::var_os("LDB_TEST_FRESH_WORKERS").is_some_and(|v| v == "1");
    Runner::new(if fresh { sandbox.cold() } else { sandbox })
}

#[test]
fn the_host_tree_is_out_of_sight_and_what_programs_need_is_there() {
    let lib = common::visible_dir("answers-lib");
    std::fs::write(lib.join("helper_mod.py"), "VALUE = 41\n").expect("module");
    let repo = env!("CARGO_MANIFEST_DIR");
    let prog = format!(
        r#"
import os, json, sqlite3, ctypes, decimal, zoneinfo, subprocess, hashlib, helper_mod
def hidden():
    return [p for p in ({repo:?}, "/root", "/home", "/work", "/srv", "/opt", "/var/lib", "/etc/shadow", "/sys") if os.path.exists(p)]
def works():
    out = subprocess.run(["sh", "-c", "echo ok"], capture_output=True, text=True).stdout
    return (helper_mod.VALUE + 1, out.strip(), os.path.exists("/dev/null"), len(os.urandom(4)))
"#
    );
    let runner = runner(vec![lib.clone()]);
    let out = runner
        .run(
            &prog,
            &TestInput::Code {
                source: "assert hidden() == []\nassert works() == (42, 'ok', True, 4)".into(),
            },
            None,
        )
        .expect("run");
    let _ = std::fs::remove_dir_all(&lib);
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn the_program_cannot_read_the_checkers_memory() {
    // Scored, the test runs in the checker, the program's parent: the program looks for the
    // test's text in the memory of every other process it can see, and finds none.
    let prog = r#"
import os
def found():
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
                for line in maps:
                    start, end = (int(x, 16) for x in line.split()[0].split("-"))
                    try:
                        mem.seek(start)
                        if b"SECRET-" + b"EXPECTED" in mem.read(end - start):
                            return True
                    except (OSError, ValueError, OverflowError):
                        pass
        except OSError:
            pass
    return False
"#;
    let sandbox = Sandbox::new(
        env!("CARGO_BIN_EXE_ldb"),
        Limits::default().with_wall(Duration::from_secs(20)),
    );
    let fresh = std::env::var_os("LDB_TEST_FRESH_WORKERS").is_some_and(|v| v == "1");
    let runner = Runner::new(if fresh { sandbox.cold() } else { sandbox }).strict();
    let out = runner
        .run(
            prog,
            &TestInput::Code {
                source: "assert found() == False, 'SECRET-EXPECTED'".into(),
            },
            None,
        )
        .expect("run");
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
}
