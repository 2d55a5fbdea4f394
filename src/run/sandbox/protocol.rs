//! The messages between the parent and a worker process: one request in (fd 3), one response out (fd 4),
//! with what a pytest session reports about each node when the test is one ([`PytestReport`]).
//!
//! Both sides are the same `ldb` binary, so the types are shared and serialized as JSON. The
//! request comes in two parts ([`encode_request`]): everything but the test, then the test, so
//! that a scored run's worker can start the program's process before the test is in its memory.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

use super::limits::Limits;
use crate::run::tracer::{RawTrace, TraceRequest};

/// File descriptor the request arrives on.
pub const REQUEST_FD: i32 = 3;
/// File descriptor the response leaves on (in the program's process of a scored run: the
/// channel to the checker).
pub const RESPONSE_FD: i32 = 4;
/// Exit code for a worker that could not do its job (bad request, interpreter failure).
pub const WORKER_FAILURE: i32 = 70;
/// Argument after the worker command that makes it the program's process of a scored run.
pub const SERVE_ARG: &str = "--serve";
/// Argument after the worker command that makes it a warm worker (`zygote.rs`).
pub const ZYGOTE_ARG: &str = "--zygote";
/// A warm worker's control socket (it has no request or response of its own).
pub const CONTROL_FD: i32 = 3;

/// File name the program is compiled under; tracebacks and the tracer use it to tell program frames
/// from harness and test frames.
pub const PROGRAM_FILENAME: &str = "program.py";
/// File name test code is compiled under.
pub const TEST_FILENAME: &str = "<test>";
/// File name a prelude is compiled under (see [`WorkerRequest::prelude`]).
pub const PRELUDE_FILENAME: &str = "<prelude>";

/// What to run after the program has been loaded.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TestSpec {
    /// Only load the program (module-level code runs, e.g. a stdin/stdout script).
    LoadOnly,
    /// `assert <lhs> == <rhs>`: evaluated in parts so the actual value can be reported.
    AssertEq {
        source: String,
        lhs: String,
        rhs: String,
        /// Statements the assert depends on (imports, helpers), run first in the same globals.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        setup: Option<String>,
    },
    /// `assert <expr>` with a non-comparison expression: its value is reported on failure.
    AssertTruthy {
        source: String,
        expr: String,
        /// As for `AssertEq`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        setup: Option<String>,
    },
    /// Any other statements (a `check(candidate)` function and its call, several asserts, ...).
    Statements { source: String },
    /// Evaluate one expression and report its value (`ldb trace --call`).
    Call { expr: String },
    /// One pytest session in the request's project ([`WorkerRequest::project`]): `args` are
    /// pytest's (paths, node ids, `-k EXPR`); with `collect_only` the nodes are listed, not run.
    /// Each node gets `node_timeout_ms` inside the session.
    Pytest {
        args: Vec<String>,
        #[serde(default)]
        collect_only: bool,
        node_timeout_ms: u64,
        /// Node ids (rootdir-relative) that run before the others; when one of them fails
        /// the session stops after the last of them, and the rest are not run (a candidate's
        /// regression tests run only once it passes the tests it must fix).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        first: Vec<String>,
        /// Run every node even when one of `first` fails (they still run first).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        keep_going: bool,
        /// Lines of the module file (first, last): every node reports whether it called code
        /// defined there ([`NodeReport::covered`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cover: Option<(u32, u32)>,
        /// Many candidates of one function in this one session ([`SwapBatch`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        batch: Option<SwapBatch>,
        /// Every node reports the lines it ran of the project's files
        /// ([`NodeReport::lines`]), and an exception the project frames it went through.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trace_project: Option<ProjectTrace>,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkerRequest {
    pub program: String,
    /// Run the program with `__name__ == "__main__"` (scripts driven by stdin).
    pub as_main: bool,
    pub limits: Limits,
    pub workdir: PathBuf,
    /// Characters kept when rendering actual/expected values.
    pub value_chars: usize,
    pub trace: Option<TraceRequest>,
    /// Checking meant for scoring: the program runs in a process of its own that only computes,
    /// and the test (comparisons, expected values) runs in the worker, which never runs program
    /// code ([`crate::run::sandbox::strict`]). Values reach the test only as built-in types.
    #[serde(default)]
    pub strict: bool,
    /// Python run in the program's globals before it, untraced and under its own file name
    /// (imports a snippet leaves out, a snippet's prefix), so the program's line numbers stay
    /// as given. Its failures are reported with [`Phase::Prelude`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prelude: Option<String>,
    /// A module name the program can also be imported under (`import prog`, `from prog import
    /// f`), so a test file written for the program's file finds the program being run.
    #[serde(default)]
    pub module: Option<String>,
    /// A project the run sees at its own path, read-only, with the program in place of one of
    /// its files: what a pytest run ([`TestSpec::Pytest`]) imports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<ProjectMount>,
    /// A number drawn for this run that the worker puts in its response and never hands to
    /// Python: a result the program writes on the response pipe itself (then `os._exit`) lacks
    /// it, and counts as no result.
    #[serde(default)]
    pub seal: u64,
}

