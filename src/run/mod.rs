//! The test runner: runs a program's tests in the sandbox and classifies each outcome.
//!
//! One fresh worker process per test keeps tests from seeing each other's state. Tests of one
//! program run in parallel on `jobs` threads. What a run came to (status and summary) is read
//! in `classify`.

mod classify;
pub mod pytest;
pub mod sandbox;
pub mod testcase;
pub mod tracer;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::Serialize;

use crate::run::sandbox::{ExceptionInfo, RunSpec, Sandbox, SandboxError, TestSpec};
use crate::run::tracer::{RawTrace, TraceRequest};
use crate::task::Task;
pub(crate) use classify::classify;

/// Characters kept for an actual/expected value in a test report.
pub const VALUE_CHARS: usize = 300;

/// One test of a task.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TestInput {
    /// Python statements run after the program is loaded (`assert f(1) == 2`, a `check` call).
    Code { source: String },
    /// The program runs as a script on `stdin`; its stdout must equal `stdout`.
    Io { stdin: String, stdout: String },
    /// Evaluate one expression and report its value (used by `ldb trace --call`).
    Call { expr: String },
    /// One pytest node of the runner's project ([`Runner::with_project`]): its id, and its
    /// source as a prompt shows it (the test function with its parameters filled in). A
    /// `guard` is a regression test: a test of the project that passed on the given program
    /// and runs the function under test. It must keep passing; no prompt shows it.
    Pytest {
        node_id: String,
        source: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        guard: bool,
    },
}

impl TestInput {
    /// A one-line description for reports.
    pub fn describe(&self) -> String {
        match self {
            TestInput::Code { source } => runs_call(source).unwrap_or_else(|| one_line(source)),
            TestInput::Io { stdin, .. } => format!("stdin {}", one_line(&format!("{stdin:?}"))),
            TestInput::Call { expr } => one_line(expr),
            TestInput::Pytest { node_id, .. } => node_id.clone(),
        }
    }

    /// Whether this is a regression test (a pytest node that guards what passed): never
    /// shown to a model.
    pub fn is_guard(&self) -> bool {
        matches!(self, TestInput::Pytest { guard: true, .. })
    }

    /// The test as a prompt shows it: a pytest node's source with its parameters, else the
    /// one-line description. A regression test shows nothing of itself.
    pub fn prompt_text(&self) -> String {
        match self {
            TestInput::Pytest { guard: true, .. } => "(a regression test of the project)".into(),
            TestInput::Pytest { source, .. } if !source.trim().is_empty() => {
                source.trim_end().to_string()
            }
            // The test's own text, set-up included, not the name `describe` gives it.
            TestInput::Code { source } => one_line(source),
            _ => self.describe(),
        }
    }

    fn spec(&self) -> (TestSpec, Option<String>, bool) {
        match self {
            // Runs through `pytest::run_nodes`; as a plain spec it only loads the program.
            TestInput::Pytest { .. } => (TestSpec::LoadOnly, None, false),
            TestInput::Code { source } => (testcase::test_spec(source), None, false),
            TestInput::Io { stdin, .. } => (TestSpec::LoadOnly, Some(stdin.clone()), true),
            TestInput::Call { expr } => (TestSpec::Call { expr: expr.clone() }, None, false),
        }
    }
}

/// What a prompt may say of the regression tests among `outcomes` (never which they are, nor
/// what they check): how many of them fail, when any does.
pub fn guards_line(outcomes: &[TestOutcome]) -> Option<String> {
    let guards = outcomes.iter().filter(|o| o.test.is_guard()).count();
    let failing = outcomes
        .iter()
        .filter(|o| o.test.is_guard() && !o.passed())
        .count();
    (failing > 0).then(|| {
        format!(
            "FAIL: {failing} of the project's other {guards} test(s), which passed before this \
             change, fail now (not shown)"
        )
    })
}

/// A test of several lines that ends by calling what it defined (`test_cases()`,
/// `TestMore().test_sqrt()`: a test function read with its set-up) is named by that call; its
/// first line is only the set-up's.
fn runs_call(source: &str) -> Option<String> {
    let mut lines = source
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty());
    let last = lines.next_back()?;
    lines.next()?;
    let is_name = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    let call = last.strip_suffix("()")?;
    let ok = match call.split_once("().") {
        Some((class, method)) => is_name(class) && is_name(method),
        None => is_name(call),
    };
    (ok && !last.starts_with([' ', '\t'])).then(|| last.to_string())
}

fn one_line(text: &str) -> String {
    let joined = text.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    if joined.chars().count() > 120 {
        let cut: String = joined.chars().take(117).collect();
        format!("{cut}...")
    } else {
        joined
    }
}

#[cfg(test)]
mod describe_tests {
    use super::TestInput;

