//! pytest nodes as tests. A runner given a project ([`Runner::with_project`]) runs its
//! [`TestInput::Pytest`] nodes in one pytest session per call, in the sandbox, with the program
//! in place of the project's module file; each node's report becomes a [`TestOutcome`] that the
//! fix loop, localisation and the reports read like any other test's.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::sandbox::protocol::{ProjectTrace, SwapBatch, SwapCandidate};
use super::sandbox::pytest::{NodeOutcome, NodeReport, PytestReport};
use super::sandbox::{ProjectMount, RunSpec, Sandbox, SandboxError, TestSpec};
use super::{classify, in_parallel, Runner, TestInput, TestOutcome, TestStatus};
use crate::run::tracer::TraceRequest;

/// A project whose tests pytest runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PytestProject {
    /// What the run sees: the project root, the module file the program replaces, where
    /// pytest starts.
    pub mount: ProjectMount,
    /// pytest's rootdir: node ids are relative to it.
    pub rootdir: PathBuf,
}

/// What a collect-only session gave: pytest's report (absent when the run ended without
/// one) and how the run ended.
#[derive(Debug, Clone)]
pub struct Collection {
    pub report: Option<PytestReport>,
    pub run: TestOutcome,
}

/// Start-up time a session may take beyond its nodes' own limits.
const SESSION_START_MS: u64 = 20_000;

impl Runner {
    /// Run pytest nodes ([`TestInput::Pytest`]) of `project`, each run's program in place of
    /// the project's module file.
    pub fn with_project(mut self, project: PytestProject) -> Self {
        self.project = Some(Arc::new(project));
        self
    }

    pub fn project(&self) -> Option<&PytestProject> {
        self.project.as_deref()
    }

    /// This runner on another configuration of its sandbox (`f` gets the current one): a
    /// user's environment, pytest preloaded.
    pub fn map_sandbox(mut self, f: impl FnOnce(Sandbox) -> Sandbox) -> Runner {
        self.sandbox = f(self.sandbox);
        self
    }

    /// List the nodes pytest collects for `args` (paths, node ids, `-k EXPR`) with `program`
    /// in place of the module file; nothing runs but collection (test modules and conftest
    /// files are imported).
    pub fn collect(&self, program: &str, args: &[String]) -> Result<Collection, SandboxError> {
        let project = self.project.as_deref().ok_or(SandboxError::NoProject)?;
        let test = TestSpec::Pytest {
            args: args.to_vec(),
            collect_only: true,
            node_timeout_ms: 0,
            first: Vec::new(),
            keep_going: false,
            cover: None,
            batch: None,
            trace_project: None,
        };
        let wall = self.sandbox.limits().wall_ms.max(60_000);
        let (out, report) = self.session(project, program, test, wall, None)?;
        Ok(Collection { report, run: out })
    }

    /// Run `tests` (all of them pytest nodes) in one session, optionally traced; outcomes in
    /// the order of `tests`. Regression tests ([`TestInput::is_guard`]) run after the others,
    /// and only when those all pass.
    pub(crate) fn run_nodes(
        &self,
        program: &str,
        tests: &[TestInput],
        trace: Option<TraceRequest>,
    ) -> Result<Vec<TestOutcome>, SandboxError> {
        let first: Vec<String> = if tests.iter().any(TestInput::is_guard) {
            tests
                .iter()
                .filter(|t| !t.is_guard())
                .filter_map(node_id)
                .map(str::to_string)
                .collect()
        } else {
            Vec::new()
        };
        let (outcomes, _) = self.nodes_session(program, tests, trace, first, None)?;
        Ok(outcomes)
    }

    /// Run `tests` in one session, `first` of them before the others (stopping after them
    /// when one of them fails), each reporting whether it called code on `lines` (first, last)
    /// of the module file. For finding a function's regression tests.
    pub fn run_nodes_covering(
        &self,
        program: &str,
        tests: &[TestInput],
        first: &[String],
        lines: (u32, u32),
    ) -> Result<Vec<(TestOutcome, Option<bool>)>, SandboxError> {
        let (outcomes, report) =
            self.nodes_session(program, tests, None, first.to_vec(), Some(lines))?;
        Ok(outcomes
            .into_iter()
            .map(|o| {
                let covered = node_id(&o.test).and_then(|id| {
                    report
                        .as_ref()
                        .and_then(|r| r.nodes.iter().find(|n| n.nodeid == id))
                        .and_then(|n| n.covered)
                });
                (o, covered)
            })
            .collect())
    }

