//! Hostile programs, one fixture each (the rest of the suite is in `sandbox.rs`): every run must
//! end with the right classification, the host unchanged and no process left behind. Scoring
//! fixtures check that programs which fool the checker are not counted as passes.
//!
//! Processes a fixture spawns carry a marker in their command line, so the test can look for
//! survivors in the host's `/proc` without mistaking other tests' workers for them.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use ldb::run::sandbox::Limits;
use ldb::run::{Runner, TestInput, TestOutcome, TestStatus};

fn runner(wall: Duration) -> Runner {
    common::runner(wall)
}

fn run_with(runner: &Runner, program: &str, test: &str) -> TestOutcome {
    runner
        .run(
            program,
            &TestInput::Code {
                source: test.to_string(),
            },
            None,
        )
        .expect("sandbox run")
}

fn run(program: &str, test: &str) -> TestOutcome {
    run_with(&runner(Duration::from_secs(5)), program, test)
}

/// Hidden-test scoring runs strictly.
fn score(program: &str, test: &str) -> TestOutcome {
    run_with(&runner(Duration::from_secs(5)).strict(), program, test)
}

fn unique(name: &str) -> String {
    format!("ldb-hostile-{name}-{}", std::process::id())
}

/// Host processes whose command line contains `marker`.
fn survivors(marker: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(marker))
        .collect()
}

/// A host directory the sandbox user could write to if the file system were shared.
fn world_writable_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .expect("chmod");
    dir
}

fn py(path: &Path) -> String {
    format!("{:?}", path.display().to_string())
}

#[test]
fn a_thread_spinning_forever_does_not_hold_the_run() {
    let prog = "import threading\ndef f():\n    threading.Thread(target=lambda: [None for _ in iter(int, 1)]).start()\n    return 1\n";
    let out = run(prog, "assert f() == 1");
    // The test itself passed; the spinning thread is cut off at the wall-clock limit at worst.
    assert!(
        matches!(out.status, TestStatus::Passed | TestStatus::Timeout),
        "{out:?}"
    );
}

#[test]
fn infinite_recursion_is_an_error_naming_recursion() {
    let out = run("def f(n):\n    return f(n + 1)\n", "assert f(0) == 1");
    assert_eq!(out.status, TestStatus::Error, "{out:?}");
    assert_eq!(
        out.exception.as_ref().map(|e| e.kind.as_str()),
        Some("RecursionError")
    );
}

#[test]
fn recursion_with_a_raised_limit_is_stopped() {
    // Python 3.11 keeps pure-Python frames off the C stack: this ends at the memory or time
    // limit (or a crash), whichever comes first.
    let prog = "import sys\nsys.setrecursionlimit(10**8)\ndef f(n):\n    return f(n + 1) + 1\n";
    let out = run_with(&runner(Duration::from_secs(2)), prog, "assert f(0) == 1");
    assert!(
        matches!(
            out.status,
            TestStatus::Crashed | TestStatus::MemoryLimit | TestStatus::Error | TestStatus::Timeout
        ),
        "{out:?}"
    );
    assert!(!out.passed());
}

#[test]
fn a_stderr_flood_is_capped() {
    let prog = "import sys\ndef f():\n    while True:\n        sys.stderr.write('e' * 65536)\n";
    let out = run(prog, "f()");
    assert_eq!(out.status, TestStatus::OutputLimit, "{out:?}");
    assert!(out.stderr.len() <= Limits::default().output_keep_bytes + 200);
}

#[test]
fn writes_to_tmp_stay_inside_the_run() {
    let target = PathBuf::from("/tmp").join(unique("tmp-write"));
    let prog = format!(
        "def f():\n    open({p}, 'w').write('x')\n    return open({p}).read()\n",
        p = py(&target)
    );
    // The program has a private /tmp: the write works there and vanishes with the run.
    let out = run(&prog, "assert f() == 'x'");
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
    assert!(!target.exists(), "the program wrote into the host's /tmp");
}