    fn describe(source: &str) -> String {
        TestInput::Code {
            source: source.into(),
        }
        .describe()
    }

    #[test]
    fn a_test_function_read_with_its_set_up_is_named_by_its_call() {
        let setup = "import prog as p\nCASES = [1]\ndef test_cases():\n    assert p.f(1)\n";
        assert_eq!(describe(&format!("{setup}test_cases()")), "test_cases()");
        let class = "class TestMore:\n    def test_sqrt(self):\n        assert 1\n";
        assert_eq!(
            describe(&format!("{class}TestMore().test_sqrt()")),
            "TestMore().test_sqrt()"
        );
        // One line, or a last line that is not a bare call: the text itself.
        assert_eq!(describe("check()"), "check()");
        assert_eq!(
            describe("x = 1\nassert f(x) == 2"),
            "x = 1 assert f(x) == 2"
        );
        assert_eq!(describe("x = 1\ncheck(x)"), "x = 1 check(x)");
    }
}

/// Visible tests of a task: its assert statements, then its stdin/stdout tests.
pub fn visible_tests(task: &Task) -> Vec<TestInput> {
    if !task.pytest_nodes.is_empty() {
        return task
            .pytest_nodes
            .iter()
            .map(|n| TestInput::Pytest {
                node_id: n.node_id.clone(),
                source: n.source.clone(),
                guard: n.guard,
            })
            .collect();
    }
    task.visible_tests
        .iter()
        .map(|s| TestInput::Code { source: s.clone() })
        .chain(task.io_tests.iter().map(|t| TestInput::Io {
            stdin: t.stdin.clone(),
            stdout: t.stdout.clone(),
        }))
        .collect()
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    Passed,
    /// An assertion failed or the output differed.
    Failed,
    /// An exception other than a failed assertion (in loading the program or in the test).
    Error,
    /// Wall-clock or CPU time limit.
    Timeout,
    /// The memory limit stopped the program (`MemoryError`).
    MemoryLimit,
    /// The program printed more than the output limit and was killed.
    OutputLimit,
    /// The program ended the process itself (`sys.exit`, `os._exit`) before the test finished.
    Exited,
    /// The process died from a signal (segfault, abort, killed).
    Crashed,
    /// The sandbox itself failed; the program's fate is unknown.
    SandboxFailure,
    /// A pytest node that was skipped (nothing to fix).
    Skipped,
    /// A pytest node marked xfail that failed, as expected (nothing to fix).
    XFailed,
}

impl TestStatus {
    pub fn label(self) -> &'static str {
        match self {
            TestStatus::Passed => "PASS",
            TestStatus::Failed => "FAIL",
            TestStatus::Error => "ERROR",
            TestStatus::Timeout => "TIMEOUT",
            TestStatus::MemoryLimit => "MEMORY",
            TestStatus::OutputLimit => "OUTPUT",
            TestStatus::Exited => "EXIT",
            TestStatus::Crashed => "CRASH",
            TestStatus::SandboxFailure => "SANDBOX",
            TestStatus::Skipped => "SKIP",
            TestStatus::XFailed => "XFAIL",
        }
    }
}

/// Everything known about one test run.
#[derive(Debug, Clone, Serialize)]
pub struct TestOutcome {
    pub test: TestInput,
    pub status: TestStatus,
    /// One line saying what happened, e.g. `got 5, expected 6`.
    pub summary: String,
    pub exception: Option<ExceptionInfo>,
    pub actual: Option<String>,
    pub expected: Option<String>,
    pub exit_code: Option<i64>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed_ms: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub trace: Option<RawTrace>,
}

impl TestOutcome {
    /// Passed, or nothing to fix: a pytest node that was skipped or failed as its xfail mark
    /// expects counts as passing, as it does for pytest's exit status.
    pub fn passed(&self) -> bool {
        matches!(
            self.status,
            TestStatus::Passed | TestStatus::Skipped | TestStatus::XFailed
        )
    }
}

/// The summary of a pytest node marked xfail that passed (an xpass), which counts as passing.
pub(crate) const XPASS_SUMMARY: &str = "passed (marked xfail)";

