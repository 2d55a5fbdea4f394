//! The one walk over a parsed module that both name views read ([`super::undefined`],
//! [`super::free`]): every scope with what it binds and when, every use of a name with its scope
//! and position, the attributes read from each used name, and the facts the two views need
//! beyond names (standard-input reads, a `return` outside every function, `is None` and
//! identity tests, caught exception names, file suffixes).
//!
//! Scopes follow Python's rules: a name used in a function resolves in that function, then in
//! enclosing functions (class bodies are skipped), then in the module, then in the builtins.
//! Bindings are everything that makes a name exist at run time: assignments, `for`/`with`/
//! `except ... as` targets, imports, `def`/`class`, parameters, walrus targets, match captures;
//! `global`/`nonlocal` redirect them. An augmented assignment (`n += 1`) needs the name to
//! exist already, so it is a use and not a binding; so is `del n`; an annotation without a value
//! (`n: int`) binds nothing.
//!
//! Parts: `statements` and `expressions` (the walk itself).

mod expressions;
mod statements;

use std::collections::{BTreeSet, HashMap, HashSet};

use rustpython_parser::ast::{self, Expr, Stmt};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ScopeKind {
    Module,
    Function,
    Class,
}

#[derive(Debug)]
pub(super) struct Scope {
    pub(super) kind: ScopeKind,
    pub(super) parent: Option<usize>,
    /// A comprehension's scope (a walrus inside binds in the enclosing one).
    comprehension: bool,
    /// Name → when its first binding happens (the walk's order, see [`Walk::clock`]).
    pub(super) bound: HashMap<String, u32>,
    pub(super) globals: HashSet<String>,
    nonlocals: HashSet<String>,
}

impl Scope {
    fn new(kind: ScopeKind, parent: Option<usize>) -> Self {
        Scope {
            kind,
            parent,
            comprehension: false,
            bound: HashMap::new(),
            globals: HashSet::new(),
            nonlocals: HashSet::new(),
        }
    }
}

/// One read of a name.
#[derive(Debug)]
pub(super) struct Use {
    pub(super) name: String,
    pub(super) scope: usize,
    /// Byte offset of the name in the source.
    pub(super) offset: u32,
    /// When it happens (the walk's order).
    pub(super) order: u32,
}

/// `name.attr` or `name.attr(...)`, read from a used name.
#[derive(Debug)]
pub(super) struct AttributeRead {
    /// The use of `name` (index into [`Walk::uses`]).
    pub(super) base: usize,
    pub(super) attr: String,
    pub(super) called: bool,
}

/// Everything the walk found. Scope 0 is the module.
#[derive(Default)]
pub(super) struct Walk {
    pub(super) scopes: Vec<Scope>,
    /// In the order they run.
    pub(super) uses: Vec<Use>,
    pub(super) attributes: Vec<AttributeRead>,
    /// Uses (indices into `uses`) of names tested with `is None` / `is not None`.
    pub(super) none_tested: Vec<usize>,
    /// Uses of names an `except` clause catches.
    pub(super) caught: Vec<usize>,
    /// Uses of two names tested for identity (`a is b`, `a is not b`).
    pub(super) identity_tested: Vec<(usize, usize)>,
    pub(super) star_import: bool,
    pub(super) suffixes: BTreeSet<String>,
    /// Start offsets of the statements (or `except` clauses) that read standard input
    /// (`input()`, `sys.stdin`, `open(0)`, a call of an alias of a stdin reader).
    pub(super) input_statements: BTreeSet<u32>,
    /// `return` statements outside every function and class body: (start, end) offsets.
    pub(super) module_returns: Vec<(u32, u32)>,
    /// Uses and bindings in the order they run: the walk visits a statement's value before its
    /// targets, so `a = f(a)` reads `a` before it binds it (source offsets would say otherwise).
    clock: u32,
    /// Start offset of the statement whose own expressions are being walked.
    statement: u32,
    /// Names bound to a reader of stdin without calling it (`input = sys.stdin.readline`),
    /// program-wide.
    stdin_aliases: BTreeSet<String>,
    /// Above zero while walking an expression known not to read stdin.
    quiet_input: u32,
}

/// Walk a parsed module.
pub(super) fn walk(suite: &[Stmt]) -> Walk {
    let mut w = Walk::default();
    w.scopes.push(Scope::new(ScopeKind::Module, None));
    w.stmts(suite, 0);
    w
}

pub(super) fn offset(range: ast::text_size::TextRange) -> u32 {
    u32::from(range.start())
}

enum FunctionBody<'a> {
    Stmts(&'a [Stmt]),
    Expr(&'a Expr),
}

impl Walk {
    fn tick(&mut self) -> u32 {
        self.clock += 1;
        self.clock
    }

    fn bind(&mut self, scope: usize, name: &str) {
        let at = self.tick();
        let Some(s) = self.scopes.get(scope) else {
            return;
        };
        // `global`/`nonlocal` send the binding to another scope.
        let target = if s.globals.contains(name) {
            0
        } else if s.nonlocals.contains(name) {
            self.enclosing_function(scope).unwrap_or(scope)
        } else {
            scope
        };
        if let Some(t) = self.scopes.get_mut(target) {
            let first = t.bound.entry(name.to_string()).or_insert(at);
            *first = (*first).min(at);
        }
    }

    fn enclosing_function(&self, scope: usize) -> Option<usize> {
        let mut next = self.scopes.get(scope)?.parent;
        while let Some(i) = next {
            let s = self.scopes.get(i)?;
            if s.kind == ScopeKind::Function {
                return Some(i);
            }
            next = s.parent;
        }
        None
    }

    fn new_scope(&mut self, kind: ScopeKind, parent: usize) -> usize {
        self.scopes.push(Scope::new(kind, Some(parent)));
        self.scopes.len() - 1
    }

    fn use_name(&mut self, scope: usize, name: &str, at: u32) {
        if name == "stdin" {
            self.reads_input();
        }
        let order = self.tick();
        self.uses.push(Use {
            name: name.to_string(),
            scope,
            offset: at,
            order,
        });
    }

    /// The statement being walked reads standard input.
    fn reads_input(&mut self) {
        if self.quiet_input == 0 {
            self.input_statements.insert(self.statement);
        }
    }

    fn stmts(&mut self, body: &[Stmt], scope: usize) {
        // Declarations apply to the whole scope, wherever they appear in it.
        for stmt in body {
            self.declarations(stmt, scope);
        }
        for stmt in body {
            self.stmt(stmt, scope);
        }
    }

    /// Where `name`, used in `scope`, is bound: the scope, or `None` (builtin or undefined).
    pub(super) fn lookup(&self, name: &str, scope: usize) -> Option<usize> {
        let s = self.scopes.get(scope)?;
        if s.globals.contains(name) {
            return self.scopes.first()?.bound.contains_key(name).then_some(0);
        }
        if s.bound.contains_key(name) {
            return Some(scope);
        }
        // Enclosing class bodies are not visible from functions inside them.
        let mut next = s.parent;
        while let Some(i) = next {
            let p = self.scopes.get(i)?;
            if (p.kind != ScopeKind::Class || i == 0) && p.bound.contains_key(name) {
                return Some(i);
            }
            next = p.parent;
        }
        None
    }
}

/// `sys.stdin.readline`, `stdin.buffer.read`: a reader of stdin named, not called.
fn reads_stdin_uncalled(e: &Expr) -> bool {
    match e {
        Expr::Attribute(a) => a.attr.as_str() == "stdin" || reads_stdin_uncalled(&a.value),
        Expr::Name(n) => n.id.as_str() == "stdin",
        _ => false,
    }
}
