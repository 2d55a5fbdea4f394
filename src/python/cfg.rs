//! Control-flow graphs of a Python program: the data model and its queries.
//!
//! A [`ProgramCfg`] holds one [`ScopeCfg`] per code object CPython would create for the module,
//! each class body and each function (lambdas and comprehensions stay inside their statement).
//! Each scope is a petgraph [`DiGraph`] of basic [`Block`]s whose statements carry full line
//! ranges, so a tracer can map every line event to the block that owns it
//! ([`ProgramCfg::line_owners`]). Construction lives in `cfg_build`, text/DOT output in
//! `cfg_render`.

use std::fmt;

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use serde::Serialize;

/// All scopes of one program.
#[derive(Debug, Clone, Serialize)]
pub struct ProgramCfg {
    /// `scopes[0]` is the module; then every class and function, nested too, in source order.
    pub scopes: Vec<ScopeCfg>,
    /// Lines in the source ([`crate::python::text::SourceFile::line_count`]); sizes [`ProgramCfg::line_owners`].
    pub line_count: u32,
}

/// What kind of code object a scope is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScopeKind {
    Module,
    Function,
    AsyncFunction,
    Class,
}

impl fmt::Display for ScopeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ScopeKind::Module => "module",
            ScopeKind::Function => "function",
            ScopeKind::AsyncFunction => "async function",
            ScopeKind::Class => "class",
        })
    }
}

/// The control-flow graph of one scope.
#[derive(Debug, Clone)]
pub struct ScopeCfg {
    /// `<module>` for the module, else the def/class name (CPython's `co_name`).
    pub name: String,
    /// Python's `__qualname__`, e.g. `outer.<locals>.inner` or `Cls.method`.
    pub qualname: String,
    pub kind: ScopeKind,
    pub parent: Option<usize>,
    /// Header lines: first decorator through the end of the signature; module: `(1, 1)`.
    pub def_lines: (u32, u32),
    /// Node index `i` holds the block numbered `i`; the exit is the last node.
    pub graph: DiGraph<Block, EdgeKind>,
    /// The first code block (the exit itself when the scope has no statements).
    pub entry: NodeIndex,
    pub exit: NodeIndex,
}

/// A basic block: a maximal straight-line run of statements, or the scope's exit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Block {
    /// Display id within the scope: 0 is the first code block, the exit comes last.
    pub number: usize,
    pub kind: BlockKind,
    /// Empty only for the exit.
    pub stmts: Vec<StmtLines>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlockKind {
    Code,
    Exit,
}

/// One statement of a block with its full line range (inclusive).
///
/// For compound statements only the header is in the block (`if cond:`, `for x in xs:`,
/// `except E as e:`, `case p if g:`, decorators + `def ...:`); their bodies are other blocks
/// (or, for `def`/`class`, another scope).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StmtLines {
    pub first: u32,
    pub last: u32,
    pub kind: StmtKind,
}

/// Statement kinds, as far as control flow cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StmtKind {
    /// Any statement without its own control flow (assignments, calls, imports, assert, ...).
    Simple,
    If,
    Elif,
    /// `while` header (the test).
    While,
    /// `for` / `async for` header (target and iterable).
    For,
    /// `with` / `async with` header (all items).
    With,
    /// The `try:` line (CPython reports a line event for it).
    Try,
    /// An `except ...:` / `except* ...:` header.
    Handler,
    /// `match` subject.
    Match,
    /// `case` pattern and guard.
    Case,
    /// `def` / `async def` header, decorators included.
    Def,
    /// `class` header, decorators included.
    Class,
    Return,
    Raise,
    Break,
    Continue,
}

impl fmt::Display for StmtKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StmtKind::Simple => "simple",
            StmtKind::If => "if",
            StmtKind::Elif => "elif",
            StmtKind::While => "while",
            StmtKind::For => "for",
            StmtKind::With => "with",
            StmtKind::Try => "try",
            StmtKind::Handler => "except",
            StmtKind::Match => "match",
            StmtKind::Case => "case",
            StmtKind::Def => "def",
            StmtKind::Class => "class",
            StmtKind::Return => "return",
            StmtKind::Raise => "raise",
            StmtKind::Break => "break",
            StmtKind::Continue => "continue",
        })
    }
}

/// Why control moves along an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EdgeKind {
    /// Fall-through to the following block.
    Next,
    /// Condition held / pattern matched / loop has another item.
    True,
    /// Condition failed / pattern did not match / loop exhausted.
    False,
    /// Back to a loop header: end of an iteration, or `continue`.
    LoopBack,
    /// `break` to the code after the loop (its `else` is skipped).
    Break,
    /// An exception raised in a `try` region, to a handler or `finally`.
    Exception,
    /// `return` (to the exit, or first through an enclosing `finally`).
    Return,
    /// `raise`, or re-raise at the end of a `finally`, leaving the scope.
    Raise,
}

impl fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EdgeKind::Next => "next",
            EdgeKind::True => "true",
            EdgeKind::False => "false",
            EdgeKind::LoopBack => "loop-back",
            EdgeKind::Break => "break",
            EdgeKind::Exception => "exception",
            EdgeKind::Return => "return",
            EdgeKind::Raise => "raise",
        })
    }
}

/// Where a source line belongs: scope, block number and statement index in that block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct LineOwner {
    pub scope: usize,
    pub block: usize,
    pub stmt: usize,
}

