//! The sandbox: runs untrusted Python in a separate worker process and reports what happened.
//!
//! The parent side lives here: it makes an empty work dir, starts the run (a child of a warm
//! worker, `warm.rs`, or a fresh `ldb __worker` process) in its own process group with a cleared
//! environment, feeds it the request, caps its output, enforces the wall-clock limit by killing
//! the whole group, and removes the work dir afterwards. The worker side is in [`worker`],
//! `zygote.rs` and [`isolate`].

mod fdpass;
mod harness;
mod image;
pub mod isolate;
pub mod limits;
mod mounts;
mod process;
pub mod protocol;
mod pyjson;
pub mod pytest;
mod python_path;
mod rundirs;
mod seccomp;
pub mod strict;
mod warm;
pub mod worker;
mod zygote;

pub(crate) use process::{os_pipe, place_fds, unix_socket_pair};

use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

pub use limits::Limits;
pub use protocol::{
    ExceptionInfo, Isolation, Phase, ProjectMount, TestSpec, WorkerRequest, WorkerResponse,
    WorkerStatus,
};
pub use python_path::{check_python_path, PythonPathError};

use crate::run::tracer::TraceRequest;

/// The environment variable naming a user's site-packages directories (see
/// [`Sandbox::with_site_dirs`]); the worker adds them to its interpreter and its view.
pub(crate) const SITE_DIRS_VAR: &str = "LDB_SITE_DIRS";
/// The environment variable naming directories runs see read-only where they are (what a
/// virtualenv's `.pth` files add to the import path).
pub(crate) const SHOWN_DIRS_VAR: &str = "LDB_SHOWN_DIRS";

/// The hidden sub-command that turns the `ldb` binary into a worker.
pub const WORKER_COMMAND: &str = "__worker";

/// Entry point of `ldb __worker`: a cold worker; with `--serve`, the program's process of a
/// scored run ([`strict`]); with `--zygote`, a warm worker (`zygote.rs`). Never returns.
pub fn worker_main() -> ! {
    let mode = std::env::args_os().nth(2);
    if mode.as_deref() == Some(std::ffi::OsStr::new(protocol::SERVE_ARG)) {
        strict::serve_main();
    }
    if mode.as_deref() == Some(std::ffi::OsStr::new(protocol::ZYGOTE_ARG)) {
        zygote::main();
    }
    worker::main()
}

/// How long to wait for output pipes to close after the worker is gone (a descendant that
/// escaped the process group may still hold them).
const PIPE_GRACE: Duration = Duration::from_millis(300);

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot create a work directory under {dir}: {source}")]
    WorkDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the sandbox worker {exe}: {source}")]
    Spawn {
        exe: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot create a pipe for the sandbox worker: {0}")]
    Pipe(std::io::Error),
    #[error("cannot encode the worker request: {0}")]
    Encode(serde_json::Error),
    #[error("a pytest node was given to a runner without a project")]
    NoProject,
}

/// One program + one test to run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub program: String,
    pub test: TestSpec,
    /// Bytes for the program's stdin; `None` closes stdin (reads see end of file).
    pub stdin: Option<String>,
    pub as_main: bool,
    pub trace: Option<TraceRequest>,
    pub value_chars: usize,
    /// Strict checking for scoring (see [`WorkerRequest::strict`]).
    pub strict: bool,
    /// Code run before the program (see [`WorkerRequest::prelude`]).
    pub prelude: Option<String>,
    /// Module name the program is importable under (see [`WorkerRequest::module`]).
    pub module: Option<String>,
    /// The project the run sees, the program in place of one of its files (see
    /// [`WorkerRequest::project`]).
    pub project: Option<ProjectMount>,
}

/// How the worker process ended, as the parent saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    Exited(i32),
    Signaled(i32),
    /// Killed by the parent at the wall-clock limit.
    TimedOut,
    /// Killed by the parent because output passed the flood limit.
    OutputFlood,
}

/// Captured output of a stream, cut at the keep limit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Captured {
    pub text: String,
    pub total_bytes: u64,
    pub truncated: bool,
}