    /// Run `tests` on many `programs`, each `seed` with one function (`entry`) changed, in
    /// few sessions: the tests are collected once per session and each program's function is
    /// swapped in, in a child process of its own ([`SwapBatch`]). Outcomes per program, in
    /// order; `None` for a program that cannot run this way (it changes more than the
    /// function and new module-level statements, or its function cannot take the original's
    /// place), which the caller runs the ordinary way. A swapped-in function does not see
    /// what the module computed with the old one when it was imported: a program this passes
    /// is to be run the ordinary way before it is trusted.
    pub fn run_swapped(
        &self,
        seed: &str,
        entry: &str,
        programs: &[String],
        tests: &[TestInput],
    ) -> Vec<Option<Vec<TestOutcome>>> {
        let mut out: Vec<Option<Vec<TestOutcome>>> = programs.iter().map(|_| None).collect();
        let (Some(project), Some(lines)) = (
            self.project.as_deref(),
            crate::python::splice::def_lines(seed, entry),
        ) else {
            return out;
        };
        let swaps: Vec<(usize, SwapCandidate)> = programs
            .iter()
            .enumerate()
            .filter_map(|(i, p)| swap_candidate(seed, p, entry).map(|c| (i, c)))
            .collect();
        if swaps.is_empty() || tests.is_empty() {
            return out;
        }
        let ids: Vec<&str> = tests.iter().filter_map(node_id).collect();
        let first: Vec<String> = if tests.iter().any(TestInput::is_guard) {
            tests
                .iter()
                .filter(|t| !t.is_guard())
                .filter_map(node_id)
                .map(str::to_string)
                .collect()
        } else {
            Vec::new()
        };
        let per_node = self.sandbox.limits().wall_ms;
        let candidate_ms = per_node
            .saturating_mul(ids.len() as u64)
            .saturating_add(1000);
        let chunk = swaps
            .len()
            .div_ceil(self.jobs().max(1))
            .clamp(1, SWAP_CHUNK);
        let chunks: Vec<&[(usize, SwapCandidate)]> = swaps.chunks(chunk).collect();
        let results = in_parallel(&chunks, self.jobs(), |part| {
            let mut args = vec!["--continue-on-collection-errors".to_string()];
            args.extend(ids.iter().map(|id| node_arg(&project.rootdir, id)));
            let test = TestSpec::Pytest {
                args,
                collect_only: false,
                node_timeout_ms: per_node,
                first: first.clone(),
                keep_going: false,
                cover: None,
                trace_project: None,
                batch: Some(SwapBatch {
                    entry: entry.to_string(),
                    lines,
                    candidates: part.iter().map(|(_, c)| c.clone()).collect(),
                    candidate_ms,
                }),
            };
            let wall = candidate_ms
                .saturating_mul(part.len() as u64)
                .saturating_add(SESSION_START_MS);
            self.session(project, seed, test, wall, None)
        });
        for (part, result) in chunks.iter().zip(results) {
            let Some(Ok((session, Some(report)))) = result else {
                continue;
            };
            if report.batch_error.is_some() {
                continue;
            }
            for ((i, _), swapped) in part.iter().zip(&report.batch) {
                let Some(nodes) = &swapped.nodes else {
                    continue;
                };
                let one = PytestReport {
                    nodes: nodes.clone(),
                    ..PytestReport::default()
                };
                out[*i] = Some(
                    tests
                        .iter()
                        .map(|t| node_outcome(t, &session, Some(&one)))
                        .collect(),
                );
            }
        }
        out
    }