#[test]
fn writes_to_the_home_directory_fail() {
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
    let target = home.join(unique("home-write"));
    let prog = format!("def f():\n    open({}, 'w').write('x')\n", py(&target));
    let out = run(&prog, "f()");
    assert_eq!(out.status, TestStatus::Error, "{out:?}");
    assert!(!target.exists());
}

#[test]
fn writes_into_the_repository_fail() {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join(unique("repo-write"));
    let prog = format!("def f():\n    open({}, 'w').write('x')\n", py(&target));
    let out = run(&prog, "f()");
    assert_eq!(out.status, TestStatus::Error, "{out:?}");
    assert!(!target.exists());
}

#[test]
fn deleting_host_files_fails_even_where_permissions_allow_it() {
    // A file in a world-writable directory: only the read-only mount protects it.
    let dir = world_writable_dir();
    let victim = dir.path().join("keep-me.txt");
    std::fs::write(&victim, "precious").expect("write");
    let prog = format!(
        "import os, shutil\ndef f():\n    os.remove({v})\n    shutil.rmtree({d})\n",
        v = py(&victim),
        d = py(dir.path())
    );
    let out = run(&prog, "f()");
    assert_eq!(out.status, TestStatus::Error, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&victim).expect("still there"),
        "precious"
    );
}

#[test]
fn the_parents_private_files_are_unreadable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let secret = dir.path().join("credentials");
    std::fs::write(&secret, "sk-very-secret").expect("write");
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .expect("chmod");
    let prog = format!("def f():\n    return open({}).read()\n", py(&secret));
    let out = run(&prog, "assert f() == ''");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert_eq!(out.status, TestStatus::Error, "{out:?}");
        assert!(!format!("{out:?}").contains("sk-very-secret"));
    }
}

#[test]
fn host_processes_are_invisible_and_unkillable() {
    // A host process the program will try to find and kill.
    let mut bystander = std::process::Command::new("sleep")
        .arg("30")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let prog = "import os, signal\ndef f():\n    pids = [int(p) for p in os.listdir('/proc') if p.isdigit()]\n    for sig_target in (-1, os.getppid()):\n        try:\n            os.kill(sig_target, signal.SIGKILL)\n        except OSError:\n            pass\n    return pids\n";
    let out = run(prog, "assert sorted(f()) == [1, 2]");
    // kill(-1) may take the program down with it; either way it saw only itself and the
    // init of its namespace, its parent.
    assert!(
        matches!(out.status, TestStatus::Passed | TestStatus::Crashed),
        "{out:?}"
    );
    assert!(
        bystander.try_wait().expect("wait").is_none(),
        "the sandbox killed a host process"
    );
    bystander.kill().ok();
    bystander.wait().ok();
}

#[test]
fn a_spawned_process_does_not_outlive_the_run() {
    let marker = unique("orphan");
    let prog = format!(
        "import subprocess\ndef f():\n    subprocess.Popen(['sh', '-c', 'sleep 60; : {marker}'], start_new_session=True)\n    return 1\n"
    );
    let out = run(&prog, "assert f() == 1");
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(survivors(&marker), Vec::<String>::new());
}

#[test]
fn system_exit_raised_inside_the_test_is_not_a_pass() {
    let out = run("def f():\n    raise SystemExit(0)\n", "assert f() == 1");
    assert_eq!(out.status, TestStatus::Exited, "{out:?}");
    assert!(!out.passed());
}

#[test]
fn an_alarm_the_program_sets_cannot_outlast_the_limit() {
    // Ignoring SIGALRM and spinning: the parent's wall clock still ends it.
    let prog = "import signal\ndef f():\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    signal.alarm(1)\n    while True:\n        pass\n";
    let out = run_with(&runner(Duration::from_secs(2)), prog, "f()");
    assert_eq!(out.status, TestStatus::Timeout, "{out:?}");
    // With the default action: the program is PID 1 of its namespace, where the kernel does not
    // deliver it; either way the run ends by the limit and is not a pass.
    let prog =
        "import signal, time\ndef f():\n    signal.alarm(1)\n    time.sleep(30)\n    return 1\n";
    let out = run_with(&runner(Duration::from_secs(2)), prog, "assert f() == 1");
    assert!(
        matches!(out.status, TestStatus::Crashed | TestStatus::Timeout),
        "{out:?}"
    );
}

