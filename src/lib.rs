//! ldb: debug LLM-written Python the way a person does.
//!
//! Data flows one way: task → generator → runner → profiler → debugger → regenerator → report.
//! This crate holds every stage; the `ldb` binary is a thin command-line front over it.

pub mod agent;
pub mod check;
pub mod cli;
pub mod debugger;
pub mod eval;
pub mod exec;
pub mod http;
pub mod local;
pub mod model;
pub mod prompts;
pub mod python;
pub mod runner;
pub mod sandbox;
pub mod serve;
pub mod task;
pub mod trace;