    /// Run `tests` in one session (`first` of them first, every one run), tracing the
    /// project's own files ([`ProjectTrace`]): each node's outcome and its report (the lines
    /// it ran, the functions it called from the test, an exception's project frames).
    pub fn trace_project(
        &self,
        program: &str,
        tests: &[TestInput],
        first: &[String],
        trace: ProjectTrace,
    ) -> Result<Vec<(TestOutcome, Option<NodeReport>)>, SandboxError> {
        let project = self.project.as_deref().ok_or(SandboxError::NoProject)?;
        let ids: Vec<&str> = tests.iter().filter_map(node_id).collect();
        let per_node = self.sandbox.limits().wall_ms;
        let mut args = vec!["--continue-on-collection-errors".to_string()];
        args.extend(ids.iter().map(|id| node_arg(&project.rootdir, id)));
        let test = TestSpec::Pytest {
            args,
            collect_only: false,
            node_timeout_ms: per_node,
            first: first.to_vec(),
            keep_going: true,
            cover: None,
            batch: None,
            trace_project: Some(trace),
        };
        let wall = per_node
            .saturating_mul(ids.len().max(1) as u64)
            .saturating_add(SESSION_START_MS);
        let (session, report) = self.session(project, program, test, wall, None)?;
        Ok(tests
            .iter()
            .map(|t| {
                let node = node_id(t).and_then(|id| {
                    report
                        .as_ref()
                        .and_then(|r| r.nodes.iter().find(|n| n.nodeid == id))
                        .cloned()
                });
                (node_outcome(t, &session, report.as_ref()), node)
            })
            .collect())
    }

    fn nodes_session(
        &self,
        program: &str,
        tests: &[TestInput],
        trace: Option<TraceRequest>,
        first: Vec<String>,
        cover: Option<(u32, u32)>,
    ) -> Result<(Vec<TestOutcome>, Option<PytestReport>), SandboxError> {
        let project = self.project.as_deref().ok_or(SandboxError::NoProject)?;
        let ids: Vec<&str> = tests.iter().filter_map(node_id).collect();
        let per_node = self.sandbox.limits().wall_ms;
        let mut args = vec!["--continue-on-collection-errors".to_string()];
        args.extend(ids.iter().map(|id| node_arg(&project.rootdir, id)));
        let test = TestSpec::Pytest {
            args,
            collect_only: false,
            node_timeout_ms: per_node,
            keep_going: cover.is_some(),
            first,
            cover,
            batch: None,
            trace_project: None,
        };
        let count = ids.len().max(1) as u64;
        let wall = per_node
            .saturating_mul(count)
            .saturating_add(SESSION_START_MS);
        let traced = trace.is_some();
        let (session, report) = self.session(project, program, test, wall, trace)?;
        let outcomes = tests
            .iter()
            .map(|t| {
                let mut o = node_outcome(t, &session, report.as_ref());
                if traced {
                    o.trace = session.trace.clone().map(|mut tr| {
                        tr.keep_last_call();
                        tr
                    });
                }
                o
            })
            .collect();
        Ok((outcomes, report))
    }