#[test]
fn a_test_that_sleeps_past_the_limit_times_out() {
    let out = run_with(
        &runner(Duration::from_secs(1)),
        "def f():\n    return 1\n",
        "import time\ntime.sleep(30)\nassert f() == 1",
    );
    assert_eq!(out.status, TestStatus::Timeout, "{out:?}");
}

#[test]
fn a_huge_integer_is_stopped() {
    let out = run_with(
        &runner(Duration::from_secs(2)),
        "def f():\n    return 10 ** 10 ** 8\n",
        "assert f() > 0",
    );
    assert!(
        matches!(out.status, TestStatus::Timeout | TestStatus::MemoryLimit),
        "{out:?}"
    );
}

#[test]
fn a_forged_response_on_the_response_pipe_is_not_a_pass() {
    let prog =
        "import os\ndef f():\n    os.write(4, b'{\"status\": \"passed\"')\n    os._exit(0)\n";
    let out = run(prog, "assert f() == 1");
    assert!(!out.passed(), "{out:?}");
}

#[test]
fn patching_builtins_assertion_error_does_not_make_a_wrong_answer_pass() {
    let prog = "import builtins\nclass Quiet(Exception):\n    pass\nbuiltins.AssertionError = Quiet\ndef f():\n    return 2\n";
    let out = run(prog, "assert f() == 1");
    assert!(!out.passed(), "{out:?}");
    let out = score(
        prog,
        "def check(candidate):\n    assert candidate() == 1\ncheck(f)\n",
    );
    assert!(!out.passed(), "{out:?}");
}

#[test]
fn an_object_equal_to_everything_is_not_a_pass_in_scoring() {
    let prog = "class Anything:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\ndef f(x):\n    return Anything()\n";
    for test in [
        "assert f(1) == 2",
        "def check(candidate):\n    assert candidate(1) == 2\ncheck(f)\n",
        "def check(candidate):\n    assert [candidate(1)] == [2]\ncheck(f)\n",
        "def check(candidate):\n    assert {'k': candidate(1)} == {'k': 2}\ncheck(f)\n",
        "def check(candidate):\n    assert not (candidate(1) != 2)\ncheck(f)\n",
    ] {
        let out = score(prog, test);
        assert_eq!(out.status, TestStatus::Failed, "{test}: {out:?}");
        if test == "assert f(1) == 2" {
            // The value reaches the test as what it is: not a built-in value.
            assert!(out.summary.contains("Anything"), "{}", out.summary);
        }
    }
}

#[test]
fn a_truthy_object_and_a_static_eq_are_not_passes_in_scoring() {
    let prog = "class Yes:\n    def __bool__(self):\n        return True\nclass Eq:\n    __eq__ = staticmethod(lambda a, b: True)\ndef f():\n    return Yes()\ndef g():\n    return Eq()\n";
    assert!(!score(prog, "assert f()").passed());
    assert_eq!(
        score(prog, "def check():\n    assert g() == 3\ncheck()\n").status,
        TestStatus::Failed
    );
}

#[test]
fn overriding_the_tests_helpers_is_undone_before_each_assert() {
    let prog = "import math\ndef f(x):\n    math.isclose = lambda *a, **k: True\n    return 99.0\n";
    let test = "import math\ndef check(candidate):\n    candidate(1)\n    assert math.isclose(candidate(2), 3.0)\ncheck(f)\n";
    assert_eq!(
        run(prog, test).status,
        TestStatus::Passed,
        "fooled without strict"
    );
    let out = score(prog, test);
    assert_eq!(out.status, TestStatus::Failed, "{out:?}");
    // Patching a builtin the test uses, at load time.
    let prog = "import builtins\nbuiltins.abs = lambda x: 0\ndef f():\n    return 5.0\n";
    let out = score(
        prog,
        "def check(c):\n    assert abs(c() - 1.0) < 1e-9\ncheck(f)\n",
    );
    assert_eq!(out.status, TestStatus::Failed, "{out:?}");
}

