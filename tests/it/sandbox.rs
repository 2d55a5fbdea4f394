//! The sandbox contains hostile programs: each test runs a real worker process with CPython.

use crate::common;

use std::time::Duration;

use ldb::run::sandbox::Limits;
use ldb::run::{Runner, TestInput, TestOutcome, TestStatus};

fn runner(wall: Duration) -> Runner {
    common::runner(wall)
}

fn run(program: &str, test: &str) -> TestOutcome {
    run_with(runner(Duration::from_secs(10)), program, test)
}

fn run_with(runner: Runner, program: &str, test: &str) -> TestOutcome {
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
fn passing_and_failing_asserts_report_actual_and_expected() {
    let prog = "def f(x):\n    return x + 1\n";
    assert_eq!(run(prog, "assert f(1) == 2").status, TestStatus::Passed);
    let failed = run(prog, "assert f(1) == 3");
    assert_eq!(failed.status, TestStatus::Failed);
    assert_eq!(failed.actual.as_deref(), Some("2"));
    assert_eq!(failed.expected.as_deref(), Some("3"));
    assert_eq!(failed.summary, "got 2, expected 3");
}

#[test]
fn exceptions_name_their_type_message_and_program_line() {
    let prog = "def f(xs):\n    total = 0\n    return xs[10]\n";
    let out = run(prog, "assert f([1]) == 1");
    assert_eq!(out.status, TestStatus::Error);
    let exc = out.exception.expect("exception info");
    assert_eq!(exc.kind, "IndexError");
    assert_eq!(exc.message, "list index out of range");
    assert_eq!(exc.program_line, Some(3));
    assert!(exc.traceback.contains("program.py"), "{}", exc.traceback);
}

#[test]
fn syntax_errors_are_errors_with_a_line() {
    let out = run("def f(:\n    pass\n", "assert f() is None");
    assert_eq!(out.status, TestStatus::Error);
    let exc = out.exception.expect("exception info");
    assert_eq!(exc.kind, "SyntaxError");
    assert_eq!(exc.program_line, Some(1));
}

#[test]
fn infinite_loop_is_killed_at_the_wall_clock_limit() {
    let out = run_with(
        runner(Duration::from_millis(1500)),
        "def f():\n    while True:\n        pass\n",
        "f()",
    );
    assert_eq!(out.status, TestStatus::Timeout, "{out:?}");
    assert!(out.elapsed_ms < 5_000, "took {} ms", out.elapsed_ms);
}

#[test]
fn a_loop_that_ignores_sigterm_is_still_killed() {
    let prog = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ndef f():\n    while True:\n        pass\n";
    let out = run_with(runner(Duration::from_millis(1500)), prog, "f()");
    assert_eq!(out.status, TestStatus::Timeout);
}

#[test]
fn memory_bomb_is_stopped() {
    let prog = "def f():\n    chunks = []\n    while True:\n        chunks.append(bytearray(50 * 1024 * 1024))\n";
    // Touching a GiB of pages takes about a second here, many more on a loaded machine: the
    // wall clock must not win the race.
    let out = run_with(runner(Duration::from_secs(60)), prog, "f()");
    assert_eq!(out.status, TestStatus::MemoryLimit, "{out:?}");
}

#[test]
fn subprocesses_cannot_write_outside_the_work_dir() {
    let repo = env!("CARGO_MANIFEST_DIR");
    let target = format!("{repo}/target/ldb-sandbox-escape-{}", std::process::id());
    let prog = format!(
        "import os, subprocess\ndef f():\n    os.system('echo x > {target}')\n    subprocess.run(['sh', '-c', 'echo x > {target}'])\n    return os.path.exists('{target}')\n"
    );
    let out = run(&prog, "assert f() == False");
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
    assert!(!std::path::Path::new(&target).exists());
}

#[test]
fn a_forked_daemon_does_not_outlive_the_run() {
    // A directory the sandbox user may write to, to see whether the child ever runs on.
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("daemon-was-here");
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .expect("chmod");
    let prog = format!(
        "import os, time\ndef f():\n    if os.fork() == 0:\n        os.setsid()\n        time.sleep(1.0)\n        open({:?}, 'w').write('x')\n        os._exit(0)\n    return 1\n",
        marker.display().to_string()
    );
    let out = run(&prog, "assert f() == 1");
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
    std::thread::sleep(Duration::from_millis(2000));
    assert!(!marker.exists(), "the forked child survived the run");
}

#[test]
fn fork_bomb_is_bounded() {
    let prog = "import os\ndef f():\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n";
    let out = run_with(runner(Duration::from_secs(3)), prog, "f()");
    assert!(
        matches!(
            out.status,
            TestStatus::Timeout | TestStatus::Error | TestStatus::Exited
        ),
        "{out:?}"
    );
    // The machine still works: a normal run right after succeeds.
    assert_eq!(
        run("def g():\n    return 1\n", "assert g() == 1").status,
        TestStatus::Passed
    );
}

#[test]
fn network_connections_fail() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    listener.set_nonblocking(true).expect("nonblocking");
    let prog = format!(
        "import socket\ndef f():\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    return 'connected'\n"
    );
    let out = run(&prog, "assert f() == 'connected'");
    assert_eq!(out.status, TestStatus::Error, "{out:?}");
    assert!(
        listener.accept().is_err(),
        "the sandbox reached the host's loopback"
    );
    let dns = run(
        "import socket\ndef f():\n    return socket.gethostbyname('example.com')\n",
        "f()",
    );
    assert_eq!(dns.status, TestStatus::Error, "{dns:?}");
}

