//! The recording half of the profiler, run inside the sandbox worker: a native
//! `sys.settrace`-level hook ([`hook`]) feeds a [`recorder::Recorder`], which writes down every
//! executed unit with its variables ([`value`]) into a [`RawTrace`] sent back to the parent.
//! The types here are that wire format; [`crate::trace`] cuts a raw trace into the units a
//! person reads.

pub mod hook;
pub mod recorder;
pub mod value;

use serde::{Deserialize, Serialize};

/// Granularity of a trace: the paper's three debugging levels.
#[derive(
    Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Line,
    #[default]
    Block,
    Function,
}

/// Which hook records the trace. Both feed the same recorder; `Python` exists to measure what the
/// native hook saves.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TracerKind {
    #[default]
    Native,
    Python,
}

/// Sent to the worker: how to cut the run into units and how much to keep.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TraceRequest {
    /// Per traced scope (code object), the unit of each of its lines. Scopes not listed (and
    /// comprehensions, lambdas) are not traced on their own.
    pub scopes: Vec<ScopeUnits>,
    /// Instances kept from the start and from the end of the run; the middle is only counted.
    pub keep_first: usize,
    pub keep_last: usize,
    /// Characters kept per rendered variable value.
    pub value_chars: usize,
    pub tracer: TracerKind,
    /// After this many milliseconds the tracer stops the program itself, so a run that would hit
    /// the wall-clock limit still returns its trace.
    pub deadline_ms: u64,
}

/// The units of one scope: CPython identifies the code object by `co_name` + `co_firstlineno`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScopeUnits {
    pub name: String,
    pub first_line: u32,
    /// Unit id per source line (index = line number); 0 means "not traced". Ids are unique
    /// across scopes.
    pub units: Vec<u32>,
}

/// One variable and its rendered value.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Var {
    pub name: String,
    pub value: String,
}

/// An exception seen while a unit instance ran.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Raised {
    pub kind: String,
    pub message: String,
    pub line: u32,
}

/// How a unit instance was left.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InstanceEnd {
    /// Control moved on to another unit of the same call.
    Next,
    /// The call returned this value.
    Return { value: String },
    /// A generator or coroutine yielded this value (it may be resumed later as a new call).
    Yield { value: String },
    /// An exception left the call.
    Raise,
    /// The run stopped (deadline, exit) while the unit was executing.
    Unfinished,
}

/// One execution of one unit in one call (frame activation).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UnitInstance {
    /// Position in execution order among all instances of the run.
    pub seq: u64,
    /// Frame activation id; recursion and generator resumptions get their own.
    pub frame: u64,
    /// Call depth among program frames (the entry function is 0).
    pub depth: u32,
    pub function: String,
    pub unit: u32,
    /// First line executed in this instance.
    pub line: u32,
    /// Locals when the unit was entered.
    pub before: Vec<Var>,
    /// Locals when it was left (absent if the instance never finished).
    pub after: Option<Vec<Var>>,
    pub end: InstanceEnd,
    pub raised: Option<Raised>,
}

/// What the worker sends back: the kept instances and counts of everything else.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RawTrace {
    /// Kept instances in execution order: the first `keep_first`, then the last `keep_last`.
    pub instances: Vec<UnitInstance>,
    pub total_instances: u64,
    pub line_events: u64,
    /// The tracer's deadline stopped the program.
    pub deadline_hit: bool,
    /// Coverage, as unit ids: units entered at least once, and units left at least once
    /// without an exception (a statement that ends the run through `SystemExit` counts as
    /// finished). A request that keeps no instances (`keep_first` = `keep_last` = 0) records
    /// only these and reads no variables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reached_units: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finished_units: Vec<u32>,
}

impl RawTrace {
    /// Only the last top-level call of the program and what it called: a test that calls the
    /// function several times stopped at the call that failed, so that is the one to show.
    /// Counts shrink to match; coverage is left as it was.
    pub fn keep_last_call(&mut self) {
        let Some(last) = self.instances.iter().rev().find(|i| i.depth == 0) else {
            return;
        };
        let frame = last.frame;
        let Some(start) = self
            .instances
            .iter()
            .filter(|i| i.frame == frame)
            .map(|i| i.seq)
            .min()
        else {
            return;
        };
        if start == 0 {
            return;
        }
        self.instances.retain(|i| i.seq >= start);
        self.total_instances = self.total_instances.saturating_sub(start);
    }
}
