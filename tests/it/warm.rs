//! Warm workers: runs are children forked from a worker that started CPython once. They must be
//! as isolated from each other and from the host as fresh worker processes are.

use std::time::Duration;

use ldb::run::sandbox::{Limits, RunOutput, RunSpec, Sandbox, Termination, TestSpec, WorkerStatus};

use crate::common;

fn sandbox(wall: Duration) -> Sandbox {
    Sandbox::new(env!("CARGO_BIN_EXE_ldb"), Limits::default().with_wall(wall))
}

fn spec(program: &str, test: &str) -> RunSpec {
    RunSpec {
        program: program.into(),
        test: TestSpec::Statements {
            source: test.into(),
        },
        stdin: None,
        as_main: false,
        trace: None,
        value_chars: 200,
        strict: false,
        prelude: None,
        module: None,
        project: None,
    }
}

fn status(out: &RunOutput) -> WorkerStatus {
    out.response
        .as_ref()
        .unwrap_or_else(|| panic!("no response: {out:?}"))
        .status
}

#[test]
fn runs_are_children_of_a_warm_worker_and_leave_nothing_to_the_next() {
    let sb = sandbox(Duration::from_secs(10));
    let spoil = "import json, os, sys\n\
        def spoil():\n\
        \x20   json.leak = 1\n\
        \x20   sys.modules['re'].compile = None\n\
        \x20   os.environ['LEAK'] = '1'\n\
        \x20   open('/tmp/leak', 'w').write('x')\n\
        \x20   open(os.path.join(os.environ['HOME'], 'leak'), 'w').write('x')\n\
        \x20   return os.getuid(), os.getpid()\n";
    let first = sb.run(&spec(spoil, "print(spoil())")).expect("first run");
    assert_eq!(status(&first), WorkerStatus::Passed, "{first:?}");
    assert!(first.warm, "the first run was not warm: {first:?}");
    let check = "import json, os, re\n\
        def clean():\n\
        \x20   return (not hasattr(json, 'leak'), re.compile is not None, 'LEAK' not in os.environ,\n\
        \x20           not os.path.exists('/tmp/leak'), os.listdir(os.environ['HOME']),\n\
        \x20           os.getcwd() == os.environ['HOME'] == os.environ['TMPDIR'])\n\
        def ids():\n\
        \x20   return os.getuid(), os.getpid()\n";
    let second = sb
        .run(&spec(
            check,
            "assert clean() == (True, True, True, True, [], True), clean()\nprint(ids())",
        ))
        .expect("second run");
    assert_eq!(status(&second), WorkerStatus::Passed, "{second:?}");
    assert!(second.warm, "{second:?}");
    // Each run is the first child of the init of its own namespace.
    assert!(
        first.stdout.text.trim().ends_with(", 2)"),
        "{:?}",
        first.stdout
    );
    assert!(
        second.stdout.text.trim().ends_with(", 2)"),
        "{:?}",
        second.stdout
    );
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // A uid of its own per run, so no process budget or file is shared.
        assert_ne!(first.stdout.text, second.stdout.text);
    }
}

#[test]
fn warm_and_cold_runs_are_isolated_alike() {
    let program = "import os\ndef f():\n    return os.getcwd()\n";
    let warm = sandbox(Duration::from_secs(10))
        .run(&spec(program, "assert f() == f()"))
        .expect("warm run");
    let cold = sandbox(Duration::from_secs(10))
        .cold()
        .run(&spec(program, "assert f() == f()"))
        .expect("cold run");
    assert!(warm.warm && !cold.warm);
    let (w, c) = (warm.response.unwrap(), cold.response.unwrap());
    assert_eq!(w.status, c.status);
    let flags = |i: &ldb::run::sandbox::Isolation| {
        (
            i.network,
            i.pid_namespace,
            i.unprivileged_user,
            i.process_limit,
            i.read_only_fs,
            i.private_proc,
            i.no_new_privileges,
            i.no_namespaces,
            i.warnings.clone(),
        )
    };
    assert_eq!(flags(&w.isolation), flags(&c.isolation));
}