/// A user's project as a run sees it: the directory `root` read-only at its own path, and
/// `module_file` (a file under `root`) holding the request's program instead of what the
/// user's file holds. pytest runs from `cwd`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProjectMount {
    pub root: PathBuf,
    pub module_file: PathBuf,
    pub cwd: PathBuf,
}

/// The bytes on the request pipe: the header's length (8 bytes, little-endian), the header as
/// JSON, then the test as JSON up to the end of the pipe.
pub fn encode_request(header: &WorkerRequest, test: &TestSpec) -> serde_json::Result<Vec<u8>> {
    let head = serde_json::to_vec(header)?;
    let mut bytes = Vec::with_capacity(8 + head.len() + 256);
    bytes.extend_from_slice(&(head.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&head);
    serde_json::to_writer(&mut bytes, test)?;
    Ok(bytes)
}

/// Why a worker could not answer a request: it says so on stderr (`ldb worker: ...`) and
/// exits with [`WORKER_FAILURE`].
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// A system call or a pipe failed while `doing` something.
    #[error("{doing}: {source}")]
    Os {
        doing: &'static str,
        source: std::io::Error,
    },
    /// A request or a test that does not decode.
    #[error("malformed {what}: {detail}")]
    Malformed { what: &'static str, detail: String },
    /// The embedded interpreter failed while `doing` something.
    #[error("{doing}: {source}")]
    Python {
        doing: &'static str,
        source: pyo3::PyErr,
    },
    #[error("encoding {what}: {source}")]
    Encode {
        what: &'static str,
        source: serde_json::Error,
    },
    /// A pytest run in a project whose module the run cannot replace.
    #[error(
        "cannot put the program in place of {} for pytest: the run has no file system view of \
         its own ({warnings})",
        module.display()
    )]
    NoView { module: PathBuf, warnings: String },
    #[error("the request pipe was lost")]
    PipeLost,
}

impl WorkerError {
    /// `doing` failed with the OS's error.
    pub fn os(doing: &'static str) -> impl FnOnce(std::io::Error) -> Self {
        move |source| WorkerError::Os { doing, source }
    }

    /// `doing` failed in the interpreter.
    pub fn python(doing: &'static str) -> impl FnOnce(pyo3::PyErr) -> Self {
        move |source| WorkerError::Python { doing, source }
    }
}

/// Largest request header a worker accepts (programs and trace requests are far smaller).
const MAX_HEADER: u64 = 64 << 20;

/// Read the header of a request from `pipe`, leaving the test unread.
pub fn read_header(pipe: &mut impl std::io::Read) -> Result<WorkerRequest, WorkerError> {
    let mut len = [0u8; 8];
    pipe.read_exact(&mut len)
        .map_err(WorkerError::os("reading the request"))?;
    let len = u64::from_le_bytes(len);
    if len > MAX_HEADER {
        return Err(WorkerError::Malformed {
            what: "request",
            detail: format!("a header of {len} bytes"),
        });
    }
    let mut head = vec![0u8; len as usize];
    pipe.read_exact(&mut head)
        .map_err(WorkerError::os("reading the request"))?;
    let parsed = serde_json::from_slice(&head).map_err(|e| WorkerError::Malformed {
        what: "request",
        detail: e.to_string(),
    });
    // The header holds the run's seal: no copy of it is left in freed memory.
    head.iter_mut().for_each(|b| *b = 0);
    std::hint::black_box(&head);
    parsed
}

