//! Warm workers, the parent's side: a pool of `ldb __worker --zygote` processes
//! ([`crate::run::sandbox::zygote`]), one per run in flight, kept between runs.
//!
//! A run takes an idle worker (or starts one), sends it the run's pipes, learns the pid of the
//! child that runs the program (its process group, killed at the wall-clock limit) and gets the
//! worker back when the child's exit status arrives. A worker that fails in any way is dropped
//! (killed), never reused; when none can be started the sandbox runs cold workers instead,
//! which isolate the same way at a higher start-up cost.

use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use super::protocol::{CONTROL_FD, ZYGOTE_ARG};
use super::zygote::{EXITED, FORK_FAILED, READY, RUN_FDS, STARTED};
use super::WORKER_COMMAND;

/// How long a new worker may take to start its interpreter, and a worker to fork a run.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Start failures after which a sandbox stops trying warm workers (a machine where the
/// interpreter cannot start, or a binary that cannot be re-executed).
const GIVE_UP_AFTER: u32 = 3;

/// Idle warm workers for one sandbox configuration.
#[derive(Debug)]
pub(super) struct Pool {
    exe: PathBuf,
    env: Vec<(String, std::ffi::OsString)>,
    /// The sandbox's run dirs, which a worker removes if it outlives the parent.
    dirs: Arc<crate::run::sandbox::rundirs::RunDirs>,
    idle: Mutex<Vec<Zygote>>,
    /// Warm workers that failed to start; from [`GIVE_UP_AFTER`] on, runs go cold.
    failed_starts: AtomicU32,
}

#[derive(Debug)]
struct Zygote {
    child: Child,
    control: OwnedFd,
}

impl Drop for Zygote {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A run started on a warm worker.
pub(super) struct WarmRun {
    /// The run's process group.
    pub pgid: i32,
    /// Its exit status, when it ends.
    pub status: mpsc::Receiver<std::io::Result<ExitStatus>>,
}

impl Pool {
    pub(super) fn new(
        exe: PathBuf,
        env: Vec<(String, std::ffi::OsString)>,
        dirs: Arc<crate::run::sandbox::rundirs::RunDirs>,
    ) -> Self {
        Pool {
            exe,
            env,
            dirs,
            idle: Mutex::new(Vec::new()),
            failed_starts: AtomicU32::new(0),
        }
    }

    /// Start a run whose descriptors are `fds` (stdin, stdout, stderr, request, response; the
    /// worker's child gets copies). `None`: no warm worker could take it, run it cold.
    pub(super) fn start(self: &Arc<Self>, fds: [BorrowedFd<'_>; RUN_FDS]) -> Option<WarmRun> {
        if self.failed_starts.load(Ordering::Relaxed) >= GIVE_UP_AFTER {
            return None;
        }
        let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let zygote = match idle {
            Some(z) => z,
            None => match self.spawn() {
                Ok(z) => z,
                Err(_) => {
                    self.failed_starts.fetch_add(1, Ordering::Relaxed);
                    return None;
                }
            },
        };
        crate::run::sandbox::fdpass::send(zygote.control.as_fd(), &fds).ok()?;
        let pid = match read_message(&zygote.control, Some(START_TIMEOUT)) {
            Ok((STARTED, pid)) if pid > 0 => pid,
            Ok((FORK_FAILED, _)) => {
                self.put_back(zygote);
                return None;
            }
            _ => return None,
        };
        let (tx, rx) = mpsc::channel();
        let pool = Arc::clone(self);
        std::thread::spawn(move || {
            let status = match read_message(&zygote.control, None) {
                Ok((EXITED, status)) => {
                    pool.put_back(zygote);
                    Ok(ExitStatus::from_raw(status))
                }
                // Anything else: the worker is not trusted again (dropping it kills it).
                _ => Err(std::io::Error::other(
                    "the warm worker was lost during the run",
                )),
            };
            let _ = tx.send(status);
        });
        Some(WarmRun {
            pgid: pid,
            status: rx,
        })
    }

    fn put_back(&self, zygote: Zygote) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(zygote);
        }
    }

    fn spawn(&self) -> std::io::Result<Zygote> {
        let (ours, theirs) =
            crate::run::sandbox::unix_socket_pair(rustix::net::SocketType::SEQPACKET)?;
        let run_root = self.dirs.root()?;
        let mut cmd = Command::new(&self.exe);
        cmd.arg(WORKER_COMMAND)
            .arg(ZYGOTE_ARG)
            .arg(run_root)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("HOME", "/")
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let fd = theirs.as_raw_fd();
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                // Through a high copy, so that dup2 always makes a new, inheritable descriptor.
                let high = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10);
                if high < 0 || libc::dup2(high, CONTROL_FD) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(high);
                Ok(())
            });
        }
        let child = cmd.spawn()?;
        drop(theirs);
        let zygote = Zygote {
            child,
            control: ours,
        };
        match read_message(&zygote.control, Some(START_TIMEOUT))? {
            (READY, _) => Ok(zygote),
            _ => Err(std::io::Error::other("the warm worker did not start")),
        }
    }
}

/// One 8-byte message: (tag, value); waits at most `timeout` when given.
fn read_message(socket: &OwnedFd, timeout: Option<Duration>) -> std::io::Result<(u32, i32)> {
    if let Some(timeout) = timeout {
        let mut pfd = libc::pollfd {
            fd: socket.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: polling one descriptor we own.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n <= 0 {
            return Err(std::io::Error::other(
                "the warm worker did not answer in time",
            ));
        }
    }
    let mut msg = [0u8; 8];
    let mut file = std::fs::File::from(socket.try_clone()?);
    let n = loop {
        match file.read(&mut msg) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => break other?,
        }
    };
    if n != msg.len() {
        return Err(std::io::Error::other("the warm worker closed its channel"));
    }
    let tag = u32::from_le_bytes([msg[0], msg[1], msg[2], msg[3]]);
    let value = i32::from_le_bytes([msg[4], msg[5], msg[6], msg[7]]);
    Ok((tag, value))
}
