//! Building the CFG: walk each scope's statements once, in source order, cutting blocks.
//!
//! Blocks are opened lazily: a statement goes into the open block, or into a new block that
//! first receives every pending edge (the "dangling" exits of whatever came before). So no
//! block is ever empty, blocks are numbered in source order, and code after `return`/`break`
//! lands in a block with no predecessors. A stack of frames (loops, `try`s) resolves
//! `break`/`continue`/`return` and exceptions, routing them through `finally` where needed.
//!
//! Parts: this module holds the block and edge machinery; `statements` what each statement
//! kind adds.

mod statements;

use std::collections::HashSet;

use petgraph::graph::{DiGraph, NodeIndex};
use rustpython_parser::ast;

use super::cfg::{Block, BlockKind, EdgeKind, ProgramCfg, ScopeCfg, ScopeKind, StmtLines};
use super::headers::LineMap;
use super::source::SourceFile;
use super::tokens::TokenIndex;

/// Build every scope of a parsed module.
pub(crate) fn build_program(
    src: &SourceFile,
    tokens: &TokenIndex,
    suite: &[ast::Stmt],
) -> ProgramCfg {
    let mut program = ProgramBuilder {
        lines: LineMap { src, tokens },
        scopes: Vec::new(),
    };
    let module = ScopeHead {
        name: "<module>".to_owned(),
        qualname: "<module>".to_owned(),
        kind: ScopeKind::Module,
        parent: None,
        def_lines: (1, 1),
    };
    program.build_scope(module, suite);
    ProgramCfg {
        scopes: program.scopes,
        line_count: src.line_count(),
    }
}

/// Identity of a scope, known before its body is built.
struct ScopeHead {
    name: String,
    qualname: String,
    kind: ScopeKind,
    parent: Option<usize>,
    def_lines: (u32, u32),
}

struct ProgramBuilder<'a> {
    lines: LineMap<'a>,
    scopes: Vec<ScopeCfg>,
}

impl ProgramBuilder<'_> {
    /// Build a scope and, recursively, the scopes nested in it; returns its index.
    fn build_scope(&mut self, head: ScopeHead, body: &[ast::Stmt]) -> usize {
        // Reserve the slot first so that scopes are numbered in source (pre-)order.
        let index = self.scopes.len();
        self.scopes.push(placeholder());
        let mut scope = ScopeBuilder::new(index, head.kind, head.qualname.clone());
        scope.body(self, body);
        let cfg = scope.finish(head);
        if let Some(slot) = self.scopes.get_mut(index) {
            *slot = cfg;
        }
        index
    }
}

fn placeholder() -> ScopeCfg {
    let mut graph = DiGraph::new();
    let exit = graph.add_node(Block {
        number: 0,
        kind: BlockKind::Exit,
        stmts: Vec::new(),
    });
    ScopeCfg {
        name: String::new(),
        qualname: String::new(),
        kind: ScopeKind::Module,
        parent: None,
        def_lines: (1, 1),
        graph,
        entry: exit,
        exit,
    }
}

/// Edge target while building: a block by number, or the scope's exit (numbered last).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Target {
    Block(usize),
    Exit,
}

/// A non-local jump that may have to pass through `finally` blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Jump {
    Return,
    Break,
    Continue,
}

impl Jump {
    fn edge(self) -> EdgeKind {
        match self {
            Jump::Return => EdgeKind::Return,
            Jump::Break => EdgeKind::Break,
            Jump::Continue => EdgeKind::LoopBack,
        }
    }
}

/// Open constructs around the statement being built, innermost last.
enum Frame {
    Loop {
        header: usize,
        breaks: Vec<(usize, EdgeKind)>,
    },
    Try {
        has_finally: bool,
        /// Jumps out of the protected part, to be routed through the `finally`.
        jumps: Vec<(usize, Jump)>,
        /// Blocks created in the part being built (body, then handlers + else).
        region: Vec<usize>,
    },
}

struct ScopeBuilder {
    index: usize,
    kind: ScopeKind,
    qualname: String,
    blocks: Vec<Vec<StmtLines>>,
    edges: Vec<(usize, Target, EdgeKind)>,
    edge_set: HashSet<(usize, Target, EdgeKind)>,
    /// The block still accepting statements; when set, `pending` is empty.
    current: Option<usize>,
    /// Edges waiting for the next block to be created.
    pending: Vec<(usize, EdgeKind)>,
    frames: Vec<Frame>,
    /// Blocks ending in an explicit `raise` inside a `try` (resolved when the `try` closes).
    raise_blocks: HashSet<usize>,
}

impl ScopeBuilder {
    fn new(index: usize, kind: ScopeKind, qualname: String) -> Self {
        Self {
            index,
            kind,
            qualname,
            blocks: Vec::new(),
            edges: Vec::new(),
            edge_set: HashSet::new(),
            current: None,
            pending: Vec::new(),
            frames: Vec::new(),
            raise_blocks: HashSet::new(),
        }
    }

    // ---- block and edge primitives ----

    fn edge(&mut self, from: usize, to: Target, kind: EdgeKind) {
        if self.edge_set.insert((from, to, kind)) {
            self.edges.push((from, to, kind));
        }
    }