#[test]
fn strict_scoring_still_passes_honest_programs() {
    let prog = "from fractions import Fraction\nimport collections\nPoint = collections.namedtuple('Point', 'x y')\ndef f(x):\n    return x + 1\ndef g():\n    return Point(1, 2)\ndef h():\n    return Fraction(1, 3)\n";
    for test in [
        "assert f(1) == 2",
        "assert f(1)",
        "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(2) != 2\n    assert 1 < candidate(1) <= 2\n    assert candidate(1) in [2, 3]\n    assert not candidate(-1)\ncheck(f)\n",
        "assert g() == (1, 2)",
        "assert h() == Fraction(1, 3)\n",
    ] {
        let test = if test.contains("Fraction") {
            format!("from fractions import Fraction\n{test}")
        } else {
            test.to_string()
        };
        let out = score(prog, &test);
        assert_eq!(out.status, TestStatus::Passed, "{test}: {out:?}");
    }
    let out = score(
        prog,
        "def check(candidate):\n    assert candidate(1) == 3, 'off by one'\ncheck(f)\n",
    );
    assert_eq!(out.status, TestStatus::Failed);
    assert!(out.summary.contains("off by one"), "{}", out.summary);
}

/// The bug: scoring handed the program an opaque stand-in for anything but data, so a right
/// program failed a test that passes it `int` (`isinstance(x, int)`: MBPP's "remove the
/// elements of a data type"), a lambda or `len`, or a tree of its own `Node`s the test built
/// and wired up (MBPP/367).
#[test]
fn scoring_hands_the_program_types_functions_and_its_own_objects() {
    let prog = r#"
import math
class Node:
    def __init__(self, v, left=None):
        self.v = v
        self.left = left
    def size(self):
        return 1 + (self.left.size() if self.left else 0)
def depth(n):
    return 0 if n is None else 1 + depth(n.left)
def pick(items, kind):
    return [e for e in items if isinstance(e, kind)]
def apply(f, x):
    return f(x)
def double(x):
    return 2 * x
def same(n):
    return n
def largest(items, key):
    return max(items, key=key)
def kinds():
    return [int, str]
class Tok:
    def __init__(self, text):
        self.text = text
        self.handle = len(text)
"#;
    for test in [
        "assert pick((4, 5, 7.7, 'a'), int) == [4, 5]",
        "assert pick((4, 5, 7.7, 'a'), (str, float)) == [7.7, 'a']",
        "def check(candidate):\n    assert candidate((1, 2.5), float) == [2.5]\ncheck(pick)\n",
        "assert depth(Node(1, Node(2, Node(3)))) == 3",
        "root = Node(1)\nroot.left = Node(2)\nroot.left.left = Node(4)\nassert depth(root) == 3\nassert root.left.v == 2\nassert root.size() == 3\n",
        "assert apply(lambda x: x * 3, 2) == 6",
        "assert apply(len, 'abcd') == 4",
        "import math\nassert apply(math.sqrt, 9) == 3.0",
        "assert apply(double, 5) == 10",
        "assert apply(lambda x: double(x) + 1, 5) == 11",
        "assert largest(['aa', 'b', 'cccc'], key=len) == 'cccc'",
        "n = Node(7)\nassert same(n) is n",
        "assert kinds() == [int, str]",
        // The program's own attributes, whatever their names.
        "t = Tok('ab')\nassert t.text == 'ab' and t.handle == 2\nt.text = 'c'\nassert t.text == 'c'",
        // A name of the program's rebound by the test is the test's from then on.
        "double = None\nassert apply(lambda x: x + 5, 1) == 6",
    ] {
        let out = score(prog, test);
        assert_eq!(out.status, TestStatus::Passed, "{test}: {out:?}");
    }
    // A wrong answer is still a failure, and a handle equals only itself.
    for test in [
        "assert pick((4, 5, 7.7), float) == [4]",
        "assert depth(Node(1, Node(2))) == 3",
        "assert same(Node(1)) == Node(1)",
        "assert apply(lambda x: x + 1, 1) == 3",
    ] {
        let out = score(prog, test);
        assert_eq!(out.status, TestStatus::Failed, "{test}: {out:?}");
    }
}