/// Everything the parent learned from one run.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// The worker's own report; absent when the process died or exited before writing it.
    pub response: Option<WorkerResponse>,
    pub termination: Termination,
    pub stdout: Captured,
    pub stderr: Captured,
    pub elapsed: Duration,
    /// False if the work dir could not be removed (the path is then kept for inspection).
    pub workdir_removed: bool,
    /// The run was a child of a warm worker (else a fresh worker process).
    pub warm: bool,
    /// Protections the parent could not give the run (the worker reports its own in the
    /// response's isolation).
    pub warnings: Vec<String>,
}

/// A run's seal ([`WorkerRequest::seal`]): random, never 0 (the value of a response that has
/// none).
fn seal() -> u64 {
    let mut bytes = [0u8; 8];
    // SAFETY: getrandom writes at most `bytes.len()` bytes into the buffer.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    let drawn = if n == bytes.len() as isize {
        u64::from_le_bytes(bytes)
    } else {
        // No kernel randomness: the clock's nanoseconds and this process's id still differ
        // from run to run and are not in the program's reach.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        now ^ (u64::from(std::process::id()) << 32)
    };
    drawn.max(1)
}

/// Runs programs in worker processes. Cheap to clone; safe to use from many threads at once.
#[derive(Debug, Clone)]
pub struct Sandbox {
    worker_exe: PathBuf,
    /// What workers are started from: a copy of `worker_exe` without the built-in benchmarks
    /// (`image.rs`), or `worker_exe` itself with `image_warning` on every run.
    launch_exe: PathBuf,
    image_warning: Option<String>,
    limits: Limits,
    /// Where run dirs go (under the system temp dir by default).
    dirs: Arc<rundirs::RunDirs>,
    /// Directories put before the interpreter's own on the program's `sys.path` (`PYTHONPATH`).
    python_path: Vec<PathBuf>,
    /// Warm workers shared by the clones of this sandbox; `None` runs every test in a fresh
    /// worker process.
    warm: Option<Arc<warm::Pool>>,
    /// A user's site-packages (a virtualenv's), the directories their `.pth` files add, and
    /// whether the system's site-packages stay importable.
    site_dirs: Vec<PathBuf>,
    shown_dirs: Vec<PathBuf>,
    system_site: bool,
    /// Warm workers import pytest (and ldb's pytest module) before forking runs.
    preload_pytest: bool,
}

impl Sandbox {
    /// `worker_exe` is an `ldb` binary (normally `std::env::current_exe()`).
    pub fn new(worker_exe: impl Into<PathBuf>, limits: Limits) -> Self {
        let worker_exe: PathBuf = worker_exe.into();
        // The worker starts in the run's work dir: a relative path would not be found there.
        let worker_exe = std::path::absolute(&worker_exe).unwrap_or(worker_exe);
        let (launch_exe, image_warning) = match image::for_exe(&worker_exe) {
            Ok(image) => (image.path().to_path_buf(), None),
            Err(e) => (
                worker_exe.clone(),
                Some(format!(
                    "the built-in benchmarks are readable by the program (no worker image without them: {e})"
                )),
            ),
        };
        let mut sandbox = Sandbox {
            worker_exe,
            launch_exe,
            image_warning,
            limits,
            dirs: Arc::new(rundirs::RunDirs::new(std::env::temp_dir())),
            python_path: Vec::new(),
            warm: None,
            site_dirs: Vec::new(),
            shown_dirs: Vec::new(),
            system_site: true,
            preload_pytest: false,
        };
        sandbox.warm = Some(sandbox.new_pool());
        sandbox
    }

    fn new_pool(&self) -> Arc<warm::Pool> {
        Arc::new(warm::Pool::new(
            self.launch_exe.clone(),
            self.environment(),
            self.dirs.clone(),
        ))
    }

    /// Run every test in a fresh worker process (`ldb __worker`) instead of a child of a warm
    /// worker: the same isolation, paying for the interpreter's start on every run.
    pub fn cold(mut self) -> Self {
        self.warm = None;
        self
    }