/// Hold a candidate's outcomes to the given program's: a test the given program ran (passed,
/// failed, raised) that the candidate skips, xfails or xpasses counts as failed, since a skip
/// or an xfail marker added from the code under test (`pytest.skip()`, `pytest.xfail()`,
/// `request.node.add_marker`) would otherwise pass any test.
/// Tests are matched by position and identity; returns how many were held.
pub fn hold_to_given(outcomes: &mut [TestOutcome], given: &[TestOutcome]) -> usize {
    let mut held = 0;
    for (o, g) in outcomes.iter_mut().zip(given) {
        let xpassed =
            |t: &TestOutcome| t.status == TestStatus::Passed && t.summary == XPASS_SUMMARY;
        let given_ran =
            !matches!(g.status, TestStatus::Skipped | TestStatus::XFailed) && !xpassed(g);
        // An xpass is held only where the given program's run shows no xfail mark (it passed
        // or failed plainly): an error may be a mark's `raises=` mismatch, or a regression test
        // not yet run.
        let marked_since =
            xpassed(o) && matches!(g.status, TestStatus::Passed | TestStatus::Failed);
        let skipped = matches!(o.status, TestStatus::Skipped | TestStatus::XFailed) || marked_since;
        if skipped && given_ran && o.test == g.test {
            o.summary = format!(
                "{} where the given program ran it ({}): a fix may not skip a test",
                match o.status {
                    TestStatus::Skipped => "skipped",
                    TestStatus::XFailed => "xfailed",
                    _ => "xpassed",
                },
                g.status.label()
            );
            o.status = TestStatus::Failed;
            held += 1;
        }
    }
    held
}

/// Runs tests of programs in a [`Sandbox`].
#[derive(Debug, Clone)]
pub struct Runner {
    sandbox: Sandbox,
    jobs: usize,
    strict: bool,
    module: Option<String>,
    /// Code run before every program, in its namespace (`ldb fix --make-runnable`: the prefix
    /// that makes a snippet run).
    prelude: Option<std::sync::Arc<str>>,
    /// The project whose pytest nodes the runner runs ([`TestInput::Pytest`]).
    project: Option<std::sync::Arc<pytest::PytestProject>>,
}

impl Runner {
    pub fn new(sandbox: Sandbox) -> Self {
        let jobs = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        Runner {
            sandbox,
            jobs,
            strict: false,
            module: None,
            prelude: None,
            project: None,
        }
    }

    /// Run `prelude` before every program, in the program's namespace and untraced, so the
    /// program keeps its own line numbers and blocks (see [`crate::exec`]).
    pub fn with_prelude(mut self, prelude: impl Into<String>) -> Self {
        self.prelude = Some(std::sync::Arc::from(prelude.into()));
        self
    }

    pub fn prelude(&self) -> Option<&str> {
        self.prelude.as_deref()
    }

    /// What runs before a program: the runner's own prelude, then `explicit`.
    fn prelude_text(&self, explicit: Option<&str>) -> Option<String> {
        match (self.prelude(), explicit) {
            (Some(own), Some(more)) => Some(format!("{}\n{more}", own.trim_end())),
            (own, more) => own.or(more).map(str::to_string),
        }
    }

