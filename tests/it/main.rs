//! The integration tests, one module per subject, in one test binary: each binary links the
//! whole crate (and llama.cpp), so one binary instead of one per file is one link per edit.
//! A new subject is a new module here; a file directly under `tests/` would be a binary again.

mod common;

mod answers;
mod bad_input;
mod cfg_snapshots;
mod check;
mod cli_help;
mod e2e_exec_local;
// The embedded model's own API: absent from the build without it.
#[cfg(feature = "local-model")]
mod e2e_local;
#[cfg(feature = "local-model")]
mod e2e_repair;
mod eval_builtin;
mod eval_crash;
mod eval_datasets;
mod eval_humaneval_check;
mod eval_no_hidden;
mod eval_published;
mod eval_rescore;
mod eval_resume;
mod eval_shard;
mod exec;
mod exec_standins;
mod extract;
mod file_task;
mod fix_loop;
mod fuzz;
mod hardening;
mod hostile;
mod hostile_loop;
mod import_cycles;
mod model_client;
mod model_download;
mod prompts;
mod pytest_errors;
mod pytest_project;
mod readme;
mod repair;
mod report_html;
mod sandbox;
mod search;
mod serve;
mod shell_project;
mod strategies;
mod task_loading;
mod trace_snapshots;
#[cfg(feature = "local-model")]
mod verdict_grammar;
mod verdicts;
mod warm;