/// What crosses by name or reference cannot smuggle program code into the checker: a program
/// that makes its replies name a standard function, a callback or a bare handle gets an error,
/// never a pass, and a program's function arrives as an opaque handle, not as itself.
#[test]
fn references_from_the_program_never_run_as_code_in_the_checker() {
    for forged in [
        r#"{"std": ["os", "getcwd"]}"#,
        r#"{"cb": 0}"#,
        r#"{"h": 0}"#,
        r#"{"bi": "len"}"#,
        r#"{"bi": "__loader__"}"#,
    ] {
        let prog = format!(
            "import sys\ndef f():\n    sys.modules['ldb_split'].encode = lambda v, budget=None: {forged}\n    return 1\n"
        );
        for test in ["assert f() == 1", "assert callable(f())"] {
            let out = score(&prog, test);
            assert!(!out.passed(), "{forged} / {test}: {out:?}");
        }
    }
    // An assert of the test's that fails in a function it handed the program fails the test,
    // whatever the program does with the error (here: swallows it and answers what the test
    // checks next), and the program does not get the assert's message.
    let prog = "import sys\ndef apply(f, x):\n    try:\n        return f(x)\n    except BaseException as e:\n        sys.stderr.write(str(e))\n        return 7\n";
    for callback in [
        "def cb(x):\n    assert x == 42, 'expected 42'\n",
        "import sys\ndef cb(x):\n    sys.exit(0)\n",
    ] {
        let test = format!("{callback}assert apply(cb, 1) == 7\n");
        let out = score(prog, &test);
        assert!(!out.passed(), "{test}: {out:?}");
    }
    let out = score(prog, "assert apply(int, 'x') == 7");
    assert_eq!(
        out.status,
        TestStatus::Passed,
        "a ValueError of int() is the program's to catch: {out:?}"
    );
    // No truth is asked of the program's own object.
    let out = score(
        "class No:\n    def __bool__(self):\n        return False\ndef f():\n    return No()\n",
        "assert not f()",
    );
    assert!(!out.passed(), "{out:?}");
    let prog = "def f():\n    return print\ndef g():\n    return lambda: 1\n";
    let out = score(prog, "assert f() is print");
    assert_eq!(out.status, TestStatus::Failed, "{out:?}");
    let out = score(prog, "assert g()() == 1");
    assert_eq!(
        out.status,
        TestStatus::Passed,
        "a returned function is called in its own process: {out:?}"
    );
}

// Scoring runs the program in a process of its own that only computes; the test, its expected
// values and the comparison live in a process that never ran program code. Each fixture below
// forges a pass against an in-process checker; scored, each is a failure.

/// Scores `prog` against the failing test `f() == 1` (the program's `f` returns something else
/// or nothing) in the three test shapes scoring sees.
fn assert_never_passes(prog: &str) -> Vec<TestOutcome> {
    let mut outs = Vec::new();
    for test in [
        "assert f() == 1",
        "def check(candidate):\n    assert candidate() == 1\ncheck(f)\n",
        "assert f() == 1 and True",
    ] {
        let out = score(prog, test);
        assert!(!out.passed(), "{test}: {out:?}");
        outs.push(out);
    }
    outs
}

#[test]
fn rewriting_the_harness_does_not_forge_a_pass() {
    // Every harness function found through sys.modules and the stack answers "passed".
    let prog = r#"
import sys
PASS = {"status": "passed", "phase": None, "exception": None, "actual": None, "expected": None, "exit_code": None}
def forge(space):
    for name in list(space):
        if name.startswith("_result") or name in ("_run_test", "check", "run"):
            space[name] = lambda *a, **k: dict(PASS)
for m in list(sys.modules.values()):
    if getattr(m, "__name__", "").startswith("ldb_"):
        forge(vars(m))
def f():
    frame = sys._getframe()
    while frame is not None:
        forge(frame.f_globals)
        for key in ("expected", "actual", "result"):
            if key in frame.f_locals:
                frame.f_locals[key] = 1
        frame = frame.f_back
    return 2
"#;
    assert_never_passes(prog);
}

