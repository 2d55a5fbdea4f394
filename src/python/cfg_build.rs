//! Building the CFG: walk each scope's statements once, in source order, cutting blocks.
//!
//! Blocks are opened lazily: a statement goes into the open block, or into a new block that
//! first receives every pending edge (the "dangling" exits of whatever came before). So no
//! block is ever empty, blocks are numbered in source order, and code after `return`/`break`
//! lands in a block with no predecessors. A stack of frames (loops, `try`s) resolves
//! `break`/`continue`/`return` and exceptions, routing them through `finally` where needed.

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

    // ---- statements ----

    fn body(&mut self, program: &mut ProgramBuilder, stmts: &[ast::Stmt]) {
        for stmt in stmts {
            self.stmt(program, stmt);
        }
    }

    fn stmt(&mut self, program: &mut ProgramBuilder, stmt: &ast::Stmt) {
        use ast::Stmt as S;
        let lines = program.lines.stmt(stmt, false);
        match stmt {
            S::FunctionDef(s) => {
                self.push(lines);
                let kind = ScopeKind::Function;
                self.nested(program, &s.name, kind, (lines.first, lines.last), &s.body);
            }
            S::AsyncFunctionDef(s) => {
                self.push(lines);
                let kind = ScopeKind::AsyncFunction;
                self.nested(program, &s.name, kind, (lines.first, lines.last), &s.body);
            }
            S::ClassDef(s) => {
                self.push(lines);
                let kind = ScopeKind::Class;
                self.nested(program, &s.name, kind, (lines.first, lines.last), &s.body);
            }
            S::Return(_) => {
                let b = self.push_last(lines);
                self.jump(b, Jump::Return);
            }
            S::Break(_) => {
                let b = self.push_last(lines);
                self.jump(b, Jump::Break);
            }
            S::Continue(_) => {
                let b = self.push_last(lines);
                self.jump(b, Jump::Continue);
            }
            S::Raise(_) => {
                let b = self.push_last(lines);
                if self.in_try() {
                    self.raise_blocks.insert(b);
                } else {
                    self.edge(b, Target::Exit, EdgeKind::Raise);
                }
            }
            S::If(s) => self.if_stmt(program, s, lines),
            S::While(s) => {
                let infinite = is_always_true(&s.test);
                self.loop_stmt(program, lines, &s.body, &s.orelse, infinite);
            }
            S::For(s) => self.loop_stmt(program, lines, &s.body, &s.orelse, false),
            S::AsyncFor(s) => self.loop_stmt(program, lines, &s.body, &s.orelse, false),
            // The header runs in line; the body continues the same block.
            S::With(s) => {
                self.push(lines);
                self.body(program, &s.body);
            }
            S::AsyncWith(s) => {
                self.push(lines);
                self.body(program, &s.body);
            }
            S::Match(s) => self.match_stmt(program, s, lines),
            S::Try(s) => self.try_stmt(
                program,
                lines,
                &s.body,
                &s.handlers,
                &s.orelse,
                &s.finalbody,
            ),
            S::TryStar(s) => self.try_stmt(
                program,
                lines,
                &s.body,
                &s.handlers,
                &s.orelse,
                &s.finalbody,
            ),
            _ => {
                self.push(lines);
            }
        }
    }

    fn nested(
        &mut self,
        program: &mut ProgramBuilder,
        name: &ast::Identifier,
        kind: ScopeKind,
        def_lines: (u32, u32),
        body: &[ast::Stmt],
    ) {
        let name = name.as_str().to_owned();
        let qualname = match self.kind {
            ScopeKind::Module => name.clone(),
            ScopeKind::Class => format!("{}.{}", self.qualname, name),
            ScopeKind::Function | ScopeKind::AsyncFunction => {
                format!("{}.<locals>.{}", self.qualname, name)
            }
        };
        let head = ScopeHead {
            name,
            qualname,
            kind,
            parent: Some(self.index),
            def_lines,
        };
        program.build_scope(head, body);
    }

    /// `if`/`elif`/`else`: the test ends the block; each branch starts a new one. An `elif`
    /// chain is walked in a loop, not by recursion, since chains can be long.
    fn if_stmt(&mut self, program: &mut ProgramBuilder, first: &ast::StmtIf, lines: StmtLines) {
        let mut exits = Vec::new();
        let (mut s, mut lines) = (first, lines);
        loop {
            let test = self.push_last(lines);
            self.resume(vec![(test, EdgeKind::True)]);
            self.body(program, &s.body);
            exits.extend(self.close());
            self.resume(vec![(test, EdgeKind::False)]);
            match s.orelse.as_slice() {
                [] => {
                    exits.extend(self.close());
                    break;
                }
                [elif @ ast::Stmt::If(next)] if is_elif(program.lines.src, next) => {
                    lines = program.lines.stmt(elif, true);
                    s = next;
                }
                orelse => {
                    self.body(program, orelse);
                    exits.extend(self.close());
                    break;
                }
            }
        }
        self.resume(exits);
    }

    /// `for`/`while`: the header is its own block, the target of loop-back edges.
    fn loop_stmt(
        &mut self,
        program: &mut ProgramBuilder,
        lines: StmtLines,
        body: &[ast::Stmt],
        orelse: &[ast::Stmt],
        infinite: bool,
    ) {
        let before = self.close();
        self.resume(before);
        let header = self.push_last(lines);
        self.frames.push(Frame::Loop {
            header,
            breaks: Vec::new(),
        });
        self.resume(vec![(header, EdgeKind::True)]);
        self.body(program, body);
        for (b, _) in self.close() {
            self.edge(b, Target::Block(header), EdgeKind::LoopBack);
        }
        let breaks = match self.frames.pop() {
            Some(Frame::Loop { breaks, .. }) => breaks,
            _ => Vec::new(),
        };
        // `else` runs when the loop is exhausted; `while True:` never is.
        let exhausted = if infinite {
            Vec::new()
        } else {
            vec![(header, EdgeKind::False)]
        };
        let mut exits = if orelse.is_empty() {
            exhausted
        } else {
            self.resume(exhausted);
            self.body(program, orelse);
            self.close()
        };
        exits.extend(breaks);
        self.resume(exits);
    }

    /// `match`: the subject ends the block; each `case` tests in its own block.
    fn match_stmt(&mut self, program: &mut ProgramBuilder, s: &ast::StmtMatch, lines: StmtLines) {
        let subject = self.push_last(lines);
        let mut next = vec![(subject, EdgeKind::Next)];
        let mut exits = Vec::new();
        for case in &s.cases {
            self.resume(next);
            let test = self.push_last(program.lines.case(case));
            self.resume(vec![(test, EdgeKind::True)]);
            self.body(program, &case.body);
            exits.extend(self.close());
            next = if case.guard.is_none() && is_irrefutable(&case.pattern) {
                Vec::new()
            } else {
                vec![(test, EdgeKind::False)]
            };
        }
        exits.extend(next);
        self.resume(exits);
    }

    /// `try`: the body is a region whose every block may jump to each handler; `finally`
    /// collects normal exits, escaping exceptions and jumps, then passes them on.
    fn try_stmt(
        &mut self,
        program: &mut ProgramBuilder,
        lines: StmtLines,
        body: &[ast::Stmt],
        handlers: &[ast::ExceptHandler],
        orelse: &[ast::Stmt],
        finalbody: &[ast::Stmt],
    ) {
        self.push(lines);
        let before = self.close();
        let has_finally = !finalbody.is_empty();
        self.frames.push(Frame::Try {
            has_finally,
            jumps: Vec::new(),
            region: Vec::new(),
        });
        self.resume(before);
        self.body(program, body);
        let body_exits = self.close();
        let body_blocks = self.take_region();

        let mut normal = Vec::new();
        let mut handler_entries = Vec::new();
        for handler in handlers {
            // Handlers are entered only through exception edges, added below.
            self.resume(Vec::new());
            handler_entries.push(self.push(program.lines.handler(handler)));
            let ast::ExceptHandler::ExceptHandler(h) = handler;
            self.body(program, &h.body);
            normal.extend(self.close());
        }
        if orelse.is_empty() {
            normal.extend(body_exits);
        } else {
            self.resume(body_exits);
            self.body(program, orelse);
            normal.extend(self.close());
        }
        let other_blocks = self.take_region();
        let jumps = match self.frames.pop() {
            Some(Frame::Try { jumps, .. }) => jumps,
            _ => Vec::new(),
        };

        for &b in &body_blocks {
            for &h in &handler_entries {
                self.edge(b, Target::Block(h), EdgeKind::Exception);
            }
        }
        let catch_all = handlers.iter().any(is_catch_all);
        let mut escaping = if catch_all { Vec::new() } else { body_blocks };
        escaping.extend(other_blocks);

        if !has_finally {
            self.propagate(escaping);
            self.resume(normal);
            return;
        }
        // A block that already enters the `finally` (falling in, or by a jump) needs no
        // second, exceptional edge to it.
        let mut into_finally = normal;
        into_finally.extend(jumps.iter().map(|&(b, j)| (b, j.edge())));
        let enters: HashSet<usize> = into_finally.iter().map(|&(b, _)| b).collect();
        into_finally.extend(
            escaping
                .iter()
                .filter(|b| !enters.contains(b))
                .map(|&b| (b, EdgeKind::Exception)),
        );
        self.resume(into_finally);
        self.body(program, finalbody);
        let finally_exits = self.close();
        let finally_ends: Vec<usize> = finally_exits.iter().map(|&(b, _)| b).collect();
        // Re-raise after `finally`: inside an outer `try` its blocks are already in that
        // region; otherwise the exception leaves the scope.
        if !escaping.is_empty() && !self.in_try() {
            for &b in &finally_ends {
                self.edge(b, Target::Exit, EdgeKind::Raise);
            }
        }
        // Jumps that went through the `finally` continue to their real target.
        for jump in [Jump::Return, Jump::Break, Jump::Continue] {
            if jumps.iter().any(|&(_, j)| j == jump) {
                for &b in &finally_ends {
                    self.jump(b, jump);
                }
            }
        }
        self.resume(finally_exits);
    }

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

