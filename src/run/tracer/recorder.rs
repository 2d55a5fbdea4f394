//! The recorder: turns a stream of call/line/return/exception events into unit instances.
//!
//! A unit boundary is a line event whose unit differs from the frame's current one. Only there
//! are locals read, so the per-line cost is a few comparisons. Memory is bounded: the first
//! `keep_first` instances are kept, then a ring of the last `keep_last`; the rest are counted.
//! Values of immutable built-in types are kept as references and rendered once at the end;
//! anything mutable is rendered at the boundary, since it may change afterwards.

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::time::Instant;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyComplex, PyDict, PyFloat, PyInt, PyString};

use super::{value, InstanceEnd, Raised, RawTrace, ScopeUnits, TraceRequest, UnitInstance, Var};

/// `CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR`.
const SUSPENDING_CODE: u32 = 0x20 | 0x80 | 0x200;

/// How often (in line events) the deadline clock is read.
const DEADLINE_CHECK_EVERY: u64 = 1024;

enum Held {
    /// An immutable value, rendered at the end.
    Lazy(Py<PyAny>),
    Text(String),
}

struct Snapshot {
    vars: Vec<(Py<PyString>, Held)>,
}

struct Pending {
    seq: u64,
    frame: u64,
    depth: u32,
    function: Rc<str>,
    unit: u32,
    line: u32,
    before: Rc<Snapshot>,
    after: Option<Rc<Snapshot>>,
    end: InstanceEnd,
    raised: Option<Raised>,
}

struct FrameState {
    frame: usize,
    id: u64,
    scope: usize,
    function: Rc<str>,
    is_module: bool,
    suspends: bool,
    unit: u32,
    open: Option<u64>,
    /// The current unit raised (an exception passed through this frame) since it was entered.
    raised: bool,
}

/// What the recorder knows about a code object: `None` when it is not a traced scope.
#[derive(Clone)]
struct CodeInfo {
    scope: usize,
    /// Generators and coroutines: their "return" events are often yields.
    suspends: bool,
    function: Rc<str>,
    is_module: bool,
}
type CodeEntry = Option<CodeInfo>;

pub struct Recorder {
    scopes: Vec<ScopeUnits>,
    scope_index: HashMap<(String, u32), usize>,
    keep_first: usize,
    keep_last: usize,
    value_chars: usize,
    program_filename: String,
    first: Vec<Pending>,
    last: VecDeque<Pending>,
    next_seq: u64,
    next_frame: u64,
    stack: Vec<FrameState>,
    line_events: u64,
    deadline: Option<Instant>,
    deadline_hit: bool,
    /// CPython's `YIELD_VALUE` opcode number, looked up once.
    yield_opcode: Option<u8>,
    codes: HashMap<usize, CodeEntry>,
    /// Strong references to every code object in `codes`, so a freed code object's address can
    /// never be reused by another one while the cache holds it.
    keepalive: Vec<Py<PyAny>>,
    /// Coverage by unit id: entered at least once / left at least once without raising.
    reached: Vec<bool>,
    finished: Vec<bool>,
    /// Instances are recorded at all (a request keeping none only measures coverage, and then
    /// no locals are read).
    records_instances: bool,
}

/// Outcome of a line event for the hook: keep going, or stop the program (deadline reached).
pub enum LineVerdict {
    Continue,
    Deadline,
}

impl Recorder {
    pub fn new(
        py: Python<'_>,
        req: &TraceRequest,
        program_filename: &str,
        started: Instant,
    ) -> Self {
        let yield_opcode = py
            .import("opcode")
            .and_then(|m| m.getattr("opmap"))
            .and_then(|m| m.get_item("YIELD_VALUE"))
            .and_then(|v| v.extract::<u8>())
            .ok();
        let deadline = (req.deadline_ms > 0)
            .then(|| started + std::time::Duration::from_millis(req.deadline_ms));
        let scope_index = req
            .scopes
            .iter()
            .enumerate()
            .map(|(i, s)| ((s.name.clone(), s.first_line), i))
            .collect();
        let units = req
            .scopes
            .iter()
            .flat_map(|s| s.units.iter().copied())
            .max()
            .map_or(0, |m| m as usize + 1);
        Recorder {
            reached: vec![false; units],
            finished: vec![false; units],
            records_instances: req.keep_first > 0 || req.keep_last > 0,
            scopes: req.scopes.clone(),
            scope_index,
            keep_first: req.keep_first,
            keep_last: req.keep_last.max(1),
            value_chars: req.value_chars.max(8),
            program_filename: program_filename.to_string(),
            first: Vec::new(),
            last: VecDeque::new(),
            next_seq: 0,
            next_frame: 0,
            stack: Vec::new(),
            line_events: 0,
            deadline,
            deadline_hit: false,
            yield_opcode,
            codes: HashMap::new(),
            keepalive: Vec::new(),
        }
    }