/// A "passed" result written on every descriptor (bare, framed, and garbage), then `os._exit`.
const FORGE_ON_EVERY_FD: &str = r#"
import os
FAKE = b'{"status": "passed", "phase": null, "exception": null, "actual": null, "expected": null, "exit_code": null, "isolation": {"network": true, "pid_namespace": true, "unprivileged_user": true, "process_limit": true, "warnings": []}}'
def f():
    for fd in range(3, 64):
        for data in (FAKE, len(FAKE).to_bytes(4, "big") + FAKE, b'\x00\x00\x00\x08{"ok":1}'):
            try:
                os.write(fd, data)
            except OSError:
                pass
    os._exit(0)
"#;

#[test]
fn a_fake_result_written_to_every_descriptor_is_not_a_pass() {
    let outs = assert_never_passes(FORGE_ON_EVERY_FD);
    assert!(
        outs.iter().all(|o| o.status == TestStatus::Error),
        "{outs:?}"
    );
}

#[test]
fn exiting_before_the_test_ends_is_not_a_pass() {
    for prog in [
        "import os\ndef f():\n    os._exit(0)\n",
        "import sys\ndef f():\n    sys.exit(0)\n",
        "import os, signal\ndef f():\n    os.kill(os.getpid(), signal.SIGKILL)\n",
    ] {
        for out in assert_never_passes(prog) {
            assert!(
                matches!(out.status, TestStatus::Error | TestStatus::Exited),
                "{prog}: {out:?}"
            );
        }
    }
    // The early exit is named as what it is.
    let out = score("import os\ndef f():\n    os._exit(0)\n", "assert f() == 1");
    assert!(
        out.summary
            .contains("exited with code 0 before the test finished"),
        "{out:?}"
    );
}

#[test]
fn exiting_from_a_finaliser_is_not_a_pass() {
    let prog = "import os\nclass Bye:\n    def __del__(self):\n        os._exit(0)\ndef f():\n    return Bye()\n";
    assert_never_passes(prog);
    // A finaliser that runs after the value was sent cannot change it either.
    let prog = "import os, gc\nclass Bye:\n    def __del__(self):\n        os._exit(0)\nkeep = []\ndef f():\n    keep.append(Bye())\n    return 2\n";
    assert_never_passes(prog);
}

#[test]
fn killing_the_checker_is_not_a_pass() {
    let prog = "import os, signal\ndef f():\n    for pid in range(1, 64):\n        if pid != os.getpid():\n            try:\n                os.kill(pid, signal.SIGKILL)\n            except OSError:\n                pass\n    return 2\n";
    assert_never_passes(prog);
}

#[test]
fn the_program_never_sees_the_expected_values() {
    // A program that searches its own memory and stack for the test's source finds nothing.
    let prog = r#"
import gc, sys
def f():
    seen = []
    for o in gc.get_objects():
        if isinstance(o, dict):
            seen.extend(str(v) for v in o.values() if isinstance(v, str))
    frame = sys._getframe()
    while frame is not None:
        seen.extend(str(v) for v in frame.f_locals.values())
        frame = frame.f_back
    text = "\n".join(seen)
    return ("SECRET-" + "EXPECTED") in text
"#;
    let out = score(prog, "assert f() == False, 'SECRET-EXPECTED'");
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
}

