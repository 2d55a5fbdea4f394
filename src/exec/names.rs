//! Undefined names: what a snippet uses but never defines, found from the parser's AST.
//!
//! Scopes follow Python's rules: a name used in a function resolves in that function, then in
//! enclosing functions (class bodies are skipped), then in the module, then in the builtins.
//! Bindings are everything that makes a name exist at run time: assignments, `for`/`with`/
//! `except ... as` targets, imports, `def`/`class`, parameters, walrus targets, match captures;
//! `global`/`nonlocal` redirect them. An augmented assignment (`n += 1`) needs the name to
//! exist already, so it is a use and not a definition. At module level a name whose every
//! binding comes after its first use is undefined too (the run reaches the use first).
//!
//! For each undefined name the attributes and methods the snippet reads from it are listed as
//! well (`self.mode`, `node.children`, `p.init()`), which is what a prefix has to provide.

use std::collections::{BTreeSet, HashMap, HashSet};

use rustpython_parser::ast::{self, Expr, Stmt};
use serde::Serialize;

use crate::python::source::{parse_module, SourceFile, SyntaxError};

/// Names a snippet needs from outside, in the order of their first use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Undefined {
    pub names: Vec<UndefinedName>,
    /// `name.attr` (read) and `name.method()` (called) for every undefined `name`, sorted.
    pub attributes: Vec<String>,
    /// The snippet has `from X import *`: any name might come from there, so names used at
    /// module level are not reported.
    pub star_import: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UndefinedName {
    pub name: String,
    /// Snippet line of the first use.
    pub line: u32,
}

impl Undefined {
    pub fn name_list(&self) -> Vec<String> {
        self.names.iter().map(|n| n.name.clone()).collect()
    }
}

/// Python 3.11's builtins (`dir(builtins)`), plus the module attributes every script has.
const BUILTINS: &[&str] = &[
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "Ellipsis",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "False",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "None",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "True",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
    "__build_class__",
    "__debug__",
    "__doc__",
    "__import__",
    "__loader__",
    "__name__",
    "__package__",
    "__spec__",
    "__file__",
    "__builtins__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
];