#[test]
fn sys_exit_and_os_exit_are_reported_as_exits() {
    let out = run("import sys\ndef f():\n    sys.exit(3)\n", "assert f() == 1");
    assert_eq!(out.status, TestStatus::Exited);
    assert_eq!(out.exit_code, Some(3));
    let out = run("import os\ndef f():\n    os._exit(0)\n", "assert f() == 1");
    assert_eq!(out.status, TestStatus::Exited, "{out:?}");
    assert_eq!(out.exit_code, Some(0));
}

/// `exit(False)` crashed the harness: the bool reached the protocol as JSON `false`.
#[test]
fn exit_with_a_bool_or_a_huge_number_is_an_exit_not_a_crash() {
    let out = run("def f():\n    exit(False)\n", "f()");
    assert_eq!(out.status, TestStatus::Exited, "{out:?}");
    assert_eq!(out.exit_code, Some(0));
    let out = run("def f():\n    raise SystemExit(True)\n", "f()");
    assert_eq!(out.exit_code, Some(1), "{out:?}");
    let out = run("def f():\n    raise SystemExit(2 ** 70)\n", "f()");
    assert_eq!(out.status, TestStatus::Exited, "{out:?}");
    assert_eq!(out.exit_code, Some(1));
}

#[test]
fn output_flood_is_capped() {
    let prog = "import sys\ndef f():\n    while True:\n        sys.stdout.write('x' * 65536)\n";
    let out = run(prog, "f()");
    assert_eq!(out.status, TestStatus::OutputLimit, "{out:?}");
    assert!(out.stdout.len() <= Limits::default().output_keep_bytes + 200);
}

