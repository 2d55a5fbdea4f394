//! ldb: debug LLM-written Python the way a person does.
//!
//! Data flows one way, and the tree follows it: [`task`] (task files and benchmark formats) →
//! [`generate`] (the model behind one trait: OpenAI-compatible endpoints and the embedded
//! llama.cpp models, prompts, reading replies) → [`run`] (untrusted code in a separate, isolated
//! process; tests → classified outcomes; scoring out of the program's reach) → [`trace`] (the
//! profiler: what a program did, cut into lines, blocks or calls) → [`locate`] (fault
//! localisation from execution) → [`repair`] (the fix loop: seeds, strategies, the debugger's
//! verdicts, the repair search and its choice) → [`report`] (the record of a fix, as pages).
//! Under the pipeline sit [`files`] (safe reads and writes of the user's files) and [`python`]
//! (source, parsing, control-flow graphs, edits, names). Over it sit [`load`] (a user's
//! program and tests made into a task, pytest collecting them in the sandbox), the two other
//! capabilities, [`check`] (runtime-error prediction) and [`exec`] (running snippets with
//! stand-ins), the benchmark harnesses of all three in [`eval`], the OpenAI-compatible
//! [`serve`], and [`cli`].
//!
//! Every import runs down this list: a module names only modules below it, never one above, and
//! sibling modules never form a loop (`tests/it/import_cycles.rs`; the picture is
//! `docs/architecture/imports.svg`, drawn by `scripts/import_graph.py`).
//!
//! The embedded model's backend (`generate::local::llama`, llama.cpp) is the cargo feature
//! `local-model`, on by default; without it the crate builds with no C++ toolchain and talks to
//! endpoints only.

// Library and binary code returns errors instead of panicking; only tests may unwrap.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// Under the pipeline.
pub mod files;
pub mod python;

// The pipeline, in the order data flows (one group each, so the order stays).
pub mod task;

pub mod generate;

pub mod run;

pub mod trace;

pub mod locate;

pub mod repair;

pub mod report;

// Built on it.
pub mod check;
pub mod exec;
pub mod load;

pub mod eval;

// The command line and the server are public only so that the `ldb` binary and the integration
// tests can reach them; they are not the library's API.
#[doc(hidden)]
pub mod serve;

#[doc(hidden)]
pub mod cli;