/// Read the rest of a request from `pipe`: the test.
pub fn read_test(pipe: &mut impl std::io::Read) -> Result<TestSpec, WorkerError> {
    let mut raw = Vec::new();
    pipe.read_to_end(&mut raw)
        .map_err(WorkerError::os("reading the test"))?;
    serde_json::from_slice(&raw).map_err(|e| WorkerError::Malformed {
        what: "test",
        detail: e.to_string(),
    })
}

/// How a run ended, as far as the worker could tell. The parent adds the outcomes only it can see
/// (timeout, killed, exited without a response, output flood).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WorkerStatus {
    Passed,
    Failed,
    Error,
    /// `sys.exit()` / `SystemExit` was raised.
    Exited,
    /// The tracer's own deadline stopped the program (the parent's would have killed it).
    Timeout,
}

/// Where the run stopped, when it did not pass.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// In the prelude, before the program ran.
    Prelude,
    Compile,
    Load,
    Test,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ExceptionInfo {
    /// Exception class name, e.g. `IndexError`.
    pub kind: String,
    pub message: String,
    /// Line in the program where it was raised (innermost program frame), if any.
    pub program_line: Option<u32>,
    /// Lines of the program's frames that called the one that raised, outermost first (at
    /// most 16, the innermost kept): the calls that led to the raise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub program_callers: Vec<u32>,
    /// The source line of the test that failed, for multi-statement tests.
    pub test_line: Option<String>,
    /// Traceback restricted to program and test frames.
    pub traceback: String,
    /// Line in the prelude of the outermost prelude frame (the prelude's own statement that
    /// raised, or where program code called into a function the prelude defined).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prelude_line: Option<u32>,
    /// Where in a test file it was raised, `path:line` (pytest runs: the innermost frame of the
    /// test's own file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_location: Option<String>,
    /// The frames of the project's own files it went through (pytest runs that trace the
    /// project): file, line, function, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub project_frames: Vec<(String, u32, String)>,
}

/// Which protections were in force for the run; anything missing is named in `warnings`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Isolation {
    pub network: bool,
    pub pid_namespace: bool,
    /// The program runs under an init of its PID namespace, so it has a parent process
    /// (`os.getppid()` is 1), as under a shell.
    #[serde(default)]
    pub init_process: bool,
    pub unprivileged_user: bool,
    pub process_limit: bool,
    /// A root of its own: the system's programs and libraries, `--python-path` dirs and a few
    /// files of `/etc`, read-only; the work dir and scratch places in one private tmpfs; not
    /// the host's tree.
    #[serde(default)]
    pub read_only_fs: bool,
    /// `/proc` shows only the run's own processes.
    #[serde(default)]
    pub private_proc: bool,
    /// `no_new_privs` set and every capability set empty, the bounding set included: no
    /// program it starts gains privileges (setuid bits and file capabilities do nothing).
    #[serde(default)]
    pub no_new_privileges: bool,
    /// A seccomp filter refuses new namespaces (`unshare`, `clone` with namespace flags,
    /// `setns`) and every mount call: no user namespace to mount a tmpfs past the disk cap.
    #[serde(default)]
    pub no_namespaces: bool,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkerResponse {
    pub status: WorkerStatus,
    pub phase: Option<Phase>,
    pub exception: Option<ExceptionInfo>,
    /// Rendered value of the tested expression (left side of `==`, or the truthy-tested expression).
    pub actual: Option<String>,
    pub expected: Option<String>,
    pub exit_code: Option<i64>,
    #[serde(default)]
    pub trace: Option<RawTrace>,
    #[serde(default)]
    pub isolation: Isolation,
    /// What a pytest session reported ([`TestSpec::Pytest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pytest: Option<PytestReport>,
    /// The request's [`WorkerRequest::seal`], set by the worker as it writes the response.
    #[serde(default)]
    pub seal: u64,
}