    /// [`Runner::run_all`] where some tests are pytest nodes: those run in one session, the
    /// others as usual.
    pub(super) fn run_all_with_nodes(
        &self,
        program: &str,
        tests: &[TestInput],
    ) -> Vec<Result<TestOutcome, SandboxError>> {
        type Indexed<'t> = Vec<(usize, &'t TestInput)>;
        let (nodes, others): (Indexed<'_>, Indexed<'_>) = tests
            .iter()
            .enumerate()
            .partition(|(_, t)| matches!(t, TestInput::Pytest { .. }));
        let mut out: Vec<Option<Result<TestOutcome, SandboxError>>> =
            tests.iter().map(|_| None).collect();
        let node_tests: Vec<TestInput> = nodes.iter().map(|(_, t)| (*t).clone()).collect();
        match self.run_nodes(program, &node_tests, None) {
            Ok(outcomes) => {
                for ((i, _), o) in nodes.iter().zip(outcomes) {
                    out[*i] = Some(Ok(o));
                }
            }
            Err(e) => {
                let message = e.to_string();
                for (i, _) in &nodes {
                    out[*i] = Some(Err(SandboxError::Pipe(std::io::Error::other(
                        message.clone(),
                    ))));
                }
            }
        }
        let other_tests: Vec<TestInput> = others.iter().map(|(_, t)| (*t).clone()).collect();
        for ((i, _), r) in others.iter().zip(self.run_all(program, &other_tests)) {
            out[*i] = Some(r);
        }
        out.into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(SandboxError::Pipe(std::io::Error::other(
                        "test was not run",
                    )))
                })
            })
            .collect()
    }

    /// Run `tests` one after another, stopping after the first that times out (the rest are
    /// not run); pytest nodes run together in one session. For quick checks of many
    /// candidates (`mutate`), where a candidate that loops should cost one limit, not one
    /// per test.
    pub fn run_in_order(
        &self,
        program: &str,
        tests: &[TestInput],
    ) -> Result<Vec<TestOutcome>, SandboxError> {
        if !tests.is_empty() && tests.iter().all(|t| matches!(t, TestInput::Pytest { .. })) {
            return self.run_nodes(program, tests, None);
        }
        let mut outcomes = Vec::with_capacity(tests.len());
        for test in tests {
            let o = self.run(program, test, None)?;
            let timed_out = o.status == TestStatus::Timeout;
            outcomes.push(o);
            if timed_out {
                break;
            }
        }
        Ok(outcomes)
    }

    /// One pytest session with `program` as the module file; how it ended (classified as a
    /// plain load) and pytest's report.
    fn session(
        &self,
        project: &PytestProject,
        program: &str,
        test: TestSpec,
        wall_ms: u64,
        trace: Option<TraceRequest>,
    ) -> Result<(TestOutcome, Option<PytestReport>), SandboxError> {
        let mut limits = self.sandbox.limits().clone();
        limits.wall_ms = wall_ms;
        limits.cpu_secs = limits.cpu_secs.max(wall_ms.div_ceil(1000));
        let sandbox = self.sandbox.clone().with_limits(limits);
        let run = RunSpec {
            program: program.to_string(),
            test,
            stdin: None,
            as_main: false,
            trace,
            value_chars: crate::run::VALUE_CHARS,
            strict: false,
            prelude: None,
            module: None,
            project: Some(project.mount.clone()),
        };
        let mut out = sandbox.run(&run)?;
        let report = out.response.as_mut().and_then(|r| r.pytest.take());
        let load = TestInput::Code {
            source: String::new(),
        };
        Ok((classify(&load, out), report))
    }
}

/// Candidates a swap session takes at most.
const SWAP_CHUNK: usize = 48;

/// `program` as a [`SwapCandidate`] of `seed`: its `def` of `entry`, and the top-level lines
/// it adds above the function (imports, helpers). `None` when it changes anything else (the
/// decorators, the rest of the module) or adds lines that are not top-level statements.
pub fn swap_candidate(seed: &str, program: &str, entry: &str) -> Option<SwapCandidate> {
    let s = crate::python::defs::find(seed, entry)?;
    let p = crate::python::defs::find(program, entry)?;
    let sl: Vec<&str> = seed.split_inclusive('\n').collect();
    let pl: Vec<&str> = program.split_inclusive('\n').collect();
    let range = |lines: &[&str], a: u32, b: u32| -> Option<Vec<String>> {
        let (a, b) = (a as usize, b as usize);
        (a <= b && b <= lines.len()).then(|| lines[a..b].iter().map(|l| l.to_string()).collect())
    };
    // The decorators stay, and so does everything after the function.
    if range(&sl, s.first - 1, s.def_line - 1)? != range(&pl, p.first - 1, p.def_line - 1)? {
        return None;
    }
    if range(&sl, s.last, sl.len() as u32)? != range(&pl, p.last, pl.len() as u32)? {
        return None;
    }
    // Above it, the seed's lines in order, with whole top-level statements added.
    let before_s = &sl[..(s.first - 1) as usize];
    let before_p = &pl[..(p.first - 1) as usize];
    let mut prelude = String::new();
    let mut k = 0;
    let mut inserted_block_start = true;
    for line in before_p {
        if k < before_s.len() && before_s[k] == *line {
            k += 1;
            inserted_block_start = true;
            continue;
        }
        if inserted_block_start && line.starts_with([' ', '\t']) {
            return None;
        }
        inserted_block_start = false;
        prelude.push_str(line);
    }
    if k != before_s.len() {
        return None;
    }
    // As written: dedenting would change the text of its multi-line strings (a method's SQL
    // or verbose regex), so the sandbox parses an indented def inside a block instead.
    let def: String = pl[(p.def_line - 1) as usize..p.last as usize].concat();
    Some(SwapCandidate {
        def,
        line: p.def_line,
        prelude,
    })
}