#[test]
fn scored_values_of_every_builtin_kind_compare_as_themselves() {
    let prog = r#"
from fractions import Fraction
from decimal import Decimal
import collections
def values():
    return [None, True, 3, -2**80, 1.5, float("inf"), "s\u00e9", b"\x00\xff", bytearray(b"ab"),
            [1, [2]], (1, (2,)), {1, 2}, frozenset({3}), {"k": (1, 2), 3: None}, 2 + 3j,
            range(1, 9, 2), Fraction(1, 3), Decimal("1.10"), collections.Counter("aab"),
            collections.OrderedDict(a=1)]
def gen(n):
    for i in range(n):
        yield i * i
def sort_in_place(xs):
    xs.sort()
def raises():
    raise ValueError("bad value")
LIMIT = 10
"#;
    let test = r#"
from fractions import Fraction
from decimal import Decimal
def check():
    assert values() == [None, True, 3, -2**80, 1.5, float("inf"), "s\u00e9", b"\x00\xff", bytearray(b"ab"),
            [1, [2]], (1, (2,)), {1, 2}, frozenset({3}), {"k": (1, 2), 3: None}, 2 + 3j,
            range(1, 9, 2), Fraction(1, 3), Decimal("1.10"), {"a": 2, "b": 1}, {"a": 1}]
    assert list(gen(4)) == [0, 1, 4, 9]
    xs = [3, 1, 2]
    sort_in_place(xs)
    assert xs == [1, 2, 3]
    try:
        raises()
    except ValueError as e:
        assert str(e) == "bad value"
    else:
        assert False
    assert LIMIT == 10
check()
"#;
    let out = score(prog, test);
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
    // An exception the test does not catch names the program's line.
    let out = score(prog, "raises()");
    assert_eq!(out.status, TestStatus::Error, "{out:?}");
    let e = out.exception.expect("exception");
    assert_eq!(e.kind, "ValueError");
    assert_eq!(e.program_line, Some(16), "{e:?}");
}

#[test]
fn a_fork_bomb_is_named_as_one() {
    let prog = "import os\ndef f():\n    while True:\n        os.fork()\n";
    for runner in [
        runner(Duration::from_secs(5)),
        runner(Duration::from_secs(5)).strict(),
    ] {
        let out = run_with(&runner, prog, "f()");
        assert_eq!(out.status, TestStatus::Error, "{out:?}");
        assert!(out.summary.contains("process limit"), "{out:?}");
    }
}

#[test]
fn a_set_argument_keeps_its_iteration_order_in_scoring() {
    // MBPP/341 returns `tuple(s)`: the set rebuilt in the program's process must iterate as
    // the test's set did, or scoring would disagree with running the test in one process.
    let prog = "def f(s):\n    return tuple(s)\n";
    for test in [
        "assert f({12, 13, 14, 15, 16}) == (12, 13, 14, 15, 16)",
        "assert f({1, 2, 3}) == (1, 2, 3)",
        "assert f(frozenset({40, 8, 16})) == (40, 8, 16)",
    ] {
        assert_eq!(score(prog, test).status, run(prog, test).status, "{test}");
    }
}

#[test]
fn a_stdin_stdout_program_is_scored_on_its_output() {
    let runner = runner(Duration::from_secs(5)).strict();
    let prog = "a, b = map(int, input().split())\nprint(a + b)\n";
    let io = |stdin: &str, stdout: &str| TestInput::Io {
        stdin: stdin.to_string(),
        stdout: stdout.to_string(),
    };
    let right = runner.run(prog, &io("1 2\n", "3\n"), None).expect("run");
    assert_eq!(right.status, TestStatus::Passed, "{right:?}");
    let wrong = runner.run(prog, &io("1 2\n", "4\n"), None).expect("run");
    assert_eq!(wrong.status, TestStatus::Failed, "{wrong:?}");
}

#[test]
fn a_program_that_hangs_in_a_scored_call_times_out() {
    let runner = runner(Duration::from_secs(2)).strict();
    let out = run_with(
        &runner,
        "def f():\n    while True:\n        pass\n",
        "def check(candidate):\n    assert candidate() == 1\ncheck(f)\n",
    );
    assert_eq!(out.status, TestStatus::Timeout, "{out:?}");
}