    /// Run at most `jobs` tests at once.
    pub fn with_jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs.max(1);
        self
    }

    /// Strict checking, for scoring: the program runs in a process of its own that only
    /// computes, and the test compares in one that never ran program code
    /// ([`crate::run::sandbox::strict`]). Untraced.
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }

    /// Make the program importable under `name` in every run (`from prog import f` in a test
    /// file written for `prog.py` then finds the program under test).
    pub fn with_module(mut self, name: impl Into<String>) -> Self {
        self.module = Some(name.into());
        self
    }

    pub fn jobs(&self) -> usize {
        self.jobs
    }

    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// This runner with a shorter wall-clock and CPU limit (never a longer one), for runs
    /// expected to be quick: a candidate edit that loops for ever then costs `wall_ms`.
    pub fn with_wall_ms(&self, wall_ms: u64) -> Runner {
        let mut limits = self.sandbox.limits().clone();
        limits.wall_ms = limits.wall_ms.min(wall_ms.max(1));
        limits.cpu_secs = limits.cpu_secs.min(limits.wall_ms.div_ceil(1000).max(1));
        let mut r = self.clone();
        r.sandbox = self.sandbox.clone().with_limits(limits);
        r
    }

    /// Run one test, optionally traced.
    pub fn run(
        &self,
        program: &str,
        test: &TestInput,
        trace: Option<TraceRequest>,
    ) -> Result<TestOutcome, SandboxError> {
        if let TestInput::Pytest { .. } = test {
            let mut outcomes = self.run_nodes(program, std::slice::from_ref(test), trace)?;
            return outcomes.pop().ok_or_else(|| {
                SandboxError::Pipe(std::io::Error::other("the pytest node was not run"))
            });
        }
        self.run_with_prelude(program, None, test, trace)
    }

    /// [`Runner::run`], with `prelude` run in the program's globals first (untraced; the
    /// program keeps its own line numbers). The runner's own prelude, if any, runs before it
    /// ([`Runner::with_prelude`]).
    pub fn run_with_prelude(
        &self,
        program: &str,
        prelude: Option<&str>,
        test: &TestInput,
        trace: Option<TraceRequest>,
    ) -> Result<TestOutcome, SandboxError> {
        let (spec, stdin, as_main) = test.spec();
        let run = RunSpec {
            program: program.to_string(),
            test: spec,
            stdin,
            // A snippet run after a prefix is a script: its `__main__` code runs too.
            as_main: as_main || self.prelude.is_some(),
            trace,
            value_chars: VALUE_CHARS,
            strict: self.strict,
            prelude: self.prelude_text(prelude),
            module: self.module.clone(),
            project: None,
        };
        let out = self.sandbox.run(&run)?;
        Ok(classify(test, out))
    }

    /// Run `program` as a script (`__name__ == "__main__"`, stdin closed), after the runner's
    /// prelude and `prelude`, optionally traced. It passes when it runs to its end;
    /// the outcome's test is `test`, which describes the run in reports.
    pub fn run_script(
        &self,
        program: &str,
        prelude: Option<&str>,
        trace: Option<TraceRequest>,
        test: &TestInput,
    ) -> Result<TestOutcome, SandboxError> {
        let run = RunSpec {
            program: program.to_string(),
            test: TestSpec::LoadOnly,
            stdin: None,
            as_main: true,
            trace,
            value_chars: VALUE_CHARS,
            strict: false,
            prelude: self.prelude_text(prelude),
            module: self.module.clone(),
            project: None,
        };
        let out = self.sandbox.run(&run)?;
        // Classified as a plain load: only an `Io` test compares output.
        let load = TestInput::Code {
            source: String::new(),
        };
        let mut outcome = classify(&load, out);
        outcome.test = test.clone();
        Ok(outcome)
    }

    /// Run all `tests` untraced, in parallel, results in input order. pytest nodes run
    /// together, in one pytest session (one sandboxed process) per call.
    pub fn run_all(
        &self,
        program: &str,
        tests: &[TestInput],
    ) -> Vec<Result<TestOutcome, SandboxError>> {
        if tests.iter().any(|t| matches!(t, TestInput::Pytest { .. })) {
            return self.run_all_with_nodes(program, tests);
        }
        in_parallel(tests, self.jobs, |test| self.run(program, test, None))
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(SandboxError::Pipe(std::io::Error::other(
                        "test was not run",
                    )))
                })
            })
            .collect()
    }
}

/// `f` over `items` on at most `jobs` threads, results in input order (`None` only for an item
/// whose thread panicked).
pub fn in_parallel<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<Option<R>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1).min(items.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(item) = items.get(i) else { break };
                let result = f(item);
                if let Some(slot) = results.lock().ok().as_mut().and_then(|s| s.get_mut(i)) {
                    *slot = Some(result);
                }
            });
        }
    });
    results.into_inner().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, status: TestStatus, summary: &str) -> TestOutcome {
        TestOutcome {
            test: TestInput::Pytest {
                node_id: id.into(),
                source: String::new(),
                guard: false,
            },
            status,
            summary: summary.into(),
            exception: None,
            actual: None,
            expected: None,
            exit_code: None,
            stdout: String::new(),
            stderr: String::new(),
            elapsed_ms: 0,
            warnings: Vec::new(),
            trace: None,
        }
    }

    #[test]
    fn a_skip_an_xfail_or_an_xpass_where_the_given_program_ran_the_test_is_a_failure() {
        let given = [
            node("t::a", TestStatus::Failed, "got 1, expected 2"),
            node("t::b", TestStatus::Passed, "passed"),
            node("t::c", TestStatus::Failed, "got 1, expected 2"),
            node("t::d", TestStatus::Skipped, "skipped"),
            node("t::e", TestStatus::XFailed, "xfailed"),
            // A regression test, not run on the given program: an xpass is its own result.
            node("t::f", TestStatus::Error, "not run"),
        ];
        let mut candidate = [
            node("t::a", TestStatus::Skipped, "skipped"),
            node("t::b", TestStatus::XFailed, "xfailed"),
            node("t::c", TestStatus::Passed, XPASS_SUMMARY),
            node("t::d", TestStatus::Skipped, "skipped"),
            node("t::e", TestStatus::Passed, XPASS_SUMMARY),
            node("t::f", TestStatus::Passed, XPASS_SUMMARY),
        ];
        assert_eq!(hold_to_given(&mut candidate, &given), 3);
        let statuses: Vec<TestStatus> = candidate.iter().map(|o| o.status).collect();
        assert_eq!(
            statuses,
            [
                TestStatus::Failed,
                TestStatus::Failed,
                TestStatus::Failed,
                TestStatus::Skipped,
                TestStatus::Passed,
                TestStatus::Passed
            ]
        );
        assert!(candidate[2].summary.starts_with("xpassed where"));
    }
}