/// Whether an `if` node nested in `orelse` was written `elif` (not `else:` + `if`).
fn is_elif(src: &SourceFile, s: &ast::StmtIf) -> bool {
    let start = usize::try_from(u32::from(s.range.start())).unwrap_or(usize::MAX);
    src.text().get(start..start.saturating_add(4)) == Some("elif")
}

/// `while True:` / `while 1:` style tests: literal constants that are true.
fn is_always_true(test: &ast::Expr) -> bool {
    match test {
        ast::Expr::Constant(c) => match &c.value {
            ast::Constant::Bool(b) => *b,
            ast::Constant::Int(i) => *i != ast::bigint::BigInt::from(0u8),
            ast::Constant::Str(s) => !s.is_empty(),
            _ => false,
        },
        _ => false,
    }
}

/// Patterns that always match: `_`, a capture name, or an or-pattern containing one.
fn is_irrefutable(p: &ast::Pattern) -> bool {
    match p {
        ast::Pattern::MatchAs(a) => a.pattern.as_deref().is_none_or(is_irrefutable),
        ast::Pattern::MatchOr(o) => o.patterns.iter().any(is_irrefutable),
        _ => false,
    }
}

/// `except:` and `except BaseException:` catch everything, so nothing escapes past them.
fn is_catch_all(h: &ast::ExceptHandler) -> bool {
    let ast::ExceptHandler::ExceptHandler(h) = h;
    match h.type_.as_deref() {
        None => true,
        Some(ast::Expr::Name(n)) => n.id.as_str() == "BaseException",
        Some(_) => false,
    }
}
impl ProgramCfg {
    /// Parse `src` and build the CFG of every scope.
    pub fn build(src: &SourceFile) -> Result<ProgramCfg, super::source::SyntaxError> {
        let (suite, tokens) = super::source::parse_with_tokens(src)?;
        Ok(build_program(src, &tokens, &suite))
    }
}