    /// Classify a code object once: a traced scope of the program, found by file name, `co_name`
    /// and `co_firstlineno` (comprehensions and lambdas are not scopes: their lines belong to the
    /// enclosing statement).
    fn code_entry(&mut self, code: &Bound<'_, PyAny>) -> CodeEntry {
        let key = code.as_ptr() as usize;
        if let Some(entry) = self.codes.get(&key) {
            return entry.clone();
        }
        let attr_str = |name: &str| -> String {
            code.getattr(name)
                .and_then(|f| f.extract())
                .unwrap_or_default()
        };
        let entry = if attr_str("co_filename") == self.program_filename {
            let name = attr_str("co_name");
            let first_line: u32 = code
                .getattr("co_firstlineno")
                .and_then(|f| f.extract())
                .unwrap_or(0);
            let is_module = name == "<module>";
            let scope = if is_module {
                self.scope_index
                    .iter()
                    .find(|((n, _), _)| n == "<module>")
                    .map(|(_, &i)| i)
            } else {
                self.scope_index.get(&(name.clone(), first_line)).copied()
            };
            let flags: u32 = code
                .getattr("co_flags")
                .and_then(|f| f.extract())
                .unwrap_or(0);
            scope.map(|scope| {
                let qualname = code
                    .getattr("co_qualname")
                    .and_then(|f| f.extract::<String>())
                    .unwrap_or(name);
                CodeInfo {
                    scope,
                    suspends: flags & SUSPENDING_CODE != 0,
                    function: Rc::from(qualname.as_str()),
                    is_module,
                }
            })
        } else {
            None
        };
        self.codes.insert(key, entry.clone());
        self.keepalive.push(code.clone().unbind());
        entry
    }

    /// # Safety
    /// `frame` (and any object pointer) must be live objects passed by CPython's trace
    /// machinery, and the GIL must be held.
    pub unsafe fn on_call(&mut self, py: Python<'_>, frame: *mut ffi::PyFrameObject) {
        // SAFETY: `frame` is the live frame CPython passed to the hook; GetCode returns a new ref.
        let code = unsafe {
            let raw = ffi::PyFrame_GetCode(frame);
            if raw.is_null() {
                ffi::PyErr_Clear();
                return;
            }
            Bound::from_owned_ptr(py, raw.cast::<ffi::PyObject>())
        };
        if let Some(info) = self.code_entry(&code) {
            self.stack.push(FrameState {
                frame: frame as usize,
                id: self.next_frame,
                scope: info.scope,
                suspends: info.suspends,
                function: info.function,
                is_module: info.is_module,
                unit: 0,
                open: None,
                raised: false,
            });
            self.next_frame += 1;
        }
    }

    /// # Safety
    /// `frame` (and any object pointer) must be live objects passed by CPython's trace
    /// machinery, and the GIL must be held.
    pub unsafe fn on_line(
        &mut self,
        py: Python<'_>,
        frame: *mut ffi::PyFrameObject,
    ) -> LineVerdict {
        let Some(top) = self.stack.last() else {
            return LineVerdict::Continue;
        };
        if top.frame != frame as usize {
            return LineVerdict::Continue;
        }
        // Only program lines count and only they are stopped: the harness must still be able
        // to report after the deadline.
        self.line_events += 1;
        if self.line_events.is_multiple_of(DEADLINE_CHECK_EVERY) || self.deadline_hit {
            if let Some(deadline) = self.deadline {
                if self.deadline_hit || Instant::now() >= deadline {
                    self.deadline_hit = true;
                    return LineVerdict::Deadline;
                }
            }
        }
        // SAFETY: live frame from CPython.
        let line = unsafe { ffi::PyFrame_GetLineNumber(frame) };
        let unit = usize::try_from(line)
            .ok()
            .and_then(|l| self.scopes.get(top.scope)?.units.get(l).copied())
            .unwrap_or(0);
        if unit == 0 || unit == top.unit {
            return LineVerdict::Continue;
        }
        let (left, raised) = (top.unit, top.raised);
        self.mark(left, unit, raised);
        if !self.records_instances {
            if let Some(top) = self.stack.last_mut() {
                top.unit = unit;
                top.raised = false;
            }
            return LineVerdict::Continue;
        }
        let Some(top) = self.stack.last() else {
            return LineVerdict::Continue;
        };
        let snap = Rc::new(self.snapshot(py, frame, top.is_module));
        let depth = (self.stack.len() - 1) as u32;
        let Some(top) = self.stack.last_mut() else {
            return LineVerdict::Continue;
        };
        let previous = top.open.take();
        let seq = self.next_seq;
        self.next_seq += 1;
        top.unit = unit;
        top.raised = false;
        top.open = Some(seq);
        let pending = Pending {
            seq,
            frame: top.id,
            depth,
            function: top.function.clone(),
            unit,
            line: line.max(0) as u32,
            before: snap.clone(),
            after: None,
            end: InstanceEnd::Unfinished,
            raised: None,
        };
        if let Some(prev) = previous {
            if let Some(p) = self.pending_mut(prev) {
                p.after = Some(snap);
                p.end = InstanceEnd::Next;
            }
        }
        self.push(pending);
        LineVerdict::Continue
    }