fn node_id(test: &TestInput) -> Option<&str> {
    match test {
        TestInput::Pytest { node_id, .. } => Some(node_id.as_str()),
        _ => None,
    }
}

/// Milliseconds given as a float (pytest's durations), rounded to whole ones.
fn duration_ms_f64(ms: f64) -> u64 {
    if ms.is_finite() && ms > 0.0 {
        ms.round().min(u64::MAX as f64) as u64
    } else {
        0
    }
}

/// A node id as a command-line argument: its file made absolute from the rootdir, so it
/// names the node wherever pytest starts.
fn node_arg(rootdir: &Path, node_id: &str) -> String {
    let (file, rest) = match node_id.split_once("::") {
        Some((file, rest)) => (file, Some(rest)),
        None => (node_id, None),
    };
    let path = rootdir.join(file).to_string_lossy().into_owned();
    match rest {
        Some(rest) => format!("{path}::{rest}"),
        None => path,
    }
}

/// The outcome of node `test` in a session that ended as `session` and reported `report`.
fn node_outcome(
    test: &TestInput,
    session: &TestOutcome,
    report: Option<&PytestReport>,
) -> TestOutcome {
    let node_id = match test {
        TestInput::Pytest { node_id, .. } => node_id.as_str(),
        _ => "",
    };
    let mut outcome = session.clone();
    outcome.test = test.clone();
    outcome.trace = None;
    outcome.stdout = String::new();
    let node = report.and_then(|r| r.nodes.iter().find(|n| n.nodeid == node_id));
    match node {
        Some(node) if node.outcome != NodeOutcome::NotRun => {
            outcome.stderr = String::new();
            fill_from_node(&mut outcome, node);
        }
        _ => not_run(&mut outcome, session, report),
    }
    outcome
}

fn fill_from_node(outcome: &mut TestOutcome, node: &NodeReport) {
    outcome.elapsed_ms = duration_ms_f64(node.duration_ms);
    outcome.exception = node.exception.clone();
    outcome.exit_code = None;
    outcome.actual = None;
    outcome.expected = None;
    let at = location(node);
    outcome.status = match node.outcome {
        NodeOutcome::Passed | NodeOutcome::Xpassed => TestStatus::Passed,
        NodeOutcome::Failed => TestStatus::Failed,
        NodeOutcome::Error
            if node
                .exception
                .as_ref()
                .is_some_and(|e| e.kind == "MemoryError") =>
        {
            TestStatus::MemoryLimit
        }
        NodeOutcome::Error | NodeOutcome::NotRun => TestStatus::Error,
        NodeOutcome::Skipped => TestStatus::Skipped,
        NodeOutcome::Xfailed => TestStatus::XFailed,
        NodeOutcome::Timeout => TestStatus::Timeout,
    };
    outcome.summary = match node.outcome {
        NodeOutcome::Passed => "passed".into(),
        NodeOutcome::Xpassed => super::XPASS_SUMMARY.into(),
        NodeOutcome::Skipped => format!(
            "skipped{}",
            node.reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ),
        NodeOutcome::Xfailed => format!(
            "failed as its xfail mark expects{}",
            node.reason
                .as_deref()
                .filter(|r| !r.is_empty())
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ),
        NodeOutcome::Timeout => format!("stopped at the time limit{at}"),
        NodeOutcome::Failed => match (node.op.as_deref(), &node.left, &node.right) {
            (Some("=="), Some(l), Some(r)) => {
                outcome.actual = Some(l.clone());
                outcome.expected = Some(r.clone());
                format!("got {l}, expected {r}{at}")
            }
            (Some(op), Some(l), Some(r)) => format!("`{l} {op} {r}` is false{at}"),
            _ => format!("{}{at}", first_line_of_failure(node)),
        },
        NodeOutcome::Error | NodeOutcome::NotRun => {
            let phase = match node.when.as_deref() {
                Some("setup") => "in set-up: ",
                Some("teardown") => "in teardown: ",
                _ => "",
            };
            format!("{phase}{}{at}", exception_text(outcome.exception.as_ref()))
        }
    };
}