    /// Whether runs go to warm workers (see [`Sandbox::cold`]).
    pub fn is_warm(&self) -> bool {
        self.warm.is_some()
    }

    /// The environment a worker starts with (a cold worker's `HOME` and `TMPDIR` are its work
    /// dir; a warm worker's child sets them when the run starts).
    fn environment(&self) -> Vec<(String, std::ffi::OsString)> {
        let mut env: Vec<(String, std::ffi::OsString)> = [
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("LANG", "C.UTF-8"),
            ("LC_ALL", "C.UTF-8"),
            ("PYTHONHASHSEED", "0"),
            ("PYTHONDONTWRITEBYTECODE", "1"),
            ("PYTHONIOENCODING", "utf-8"),
            ("PYTHONNOUSERSITE", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into()))
        .collect();
        if !self.python_path.is_empty() {
            if let Ok(joined) = std::env::join_paths(&self.python_path) {
                env.push(("PYTHONPATH".into(), joined));
            }
        }
        self.user_environment(&mut env);
        env
    }

    /// Let programs import from `dirs` too (a project's packages, a library a benchmark's
    /// programs use), searched before the interpreter's own paths. The directories must be
    /// absolute and outside the places the sandbox replaces with empty scratch space (`/tmp`,
    /// `/var/tmp`, `/dev/shm`): see [`check_python_path`].
    pub fn with_python_path(mut self, dirs: Vec<PathBuf>) -> Self {
        self.python_path = dirs;
        // A warm worker's import path is fixed when its interpreter starts.
        if self.warm.is_some() {
            self.warm = Some(self.new_pool());
        }
        self
    }

    /// Put work directories under `dir` instead of the system temp dir.
    pub fn with_temp_root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dirs = Arc::new(rundirs::RunDirs::new(dir.into()));
        // Warm workers remove the run dirs of a killed ldb: they must know the new place.
        if self.warm.is_some() {
            self.warm = Some(self.new_pool());
        }
        self
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The `--python-path` directories runs import from.
    pub fn python_path(&self) -> &[PathBuf] {
        &self.python_path
    }

