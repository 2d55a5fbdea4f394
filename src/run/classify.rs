//! What a test's run came to: the sandbox's output (the worker's response, or how the process
//! ended) turned into a status and a one-line summary.

use std::time::Duration;

use crate::run::sandbox::{RunOutput, Termination, WorkerStatus};
use crate::run::{TestInput, TestOutcome, TestStatus};

/// Turn what the sandbox saw into a status and a one-line summary.
pub(crate) fn classify(test: &TestInput, out: RunOutput) -> TestOutcome {
    let mut outcome = TestOutcome {
        test: test.clone(),
        status: TestStatus::SandboxFailure,
        summary: String::new(),
        exception: None,
        actual: None,
        expected: None,
        exit_code: None,
        stdout: out.stdout.text.clone(),
        stderr: out.stderr.text.clone(),
        elapsed_ms: duration_ms(out.elapsed),
        warnings: Vec::new(),
        trace: None,
    };
    if out.stdout.truncated {
        outcome.stdout.push_str(&format!(
            "\n…[output cut: {} bytes in all]",
            out.stdout.total_bytes
        ));
    }
    outcome.warnings.extend(out.warnings.iter().cloned());
    if !out.workdir_removed {
        outcome
            .warnings
            .push("the run's work directory could not be removed".into());
    }
    match (out.response, out.termination) {
        (_, Termination::TimedOut) => {
            outcome.status = TestStatus::Timeout;
            outcome.summary = format!("killed at the wall-clock limit ({} ms)", outcome.elapsed_ms);
        }
        (_, Termination::OutputFlood) => {
            outcome.status = TestStatus::OutputLimit;
            outcome.summary = "killed: too much output".into();
        }
        (Some(resp), _) => {
            outcome.warnings.extend(resp.isolation.warnings.clone());
            outcome.exception = resp.exception;
            outcome.actual = resp.actual;
            outcome.expected = resp.expected;
            outcome.exit_code = resp.exit_code;
            outcome.trace = resp.trace;
            classify_response(&mut outcome, resp.status, test);
        }
        (None, Termination::Signaled(sig)) => {
            outcome.status = if sig == libc::SIGXCPU {
                TestStatus::Timeout
            } else {
                TestStatus::Crashed
            };
            outcome.summary = match sig {
                libc::SIGXCPU => "killed at the CPU time limit".into(),
                _ => format!("killed by signal {} ({})", sig, signal_name(sig)),
            };
        }
        (None, Termination::Exited(code)) => {
            if code == crate::run::sandbox::worker::WORKER_FAILURE
                && outcome.stderr.contains("ldb worker:")
            {
                outcome.status = TestStatus::SandboxFailure;
                outcome.summary = outcome
                    .stderr
                    .lines()
                    .find(|l| l.contains("ldb worker:"))
                    .unwrap_or("the sandbox worker failed")
                    .to_string();
            } else {
                outcome.status = TestStatus::Exited;
                outcome.exit_code = Some(code as i64);
                outcome.summary = format!(
                    "the process exited with code {code} before the test finished (os._exit?)"
                );
            }
        }
    }
    outcome
}

fn classify_response(outcome: &mut TestOutcome, status: WorkerStatus, test: &TestInput) {
    if let TestInput::Io { stdout, .. } = test {
        // A script that ends with sys.exit(0) finished normally.
        let finished = status == WorkerStatus::Passed
            || (status == WorkerStatus::Exited && outcome.exit_code == Some(0));
        if finished {
            let same = normalize_output(&outcome.stdout) == normalize_output(stdout);
            outcome.status = if same {
                TestStatus::Passed
            } else {
                TestStatus::Failed
            };
            outcome.actual = Some(outcome.stdout.clone());
            outcome.expected = Some(stdout.clone());
            outcome.summary = if same {
                "output matches".into()
            } else {
                format!(
                    "printed {}, expected {}",
                    short(&format!("{:?}", outcome.stdout)),
                    short(&format!("{stdout:?}"))
                )
            };
            return;
        }
    }
    let exc_text = outcome
        .exception
        .as_ref()
        .map(|e| {
            let at = match (e.program_line, e.prelude_line) {
                (Some(l), _) => format!(" (program line {l})"),
                (None, Some(l)) => format!(" (prelude line {l})"),
                (None, None) => String::new(),
            };
            format!("{}: {}{}", e.kind, e.message, at)
        })
        .unwrap_or_default();
    let (status, summary) = match status {
        WorkerStatus::Passed => (TestStatus::Passed, "passed".to_string()),
        WorkerStatus::Failed => match (&outcome.actual, &outcome.expected) {
            // The harness's reason, when a comparison that held was not trusted.
            (Some(a), e) if outcome.exception.is_some() => {
                let why = outcome
                    .exception
                    .as_ref()
                    .map(|x| x.message.as_str())
                    .unwrap_or_default();
                let what = match e {
                    Some(e) => format!("got {a}, expected {e}"),
                    None => format!("the asserted expression was {a}"),
                };
                (TestStatus::Failed, format!("{what}: {why}"))
            }
            (Some(a), Some(e)) => (TestStatus::Failed, format!("got {a}, expected {e}")),
            (Some(a), None) => (
                TestStatus::Failed,
                format!("the asserted expression was {a}"),
            ),
            _ if !exc_text.is_empty() => (TestStatus::Failed, exc_text),
            _ => (TestStatus::Failed, "assertion failed".into()),
        },
        WorkerStatus::Error => {
            let memory = outcome
                .exception
                .as_ref()
                .is_some_and(|e| e.kind == "MemoryError");
            // EAGAIN from fork: the run's process budget is spent.
            let processes = outcome.exception.as_ref().is_some_and(|e| {
                e.kind == "BlockingIOError"
                    && e.message.contains("Resource temporarily unavailable")
            });
            if memory {
                (
                    TestStatus::MemoryLimit,
                    format!("stopped at the memory limit ({exc_text})"),
                )
            } else if processes {
                (
                    TestStatus::Error,
                    format!("the process limit was reached: a fork bomb? ({exc_text})"),
                )
            } else {
                (TestStatus::Error, exc_text)
            }
        }
        WorkerStatus::Exited => (
            TestStatus::Exited,
            format!(
                "the program called sys.exit({}) before the test finished",
                outcome.exit_code.unwrap_or(0)
            ),
        ),
        WorkerStatus::Timeout => (
            TestStatus::Timeout,
            "stopped at the time limit while tracing".into(),
        ),
    };
    outcome.status = status;
    outcome.summary = summary;
}

/// Compare outputs line by line, ignoring trailing spaces and trailing blank lines.
fn normalize_output(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    lines[..end].join("\n")
}

fn short(text: &str) -> String {
    if text.chars().count() > 200 {
        let cut: String = text.chars().take(197).collect();
        format!("{cut}...")
    } else {
        text.to_string()
    }
}

fn duration_ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV, segmentation fault",
        libc::SIGABRT => "SIGABRT, abort",
        libc::SIGKILL => "SIGKILL",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXFSZ => "SIGXFSZ, file size limit",
        _ => "signal",
    }
}
