//! Each statement kind's blocks and edges: `if`/`elif` chains, loops with `else`, `match`, and
//! `try` with its handlers, `else` and `finally`.

use std::collections::HashSet;

use rustpython_parser::ast;

use super::{Frame, Jump, ProgramBuilder, ScopeBuilder, ScopeHead, Target};
use crate::python::cfg::{EdgeKind, ScopeKind, StmtLines};
use crate::python::source::SourceFile;

impl ScopeBuilder {
    pub(super) fn body(&mut self, program: &mut ProgramBuilder, stmts: &[ast::Stmt]) {
        for stmt in stmts {
            self.stmt(program, stmt);
        }
    }

    pub(super) fn stmt(&mut self, program: &mut ProgramBuilder, stmt: &ast::Stmt) {
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

    pub(super) fn nested(
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
    pub(super) fn if_stmt(
        &mut self,
        program: &mut ProgramBuilder,
        first: &ast::StmtIf,
        lines: StmtLines,
    ) {
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
    pub(super) fn loop_stmt(
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
    pub(super) fn match_stmt(
        &mut self,
        program: &mut ProgramBuilder,
        s: &ast::StmtMatch,
        lines: StmtLines,
    ) {
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
    pub(super) fn try_stmt(
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
}

/// Whether an `if` node nested in `orelse` was written `elif` (not `else:` + `if`).
pub(super) fn is_elif(src: &SourceFile, s: &ast::StmtIf) -> bool {
    let start = usize::try_from(u32::from(s.range.start())).unwrap_or(usize::MAX);
    src.text().get(start..start.saturating_add(4)) == Some("elif")
}

/// `while True:` / `while 1:` style tests: literal constants that are true.
pub(super) fn is_always_true(test: &ast::Expr) -> bool {
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
pub(super) fn is_irrefutable(p: &ast::Pattern) -> bool {
    match p {
        ast::Pattern::MatchAs(a) => a.pattern.as_deref().is_none_or(is_irrefutable),
        ast::Pattern::MatchOr(o) => o.patterns.iter().any(is_irrefutable),
        _ => false,
    }
}

/// `except:` and `except BaseException:` catch everything, so nothing escapes past them.
pub(super) fn is_catch_all(h: &ast::ExceptHandler) -> bool {
    let ast::ExceptHandler::ExceptHandler(h) = h;
    match h.type_.as_deref() {
        None => true,
        Some(ast::Expr::Name(n)) => n.id.as_str() == "BaseException",
        Some(_) => false,
    }
}