/// The undefined names of `src`, or the syntax error that stops parsing it.
pub fn undefined_names(src: &SourceFile) -> Result<Undefined, SyntaxError> {
    let suite = parse_module(src)?;
    let mut walker = Walker::default();
    walker.scopes.push(Scope::new(ScopeKind::Module, None));
    walker.stmts(&suite, 0);
    Ok(walker.resolve(src))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScopeKind {
    Module,
    Function,
    Class,
}

#[derive(Debug)]
struct Scope {
    kind: ScopeKind,
    parent: Option<usize>,
    /// A comprehension's scope (a walrus inside binds in the enclosing one).
    comprehension: bool,
    /// Name → offset of its first binding.
    bound: HashMap<String, u32>,
    globals: HashSet<String>,
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

#[derive(Debug)]
struct Use {
    name: String,
    scope: usize,
    offset: u32,
}

#[derive(Default)]
struct Walker {
    scopes: Vec<Scope>,
    uses: Vec<Use>,
    /// For every `name.attr` read: the use of `name` (index into `uses`) and `attr` (`attr()`
    /// when called).
    attributes: Vec<(usize, String)>,
    star_import: bool,
}

fn offset(range: ast::text_size::TextRange) -> u32 {
    u32::from(range.start())
}

impl Walker {
    fn bind(&mut self, scope: usize, name: &str, at: u32) {
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
        self.uses.push(Use {
            name: name.to_string(),
            scope,
            offset: at,
        });
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

    fn declarations(&mut self, stmt: &Stmt, scope: usize) {
        let (names, global) = match stmt {
            Stmt::Global(g) => (&g.names, true),
            Stmt::Nonlocal(n) => (&n.names, false),
            // Declarations in nested blocks of the same scope count too.
            Stmt::If(s) => {
                s.body
                    .iter()
                    .chain(&s.orelse)
                    .for_each(|b| self.declarations(b, scope));
                return;
            }
            Stmt::For(s) => {
                s.body
                    .iter()
                    .chain(&s.orelse)
                    .for_each(|b| self.declarations(b, scope));
                return;
            }
            Stmt::While(s) => {
                s.body
                    .iter()
                    .chain(&s.orelse)
                    .for_each(|b| self.declarations(b, scope));
                return;
            }
            Stmt::With(s) => {
                s.body.iter().for_each(|b| self.declarations(b, scope));
                return;
            }
            Stmt::Try(s) => {
                s.body
                    .iter()
                    .chain(&s.orelse)
                    .chain(&s.finalbody)
                    .for_each(|b| self.declarations(b, scope));
                return;
            }
            _ => return,
        };
        if let Some(s) = self.scopes.get_mut(scope) {
            for n in names {
                if global {
                    s.globals.insert(n.to_string());
                } else {
                    s.nonlocals.insert(n.to_string());
                }
            }
        }
    }

    fn function(&mut self, scope: usize, args: &ast::Arguments, body: FunctionBody<'_>, at: u32) {
        // Defaults and annotations are evaluated where the function is defined.
        let all_args = args
            .posonlyargs
            .iter()
            .chain(&args.args)
            .chain(&args.kwonlyargs);
        for a in all_args.clone() {
            if let Some(d) = &a.default {
                self.expr(d, scope);
            }
            if let Some(ann) = &a.def.annotation {
                self.expr(ann, scope);
            }
        }
        for a in args.vararg.iter().chain(&args.kwarg) {
            if let Some(ann) = &a.annotation {
                self.expr(ann, scope);
            }
        }
        let inner = self.new_scope(ScopeKind::Function, scope);
        for a in all_args {
            self.bind(inner, a.def.arg.as_str(), at);
        }
        for a in args.vararg.iter().chain(&args.kwarg) {
            self.bind(inner, a.arg.as_str(), at);
        }
        match body {
            FunctionBody::Stmts(stmts) => self.stmts(stmts, inner),
            FunctionBody::Expr(e) => self.expr(e, inner),
        }
    }

    fn stmt(&mut self, stmt: &Stmt, scope: usize) {
        match stmt {
            Stmt::FunctionDef(f) => {
                self.exprs(&f.decorator_list, scope);
                if let Some(r) = &f.returns {
                    self.expr(r, scope);
                }
                self.bind(scope, f.name.as_str(), offset(f.range));
                self.function(
                    scope,
                    &f.args,
                    FunctionBody::Stmts(&f.body),
                    offset(f.range),
                );
            }
            Stmt::AsyncFunctionDef(f) => {
                self.exprs(&f.decorator_list, scope);
                if let Some(r) = &f.returns {
                    self.expr(r, scope);
                }
                self.bind(scope, f.name.as_str(), offset(f.range));
                self.function(
                    scope,
                    &f.args,
                    FunctionBody::Stmts(&f.body),
                    offset(f.range),
                );
            }
            Stmt::ClassDef(c) => {
                self.exprs(&c.decorator_list, scope);
                self.exprs(&c.bases, scope);
                for k in &c.keywords {
                    self.expr(&k.value, scope);
                }
                self.bind(scope, c.name.as_str(), offset(c.range));
                let inner = self.new_scope(ScopeKind::Class, scope);
                self.stmts(&c.body, inner);
            }
            Stmt::Return(r) => {
                if let Some(v) = &r.value {
                    self.expr(v, scope);
                }
            }
            Stmt::Delete(d) => self.exprs(&d.targets, scope),
            Stmt::Assign(a) => {
                self.expr(&a.value, scope);
                for t in &a.targets {
                    self.target(t, scope);
                }
            }
            Stmt::TypeAlias(t) => {
                self.expr(&t.value, scope);
                self.target(&t.name, scope);
            }
            Stmt::AugAssign(a) => {
                self.expr(&a.value, scope);
                // `n += 1` reads `n` first; it defines nothing new.
                self.expr(&a.target, scope);
            }
            Stmt::AnnAssign(a) => {
                self.expr(&a.annotation, scope);
                if let Some(v) = &a.value {
                    self.expr(v, scope);
                    self.target(&a.target, scope);
                } else if !matches!(*a.target, Expr::Name(_)) {
                    self.expr(&a.target, scope);
                }
            }
            Stmt::For(f) => {
                self.expr(&f.iter, scope);
                self.target(&f.target, scope);
                self.stmts_same(&f.body, scope);
                self.stmts_same(&f.orelse, scope);
            }
            Stmt::AsyncFor(f) => {
                self.expr(&f.iter, scope);
                self.target(&f.target, scope);
                self.stmts_same(&f.body, scope);
                self.stmts_same(&f.orelse, scope);
            }
            Stmt::While(w) => {
                self.expr(&w.test, scope);
                self.stmts_same(&w.body, scope);
                self.stmts_same(&w.orelse, scope);
            }
            Stmt::If(i) => {
                self.expr(&i.test, scope);
                self.stmts_same(&i.body, scope);
                self.stmts_same(&i.orelse, scope);
            }
            Stmt::With(w) => {
                self.with_items(&w.items, scope);
                self.stmts_same(&w.body, scope);
            }
            Stmt::AsyncWith(w) => {
                self.with_items(&w.items, scope);
                self.stmts_same(&w.body, scope);
            }
            Stmt::Match(m) => {
                self.expr(&m.subject, scope);
                for case in &m.cases {
                    self.pattern(&case.pattern, scope);
                    if let Some(g) = &case.guard {
                        self.expr(g, scope);
                    }
                    self.stmts_same(&case.body, scope);
                }
            }
            Stmt::Raise(r) => {
                if let Some(e) = &r.exc {
                    self.expr(e, scope);
                }
                if let Some(c) = &r.cause {
                    self.expr(c, scope);
                }
            }
            Stmt::Try(t) => self.try_parts(&t.body, &t.handlers, &t.orelse, &t.finalbody, scope),
            Stmt::TryStar(t) => {
                self.try_parts(&t.body, &t.handlers, &t.orelse, &t.finalbody, scope)
            }
            Stmt::Assert(a) => {
                self.expr(&a.test, scope);
                if let Some(m) = &a.msg {
                    self.expr(m, scope);
                }
            }
            Stmt::Import(i) => {
                for alias in &i.names {
                    // `import a.b` binds `a`.
                    let bound = match &alias.asname {
                        Some(a) => a.to_string(),
                        None => alias.name.split('.').next().unwrap_or("").to_string(),
                    };
                    self.bind(scope, &bound, offset(i.range));
                }
            }
            Stmt::ImportFrom(i) => {
                for alias in &i.names {
                    if alias.name.as_str() == "*" {
                        self.star_import = true;
                        continue;
                    }
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name);
                    self.bind(scope, bound.as_str(), offset(i.range));
                }
            }
            Stmt::Global(_) | Stmt::Nonlocal(_) => {}
            Stmt::Expr(e) => self.expr(&e.value, scope),
            Stmt::Pass(_) | Stmt::Break(_) | Stmt::Continue(_) => {}
        }
    }

    /// Statements of a nested block in the same scope (declarations were already read).
    fn stmts_same(&mut self, body: &[Stmt], scope: usize) {
        for s in body {
            self.stmt(s, scope);
        }
    }

    fn try_parts(
        &mut self,
        body: &[Stmt],
        handlers: &[ast::ExceptHandler],
        orelse: &[Stmt],
        finalbody: &[Stmt],
        scope: usize,
    ) {
        self.stmts_same(body, scope);
        for h in handlers {
            let ast::ExceptHandler::ExceptHandler(h) = h;
            if let Some(t) = &h.type_ {
                self.expr(t, scope);
            }
            if let Some(name) = &h.name {
                self.bind(scope, name.as_str(), offset(h.range));
            }
            self.stmts_same(&h.body, scope);
        }
        self.stmts_same(orelse, scope);
        self.stmts_same(finalbody, scope);
    }

    fn with_items(&mut self, items: &[ast::WithItem], scope: usize) {
        for item in items {
            self.expr(&item.context_expr, scope);
            if let Some(v) = &item.optional_vars {
                self.target(v, scope);
            }
        }
    }

    fn pattern(&mut self, pattern: &ast::Pattern, scope: usize) {
        use ast::Pattern as P;
        match pattern {
            P::MatchValue(v) => self.expr(&v.value, scope),
            P::MatchSingleton(_) => {}
            P::MatchSequence(s) => s.patterns.iter().for_each(|p| self.pattern(p, scope)),
            P::MatchMapping(m) => {
                self.exprs(&m.keys, scope);
                m.patterns.iter().for_each(|p| self.pattern(p, scope));
                if let Some(rest) = &m.rest {
                    self.bind(scope, rest.as_str(), offset(m.range));
                }
            }
            P::MatchClass(c) => {
                self.expr(&c.cls, scope);
                c.patterns
                    .iter()
                    .chain(&c.kwd_patterns)
                    .for_each(|p| self.pattern(p, scope));
            }
            P::MatchStar(s) => {
                if let Some(n) = &s.name {
                    self.bind(scope, n.as_str(), offset(s.range));
                }
            }
            P::MatchAs(a) => {
                if let Some(p) = &a.pattern {
                    self.pattern(p, scope);
                }
                if let Some(n) = &a.name {
                    self.bind(scope, n.as_str(), offset(a.range));
                }
            }
            P::MatchOr(o) => o.patterns.iter().for_each(|p| self.pattern(p, scope)),
        }
    }

    /// An assignment target: names are bound, everything else in it is read.
    fn target(&mut self, target: &Expr, scope: usize) {
        match target {
            Expr::Name(n) => self.bind(scope, n.id.as_str(), offset(n.range)),
            Expr::Tuple(t) => t.elts.iter().for_each(|e| self.target(e, scope)),
            Expr::List(l) => l.elts.iter().for_each(|e| self.target(e, scope)),
            Expr::Starred(s) => self.target(&s.value, scope),
            // `a.b = ...`, `a[i] = ...` read `a` (and `i`).
            other => self.expr(other, scope),
        }
    }

    fn exprs(&mut self, exprs: &[Expr], scope: usize) {
        for e in exprs {
            self.expr(e, scope);
        }
    }

    fn comprehension(
        &mut self,
        generators: &[ast::Comprehension],
        results: &[&Expr],
        scope: usize,
    ) {
        // The first iterable is evaluated outside; everything else inside the comprehension.
        let inner = self.new_scope(ScopeKind::Function, scope);
        if let Some(s) = self.scopes.get_mut(inner) {
            s.comprehension = true;
        }
        for (i, g) in generators.iter().enumerate() {
            self.expr(&g.iter, if i == 0 { scope } else { inner });
            self.target(&g.target, inner);
            for cond in &g.ifs {
                self.expr(cond, inner);
            }
        }
        for r in results {
            self.expr(r, inner);
        }
    }

    fn expr(&mut self, expr: &Expr, scope: usize) {
        match expr {
            Expr::Name(n) => self.use_name(scope, n.id.as_str(), offset(n.range)),
            Expr::BoolOp(b) => self.exprs(&b.values, scope),
            Expr::NamedExpr(n) => {
                self.expr(&n.value, scope);
                // A walrus in a comprehension binds in the enclosing function.
                let mut target_scope = scope;
                while let Some(s) = self.scopes.get(target_scope).filter(|s| s.comprehension) {
                    match s.parent {
                        Some(p) => target_scope = p,
                        None => break,
                    }
                }
                self.target(&n.target, target_scope);
            }
            Expr::BinOp(b) => {
                self.expr(&b.left, scope);
                self.expr(&b.right, scope);
            }
            Expr::UnaryOp(u) => self.expr(&u.operand, scope),
            Expr::Lambda(l) => {
                self.function(scope, &l.args, FunctionBody::Expr(&l.body), offset(l.range))
            }
            Expr::IfExp(i) => {
                self.expr(&i.test, scope);
                self.expr(&i.body, scope);
                self.expr(&i.orelse, scope);
            }
            Expr::Dict(d) => {
                for k in d.keys.iter().flatten() {
                    self.expr(k, scope);
                }
                self.exprs(&d.values, scope);
            }
            Expr::Set(s) => self.exprs(&s.elts, scope),
            Expr::ListComp(c) => self.comprehension(&c.generators, &[&c.elt], scope),
            Expr::SetComp(c) => self.comprehension(&c.generators, &[&c.elt], scope),
            Expr::GeneratorExp(c) => self.comprehension(&c.generators, &[&c.elt], scope),
            Expr::DictComp(c) => self.comprehension(&c.generators, &[&c.key, &c.value], scope),
            Expr::Await(a) => self.expr(&a.value, scope),
            Expr::Yield(y) => {
                if let Some(v) = &y.value {
                    self.expr(v, scope);
                }
            }
            Expr::YieldFrom(y) => self.expr(&y.value, scope),
            Expr::Compare(c) => {
                self.expr(&c.left, scope);
                self.exprs(&c.comparators, scope);
            }
            Expr::Call(c) => {
                match &*c.func {
                    Expr::Attribute(a) => self.attribute(a, scope, true),
                    func => self.expr(func, scope),
                }
                self.exprs(&c.args, scope);
                for k in &c.keywords {
                    self.expr(&k.value, scope);
                }
            }
            Expr::FormattedValue(f) => {
                self.expr(&f.value, scope);
                if let Some(spec) = &f.format_spec {
                    self.expr(spec, scope);
                }
            }
            Expr::JoinedStr(j) => self.exprs(&j.values, scope),
            Expr::Constant(_) => {}
            Expr::Attribute(a) => self.attribute(a, scope, false),
            Expr::Subscript(s) => {
                self.expr(&s.value, scope);
                self.expr(&s.slice, scope);
            }
            Expr::Starred(s) => self.expr(&s.value, scope),
            Expr::List(l) => self.exprs(&l.elts, scope),
            Expr::Tuple(t) => self.exprs(&t.elts, scope),
            Expr::Slice(s) => {
                for part in [&s.lower, &s.upper, &s.step].into_iter().flatten() {
                    self.expr(part, scope);
                }
            }
        }
    }

    fn attribute(&mut self, a: &ast::ExprAttribute, scope: usize, called: bool) {
        self.expr(&a.value, scope);
        // A plain name as the base was just recorded as the last use.
        if let (Expr::Name(_), Some(base)) = (&*a.value, self.uses.len().checked_sub(1)) {
            let attr = if called {
                format!("{}()", a.attr)
            } else {
                a.attr.to_string()
            };
            self.attributes.push((base, attr));
        }
    }

    /// Where `name`, used in `scope`, is bound: the scope, or `None` (builtin or undefined).
    fn lookup(&self, name: &str, scope: usize) -> Option<usize> {
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

    /// Whether use `u` finds no definition when it runs.
    fn is_undefined(&self, u: &Use) -> bool {
        if BUILTINS.contains(&u.name.as_str()) {
            return false;
        }
        match self.lookup(&u.name, u.scope) {
            None => !self.star_import,
            // At module level, a use before every binding is reached first.
            Some(0) if u.scope == 0 => self
                .scopes
                .first()
                .and_then(|m| m.bound.get(&u.name))
                .is_some_and(|&first| first > u.offset && !self.star_import),
            Some(_) => false,
        }
    }

    fn resolve(self, src: &SourceFile) -> Undefined {
        let mut names: Vec<UndefinedName> = Vec::new();
        let mut seen = HashSet::new();
        let undefined: Vec<bool> = self.uses.iter().map(|u| self.is_undefined(u)).collect();
        for (u, &undef) in self.uses.iter().zip(&undefined) {
            if undef && seen.insert(u.name.clone()) {
                names.push(UndefinedName {
                    name: u.name.clone(),
                    line: src.line_of_offset(u.offset),
                });
            }
        }
        let attributes: BTreeSet<String> = self
            .attributes
            .iter()
            .filter(|(use_index, _)| undefined.get(*use_index).copied().unwrap_or(false))
            .filter_map(|(use_index, attr)| {
                let base = &self.uses.get(*use_index)?.name;
                Some(format!("{base}.{attr}"))
            })
            .collect();
        Undefined {
            names,
            attributes: attributes.into_iter().collect(),
            star_import: self.star_import,
        }
    }
}

enum FunctionBody<'a> {
    Stmts(&'a [Stmt]),
    Expr(&'a Expr),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn undefined(code: &str) -> Vec<String> {
        undefined_names(&SourceFile::new(code))
            .expect("parses")
            .name_list()
    }

    #[test]
    fn free_names_in_order_of_first_use() {
        assert_eq!(undefined("a = b + foo()\nprint(a, c)\n"), ["b", "foo", "c"]);
    }

    #[test]
    fn bindings_of_every_kind_define_names() {
        let code = "\
import os.path
import numpy as np
from json import loads as parse, dumps
def f(x, *args, y=1, **kw):
    return x + y + len(args) + len(kw) + g
class C:
    attr = 1
    def m(self):
        return attr
for i, (j, *rest) in enumerate([]):
    pass
with open('f') as fh:
    pass
try:
    pass
except ValueError as err:
    print(err)
if (n := 3) > 2:
    print(n)
squares = [k * k for k in range(3) if k]
match squares:
    case [first, *others]:
        print(first, others)
    case {'a': va, **extra}:
        print(va, extra)
lam = lambda q: q + z
print(os, np, parse, dumps, f, C, i, j, rest, fh, squares, lam)
";
        // `g` and `z` are free; `attr` is not visible from a method.
        assert_eq!(undefined(code), ["g", "attr", "z"]);
    }

    #[test]
    fn augmented_assignment_and_use_before_binding_are_undefined() {
        assert_eq!(undefined("total += 1\n"), ["total"]);
        assert_eq!(undefined("print(x)\nx = 1\n"), ["x"]);
        // Inside a function the order of definitions does not matter.
        assert!(undefined("def f():\n    return x\nx = 1\nf()\n").is_empty());
    }

    #[test]
    fn global_and_nonlocal_send_bindings_up() {
        let code = "def f():\n    global counter\n    counter = 1\nf()\nprint(counter)\n";
        assert!(undefined(code).is_empty());
        let code = "def f():\n    v = 0\n    def g():\n        nonlocal v\n        v = 2\n    g()\n    return v\n";
        assert!(undefined(code).is_empty());
    }

    #[test]
    fn attributes_and_methods_of_undefined_names_are_listed() {
        let found = undefined_names(&SourceFile::new(
            "if self.user_type:\n    r = get_func(self.name)\n    y = d.year - p.init()\nok = {}.get('a')\n",
        ))
        .expect("parses");
        assert_eq!(found.name_list(), ["self", "get_func", "d", "p"]);
        assert_eq!(
            found.attributes,
            ["d.year", "p.init()", "self.name", "self.user_type"]
        );
    }

    #[test]
    fn builtins_are_defined_and_star_imports_silence_module_names() {
        assert!(undefined("print(len(range(3)), __name__)\n").is_empty());
        let found = undefined_names(&SourceFile::new("from tkinter import *\nroot = Tk()\n"))
            .expect("parses");
        assert!(found.names.is_empty());
        assert!(found.star_import);
    }

    #[test]
    fn a_comprehension_walrus_binds_outside() {
        assert!(undefined("ys = [last := x for x in range(3)]\nprint(last)\n").is_empty());
        // The first iterable is evaluated outside the comprehension.
        assert_eq!(undefined("ys = [x for x in xs]\n"), ["xs"]);
    }
}
