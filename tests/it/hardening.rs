//! What the sandbox takes from the program besides the file system's contents: privileges
//! (no setuid binary helps it), disk space (its work dir and scratch places share one capped
//! tmpfs), and what a killed `ldb` leaves behind (nothing that the next one keeps).

use crate::common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use ldb::run::sandbox::{Limits, Sandbox};
use ldb::run::{Runner, TestInput, TestOutcome, TestStatus};

fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn sandbox(limits: Limits) -> Sandbox {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_ldb"), limits);
    if std::env::var_os("LDB_TEST_FRESH_WORKERS").is_some_and(|v| v == "1") {
        sandbox.cold()
    } else {
        sandbox
    }
}

fn run(runner: &Runner, program: &str, test: &str) -> TestOutcome {
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

#[test]
fn the_program_holds_no_capability_and_cannot_gain_one() {
    let prog = "def flags():\n    keep = ('NoNewPrivs', 'CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb')\n    lines = open('/proc/self/status').read().splitlines()\n    return {k: v.strip() for k, v in (l.split(':', 1) for l in lines) if k in keep}\n";
    let none = "0000000000000000";
    let test = format!(
        "assert flags() == {{'NoNewPrivs': '1', 'CapInh': '{none}', 'CapPrm': '{none}', 'CapEff': '{none}', 'CapBnd': '{none}', 'CapAmb': '{none}'}}"
    );
    let runner = Runner::new(sandbox(Limits::default()));
    let out = run(&runner, prog, &test);
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn a_setuid_root_binary_started_by_the_program_runs_without_privileges() {
    if !root() {
        eprintln!(
            "skipped: making a setuid-root binary takes root (the per-run user exists only then)"
        );
        return;
    }
    // A setuid-root copy of `id` where the program can reach it: an import directory.
    let dir = common::visible_dir("setuid");
    let id = dir.join("id");
    std::fs::copy("/usr/bin/id", &id).expect("copy /usr/bin/id");
    std::fs::set_permissions(&id, std::os::unix::fs::PermissionsExt::from_mode(0o4755))
        .expect("chmod u+s");
    let prog = format!(
        "import subprocess\ndef ids():\n    return subprocess.run([{:?}], capture_output=True, text=True).stdout\n",
        id.display().to_string()
    );
    let runner = Runner::new(sandbox(Limits::default()).with_python_path(vec![dir.clone()]));
    let out = run(
        &runner,
        &prog,
        "out = ids()\nassert out.startswith('uid=1'), out\nassert 'euid' not in out and '(root)' not in out, out",
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
}

#[test]
fn the_work_dir_and_scratch_places_share_one_size_cap() {
    let mut limits = Limits::default().with_wall(Duration::from_secs(20));
    limits.disk_bytes = 8 << 20;
    let runner = Runner::new(sandbox(limits));
    let prog = format!("import os\n{FILL}");
    let test = "import errno, os\nassert os.getcwd() == os.environ['HOME'] == os.environ['TMPDIR']\nw1, e1 = fill('.')\nw2, e2 = fill('/tmp')\nw3, e3 = fill('/dev/shm')\nassert (e1, e2, e3) == (errno.ENOSPC,) * 3, (w1, e1, w2, e2, w3, e3)\nassert w1 <= 8 << 20 and w2 + w3 < 1 << 20, (w1, w2, w3)";
    let out = run(&runner, &prog, test);
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
}

/// Writes 1 MiB files into `where` until the disk cap stops it: (bytes written, errno).
const FILL: &str = r#"
def fill(where):
    written = 0
    try:
        for i in range(64):
            with open(os.path.join(where, f"fill-{i}"), "wb") as fh:
                fh.write(b"x" * (1 << 20))
            written += 1 << 20
    except OSError as e:
        return written, e.errno
    return written, 0
"#;

#[test]
fn cpu_time_file_size_and_open_files_are_limited() {
    // CPU seconds, with the wall clock far away: the kernel stops the spin.
    let mut limits = Limits::default().with_wall(Duration::from_secs(60));
    limits.cpu_secs = 1;
    let runner = Runner::new(sandbox(limits));
    let started = Instant::now();
    let out = run(
        &runner,
        "def spin():\n    while True:\n        pass\n",
        "spin()",
    );
    assert!(!out.passed(), "{out:?}");
    assert!(out.summary.contains("CPU time limit"), "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(30), "{out:?}");

    // One file past the file-size limit (16 MiB), though the disk cap (128 MiB) has room;
    // descriptors past the open-files limit (256).
    let runner = Runner::new(sandbox(Limits::default()));
    let prog = r#"
import errno, os, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
def big():
    try:
        with open("big", "wb") as fh:
            for _ in range(20):
                fh.write(b"x" * (1 << 20))
    except OSError as e:
        return e.errno, os.path.getsize("big")
    return 0, os.path.getsize("big")
def many():
    files = []
    try:
        for i in range(1000):
            files.append(open(os.devnull))
    except OSError as e:
        return e.errno, len(files)
    return 0, len(files)
"#;
    let test = "import errno\ne, size = big()\nassert e == errno.EFBIG and size <= 16 << 20, (e, size)\ne, n = many()\nassert e == errno.EMFILE and n < 256, (e, n)";
    let out = run(&runner, prog, test);
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
}

/// `ldb test` of a program whose test sleeps, in `tmp` as its temp dir; returns the process once
/// its run dir exists.
fn start_sleeping_run(tmp: &Path, fresh: bool) -> std::process::Child {
    std::fs::write(tmp.join("prog.py"), "def f():\n    return 1\n").expect("program");
    let mut cmd = common::ldb();
    cmd.args(["test", "prog.py", "--test", "import time\ntime.sleep(60)"])
        .current_dir(tmp)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if fresh {
        cmd.arg("--fresh-workers");
    }
    let child = cmd.spawn().expect("start ldb test");
    let deadline = Instant::now() + Duration::from_secs(30);
    while run_dirs(tmp).is_empty() {
        assert!(Instant::now() < deadline, "no run dir appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Let the run start in it.
    std::thread::sleep(Duration::from_millis(500));
    child
}

fn run_dirs(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .expect("list temp dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ldb-run"))
        .collect()
}

fn wait_until_gone(tmp: &Path, within: Duration) -> Vec<String> {
    let deadline = Instant::now() + within;
    loop {
        let left = run_dirs(tmp);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_killed_ldb_leaves_no_run_dir_behind() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // Warm workers outlive a killed ldb by a moment and remove its run dirs.
    let mut ldb = start_sleeping_run(tmp.path(), false);
    ldb.kill().expect("kill -9");
    ldb.wait().expect("reap");
    let left = wait_until_gone(tmp.path(), Duration::from_secs(10));
    assert!(left.is_empty(), "left behind: {left:?}");

    // Fresh workers die with it; the next ldb to start removes what they left.
    let mut ldb = start_sleeping_run(tmp.path(), true);
    ldb.kill().expect("kill -9");
    ldb.wait().expect("reap");
    std::thread::sleep(Duration::from_millis(300));
    let stale = run_dirs(tmp.path());
    let next = common::ldb()
        .args(["test", "prog.py", "--test", "assert f() == 1"])
        .current_dir(tmp.path())
        .env("TMPDIR", tmp.path())
        .output()
        .expect("run ldb test");
    assert!(
        next.status.success(),
        "{}",
        String::from_utf8_lossy(&next.stderr)
    );
    assert!(
        !stale.is_empty(),
        "fresh workers of a killed ldb left nothing to remove"
    );
    // Its own run dirs go as it exits (or as its warm workers do, a moment later).
    let left = wait_until_gone(tmp.path(), Duration::from_secs(10));
    assert!(
        left.is_empty(),
        "left behind: {left:?} (stale before: {stale:?})"
    );
}

/// A host whose `/dev/null` is a regular file (something removed the device and wrote to the
/// path) handed its contents to every program's stdin. Made here in this test process's own
/// mount namespace (a file bound over `/dev/null`), so the host stays as it is.
#[test]
fn a_regular_file_in_place_of_dev_null_reaches_no_program() {
    if !root() {
        eprintln!("skipped: a mount namespace of its own takes root");
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let fake = tmp.path().join("null");
    std::fs::write(&fake, "written by another process\n").expect("fake /dev/null");
    let c = |s: &str| std::ffi::CString::new(s).expect("path");
    let (fake_c, null_c, root_c) = (
        c(fake.to_str().expect("utf-8 path")),
        c("/dev/null"),
        c("/"),
    );
    // SAFETY: unshare and mount with NUL-terminated paths; only this process's view changes.
    unsafe {
        assert_eq!(libc::unshare(libc::CLONE_NEWNS), 0, "unshare");
        let private = libc::MS_REC | libc::MS_PRIVATE;
        let none = std::ptr::null();
        assert_eq!(
            libc::mount(none, root_c.as_ptr(), none, private, std::ptr::null()),
            0
        );
        assert_eq!(
            libc::mount(
                fake_c.as_ptr(),
                null_c.as_ptr(),
                none,
                libc::MS_BIND,
                std::ptr::null()
            ),
            0,
            "bind over /dev/null"
        );
    }
    let seen = std::fs::read_to_string("/dev/null").expect("read the fake");
    assert!(seen.contains("another process"), "the fake is not in place");
    let runner = Runner::new(sandbox(Limits::default()));
    let prog = "import sys\ndef f():\n    return sys.stdin.read()\n\ndef g():\n    return open('/dev/null').read()\n";
    let out = run(&runner, prog, "assert f() == ''");
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
    let out = run(&runner, prog, "assert 'another process' not in g()");
    assert_ne!(out.status, TestStatus::Failed, "{out:?}");
}

/// The probe of a sandbox escape: a user namespace in which the program is root, then a tmpfs
/// of its own, written past the `--disk` cap. Each step is refused, in both worker modes, and
/// threads and child processes still work.
#[test]
fn unshare_newuser_is_refused_and_the_disk_cap_holds() {
    let prog = r#"
import ctypes, errno, os, subprocess, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET, SIGCHLD = 0x20000, 0x10000000, 0x40000000, 17
SYS_CLONE, SYS_SETNS = 56, 308

def refused(result):
    return result == -1 and ctypes.get_errno() == errno.EPERM

def escape():
    os.mkdir("mnt")
    steps = {}
    steps["unshare"] = refused(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS))
    steps["unshare net"] = refused(libc.unshare(CLONE_NEWNET))
    pid = libc.syscall(SYS_CLONE, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    steps["clone"] = refused(pid)
    fd = os.open("/proc/self/ns/mnt", os.O_RDONLY)
    steps["setns"] = refused(libc.syscall(SYS_SETNS, fd, 0))
    steps["mount"] = refused(libc.mount(b"none", b"mnt", b"tmpfs", 0, None))
    return steps

def still_works():
    box = []
    t = threading.Thread(target=lambda: box.append(1))
    t.start()
    t.join()
    out = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True)
    return box == [1] and out.stdout.strip() == "42"
"#;
    let prog = format!("{prog}{FILL}");
    let test = "import errno\nsteps = escape()\nassert all(steps.values()), steps\nw, e = fill('mnt')\nassert e == errno.ENOSPC and w <= 8 << 20, (w, e)\nassert still_works()";
    for cold in [false, true] {
        let mut limits = Limits::default().with_wall(Duration::from_secs(20));
        limits.disk_bytes = 8 << 20;
        let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_ldb"), limits);
        let runner = Runner::new(if cold { sandbox.cold() } else { sandbox });
        let out = run(&runner, &prog, test);
        assert_eq!(out.status, TestStatus::Passed, "cold: {cold}: {out:?}");
    }
}
