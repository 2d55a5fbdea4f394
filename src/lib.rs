//! ldb: debug LLM-written Python the way a person does.
//!
//! Data flows one way: task → generator → runner → profiler → debugger → regenerator → report.
//! This crate holds every stage; the `ldb` binary is a thin command-line front over it.
//!
//! The modules, in the order of that flow: [`task`] (task files and benchmark formats),
//! [`python`] (source, parsing, control-flow graphs), [`model`] and [`local`]
//! (the chat model behind one trait: OpenAI-compatible endpoints over [`http`], and the embedded
//! llama.cpp models), [`sandbox`] and [`runner`] (untrusted code in a separate, isolated process;
//! tests → classified outcomes; scoring out of the program's reach), [`trace`] (the profiler:
//! units, the native hook, sampling, rendering), [`reply`] (reading
//! a model's reply: the program in it, JSON in prose, the debugger's verdicts), [`agent`] (the fix loop,
//! its strategies and the repair search, and the report), then the tools built on them:
//! [`eval`], [`check`], [`exec`], [`serve`], and [`cli`]. Every import runs down this list or
//! within a module; `tests/it/import_cycles.rs` keeps sibling modules free of loops.
//!
//! The embedded model's backend (`local::llama`, llama.cpp) is the cargo feature `local-model`, on
//! by default; without it the crate builds with no C++ toolchain and talks to endpoints only.

// Library and binary code returns errors instead of panicking; only tests may unwrap.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod agent;
pub mod check;
// The command line, the server and the scripted test model are public only so that the `ldb`
// binary and the integration tests can reach them; they are not the library's API.
#[doc(hidden)]
pub mod cli;
pub mod eval;
pub mod exec;
pub mod files;
pub mod http;
pub mod local;
pub mod locate;
pub mod model;
pub mod prompts;
pub mod python;
pub mod reply;
pub mod runner;
pub mod sandbox;
#[doc(hidden)]
pub mod serve;
pub mod task;
pub mod trace;
