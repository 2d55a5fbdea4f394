//! `ldb eval`'s progress on stderr: a bar on a terminal (tasks done, pass@1 and fixed so far per
//! strategy, tokens, ETA), a line per task for logs (`--progress lines`), or nothing.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

pub use crate::cli::args::values::ProgressMode;

use crate::eval::fix::report;
use crate::eval::fix::run::{EvalEvent, EvalProgress, Tally};

/// Progress on stderr: a bar with tasks done, pass@1 and fixed so far per strategy, tokens and
/// ETA; or one line per finished task (`--progress lines`); or nothing.
pub(super) struct EvalBar {
    bar: Option<ProgressBar>,
    /// A line per task (`--progress lines`).
    lines: bool,
    /// One-off lines (resuming, how many runs) are printed: not `--quiet`, not `--progress none`.
    info: bool,
    state: Mutex<BarState>,
}

#[derive(Default)]
struct BarState {
    total: usize,
    finished: usize,
    started: Option<Instant>,
    prompt_tokens: u64,
    completion_tokens: u64,
    tallies: Vec<Tally>,
    seeds_total: usize,
    seeds_done: usize,
}

impl BarState {
    fn stats(&self) -> String {
        let mut parts: Vec<String> = self
            .tallies
            .iter()
            .map(|t| {
                let pct = if t.done == 0 {
                    0.0
                } else {
                    100.0 * t.passed as f64 / t.done as f64
                };
                format!(
                    "{} {}/{} ({pct:.1}%, fixed {})",
                    t.strategy, t.passed, t.done, t.fixed
                )
            })
            .collect();
        parts.push(format!(
            "{} tok",
            compact(self.prompt_tokens + self.completion_tokens)
        ));
        format!("pass@1 {}", parts.join(" · "))
    }

    fn eta(&self) -> String {
        match self.started {
            Some(start) if self.finished > 0 && self.total > self.finished => {
                let per = start.elapsed().as_secs_f64() / self.finished as f64;
                let left = per * (self.total - self.finished) as f64;
                format!(
                    "ETA {}",
                    report::duration((left * 1000.0).min(u64::MAX as f64) as u64)
                )
            }
            _ => String::new(),
        }
    }
}

impl EvalBar {
    pub(super) fn new(quiet: bool, mode: ProgressMode) -> Self {
        let terminal = std::io::stderr().is_terminal();
        let show_bar = !quiet
            && match mode {
                ProgressMode::Auto => terminal,
                ProgressMode::Bar => true,
                ProgressMode::Lines | ProgressMode::None => false,
            };
        let bar = show_bar.then(|| {
            let bar = ProgressBar::new(0);
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} {prefix:.bold} {bar:24} {pos}/{len} [{elapsed_precise}, ETA {eta}] {wide_msg}",
            ) {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(150));
            bar
        });
        EvalBar {
            bar,
            lines: !quiet && mode == ProgressMode::Lines,
            info: !quiet && mode != ProgressMode::None,
            state: Mutex::new(BarState::default()),
        }
    }

    /// A line of progress: above the bar, or alone with `--progress lines`.
    fn line(&self, text: String) {
        if self.bar.is_none() && !self.lines {
            return;
        }
        self.warn(text);
    }

    /// A one-off line about the run (not per task).
    fn info(&self, text: String) {
        if self.info {
            self.warn(text);
        }
    }

    /// Printed even with --quiet.
    fn warn(&self, text: String) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl EvalProgress for EvalBar {
    fn event(&self, event: EvalEvent) {
        let Ok(mut s) = self.state.lock() else { return };
        match event {
            EvalEvent::Notice(text) => self.warn(format!("warning: {text}")),
            EvalEvent::Resumed { file, records } => self.info(format!(
                "resuming {}: {records} tasks already done",
                file.display()
            )),
            EvalEvent::SeedsStarted { total } => {
                s.seeds_total = total;
                s.seeds_done = 0;
                if let Some(bar) = &self.bar {
                    bar.set_prefix("seeds");
                    bar.set_length(total as u64);
                    bar.set_position(0);
                    bar.reset_eta();
                } else {
                    self.info(format!("getting {total} seed programs"));
                }
            }
            EvalEvent::SeedDone {
                task_id,
                visible_pass,
                error,
            } => {
                s.seeds_done += 1;
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                }
                if let Some(e) = error {
                    self.warn(format!("warning: [seed] {task_id}: failed: {e}"));
                } else if self.bar.is_none() {
                    self.line(format!(
                        "[seed {}/{}] {task_id}: {}",
                        s.seeds_done,
                        s.seeds_total,
                        if visible_pass {
                            "passes its visible tests"
                        } else {
                            "fails a visible test"
                        }
                    ));
                }
            }
            EvalEvent::DebugStarted { total, tallies } => {
                s.total = total;
                s.finished = 0;
                s.started = Some(Instant::now());
                s.tallies = tallies;
                let already: usize = s.tallies.iter().map(|t| t.done).sum();
                if let Some(bar) = &self.bar {
                    bar.set_prefix("tasks");
                    bar.set_length(total as u64);
                    bar.set_position(0);
                    bar.reset_eta();
                    bar.set_message(s.stats());
                }
                self.info(format!(
                    "running {total} task × strategy runs ({already} done before)"
                ));
            }
            EvalEvent::Activity {
                task_id,
                strategy,
                text,
            } => {
                if let Some(bar) = &self.bar {
                    bar.set_message(format!("{} | {task_id} {strategy}: {text}", s.stats()));
                }
            }
            EvalEvent::Tokens { prompt, completion } => {
                s.prompt_tokens += prompt;
                s.completion_tokens += completion;
            }
            EvalEvent::TaskDone { record, tallies } => {
                s.finished += 1;
                s.tallies = tallies;
                let mark = |b: bool| if b { "pass" } else { "FAIL" };
                let text = format!(
                    "{} {}: seed {} → final {} (hidden), {} iterations, {} tokens",
                    record.task_id,
                    record.strategy,
                    mark(record.seed_hidden_pass),
                    mark(record.final_hidden_pass),
                    record.iterations,
                    compact(record.tokens.total()),
                );
                if let Some(class) = record.error_class {
                    self.warn(format!(
                        "warning: [{}] {}: {} ({})",
                        record.task_id,
                        record.strategy,
                        record.error.as_deref().unwrap_or("failed"),
                        class.label()
                    ));
                }
                match &self.bar {
                    Some(bar) => {
                        bar.inc(1);
                        bar.set_message(s.stats());
                        bar.println(text);
                    }
                    None => self.line(format!(
                        "[{}/{}] {text} | {} {}",
                        s.finished,
                        s.total,
                        s.stats(),
                        s.eta()
                    )),
                }
            }
        }
    }
}

/// `1234567` → `1.2M`.
fn compact(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}
