//! Rendering a sampled trace: labelled steps with their code and the state around them, the way
//! the debugger prompt shows them (and `ldb trace` prints them).

use serde::Serialize;

use super::sample::{self, SampleConfig, Sampled};
use super::units::UnitMap;
use super::{InstanceEnd, Level, Raised, RawTrace, Var};
use crate::python::source::SourceFile;

/// One shown step of the trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStep {
    /// `BLOCK-3`, `LINE-12`, `CALL-0`: what the debugger's verdicts refer to.
    pub label: String,
    pub function: String,
    pub depth: u32,
    pub frame: u64,
    pub lines: Vec<(u32, u32)>,
    /// The unit's source, each line prefixed by its number.
    pub code: String,
    /// Locals on entry; omitted when equal to the previous shown step's `after` in the same call.
    pub before: Option<Vec<Var>>,
    pub after: Option<Vec<Var>>,
    pub end: InstanceEnd,
    pub raised: Option<Raised>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceEntry {
    Step(Box<TraceStep>),
    Omitted { count: u64 },
}

/// A sampled, rendered trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceReport {
    pub level: Level,
    pub entries: Vec<TraceEntry>,
    /// Units executed in the whole run.
    pub total: u64,
    pub shown: usize,
    pub line_events: u64,
    pub deadline_hit: bool,
}

impl TraceReport {
    /// Sample `raw`, then shrink it until the text fits `cfg.token_budget`.
    pub fn build(raw: &RawTrace, units: &UnitMap, src: &SourceFile, cfg: &SampleConfig) -> Self {
        let sampled = sample::sample(raw, cfg);
        let budget = cfg.token_budget;
        let fitted = sample::fit(sampled, raw.total_instances, |items| {
            let report = Self::from_sampled(items, raw, units, src);
            estimate_tokens(&report.to_text()) <= budget
        });
        Self::from_sampled(&fitted, raw, units, src)
    }

    fn from_sampled(items: &[Sampled], raw: &RawTrace, units: &UnitMap, src: &SourceFile) -> Self {
        let prefix = match units.level {
            Level::Line => "LINE",
            Level::Block => "BLOCK",
            Level::Function => "CALL",
        };
        let mut entries = Vec::with_capacity(items.len());
        let mut shown = 0;
        // Last shown `after` per frame, to skip a `before` that repeats it.
        let mut last_after: Vec<(u64, Option<Vec<Var>>)> = Vec::new();
        let mut after_gap = false;
        for item in items {
            match item {
                Sampled::Omitted(count) => {
                    entries.push(TraceEntry::Omitted { count: *count });
                    after_gap = true;
                }
                Sampled::Unit(inst) => {
                    let info = units.get(inst.unit);
                    let lines = info.map(|u| u.lines.clone()).unwrap_or_default();
                    let previous = last_after
                        .iter()
                        .rev()
                        .find(|(f, _)| *f == inst.frame)
                        .and_then(|(_, a)| a.as_ref());
                    let before = match previous {
                        Some(prev) if !after_gap && *prev == inst.before => None,
                        _ => Some(inst.before.clone()),
                    };
                    last_after.push((inst.frame, inst.after.clone()));
                    after_gap = false;
                    entries.push(TraceEntry::Step(Box::new(TraceStep {
                        label: format!("{prefix}-{shown}"),
                        function: inst.function.clone(),
                        depth: inst.depth,
                        frame: inst.frame,
                        code: code_of(src, &lines, inst.line),
                        lines,
                        before,
                        after: inst.after.clone(),
                        end: inst.end.clone(),
                        raised: inst.raised.clone(),
                    })));
                    shown += 1;
                }
            }
        }
        TraceReport {
            level: units.level,
            entries,
            total: raw.total_instances,
            shown,
            line_events: raw.line_events,
            deadline_hit: raw.deadline_hit,
        }
    }

    /// The text form used in prompts and by `ldb trace`.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let unit = match self.level {
            Level::Line => "lines",
            Level::Block => "blocks",
            Level::Function => "calls",
        };
        out.push_str(&format!(
            "Execution trace ({} level): {} {unit} executed, {} shown.\n",
            level_name(self.level),
            self.total,
            self.shown
        ));
        if self.deadline_hit {
            out.push_str(
                "The run was stopped at the time limit; the last steps show where it was.\n",
            );
        }
        for entry in &self.entries {
            match entry {
                TraceEntry::Omitted { count } => {
                    let noun = match (self.level, *count == 1) {
                        (Level::Line, true) => "line",
                        (Level::Line, false) => "lines",
                        (Level::Block, true) => "block",
                        (Level::Block, false) => "blocks",
                        (Level::Function, true) => "call",
                        (Level::Function, false) => "calls",
                    };
                    out.push_str(&format!("... {count} {noun} omitted ...\n"));
                }
                TraceEntry::Step(step) => write_step(&mut out, step),
            }
        }
        out
    }
}

fn write_step(out: &mut String, step: &TraceStep) {
    let depth = if step.depth > 0 {
        format!(" (call depth {})", step.depth)
    } else {
        String::new()
    };
    out.push_str(&format!("[{}] in {}{}\n", step.label, step.function, depth));
    out.push_str(&step.code);
    if let Some(before) = &step.before {
        out.push_str(&format!("  state before: {}\n", vars_text(before)));
    }
    if let Some(raised) = &step.raised {
        out.push_str(&format!(
            "  raised {}: {} (line {})\n",
            raised.kind, raised.message, raised.line
        ));
    }
    match (&step.end, &step.after) {
        (InstanceEnd::Unfinished, _) => out.push_str("  (still running when the run stopped)\n"),
        (end, Some(after)) => {
            out.push_str(&format!("  state after:  {}\n", vars_text(after)));
            match end {
                InstanceEnd::Return { value } => out.push_str(&format!("  returned {value}\n")),
                InstanceEnd::Yield { value } => out.push_str(&format!("  yielded {value}\n")),
                InstanceEnd::Raise => {
                    out.push_str(&format!("  the exception left {}\n", step.function))
                }
                _ => {}
            }
        }
        (_, None) => {}
    }
}

fn vars_text(vars: &[Var]) -> String {
    if vars.is_empty() {
        return "(no variables)".into();
    }
    vars.iter()
        .map(|v| format!("{} = {}", v.name, v.value))
        .collect::<Vec<_>>()
        .join(", ")
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Line => "line",
        Level::Block => "block",
        Level::Function => "function",
    }
}

/// Source of the given line ranges, numbered; falls back to the executed line.
fn code_of(src: &SourceFile, lines: &[(u32, u32)], fallback: u32) -> String {
    let ranges: Vec<(u32, u32)> = if lines.is_empty() {
        vec![(fallback, fallback)]
    } else {
        lines.to_vec()
    };
    let mut out = String::new();
    for (first, last) in ranges {
        for n in first..=last {
            if let Some(text) = src.line(n) {
                out.push_str(&format!("  {n:>4} | {text}\n"));
            }
        }
    }
    out
}

/// A rough token count (about four characters per token for code and values).
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}