    /// `value` is the returned object, or null when an exception leaves the frame.
    /// # Safety
    /// `frame` (and any object pointer) must be live objects passed by CPython's trace
    /// machinery, and the GIL must be held.
    pub unsafe fn on_return(
        &mut self,
        py: Python<'_>,
        frame: *mut ffi::PyFrameObject,
        value: *mut ffi::PyObject,
    ) {
        let Some(top) = self.stack.last() else {
            return;
        };
        if top.frame != frame as usize {
            return;
        }
        if !value.is_null() && !top.raised {
            let unit = top.unit;
            self.mark(unit, 0, false);
        }
        let Some(top) = self.stack.last() else {
            return;
        };
        if let Some(open) = top.open {
            let snap = Rc::new(self.snapshot(py, frame, top.is_module));
            let end = if value.is_null() {
                InstanceEnd::Raise
            } else {
                // SAFETY: CPython passes a borrowed reference to the returned value.
                let v = unsafe { Bound::from_borrowed_ptr(py, value) };
                let value = value::render(&v, self.value_chars);
                if top.suspends && self.at_yield(py, frame) {
                    InstanceEnd::Yield { value }
                } else {
                    InstanceEnd::Return { value }
                }
            };
            if let Some(p) = self.pending_mut(open) {
                p.after = Some(snap);
                p.end = end;
            }
        }
        self.stack.pop();
    }

    /// `info` is CPython's `(type, value, traceback)` tuple.
    /// # Safety
    /// `frame` (and any object pointer) must be live objects passed by CPython's trace
    /// machinery, and the GIL must be held.
    pub unsafe fn on_exception(
        &mut self,
        py: Python<'_>,
        frame: *mut ffi::PyFrameObject,
        info: *mut ffi::PyObject,
    ) {
        let Some(top) = self.stack.last() else {
            return;
        };
        if top.frame != frame as usize || info.is_null() {
            return;
        }
        // SAFETY: borrowed tuple from CPython, live for the duration of the call.
        let info = unsafe { Bound::from_borrowed_ptr(py, info) };
        let kind = info
            .get_item(0)
            .and_then(|t| t.getattr("__name__"))
            .and_then(|n| n.extract::<String>())
            .unwrap_or_else(|_| "Exception".into());
        // Ending the run is what `exit()` is for: the statement counts as finished.
        if kind == "SystemExit" {
            let unit = top.unit;
            self.mark(unit, 0, false);
        } else if let Some(top) = self.stack.last_mut() {
            top.raised = true;
        }
        let Some(open) = self.stack.last().and_then(|t| t.open) else {
            return;
        };
        let message = info
            .get_item(1)
            .and_then(|v| v.str())
            .map(|s| s.to_string())
            .unwrap_or_default();
        let message: String = message.chars().take(self.value_chars * 2).collect();
        // SAFETY: live frame.
        let line = unsafe { ffi::PyFrame_GetLineNumber(frame) }.max(0) as u32;
        if let Some(p) = self.pending_mut(open) {
            p.raised = Some(Raised {
                kind,
                message,
                line,
            });
        }
    }

    /// Whether a suspending frame is stopped at a `yield` (rather than returning for good).
    fn at_yield(&self, py: Python<'_>, frame: *mut ffi::PyFrameObject) -> bool {
        let Some(opcode) = self.yield_opcode else {
            return false;
        };
        // SAFETY: live frame passed by CPython; borrowed for this call only.
        let frame = unsafe { Bound::from_borrowed_ptr(py, frame.cast::<ffi::PyObject>()) };
        let lasti = frame.getattr("f_lasti").and_then(|v| v.extract::<usize>());
        let code = frame
            .getattr("f_code")
            .and_then(|c| c.getattr("co_code"))
            .and_then(|c| c.extract::<Vec<u8>>());
        match (lasti, code) {
            (Ok(i), Ok(code)) => code.get(i) == Some(&opcode),
            _ => false,
        }
    }