/// ` at tests/test_x.py:14: assert f(x) == 3`: where in the test it happened.
fn location(node: &NodeReport) -> String {
    let Some(e) = &node.exception else {
        return String::new();
    };
    match (&e.test_location, &e.test_line) {
        (Some(loc), Some(line)) if !line.trim().is_empty() => {
            format!(" at {loc}: {}", line.trim())
        }
        (Some(loc), _) => format!(" at {loc}"),
        _ => String::new(),
    }
}

fn first_line_of_failure(node: &NodeReport) -> String {
    match &node.exception {
        Some(e) if e.kind == "AssertionError" => {
            let first = e.message.lines().next().unwrap_or_default().trim();
            if first.is_empty() {
                "assertion failed".into()
            } else {
                first.to_string()
            }
        }
        Some(e) => exception_text(Some(e)),
        None => "failed".into(),
    }
}

fn exception_text(e: Option<&crate::run::sandbox::ExceptionInfo>) -> String {
    match e {
        Some(e) => {
            let message = e.message.lines().next().unwrap_or_default();
            let at = e
                .program_line
                .map(|l| format!(" (program line {l})"))
                .unwrap_or_default();
            format!("{}: {message}{at}", e.kind)
        }
        None => "an error".into(),
    }
}

/// A node with no report of its own: its file did not collect (the program does not import,
/// say), or the session ended before the node ran.
fn not_run(outcome: &mut TestOutcome, session: &TestOutcome, report: Option<&PytestReport>) {
    let file = match &outcome.test {
        TestInput::Pytest { node_id, .. } => node_id.split("::").next().unwrap_or_default(),
        _ => "",
    };
    let collect_error = report.and_then(|r| {
        r.collect_errors
            .iter()
            .find(|c| c.nodeid == file)
            .or_else(|| r.collect_errors.first())
    });
    if let Some(err) = collect_error {
        outcome.status = TestStatus::Error;
        outcome.exception = err.exception.clone();
        outcome.summary = format!(
            "{} could not be collected: {}",
            if err.nodeid.is_empty() {
                "the tests"
            } else {
                err.nodeid.as_str()
            },
            exception_text(err.exception.as_ref())
        );
        return;
    }
    if let Some(import) = report.and_then(|r| r.import_error.as_deref()) {
        outcome.status = TestStatus::SandboxFailure;
        outcome.summary = format!("pytest cannot be imported: {import}");
        return;
    }
    if let Some(usage) = report.and_then(|r| r.usage_error.as_deref()) {
        outcome.status = TestStatus::Error;
        outcome.summary = format!("pytest: {}", usage.lines().next().unwrap_or(usage));
        return;
    }
    match session.status {
        // A regression test left out: the tests the program must fix failed first.
        TestStatus::Passed if outcome.test.is_guard() => {
            outcome.status = TestStatus::Error;
            outcome.summary = "not run: a test the program must fix failed".into();
        }
        // The session finished and still never reached this node.
        TestStatus::Passed => {
            outcome.status = TestStatus::Error;
            outcome.summary = "pytest did not run this test".into();
        }
        _ => {
            outcome.summary = format!(
                "the pytest session ended before this test: {}",
                session.summary
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_become_absolute_arguments() {
        let root = Path::new("/p");
        assert_eq!(
            node_arg(root, "tests/test_a.py::TestX::test_y[1-2]"),
            "/p/tests/test_a.py::TestX::test_y[1-2]"
        );
        assert_eq!(node_arg(root, "tests/test_a.py"), "/p/tests/test_a.py");
    }
}
