//! Live progress on stderr: a spinner per run on a terminal, plain lines otherwise.

use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};

use crate::repair::progress::{Progress, ProgressEvent};

pub struct StderrProgress {
    bar: Option<ProgressBar>,
    quiet: bool,
    tokens: Mutex<std::collections::HashMap<String, (u64, u64, u64)>>,
}

impl StderrProgress {
    /// `tasks` sizes the bar when many tasks run; `quiet` prints only warnings.
    pub fn new(tasks: usize, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = if tasks > 1 {
                ProgressBar::new(tasks as u64)
            } else {
                ProgressBar::new_spinner()
            };
            let template = if tasks > 1 {
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} tasks  {msg}"
            } else {
                "{spinner} [{elapsed_precise}] {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        });
        StderrProgress {
            bar,
            quiet,
            tokens: Mutex::new(Default::default()),
        }
    }

    fn line(&self, text: String) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Progress for StderrProgress {
    fn event(&self, event: ProgressEvent) {
        if self.quiet {
            if let ProgressEvent::Notice { task_id, message } = event {
                eprintln!("warning: [{task_id}] {message}");
            }
            return;
        }
        match event {
            ProgressEvent::Phase {
                task_id,
                iteration,
                phase,
            } => {
                let text = format!("[{task_id}] iteration {iteration}: {}", phase.label());
                if let Some(bar) = &self.bar {
                    bar.set_message(text);
                }
            }
            ProgressEvent::Tested {
                task_id,
                iteration,
                candidate,
                passed,
                total,
                first_failure,
            } => {
                let tail = first_failure
                    .map(|(status, summary)| {
                        format!(" — first failure: {} {summary}", status.label())
                    })
                    .unwrap_or_default();
                // The search tests several candidates a round: name each, or the lines repeat.
                let at = match candidate {
                    Some(c) => format!("round {iteration}, candidate {c}"),
                    None => format!("iteration {iteration}"),
                };
                self.line(format!(
                    "[{task_id}] {at}: {passed}/{total} visible tests pass{tail}"
                ));
            }
            ProgressEvent::Tokens {
                task_id,
                prompt,
                completion,
                replayed,
            } => {
                if let Ok(mut map) = self.tokens.lock() {
                    let entry = map.entry(task_id.clone()).or_default();
                    entry.0 += prompt;
                    entry.1 += completion;
                    entry.2 += replayed;
                    let (p, c, _) = *entry;
                    if let Some(bar) = &self.bar {
                        bar.set_message(format!(
                            "[{task_id}] tokens so far: {p} prompt + {c} completion"
                        ));
                    }
                }
            }
            ProgressEvent::Notice { task_id, message } => {
                self.line(format!("warning: [{task_id}] {message}"));
            }
            ProgressEvent::Step { task_id, message } => {
                self.line(format!("[{task_id}] {message}"));
            }
            ProgressEvent::Finished {
                task_id,
                status,
                passed,
                total,
                regression,
                regression_passed,
            } => {
                let tokens = self
                    .tokens
                    .lock()
                    .ok()
                    .and_then(|m| m.get(&task_id).copied())
                    .unwrap_or_default();
                // Replies from the response cache cost nothing now; say so, or a rerun's
                // instant finish reads like a miscount.
                let replayed = match tokens.2 {
                    0 => String::new(),
                    r => format!("; {r} of them replayed from the response cache"),
                };
                let given = total - regression;
                let given_passed = passed - regression_passed.min(passed);
                let counted = if regression == 0 {
                    format!("{passed}/{total} visible tests pass")
                } else if given_passed < given {
                    // The regression tests run only once the given ones pass.
                    format!(
                        "{given_passed}/{given} given test{} pass{} (its {regression} \
                         regression test{} run once {} pass{})",
                        if given == 1 { "" } else { "s" },
                        if given == 1 { "es" } else { "" },
                        if regression == 1 { "" } else { "s" },
                        if given == 1 { "it" } else { "they" },
                        if given == 1 { "es" } else { "" },
                    )
                } else {
                    format!(
                        "{passed}/{total} tests pass (the {given} given, and {regression_passed} \
                         of {regression} regression test{} that passed before)",
                        if regression == 1 { "" } else { "s" }
                    )
                };
                self.line(format!(
                    "[{task_id}] {status}: {counted} ({} prompt + {} completion tokens{replayed})",
                    tokens.0, tokens.1
                ));
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                }
            }
        }
    }
}
