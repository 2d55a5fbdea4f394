//! `ldb eval` and its subcommands, one per capability's harness ([`crate::eval`]): [`fix`]
//! (the fix loop on benchmark tasks; `merge`), [`check`] (`ldb eval check`), [`exec`]
//! (`ldb eval exec`), [`report`] (`ldb eval report`: tables from finished runs), and the
//! progress lines and bars of a run ([`progress`]).

pub mod check;
pub mod exec;
pub mod fix;
pub mod progress;
pub mod report;