#[test]
fn a_run_killed_at_the_wall_clock_limit_leaves_the_warm_worker_usable() {
    let sb = sandbox(Duration::from_secs(1));
    let spin = sb
        .run(&spec("def f():\n    while True:\n        pass\n", "f()"))
        .expect("spinning run");
    assert!(spin.warm);
    assert_eq!(spin.termination, Termination::TimedOut, "{spin:?}");
    let next = sb
        .run(&spec("def f():\n    return 2\n", "assert f() == 2"))
        .expect("next run");
    assert!(next.warm);
    assert_eq!(status(&next), WorkerStatus::Passed, "{next:?}");
}

#[test]
fn concurrent_runs_each_get_a_warm_worker_of_their_own() {
    let sb = sandbox(Duration::from_secs(20));
    let outs: Vec<RunOutput> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let sb = sb.clone();
                scope.spawn(move || {
                    let program = format!("def f():\n    return {i}\n");
                    sb.run(&spec(&program, &format!("assert f() == {i}")))
                        .expect("run")
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for out in &outs {
        assert!(out.warm, "{out:?}");
        assert_eq!(status(out), WorkerStatus::Passed, "{out:?}");
    }
}

#[test]
fn scoring_runs_go_warm_and_still_split_the_program_off() {
    let sb = sandbox(Duration::from_secs(10));
    let mut honest = spec("def f(x):\n    return x * 2\n", "assert f(3) == 6");
    honest.strict = true;
    let out = sb.run(&honest).expect("strict run");
    assert!(out.warm);
    assert_eq!(status(&out), WorkerStatus::Passed, "{out:?}");
    // Equal to everything in the program's process, nothing in the checker's.
    let mut forged = spec(
        "class Any:\n    def __eq__(self, other):\n        return True\ndef f(x):\n    return Any()\n",
        "assert f(3) == 6",
    );
    forged.strict = true;
    let out = sb.run(&forged).expect("strict run");
    assert!(out.warm);
    assert_ne!(status(&out), WorkerStatus::Passed, "{out:?}");
}

#[test]
fn ldb_test_gives_the_same_results_with_fresh_workers() {
    let task = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sum_evens/task.json");
    let run = |extra: &[&str]| {
        let out = common::ldb()
            .arg("test")
            .arg(task)
            .args(extra)
            .output()
            .expect("ldb test");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let warm = run(&[]);
    let fresh = run(&["--fresh-workers"]);
    assert!(warm.1.contains("2 of 3 tests passed"), "{warm:?}");
    assert_eq!(warm, fresh);
}

/// Processes whose parent is `pid` (from /proc).
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // The fields after the command name, which is in parentheses and may hold spaces.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) && fields[0] != "Z" {
            out.push(child);
        }
    }
    out
}

/// The start time of `pid` (field 22 of /proc/PID/stat), if it is running and not a zombie:
/// with it, a pid reused by an unrelated process is not taken for the one seen before.
fn started_at(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    if fields.first() == Some(&"Z") {
        return None;
    }
    fields.get(19)?.parse().ok()
}

#[test]
fn the_runs_of_a_killed_ldb_end_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("task.json");
    std::fs::write(
        &task,
        r#"{"task_id": "t", "prompt": "", "entry_point": "f",
            "seed": "import time\ndef f():\n    time.sleep(120)\n    return 1\n",
            "visible_tests": ["assert f() == 1"]}"#,
    )
    .unwrap();
    let mut ldb = common::ldb()
        .args(["test", "--timeout", "120"])
        .arg(&task)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("ldb test");
    // Its warm worker, and the run forked from it.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let (workers, runs) = loop {
        let workers = children_of(ldb.id());
        let runs: Vec<u32> = workers.iter().flat_map(|w| children_of(*w)).collect();
        if !runs.is_empty() {
            break (workers, runs);
        }
        assert!(std::time::Instant::now() < deadline, "no run started");
        std::thread::sleep(Duration::from_millis(50));
    };
    let seen: Vec<(u32, Option<u64>)> = workers
        .iter()
        .chain(&runs)
        .map(|&p| (p, started_at(p)))
        .collect();
    ldb.kill().unwrap();
    ldb.wait().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let alive: Vec<u32> = seen
            .iter()
            .filter(|(p, start)| start.is_some() && started_at(*p) == *start)
            .map(|(p, _)| *p)
            .collect();
        if alive.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still running after ldb was killed: {alive:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
