//! Resource limits for one sandboxed run, with defaults that suit test programs.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What one run of untrusted code may use. The parent enforces `wall`; the worker applies the rest
/// as kernel limits before any untrusted code runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Limits {
    /// Wall-clock time for the whole run, enforced by the parent (kills the process group).
    pub wall_ms: u64,
    /// CPU seconds (`RLIMIT_CPU`); a spinning thread hits this even if wall time is generous.
    pub cpu_secs: u64,
    /// Address space in bytes (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// Largest file the program may write (`RLIMIT_FSIZE`).
    pub file_bytes: u64,
    /// Space the program may fill on disk: its work dir, `/tmp`, `/var/tmp` and `/dev/shm`
    /// together are one tmpfs of this size (in memory, gone with the run).
    #[serde(default = "default_disk_bytes")]
    pub disk_bytes: u64,
    /// Open file descriptors (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// Processes/threads of the sandbox user (`RLIMIT_NPROC`); only effective with a dedicated uid.
    pub processes: u64,
    /// Bytes of stdout and of stderr kept for the report (each).
    pub output_keep_bytes: usize,
    /// Total output after which the run is killed as an output flood.
    pub output_kill_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            wall_ms: 10_000,
            cpu_secs: 10,
            memory_bytes: 1 << 30,
            file_bytes: 16 << 20,
            disk_bytes: default_disk_bytes(),
            open_files: 256,
            processes: 32,
            output_keep_bytes: 64 << 10,
            output_kill_bytes: 16 << 20,
        }
    }
}

fn default_disk_bytes() -> u64 {
    128 << 20
}

impl Limits {
    pub fn wall(&self) -> Duration {
        Duration::from_millis(self.wall_ms)
    }

    /// Limits for a run with the given wall-clock budget; CPU time follows it.
    pub fn with_wall(mut self, wall: Duration) -> Self {
        self.wall_ms = wall.as_millis().min(u64::MAX as u128) as u64;
        self.cpu_secs = wall.as_secs().max(1) + 1;
        self
    }
}
