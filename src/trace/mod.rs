//! Tracing: what a program did on one test, cut into executed units (lines, basic blocks or calls).
//!
//! The sandbox worker records a [`RawTrace`] ([`crate::run::tracer`], re-exported here); the
//! profiler maps its units back to source with [`units::UnitMap`], samples the instances
//! ([`sample`]) and renders them the way the debugger prompt shows them ([`render`]).

pub mod render;
pub mod sample;
pub mod units;

pub use crate::run::tracer::{
    InstanceEnd, Level, Raised, RawTrace, ScopeUnits, TraceRequest, TracerKind, UnitInstance, Var,
};