#[test]
fn the_program_sees_no_secret_from_the_parent_environment() {
    // The secrets are in this process's environment from its start: the test runs itself again
    // with them. Set here, they would reach every test sharing the process (as under
    // `cargo test`), and setting the environment with other threads running is unsound.
    if std::env::var_os("LDB_TEST_SECRET").is_none_or(|v| v != "hunter2") {
        let name = "sandbox::the_program_sees_no_secret_from_the_parent_environment";
        let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args(["--exact", name, "--nocapture"])
            .env("OPENAI_API_KEY", "sk-secret-from-parent")
            .env("LDB_TEST_SECRET", "hunter2")
            .output()
            .expect("run the test with the secrets");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let prog = "import os\ndef f():\n    seen = [k for k, v in os.environ.items() if 'secret' in v or 'hunter2' in v]\n    try:\n        seen.append(open('/proc/%d/environ' % os.getppid()).read()[:20])\n    except OSError:\n        pass\n    return seen\n";
    let out = run(prog, "assert f() == []");
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
}

#[test]
fn the_work_dir_is_empty_at_start_and_gone_afterwards() {
    let prog = "import os\ndef f():\n    open('scratch.txt', 'w').write('x')\n    print(os.getcwd())\n    return sorted(os.listdir('.'))\n";
    let out = run(prog, "assert f() == ['scratch.txt']");
    assert_eq!(out.status, TestStatus::Passed, "{out:?}");
    let cwd = out.stdout.trim();
    assert!(cwd.contains("/ldb-runs-"), "{cwd}");
    assert!(!std::path::Path::new(cwd).exists(), "{cwd} was left behind");
}

#[test]
fn stdin_is_closed_unless_the_test_provides_it() {
    let prog = "import sys\ndef f():\n    return sys.stdin.read()\n";
    let closed = run(prog, "assert f() == ''");
    assert_eq!(closed.status, TestStatus::Passed, "{closed:?}");
    let script = "n = int(input())\nprint(sum(int(x) for x in input().split()[:n]))\n";
    let r = runner(Duration::from_secs(10));
    let ok = r
        .run(
            script,
            &TestInput::Io {
                stdin: "3\n1 2 3\n".into(),
                stdout: "6\n".into(),
            },
            None,
        )
        .expect("run");
    assert_eq!(ok.status, TestStatus::Passed, "{ok:?}");
    let wrong = r
        .run(
            script,
            &TestInput::Io {
                stdin: "2\n1 2 3\n".into(),
                stdout: "6\n".into(),
            },
            None,
        )
        .expect("run");
    assert_eq!(wrong.status, TestStatus::Failed);
    assert_eq!(wrong.actual.as_deref(), Some("3\n"));
}

#[test]
fn a_segfault_is_reported_as_a_crash() {
    let prog = "import ctypes\ndef f():\n    ctypes.string_at(0)\n";
    let out = run(prog, "f()");
    assert_eq!(out.status, TestStatus::Crashed, "{out:?}");
    assert!(out.summary.contains("SIGSEGV"), "{}", out.summary);
}

#[test]
fn every_protection_is_in_force_as_root_and_what_is_missing_is_said_otherwise() {
    let out = run("def f():\n    return 1\n", "assert f() == 1");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    } else {
        // Without root there is no per-run user, so no process budget: the result says so.
        assert!(
            out.warnings.iter().any(|w| w.contains("process limit")),
            "{:?}",
            out.warnings
        );
    }
}

#[test]
fn python_path_dirs_are_importable_and_only_they() {
    // Not under /tmp: the sandbox covers it with an empty scratch mount.
    let site = common::visible_dir("python-path-site");
    std::fs::create_dir_all(site.join("ldb_site_probe")).unwrap();
    std::fs::write(
        site.join("ldb_site_probe/__init__.py"),
        "def answer():\n    return 42\n",
    )
    .unwrap();
    let prog = "import ldb_site_probe\n\ndef f():\n    return ldb_site_probe.answer()\n";
    let dir = ldb::run::sandbox::check_python_path(&site).expect("an allowed directory");
    let with = Runner::new(
        ldb::run::sandbox::Sandbox::new(
            env!("CARGO_BIN_EXE_ldb"),
            Limits::default().with_wall(Duration::from_secs(10)),
        )
        .with_python_path(vec![dir]),
    );
    assert_eq!(
        run_with(with, prog, "assert f() == 42").status,
        TestStatus::Passed
    );
    let without = run(prog, "assert f() == 42");
    assert_eq!(
        without.exception.map(|e| e.kind).as_deref(),
        Some("ModuleNotFoundError")
    );
}

#[test]
fn python_path_under_tmp_is_refused_with_the_reason() {
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    let err = ldb::run::sandbox::check_python_path(tmp.path()).unwrap_err();
    assert!(err.to_string().contains("under /tmp"), "{err}");
    let missing = ldb::run::sandbox::check_python_path(std::path::Path::new("/no/such/dir"));
    assert!(missing.unwrap_err().to_string().contains("not a directory"));
}

#[test]
fn python_path_closed_to_other_users_is_refused_only_when_ldb_runs_as_root() {
    use std::os::unix::fs::PermissionsExt;
    let base = common::visible_dir("python-path-closed");
    let site = base.join("private/site");
    std::fs::create_dir_all(&site).unwrap();
    let private = base.join("private");
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let closed = ldb::run::sandbox::check_python_path(&site);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // As root the program runs as an unprivileged user, who cannot enter `private`.
        let err = closed.unwrap_err();
        assert!(err.to_string().contains("closed to other users"), "{err}");
        assert!(
            err.hint()
                .contains(&format!("chmod o+rx {}", private.display())),
            "{}",
            err.hint()
        );
    } else {
        // Otherwise the program runs as this user, who owns the directory.
        assert!(closed.is_ok(), "{closed:?}");
    }
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(ldb::run::sandbox::check_python_path(&site).is_ok());
}
