//! Python source: parsing and control-flow graphs.
//!
//! Pipeline inside this module: [`source`] indexes lines and parses (with `tokens` supplying
//! positions the AST drops), `headers` turns statements into line ranges, `cfg_build` cuts each
//! scope into basic blocks, [`mod@cfg`] holds the result and its queries, `cfg_render` prints it.

pub mod builtins;
pub mod cfg;
mod cfg_build;
mod cfg_render;
pub mod defs;
pub mod edits;
mod headers;
pub mod mutate;
pub mod names;
pub mod normalize;
pub mod self_tests;
pub mod source;
pub mod splice;
pub mod stdlib;
mod stdlib_table;
pub mod text;
mod tokens;
pub mod toplevel;
pub mod unwritten;
pub mod view;
pub mod walk;

pub use cfg::{
    Block, BlockKind, EdgeKind, LineOwner, ProgramCfg, ScopeCfg, ScopeKind, StmtKind, StmtLines,
};
pub use source::{parse_module, SourceFile, SyntaxError};