/// What one pytest session reported.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PytestReport {
    /// pytest's version, when it could be imported.
    #[serde(default)]
    pub version: Option<String>,
    /// The directory pytest was imported from.
    #[serde(default)]
    pub location: Option<String>,
    /// Why pytest could not be imported (then nothing ran).
    #[serde(default)]
    pub import_error: Option<String>,
    /// pytest's exit code (0 all passed, 1 some failed, 2 interrupted, 4 usage error, 5 none
    /// collected).
    #[serde(default)]
    pub exit_code: Option<i64>,
    /// pytest's rootdir and ini file, as it chose them.
    #[serde(default)]
    pub rootdir: Option<String>,
    #[serde(default)]
    pub inifile: Option<String>,
    /// A usage error pytest stopped at (e.g. `not found: tests/test_x.py::test_y`).
    #[serde(default)]
    pub usage_error: Option<String>,
    /// Files or directories that could not be collected.
    #[serde(default)]
    pub collect_errors: Vec<CollectError>,
    /// The nodes collected (a collect-only session).
    #[serde(default)]
    pub items: Vec<CollectedItem>,
    /// The nodes run, in the order they ran.
    #[serde(default)]
    pub nodes: Vec<NodeReport>,
    /// Whether collection imported the module file from its path (a collect-only session): if
    /// not, the tests may import an installed copy that candidates never replace.
    #[serde(default)]
    pub module_imported: Option<bool>,
    /// How long `pytest.main` took inside the run, in milliseconds.
    #[serde(default)]
    pub session_ms: Option<f64>,
    /// The CPU time it took (the process's, user and system).
    #[serde(default)]
    pub session_cpu_ms: Option<f64>,
    /// A [`SwapBatch`]'s results, one per candidate in order.
    #[serde(default)]
    pub batch: Vec<SwapResult>,
    /// Why the batch could not run at all (the function was not loaded).
    #[serde(default)]
    pub batch_error: Option<String>,
}

/// Which files of a project a session traces: those under `root` but not under `skip` (the
/// tests) and not `conftest.py`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProjectTrace {
    pub root: PathBuf,
    #[serde(default)]
    pub skip: Vec<PathBuf>,
}

/// Candidates of one function run in one pytest session: the tests are collected once, and
/// each candidate's function is put in place of the original in a child process of its own
/// (its code swapped into the function objects), where the nodes run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SwapBatch {
    /// The function's dotted path (`f`, `Cls.method`).
    pub entry: String,
    /// Its lines in the module as collected (first decorator to last line).
    pub lines: (u32, u32),
    pub candidates: Vec<SwapCandidate>,
    /// Time one candidate may take, all its nodes together.
    pub candidate_ms: u64,
}

/// One candidate of a [`SwapBatch`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SwapCandidate {
    /// Its `def` (decorators left out), indented as in the program (a method's is).
    pub def: String,
    /// The line of its `def` in the candidate program.
    pub line: u32,
    /// Module-level statements it adds (imports, helpers), run in the module first.
    #[serde(default)]
    pub prelude: String,
}

/// What one candidate of a [`SwapBatch`] did: its nodes, or why it could not run this way.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct SwapResult {
    #[serde(default)]
    pub nodes: Option<Vec<NodeReport>>,
    #[serde(default)]
    pub error: Option<String>,
}

/// A collector pytest could not collect: a test file that does not import, a conftest.py that
/// raises.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CollectError {
    pub nodeid: String,
    /// The exception behind it (the original one, not pytest's wrapper), when one was seen.
    #[serde(default)]
    pub exception: Option<ExceptionInfo>,
    /// The module an import could not find (`ModuleNotFoundError.name`).
    #[serde(default)]
    pub missing_module: Option<String>,
}

