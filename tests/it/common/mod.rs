//! What integration tests share: the benchmark data beside the repository, this build's `ldb`
//! with a clean environment, a sandboxed runner of it, and the body of an OpenAI chat completion
//! for fake endpoints.

pub mod project;
pub mod snapshot;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use ldb::run::sandbox::{Limits, Sandbox};
use ldb::run::Runner;

/// `../shared/datasets`. Tests that read it fail (never pass quietly) when it is absent: CI and
/// the README's test command run with it beside the repository.
pub fn shared() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets");
    assert!(
        dir.is_dir(),
        "{} is missing: these tests read the benchmark data from there (clone it beside the \
         repository)",
        dir.display()
    );
    dir
}

/// What a developer's shell may set that changes what `ldb` does: an endpoint, a key, a config
/// file, a default model, a data dir, a virtualenv, a fault to inject. A test that needs one sets
/// it on the command. Where models are kept and fetched from (`LDB_MODELS_DIR`, `LDB_PYPI_URL`)
/// stays: the end-to-end tests use the model the developer pulled.
const SCRUBBED: [&str; 7] = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "LDB_CONFIG",
    "LDB_MODEL",
    "LDB_DATA_DIR",
    "VIRTUAL_ENV",
    "LDB_FAULT",
];

/// `cmd` without the variables of [`SCRUBBED`], for it and its children.
pub fn scrub(cmd: &mut Command) -> &mut Command {
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
    cmd
}

/// This build's `ldb`, scrubbed, its stdin empty (a test never types at the terminal).
pub fn ldb() -> Command {
    ldb_at(Path::new(env!("CARGO_BIN_EXE_ldb")))
}

/// Run this build's `ldb` with `args` in `dir` and wait for it.
pub fn ldb_in(dir: &Path, args: &[&str]) -> Output {
    ldb().args(args).current_dir(dir).output().expect("run ldb")
}

/// The `ldb` at `exe` (a copy of this build's), as [`ldb`].
pub fn ldb_at(exe: &Path) -> Command {
    let mut cmd = Command::new(exe);
    scrub(&mut cmd).stdin(Stdio::null());
    cmd
}

/// A runner whose sandbox re-executes this build's `ldb`, with `wall` as the wall-clock limit.
/// Runs go to warm workers; with `LDB_TEST_FRESH_WORKERS=1` (set by `scripts/test.sh` for a
/// second pass of the sandbox and hostile tests) each run is a fresh worker process instead,
/// the path `--fresh-workers` takes.
pub fn runner(wall: Duration) -> Runner {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_ldb"), Limits::default().with_wall(wall));
    let fresh = std::env::var_os("LDB_TEST_FRESH_WORKERS").is_some_and(|v| v == "1");
    Runner::new(if fresh { sandbox.cold() } else { sandbox })
}

/// An OpenAI chat completion answering `content` (100 prompt and 20 completion tokens).
pub fn completion(content: &str) -> serde_json::Value {
    serde_json::json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    })
}

/// A fresh directory the sandboxed programs can see, for `--python-path` tests. The sandbox
/// covers /tmp, /var/tmp and /dev/shm with empty scratch space, and when ldb runs as root the
/// program runs as an unprivileged user, who cannot enter a private home such as /root: so as
/// root a world-readable directory under /var/cache, otherwise the target dir's temp dir (or
/// the home directory when the checkout lives under /tmp).
pub fn visible_dir(name: &str) -> std::path::PathBuf {
    let hidden = |p: &std::path::Path| {
        ["/tmp", "/var/tmp", "/dev/shm"]
            .iter()
            .any(|s| p.starts_with(s))
    };
    let target_tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    // SAFETY: geteuid has no preconditions.
    let base = if unsafe { libc::geteuid() } == 0 {
        std::path::PathBuf::from("/var/cache/ldb-test-dirs")
    } else if hidden(target_tmp) {
        std::env::home_dir()
            .filter(|h| !hidden(h))
            .expect("a home directory outside /tmp for a directory the sandbox can see")
            .join(".cache/ldb-test-dirs")
    } else {
        target_tmp.to_path_buf()
    };
    let dir = base.join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a visible test dir");
    use std::os::unix::fs::PermissionsExt;
    for d in [&base, &dir] {
        let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755));
    }
    dir
}

/// Fails with the command's status, stdout and stderr unless it succeeded.
pub fn assert_success(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