impl ProgramCfg {
    /// Owner of every line, indexed by line number (index 0 unused; `len == line_count + 1`).
    ///
    /// Lines that are no statement (blank, comments, `else:`, `finally:`) have no owner. When
    /// several statements share a line (`if x: y()`, `a = 1; b = 2`, `def f(): return 1`), the
    /// first one in scope/block/statement order owns it; use [`ProgramCfg::scope_line_owner`]
    /// when the frame's scope is known.
    pub fn line_owners(&self) -> Vec<Option<LineOwner>> {
        let len = self.line_count.saturating_add(1);
        let mut owners = vec![None; usize::try_from(len).unwrap_or(0)];
        for (scope_idx, scope) in self.scopes.iter().enumerate() {
            for_each_stmt_line(scope, |line, owner| {
                let slot = usize::try_from(line).ok().and_then(|l| owners.get_mut(l));
                if let Some(slot @ None) = slot {
                    *slot = Some(LineOwner {
                        scope: scope_idx,
                        ..owner
                    });
                }
            });
        }
        owners
    }

    /// Owner of `line` among the statements of `scope` only (for a tracer that knows the frame).
    pub fn scope_line_owner(&self, scope: usize, line: u32) -> Option<LineOwner> {
        let cfg = self.scopes.get(scope)?;
        let mut found = None;
        for_each_stmt_line(cfg, |l, owner| {
            if l == line && found.is_none() {
                found = Some(LineOwner { scope, ..owner });
            }
        });
        found
    }

    /// Line ranges of a block's statements, sorted and merged when they touch or overlap.
    pub fn block_lines(&self, scope: usize, block: usize) -> Vec<(u32, u32)> {
        let Some(b) = self.scopes.get(scope).and_then(|s| s.block(block)) else {
            return Vec::new();
        };
        let mut ranges: Vec<(u32, u32)> = b.stmts.iter().map(|s| (s.first, s.last)).collect();
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (first, last) in ranges {
            match merged.last_mut() {
                Some(prev) if first <= prev.1.saturating_add(1) => prev.1 = prev.1.max(last),
                _ => merged.push((first, last)),
            }
        }
        merged
    }

    /// The scope of a code object, found by CPython's `co_name` and `co_firstlineno`.
    pub fn find_scope(&self, name: &str, first_line: u32) -> Option<usize> {
        self.scopes
            .iter()
            .position(|s| s.name == name && s.def_lines.0 == first_line)
    }
}

/// Calls `f(line, owner)` for every line of every statement of `scope`, in block order.
fn for_each_stmt_line(scope: &ScopeCfg, mut f: impl FnMut(u32, LineOwner)) {
    for block in scope.graph.node_weights() {
        for (i, stmt) in block.stmts.iter().enumerate() {
            for line in stmt.first..=stmt.last {
                f(
                    line,
                    LineOwner {
                        scope: 0,
                        block: block.number,
                        stmt: i,
                    },
                );
            }
        }
    }
}

impl ScopeCfg {
    /// The block with display number `number`.
    pub fn block(&self, number: usize) -> Option<&Block> {
        self.graph.node_weight(NodeIndex::new(number))
    }

    /// Number of blocks including the exit.
    pub fn block_count(&self) -> usize {
        self.graph.node_count()
    }

    /// Display number of the exit block.
    pub fn exit_number(&self) -> usize {
        self.exit.index()
    }

    /// Successors of block `number` as `(block number, edge kind)`, sorted.
    pub fn successors(&self, number: usize) -> Vec<(usize, EdgeKind)> {
        self.neighbours(number, Direction::Outgoing)
    }

    /// Predecessors of block `number` as `(block number, edge kind)`, sorted.
    pub fn predecessors(&self, number: usize) -> Vec<(usize, EdgeKind)> {
        self.neighbours(number, Direction::Incoming)
    }

    fn neighbours(&self, number: usize, dir: Direction) -> Vec<(usize, EdgeKind)> {
        if number >= self.graph.node_count() {
            return Vec::new();
        }
        let mut out: Vec<(usize, EdgeKind)> = self
            .graph
            .edges_directed(NodeIndex::new(number), dir)
            .map(|e| {
                let other = match dir {
                    Direction::Outgoing => e.target(),
                    Direction::Incoming => e.source(),
                };
                (other.index(), *e.weight())
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// Lines of the whole scope's statements, lowest and highest (None if it has none).
    pub fn line_span(&self) -> Option<(u32, u32)> {
        let mut span: Option<(u32, u32)> = None;
        for stmt in self.graph.node_weights().flat_map(|b| b.stmts.iter()) {
            span = Some(match span {
                Some((a, b)) => (a.min(stmt.first), b.max(stmt.last)),
                None => (stmt.first, stmt.last),
            });
        }
        span
    }
}

/// JSON form of a scope: blocks in number order and edges by block number.
#[derive(Serialize)]
struct ScopeJson<'a> {
    name: &'a str,
    qualname: &'a str,
    kind: ScopeKind,
    parent: Option<usize>,
    def_lines: (u32, u32),
    entry: usize,
    exit: usize,
    blocks: Vec<&'a Block>,
    edges: Vec<EdgeJson>,
}

#[derive(Serialize)]
struct EdgeJson {
    from: usize,
    to: usize,
    kind: EdgeKind,
}

impl Serialize for ScopeCfg {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut edges: Vec<EdgeJson> = self
            .graph
            .edge_references()
            .map(|e| EdgeJson {
                from: e.source().index(),
                to: e.target().index(),
                kind: *e.weight(),
            })
            .collect();
        edges.sort_unstable_by_key(|e| (e.from, e.to, e.kind));
        ScopeJson {
            name: &self.name,
            qualname: &self.qualname,
            kind: self.kind,
            parent: self.parent,
            def_lines: self.def_lines,
            entry: self.entry.index(),
            exit: self.exit.index(),
            blocks: self.graph.node_weights().collect(),
            edges,
        }
        .serialize(serializer)
    }
}