    /// The same sandbox, sharing its warm workers, with other limits (each run sends its
    /// limits to the worker).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    pub fn run(&self, spec: &RunSpec) -> Result<RunOutput, SandboxError> {
        let started = Instant::now();
        let workdir = self.dirs.create().map_err(|source| SandboxError::WorkDir {
            dir: self.dirs.temp_root().to_path_buf(),
            source,
        })?;
        let request = WorkerRequest {
            program: spec.program.clone(),
            as_main: spec.as_main,
            limits: self.limits.clone(),
            workdir: workdir.path().to_path_buf(),
            value_chars: spec.value_chars,
            trace: spec.trace.clone(),
            strict: spec.strict,
            prelude: spec.prelude.clone(),
            module: spec.module.clone(),
            project: spec.project.clone(),
            seal: seal(),
        };
        let sealed = request.seal;
        let request =
            protocol::encode_request(&request, &spec.test).map_err(SandboxError::Encode)?;
        let result = self.run_worker(
            &request,
            sealed,
            spec.stdin.as_deref(),
            workdir.path(),
            started,
        );
        let workdir_removed = workdir.remove();
        result.map(|mut out| {
            out.workdir_removed = workdir_removed;
            out
        })
    }

    fn run_worker(
        &self,
        request: &[u8],
        seal: u64,
        stdin: Option<&str>,
        workdir: &Path,
        started: Instant,
    ) -> Result<RunOutput, SandboxError> {
        let warm = match &self.warm {
            Some(pool) => self.launch_warm(pool, stdin.is_some())?,
            None => None,
        };
        let launched = match warm {
            Some(launched) => launched,
            None => self.launch_cold(workdir, stdin.is_some())?,
        };
        let pgid = launched.pgid;
        let warm = launched.warm;

        let flood = Arc::new(FloodGuard {
            total: AtomicU64::new(0),
            limit: self.limits.output_kill_bytes as u64,
            tripped: AtomicBool::new(false),
            pgid,
        });
        let keep = self.limits.output_keep_bytes;
        let stdout_rx = spawn_capture(Some(launched.stdout), keep, flood.clone());
        let stderr_rx = spawn_capture(Some(launched.stderr), keep, flood.clone());
        let response_rx = spawn_reader(launched.response);
        let request = request.to_vec();
        let req_write = launched.request;
        thread::spawn(move || {
            let mut w = std::fs::File::from(req_write);
            let _ = w.write_all(&request);
        });
        if let (Some(mut pipe), Some(data)) = (launched.stdin, stdin.map(str::to_owned)) {
            thread::spawn(move || {
                let _ = pipe.write_all(data.as_bytes());
            });
        }
        let wait_rx = launched.status;
        let wall = self.limits.wall();
        let status = match wait_rx.recv_timeout(wall.saturating_sub(started.elapsed())) {
            Ok(status) => Some(status),
            Err(_) => {
                kill_group(pgid);
                None
            }
        };
        let status = match status {
            Some(s) => s,
            None => wait_rx
                .recv()
                .unwrap_or_else(|_| Err(std::io::Error::other("lost"))),
        };
        let timed_out = started.elapsed() >= wall;
        // Anything still in the group (the program's children) goes too. A warm worker did
        // that before it reaped the group's leader; after, the id may belong to another group.
        if !warm {
            kill_group(pgid);
        }
        let elapsed = started.elapsed();

        let termination = if flood.tripped.load(Ordering::SeqCst) {
            Termination::OutputFlood
        } else {
            match status {
                Ok(st) => match (st.code(), st.signal()) {
                    (_, Some(libc::SIGKILL)) if timed_out => Termination::TimedOut,
                    (Some(code), _) => Termination::Exited(code),
                    (None, Some(sig)) => Termination::Signaled(sig),
                    (None, None) => Termination::Exited(-1),
                },
                Err(_) => Termination::Exited(-1),
            }
        };
        let response = response_rx
            .recv_timeout(PIPE_GRACE)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<WorkerResponse>(&bytes).ok())
            // Written by the program, not the worker: no result.
            .filter(|r| r.seal == seal);
        let stdout = stdout_rx.recv_timeout(PIPE_GRACE).unwrap_or_default();
        let stderr = stderr_rx.recv_timeout(PIPE_GRACE).unwrap_or_default();
        Ok(RunOutput {
            response,
            termination,
            stdout,
            stderr,
            elapsed,
            workdir_removed: false,
            warnings: self.image_warning.iter().cloned().collect(),
            warm,
        })
    }

    /// Start the run as a child of a warm worker; `None` when no warm worker can take it.
    fn launch_warm(
        &self,
        pool: &Arc<warm::Pool>,
        with_stdin: bool,
    ) -> Result<Option<Launched>, SandboxError> {
        // Without stdin, a pipe whose writing end closes at once: end of file, whatever the
        // host's `/dev/null` is (a regular file where it was replaced would hand its contents
        // to the program).
        let (stdin_read, stdin_write) = pipe()?;
        let stdin_write = with_stdin.then_some(stdin_write);
        let (out_read, out_write) = pipe()?;
        let (err_read, err_write) = pipe()?;
        let (req_read, req_write) = pipe()?;
        let (res_read, res_write) = pipe()?;
        let fds = [
            stdin_read.as_fd(),
            out_write.as_fd(),
            err_write.as_fd(),
            req_read.as_fd(),
            res_write.as_fd(),
        ];
        let Some(run) = pool.start(fds) else {
            return Ok(None);
        };
        // The child has its copies; ours would keep the pipes open after it ends.
        drop((stdin_read, out_write, err_write, req_read, res_write));
        Ok(Some(Launched {
            warm: true,
            pgid: run.pgid,
            status: run.status,
            stdout: Box::new(std::fs::File::from(out_read)),
            stderr: Box::new(std::fs::File::from(err_read)),
            request: req_write,
            response: res_read,
            stdin: stdin_write.map(|w| Box::new(std::fs::File::from(w)) as Box<dyn Write + Send>),
        }))
    }

    /// Start the run in a fresh worker process.
    fn launch_cold(&self, workdir: &Path, with_stdin: bool) -> Result<Launched, SandboxError> {
        let (req_read, req_write) = pipe()?;
        let (res_read, res_write) = pipe()?;
        let child_fds = [req_read.as_raw_fd(), res_write.as_raw_fd()];

        let mut cmd = Command::new(&self.launch_exe);
        cmd.arg(WORKER_COMMAND)
            .env_clear()
            .envs(self.environment())
            .env("HOME", workdir)
            .env("TMPDIR", workdir)
            .current_dir(workdir)
            // Without stdin the pipe's writing end is dropped below: end of file (see
            // `launch_warm`).
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // SAFETY: place_fds makes only async-signal-safe calls.
        unsafe {
            cmd.pre_exec(move || place_fds(child_fds));
        }
        let mut child = cmd.spawn().map_err(|source| SandboxError::Spawn {
            exe: self.worker_exe.clone(),
            source,
        })?;
        drop(req_read);
        drop(res_write);
        let pgid = child.id() as i32;
        let stdout: Box<dyn Read + Send> = match child.stdout.take() {
            Some(s) => Box::new(s),
            None => Box::new(std::io::empty()),
        };
        let stderr: Box<dyn Read + Send> = match child.stderr.take() {
            Some(s) => Box::new(s),
            None => Box::new(std::io::empty()),
        };
        let stdin = child
            .stdin
            .take()
            .filter(|_| with_stdin)
            .map(|s| Box::new(s) as Box<dyn Write + Send>);
        let (wait_tx, wait_rx) = mpsc::channel();
        thread::spawn(move || {
            let _ = wait_tx.send(child.wait());
        });
        Ok(Launched {
            warm: false,
            pgid,
            status: wait_rx,
            stdout,
            stderr,
            request: req_write,
            response: res_read,
            stdin,
        })
    }
}