    fn snapshot(&self, py: Python<'_>, frame: *mut ffi::PyFrameObject, module: bool) -> Snapshot {
        // SAFETY: live frame; GetLocals returns a new reference (a dict for function frames).
        let locals = unsafe {
            let raw = ffi::PyFrame_GetLocals(frame);
            if raw.is_null() {
                ffi::PyErr_Clear();
                return Snapshot { vars: Vec::new() };
            }
            Bound::from_owned_ptr(py, raw)
        };
        let Ok(dict) = locals.cast::<PyDict>() else {
            return Snapshot { vars: Vec::new() };
        };
        let mut vars = Vec::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            let Ok(name) = k.cast_into::<PyString>() else {
                continue;
            };
            // Immutable built-ins are the common case in loops: keep a reference, render later.
            let held = if is_immutable(&v) {
                Held::Lazy(v.unbind())
            } else if is_noise(&v) {
                continue;
            } else {
                Held::Text(value::render(&v, self.value_chars))
            };
            if module && is_dunder(&name) {
                continue;
            }
            vars.push((name.unbind(), held));
        }
        Snapshot { vars }
    }

    /// Coverage: unit `left` was left (finished unless it `raised`), unit `entered` was entered;
    /// 0 means none.
    fn mark(&mut self, left: u32, entered: u32, raised: bool) {
        if !raised {
            if let Some(slot) = self.finished.get_mut(left as usize).filter(|_| left != 0) {
                *slot = true;
            }
        }
        if let Some(slot) = self
            .reached
            .get_mut(entered as usize)
            .filter(|_| entered != 0)
        {
            *slot = true;
        }
    }

    fn push(&mut self, pending: Pending) {
        if (pending.seq as usize) < self.keep_first {
            self.first.push(pending);
        } else {
            if self.last.len() == self.keep_last {
                self.last.pop_front();
            }
            self.last.push_back(pending);
        }
    }

    fn pending_mut(&mut self, seq: u64) -> Option<&mut Pending> {
        if (seq as usize) < self.keep_first {
            return self.first.get_mut(seq as usize);
        }
        let front = self.last.front()?.seq;
        let index = seq.checked_sub(front)?;
        self.last.get_mut(index as usize)
    }

    pub fn deadline_hit(&self) -> bool {
        self.deadline_hit
    }

    /// Render everything kept. Call with tracing switched off.
    pub fn finish(self, py: Python<'_>) -> RawTrace {
        let chars = self.value_chars;
        let render_snapshot = |snap: &Snapshot| -> Vec<Var> {
            snap.vars
                .iter()
                .map(|(name, held)| Var {
                    name: name.bind(py).to_string(),
                    value: match held {
                        Held::Lazy(obj) => value::render(obj.bind(py), chars),
                        Held::Text(text) => text.clone(),
                    },
                })
                .collect()
        };
        let instances = self
            .first
            .iter()
            .chain(self.last.iter())
            .map(|p| UnitInstance {
                seq: p.seq,
                frame: p.frame,
                depth: p.depth,
                function: p.function.to_string(),
                unit: p.unit,
                line: p.line,
                before: render_snapshot(&p.before),
                after: p.after.as_deref().map(render_snapshot),
                end: p.end.clone(),
                raised: p.raised.clone(),
            })
            .collect();
        let ids = |flags: &[bool]| -> Vec<u32> {
            flags
                .iter()
                .enumerate()
                .filter(|(_, &f)| f)
                .map(|(i, _)| i as u32)
                .collect()
        };
        RawTrace {
            instances,
            reached_units: ids(&self.reached),
            finished_units: ids(&self.finished),
            total_instances: self.next_seq,
            line_events: self.line_events,
            deadline_hit: self.deadline_hit,
        }
    }
}

fn is_immutable(v: &Bound<'_, PyAny>) -> bool {
    v.is_none()
        || v.is_exact_instance_of::<PyInt>()
        || v.is_exact_instance_of::<PyBool>()
        || v.is_exact_instance_of::<PyFloat>()
        || v.is_exact_instance_of::<PyString>()
        || v.is_exact_instance_of::<PyBytes>()
        || v.is_exact_instance_of::<PyComplex>()
}

/// Functions, classes and modules in scope say nothing about the program's state.
fn is_noise(v: &Bound<'_, PyAny>) -> bool {
    let ptr = v.as_ptr();
    // SAFETY: type checks on a live object.
    unsafe {
        ffi::PyFunction_Check(ptr) != 0
            || ffi::PyType_Check(ptr) != 0
            || ffi::PyModule_Check(ptr) != 0
            || ffi::PyCFunction_Check(ptr) != 0
    }
}

fn is_dunder(name: &Bound<'_, PyString>) -> bool {
    name.to_str()
        .map(|n| n.starts_with("__") && n.ends_with("__"))
        .unwrap_or(false)
}