/// One collected node.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CollectedItem {
    pub nodeid: String,
    /// The test's file and its 1-based line.
    pub path: String,
    pub line: u32,
    /// The test function's name (without parameters).
    pub function: String,
    /// The test function's source (dedented), when it can be read.
    #[serde(default)]
    pub source: Option<String>,
    /// Parametrized arguments with their values, rendered.
    #[serde(default)]
    pub params: Vec<(String, String)>,
    /// Fixtures the test asks for besides its parameters.
    #[serde(default)]
    pub fixtures: Vec<String>,
    /// `skip` or `xfail` when the node carries such a mark.
    #[serde(default)]
    pub mark: Option<String>,
}

/// How a node ended.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NodeOutcome {
    Passed,
    /// An assertion of the test failed.
    Failed,
    /// Another exception, in the test or in a fixture's set-up or teardown.
    Error,
    Skipped,
    /// Marked xfail, and it failed.
    Xfailed,
    /// Marked xfail, and it passed (a non-strict xfail; a strict one is `failed`).
    Xpassed,
    /// Stopped at the per-node time limit.
    Timeout,
    /// The session ended before the node reported (it was killed, or the program exited it).
    NotRun,
}

/// One node's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NodeReport {
    pub nodeid: String,
    pub outcome: NodeOutcome,
    /// The phase that decided the outcome: `setup`, `call` or `teardown`.
    #[serde(default)]
    pub when: Option<String>,
    pub duration_ms: f64,
    #[serde(default)]
    pub exception: Option<ExceptionInfo>,
    /// A failed comparison's operator and its two sides, rendered.
    #[serde(default)]
    pub op: Option<String>,
    #[serde(default)]
    pub left: Option<String>,
    #[serde(default)]
    pub right: Option<String>,
    /// Why it was skipped or xfailed.
    #[serde(default)]
    pub reason: Option<String>,
    /// Whether it called code of the lines a session was asked to cover.
    #[serde(default)]
    pub covered: Option<bool>,
    /// The lines it ran of each project file (a session that traces the project).
    #[serde(default)]
    pub lines: Option<std::collections::BTreeMap<String, Vec<u32>>>,
    /// The project's functions it called from outside the project's code (from the test):
    /// file and first line.
    #[serde(default)]
    pub entries: Vec<(String, u32)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> WorkerRequest {
        WorkerRequest {
            program: "def f():\n    return 1\n".into(),
            as_main: false,
            limits: Limits::default(),
            workdir: "/tmp/ldb-run-x".into(),
            value_chars: 80,
            trace: None,
            strict: true,
            prelude: None,
            module: None,
            project: None,
            seal: 7,
        }
    }

    #[test]
    fn the_header_is_read_without_touching_the_test() {
        let test = TestSpec::Statements {
            source: "assert f() == 'SECRET'".into(),
        };
        let bytes = encode_request(&header(), &test).unwrap();
        let mut pipe = std::io::Cursor::new(bytes);
        let read = read_header(&mut pipe).unwrap();
        assert_eq!(read.program, header().program);
        // What is left on the pipe is the test, and only it.
        let rest = &pipe.get_ref()[pipe.position() as usize..];
        assert!(String::from_utf8_lossy(rest).contains("SECRET"));
        let head = &pipe.get_ref()[..pipe.position() as usize];
        assert!(!String::from_utf8_lossy(head).contains("SECRET"));
        assert_eq!(read_test(&mut pipe).unwrap(), test);
    }

    #[test]
    fn malformed_requests_are_errors_not_panics() {
        let huge = (MAX_HEADER + 1).to_le_bytes();
        assert!(read_header(&mut &huge[..])
            .unwrap_err()
            .to_string()
            .contains("header of"));
        let short = [3u8, 0, 0, 0, 0, 0, 0, 0, b'{'];
        assert!(read_header(&mut &short[..]).is_err());
        assert!(read_header(&mut &[1u8, 2][..]).is_err());
        let mut garbage = 2u64.to_le_bytes().to_vec();
        garbage.extend_from_slice(b"{]");
        assert!(read_header(&mut &garbage[..])
            .unwrap_err()
            .to_string()
            .contains("malformed"));
        assert!(read_test(&mut &b"not json"[..]).is_err());
    }
}
