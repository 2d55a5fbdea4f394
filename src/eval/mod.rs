//! Benchmark harnesses, one per capability: [`fix`] (`ldb eval`: the fix loop on benchmark
//! tasks, scored on hidden tests), [`check`] (`ldb check eval`: runtime-error prediction scored
//! on labelled programs), [`exec`] (`ldb exec eval`: snippets run with stand-ins, scored on
//! coverage).

pub mod check;
pub mod exec;
pub mod fix;