#[test]
fn system_v_shared_memory_does_not_outlive_the_run() {
    // A segment anyone may open (mode 0666) under a fixed key, made by one run and looked for
    // by the next: each run has an IPC namespace of its own.
    let prog = "import ctypes, os\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        KEY = 0x1DB5EED\n\
        def make():\n\
        \x20   return libc.shmget(KEY, 4096, 0o1000 | 0o666) >= 0\n\
        def find():\n\
        \x20   return libc.shmget(KEY, 0, 0o666) >= 0\n";
    let runner = runner(Duration::from_secs(10));
    assert_eq!(
        run_with(&runner, prog, "assert make() == True").status,
        TestStatus::Passed
    );
    let later = run_with(&runner, prog, "assert find() == False");
    assert_eq!(later.status, TestStatus::Passed, "{later:?}");
}

// Visible tests run in the program's own process (they are traced there). What a program can
// do to that process to forge a pass is caught by the worker: a result it writes itself lacks
// the run's seal, a value whose own `__eq__` decides an assert against a built-in expected
// value fails it, and a rebound built-in or harness function fails the run.

#[test]
fn a_fake_result_and_os_exit_is_a_failure() {
    for test in ["assert f() == 1", "f()", "assert f()"] {
        let out = run(FORGE_ON_EVERY_FD, test);
        assert!(!out.passed(), "{test}: {out:?}");
        assert!(
            out.summary
                .contains("exited with code 0 before the test finished"),
            "{out:?}"
        );
    }
}

#[test]
fn an_always_equal_object_fails_a_plain_assert() {
    let prog = r#"
from unittest import mock
class Anything:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
class Yes:
    def __len__(self):
        return 1
def f(x):
    return Anything()
def g(x):
    return [1, Anything()]
def h(x):
    return mock.ANY
def t(x):
    return Yes()
class Borrowed:
    __eq__ = (0).__ne__
    __hash__ = object.__hash__
def b(x):
    return Borrowed()
"#;
    for test in [
        "assert f(1) == 2",
        "assert g(1) == [1, 2]",
        "assert h(1) == 'two'",
        "assert t(1)",
        "assert b(1) == 2",
    ] {
        let out = run(prog, test);
        assert_eq!(out.status, TestStatus::Failed, "{test}: {out:?}");
        assert!(out.summary.contains("decides the test"), "{test}: {out:?}");
    }
    // Values that built-in code compares still pass: a namedtuple, a Decimal, an object the
    // test builds from the program's own class.
    let honest = "import collections, decimal, enum\nP = collections.namedtuple('P', 'x y')\nclass V:\n    def __init__(self, v):\n        self.v = v\n    def __eq__(self, other):\n        return isinstance(other, V) and other.v == self.v\nclass Mode(enum.Flag):\n    READ = 1\ndef p():\n    return P(1, 2)\ndef d():\n    return decimal.Decimal('1.5')\ndef v():\n    return V(3)\ndef c(s):\n    return collections.Counter(s)\ndef m():\n    return Mode.READ\n";
    for test in [
        "assert p() == (1, 2)",
        "assert d() == 1.5",
        "assert v() == V(3)",
        "assert p()",
        "assert c('aab') == {'a': 2, 'b': 1}",
        "assert [c('a')] == [{'a': 1}]",
        "assert m()",
    ] {
        assert_eq!(run(honest, test).status, TestStatus::Passed, "{test}");
    }
}

#[test]
fn a_rebound_bool_or_harness_function_fails_the_run() {
    for prog in [
        "import builtins\nbuiltins.bool = lambda *a: True\ndef f():\n    return 2\n",
        "import sys\nH = sys.modules['ldb_harness']\nH._run_test = lambda *a, **k: H._result('passed')\ndef f():\n    return 2\n",
        "import sys\nH = sys.modules['ldb_harness']\nH._bool = lambda *a: True\ndef f():\n    return 2\n",
        "import sys\nH = sys.modules['ldb_harness']\nH._eval.__code__ = (lambda s, g: True).__code__\ndef f():\n    return 2\n",
    ] {
        let out = run(prog, "assert f() == 1");
        assert!(!out.passed(), "{prog}: {out:?}");
    }
    let out = run(
        "import builtins\nbuiltins.bool = lambda *a: True\ndef f():\n    return 1\n",
        "assert f() == 1",
    );
    assert!(out.summary.contains("builtins.bool"), "{out:?}");
}