    /// The open block, creating it (and attaching pending edges) if there is none.
    fn open(&mut self) -> usize {
        if let Some(b) = self.current {
            return b;
        }
        let b = self.blocks.len();
        self.blocks.push(Vec::new());
        for (from, kind) in std::mem::take(&mut self.pending) {
            self.edge(from, Target::Block(b), kind);
        }
        // The innermost `try` records the blocks of the part being built.
        if let Some(region) = self.frames.iter_mut().rev().find_map(|f| match f {
            Frame::Try { region, .. } => Some(region),
            Frame::Loop { .. } => None,
        }) {
            region.push(b);
        }
        self.current = Some(b);
        b
    }

    /// Append a statement to the open block; returns the block.
    fn push(&mut self, stmt: StmtLines) -> usize {
        let b = self.open();
        if let Some(stmts) = self.blocks.get_mut(b) {
            stmts.push(stmt);
        }
        b
    }

    /// Append a statement that ends its block (branch headers, jumps); returns the block.
    fn push_last(&mut self, stmt: StmtLines) -> usize {
        let b = self.push(stmt);
        self.current = None;
        b
    }

    /// End the open block: its fall-through joins the pending edges, which are returned.
    fn close(&mut self) -> Vec<(usize, EdgeKind)> {
        if let Some(b) = self.current.take() {
            self.pending.push((b, EdgeKind::Next));
        }
        std::mem::take(&mut self.pending)
    }

    /// Make `edges` the pending edges (no block may be open).
    fn resume(&mut self, edges: Vec<(usize, EdgeKind)>) {
        self.current = None;
        self.pending = edges;
    }

    fn in_try(&self) -> bool {
        self.frames.iter().any(|f| matches!(f, Frame::Try { .. }))
    }

    /// Resolve a `return`/`break`/`continue` leaving block `from`.
    fn jump(&mut self, from: usize, jump: Jump) {
        let mut target = (Target::Exit, jump.edge());
        for frame in self.frames.iter_mut().rev() {
            match frame {
                Frame::Loop { breaks, .. } if jump == Jump::Break => {
                    breaks.push((from, EdgeKind::Break));
                    return;
                }
                Frame::Loop { header, .. } if jump == Jump::Continue => {
                    target = (Target::Block(*header), EdgeKind::LoopBack);
                    break;
                }
                Frame::Try {
                    has_finally: true,
                    jumps,
                    ..
                } => {
                    jumps.push((from, jump));
                    return;
                }
                Frame::Loop { .. } | Frame::Try { .. } => {}
            }
        }
        // `return` leaves the scope; a stray `break`/`continue` (rejected by CPython) too.
        self.edge(from, target.0, target.1);
    }

    /// Exceptions escaping a `try` without `finally`: to the enclosing `try`, or out of the
    /// scope for blocks that raise explicitly (implicit exceptions get no edge).
    fn propagate(&mut self, escaping: Vec<usize>) {
        let outer = self.frames.iter_mut().rev().find_map(|f| match f {
            Frame::Try { region, .. } => Some(region),
            Frame::Loop { .. } => None,
        });
        match outer {
            Some(region) => region.extend(escaping),
            None => {
                for b in escaping {
                    if self.raise_blocks.contains(&b) {
                        self.edge(b, Target::Exit, EdgeKind::Raise);
                    }
                }
            }
        }
    }
}

impl ScopeBuilder {
    /// Take the block list of the innermost `try` frame.
    fn take_region(&mut self) -> Vec<usize> {
        self.frames
            .iter_mut()
            .rev()
            .find_map(|f| match f {
                Frame::Try { region, .. } => Some(std::mem::take(region)),
                Frame::Loop { .. } => None,
            })
            .unwrap_or_default()
    }

    // ---- assembly ----

    fn finish(mut self, head: ScopeHead) -> ScopeCfg {
        for (from, kind) in self.close() {
            self.edge(from, Target::Exit, kind);
        }
        let mut graph = DiGraph::with_capacity(self.blocks.len() + 1, self.edges.len());
        for (number, stmts) in self.blocks.into_iter().enumerate() {
            graph.add_node(Block {
                number,
                kind: BlockKind::Code,
                stmts,
            });
        }
        let exit_number = graph.node_count();
        let exit = graph.add_node(Block {
            number: exit_number,
            kind: BlockKind::Exit,
            stmts: Vec::new(),
        });
        let node = |t: Target| match t {
            Target::Block(b) => NodeIndex::new(b),
            Target::Exit => exit,
        };
        let mut edges = self.edges;
        edges.sort_unstable_by_key(|&(from, to, kind)| (from, node(to).index(), kind));
        for (from, to, kind) in edges {
            graph.add_edge(NodeIndex::new(from), node(to), kind);
        }
        let entry = if exit_number > 0 {
            NodeIndex::new(0)
        } else {
            exit
        };
        ScopeCfg {
            name: head.name,
            qualname: head.qualname,
            kind: head.kind,
            parent: head.parent,
            def_lines: head.def_lines,
            graph,
            entry,
            exit,
        }
    }
}

impl ProgramCfg {
    /// Parse `src` and build the CFG of every scope.
    pub fn build(src: &SourceFile) -> Result<ProgramCfg, crate::python::source::SyntaxError> {
        let (suite, tokens) = crate::python::source::parse_with_tokens(src)?;
        Ok(build_program(src, &tokens, &suite))
    }
}