/// A started run, warm or cold: what the parent watches and feeds.
struct Launched {
    warm: bool,
    /// The run's process group, killed at the wall-clock limit.
    pgid: i32,
    status: mpsc::Receiver<std::io::Result<std::process::ExitStatus>>,
    stdout: Box<dyn Read + Send>,
    stderr: Box<dyn Read + Send>,
    request: OwnedFd,
    response: OwnedFd,
    stdin: Option<Box<dyn Write + Send>>,
}

struct FloodGuard {
    total: AtomicU64,
    limit: u64,
    tripped: AtomicBool,
    pgid: i32,
}

fn kill_group(pgid: i32) {
    // SAFETY: signalling a process group we created; ESRCH when it is already gone is fine.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

fn pipe() -> Result<(OwnedFd, OwnedFd), SandboxError> {
    os_pipe().map_err(SandboxError::Pipe)
}

/// Read a stream to its end, keeping the first `keep` bytes and killing the group on a flood.
fn spawn_capture(
    stream: Option<impl Read + Send + 'static>,
    keep: usize,
    flood: Arc<FloodGuard>,
) -> mpsc::Receiver<Captured> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut total = 0u64;
        if let Some(mut stream) = stream {
            let mut buf = [0u8; 16 * 1024];
            loop {
                let n = match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                total += n as u64;
                if kept.len() < keep {
                    let take = n.min(keep - kept.len());
                    kept.extend_from_slice(&buf[..take]);
                }
                let all = flood.total.fetch_add(n as u64, Ordering::SeqCst) + n as u64;
                if all > flood.limit && !flood.tripped.swap(true, Ordering::SeqCst) {
                    kill_group(flood.pgid);
                }
            }
        }
        let _ = tx.send(Captured {
            text: String::from_utf8_lossy(&kept).into_owned(),
            total_bytes: total,
            truncated: total > kept.len() as u64,
        });
    });
    rx
}

/// Upper bound on a worker response: traces are bounded well below this.
const MAX_RESPONSE: u64 = 256 << 20;

fn spawn_reader(fd: OwnedFd) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let file = std::fs::File::from(fd);
        let _ = file.take(MAX_RESPONSE).read_to_end(&mut bytes);
        let _ = tx.send(bytes);
    });
    rx
}
