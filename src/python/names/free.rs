//! Name analysis of a program or snippet, from the parser (not from text patterns): the names it
//! uses but binds nowhere, how it uses them (bare, or only as `X.attr`), which statements read
//! standard input, and where a `return` stands outside any function (a flattened function body).
//!
//! Binding is counted program-wide, not per scope: a snippet's missing context is what is wanted
//! here (imports it left out), and a name bound anywhere is the program's own business.

use std::collections::{BTreeMap, BTreeSet};

use rustpython_parser::ast::{self, Constant, Expr, Ranged, Stmt};

use crate::python::builtins::builtin_set;
use crate::python::source::SourceFile;

/// A name loaded somewhere and bound nowhere (and not a builtin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreeName {
    pub name: String,
    /// First line that uses it.
    pub line: u32,
    /// Attributes read from it (`math.gcd` → `gcd`).
    pub attrs: BTreeSet<String>,
    /// Used other than as `name.attr` (called, passed, indexed, ...).
    pub bare: bool,
}

/// A `return` outside every function: (byte offsets) the statement's start, the end of the
/// `return` keyword, and the statement's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModuleReturn {
    pub start: usize,
    pub keyword_end: usize,
    pub end: usize,
    pub line: u32,
}

/// What [`analyse`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameFacts {
    /// In order of first use.
    pub free: Vec<FreeName>,
    /// First lines of the statements that read standard input (`input()`, `sys.stdin`,
    /// `open(0)`).
    pub input_lines: BTreeSet<u32>,
    pub module_returns: Vec<ModuleReturn>,
}

impl NameFacts {
    pub fn reads_input(&self) -> bool {
        !self.input_lines.is_empty()
    }
}

/// Analyse a parsed module.
pub fn analyse(src: &SourceFile, suite: &[Stmt]) -> NameFacts {
    let mut w = Walker {
        src,
        bound: BTreeSet::new(),
        uses: BTreeMap::new(),
        order: Vec::new(),
        input_lines: BTreeSet::new(),
        module_returns: Vec::new(),
        stmt_line: 0,
        function_depth: 0,
        stdin_aliases: BTreeSet::new(),
    };
    w.body(suite);
    let builtins = builtin_set();
    let free = w
        .order
        .iter()
        .filter(|n| !w.bound.contains(*n) && !builtins.contains(n.as_str()))
        .filter_map(|n| w.uses.get(n).cloned())
        .collect();
    NameFacts {
        free,
        input_lines: w.input_lines,
        module_returns: w.module_returns,
    }
}

struct Walker<'a> {
    src: &'a SourceFile,
    bound: BTreeSet<String>,
    uses: BTreeMap<String, FreeName>,
    order: Vec<String>,
    input_lines: BTreeSet<u32>,
    module_returns: Vec<ModuleReturn>,
    /// First line of the statement whose own expressions are being walked.
    stmt_line: u32,
    /// Functions, lambdas and class bodies around the current statement.
    function_depth: usize,
    /// Names bound to a reader of stdin without calling it (`input = sys.stdin.readline`).
    stdin_aliases: BTreeSet<String>,
}

impl Walker<'_> {
    fn line(&self, node: &impl Ranged) -> u32 {
        self.src.line_of_offset(u32::from(node.range().start()))
    }

    fn bind(&mut self, name: &str) {
        self.bound.insert(name.to_string());
    }

    /// Record the names of an expression that is known not to read stdin.
    fn names_only(&mut self, e: &Expr) {
        let lines_before = self.input_lines.clone();
        self.expr(e);
        self.input_lines = lines_before;
    }

    fn load(&mut self, name: &str, line: u32, attr: Option<&str>) {
        if name == "stdin" {
            self.input_lines.insert(self.stmt_line);
        }
        let entry = self.uses.entry(name.to_string()).or_insert_with(|| {
            self.order.push(name.to_string());
            FreeName {
                name: name.to_string(),
                line,
                attrs: BTreeSet::new(),
                bare: false,
            }
        });
        match attr {
            Some(a) => {
                entry.attrs.insert(a.to_string());
            }
            None => entry.bare = true,
        }
    }

    fn body(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn exprs(&mut self, es: &[Expr]) {
        for e in es {
            self.expr(e);
        }
    }

    fn opt(&mut self, e: Option<&Expr>) {
        if let Some(e) = e {
            self.expr(e);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        let outer_line = self.stmt_line;
        self.stmt_line = self.line(s);
        match s {
            Stmt::FunctionDef(f) => {
                self.bind(f.name.as_str());
                self.exprs(&f.decorator_list);
                self.opt(f.returns.as_deref());
                self.function(&f.args, &f.body);
            }
            Stmt::AsyncFunctionDef(f) => {
                self.bind(f.name.as_str());
                self.exprs(&f.decorator_list);
                self.opt(f.returns.as_deref());
                self.function(&f.args, &f.body);
            }
            Stmt::ClassDef(c) => {
                self.bind(c.name.as_str());
                self.exprs(&c.decorator_list);
                self.exprs(&c.bases);
                for k in &c.keywords {
                    self.expr(&k.value);
                }
                self.function_depth += 1;
                self.body(&c.body);
                self.function_depth -= 1;
            }
            Stmt::Return(r) => {
                if self.function_depth == 0 {
                    let start = usize::from(r.range.start());
                    self.module_returns.push(ModuleReturn {
                        start,
                        keyword_end: start + "return".len(),
                        end: usize::from(r.range.end()),
                        line: self.stmt_line,
                    });
                }
                self.opt(r.value.as_deref());
            }
            Stmt::Delete(d) => self.exprs(&d.targets),
            Stmt::Assign(a) => {
                if reads_stdin_uncalled(&a.value) {
                    // `input = sys.stdin.readline` reads nothing; calling the alias does.
                    for t in &a.targets {
                        if let Expr::Name(n) = t {
                            self.stdin_aliases.insert(n.id.to_string());
                        }
                    }
                    self.names_only(&a.value);
                } else {
                    self.expr(&a.value);
                }
                self.exprs(&a.targets);
            }
            Stmt::TypeAlias(t) => {
                self.expr(&t.name);
                self.expr(&t.value);
            }
            Stmt::AugAssign(a) => {
                self.expr(&a.value);
                // `x += 1` reads x first: it uses x, and does not bind a name never bound.
                match a.target.as_ref() {
                    Expr::Name(n) => self.load(n.id.as_str(), self.stmt_line, None),
                    other => self.expr(other),
                }
            }
            Stmt::AnnAssign(a) => {
                self.expr(&a.annotation);
                self.opt(a.value.as_deref());
                self.expr(&a.target);
            }
            Stmt::For(f) => {
                self.expr(&f.iter);
                self.expr(&f.target);
                self.body(&f.body);
                self.body(&f.orelse);
            }
            Stmt::AsyncFor(f) => {
                self.expr(&f.iter);
                self.expr(&f.target);
                self.body(&f.body);
                self.body(&f.orelse);
            }
            Stmt::While(w) => {
                self.expr(&w.test);
                self.body(&w.body);
                self.body(&w.orelse);
            }
            Stmt::If(i) => {
                self.expr(&i.test);
                self.body(&i.body);
                self.body(&i.orelse);
            }
            Stmt::With(w) => {
                for item in &w.items {
                    self.expr(&item.context_expr);
                    self.opt(item.optional_vars.as_deref());
                }
                self.body(&w.body);
            }
            Stmt::AsyncWith(w) => {
                for item in &w.items {
                    self.expr(&item.context_expr);
                    self.opt(item.optional_vars.as_deref());
                }
                self.body(&w.body);
            }
            Stmt::Match(m) => {
                self.expr(&m.subject);
                for case in &m.cases {
                    self.pattern(&case.pattern);
                    self.opt(case.guard.as_deref());
                    self.body(&case.body);
                }
            }
            Stmt::Raise(r) => {
                self.opt(r.exc.as_deref());
                self.opt(r.cause.as_deref());
            }
            Stmt::Try(t) => self.try_parts(&t.body, &t.handlers, &t.orelse, &t.finalbody),
            Stmt::TryStar(t) => self.try_parts(&t.body, &t.handlers, &t.orelse, &t.finalbody),
            Stmt::Assert(a) => {
                self.expr(&a.test);
                self.opt(a.msg.as_deref());
            }
            Stmt::Import(i) => {
                for alias in &i.names {
                    let name = alias.asname.as_ref().unwrap_or(&alias.name);
                    let top = name.as_str().split('.').next().unwrap_or("");
                    self.bind(top);
                }
            }
            Stmt::ImportFrom(i) => {
                for alias in &i.names {
                    let name = alias.asname.as_ref().unwrap_or(&alias.name);
                    self.bind(name.as_str());
                }
            }
            Stmt::Global(_) | Stmt::Nonlocal(_) => {}
            Stmt::Expr(e) => self.expr(&e.value),
            Stmt::Pass(_) | Stmt::Break(_) | Stmt::Continue(_) => {}
        }
        self.stmt_line = outer_line;
    }

    fn try_parts(
        &mut self,
        body: &[Stmt],
        handlers: &[ast::ExceptHandler],
        orelse: &[Stmt],
        finalbody: &[Stmt],
    ) {
        self.body(body);
        for h in handlers {
            let ast::ExceptHandler::ExceptHandler(h) = h;
            self.stmt_line = self.line(h);
            self.opt(h.type_.as_deref());
            if let Some(name) = &h.name {
                self.bind(name.as_str());
            }
            self.body(&h.body);
        }
        self.body(orelse);
        self.body(finalbody);
    }

    fn function(&mut self, args: &ast::Arguments, body: &[Stmt]) {
        self.arguments(args);
        self.function_depth += 1;
        self.body(body);
        self.function_depth -= 1;
    }

    fn arguments(&mut self, args: &ast::Arguments) {
        for a in args
            .posonlyargs
            .iter()
            .chain(&args.args)
            .chain(&args.kwonlyargs)
        {
            self.bind(a.def.arg.as_str());
            self.opt(a.def.annotation.as_deref());
            self.opt(a.default.as_deref());
        }
        for a in args.vararg.iter().chain(&args.kwarg) {
            self.bind(a.arg.as_str());
            self.opt(a.annotation.as_deref());
        }
    }

    fn comprehension(&mut self, generators: &[ast::Comprehension]) {
        for g in generators {
            self.expr(&g.iter);
            self.expr(&g.target);
            self.exprs(&g.ifs);
        }
    }

    fn pattern(&mut self, p: &ast::Pattern) {
        match p {
            ast::Pattern::MatchValue(v) => self.expr(&v.value),
            ast::Pattern::MatchSingleton(_) => {}
            ast::Pattern::MatchSequence(s) => {
                for q in &s.patterns {
                    self.pattern(q);
                }
            }
            ast::Pattern::MatchMapping(m) => {
                self.exprs(&m.keys);
                for q in &m.patterns {
                    self.pattern(q);
                }
                if let Some(rest) = &m.rest {
                    self.bind(rest.as_str());
                }
            }
            ast::Pattern::MatchClass(c) => {
                self.expr(&c.cls);
                for q in c.patterns.iter().chain(&c.kwd_patterns) {
                    self.pattern(q);
                }
            }
            ast::Pattern::MatchStar(s) => {
                if let Some(name) = &s.name {
                    self.bind(name.as_str());
                }
            }
            ast::Pattern::MatchAs(a) => {
                if let Some(q) = &a.pattern {
                    self.pattern(q);
                }
                if let Some(name) = &a.name {
                    self.bind(name.as_str());
                }
            }
            ast::Pattern::MatchOr(o) => {
                for q in &o.patterns {
                    self.pattern(q);
                }
            }
        }
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::BoolOp(b) => self.exprs(&b.values),
            Expr::NamedExpr(n) => {
                self.expr(&n.value);
                self.expr(&n.target);
            }
            Expr::BinOp(b) => {
                self.expr(&b.left);
                self.expr(&b.right);
            }
            Expr::UnaryOp(u) => self.expr(&u.operand),
            Expr::Lambda(l) => {
                self.arguments(&l.args);
                self.function_depth += 1;
                self.expr(&l.body);
                self.function_depth -= 1;
            }
            Expr::IfExp(i) => {
                self.expr(&i.test);
                self.expr(&i.body);
                self.expr(&i.orelse);
            }
            Expr::Dict(d) => {
                for k in d.keys.iter().flatten() {
                    self.expr(k);
                }
                self.exprs(&d.values);
            }
            Expr::Set(s) => self.exprs(&s.elts),
            Expr::ListComp(c) => {
                self.comprehension(&c.generators);
                self.expr(&c.elt);
            }
            Expr::SetComp(c) => {
                self.comprehension(&c.generators);
                self.expr(&c.elt);
            }
            Expr::DictComp(c) => {
                self.comprehension(&c.generators);
                self.expr(&c.key);
                self.expr(&c.value);
            }
            Expr::GeneratorExp(c) => {
                self.comprehension(&c.generators);
                self.expr(&c.elt);
            }
            Expr::Await(a) => self.expr(&a.value),
            Expr::Yield(y) => self.opt(y.value.as_deref()),
            Expr::YieldFrom(y) => self.expr(&y.value),
            Expr::Compare(c) => {
                self.expr(&c.left);
                self.exprs(&c.comparators);
            }
            Expr::Call(c) => {
                if let Expr::Name(n) = c.func.as_ref() {
                    let opens_stdin = n.id.as_str() == "open"
                        && matches!(c.args.first(), Some(Expr::Constant(k))
                            if matches!(&k.value, Constant::Int(i) if i.to_string() == "0"));
                    let reader =
                        n.id.as_str() == "input" || self.stdin_aliases.contains(n.id.as_str());
                    if reader || opens_stdin {
                        self.input_lines.insert(self.stmt_line);
                    }
                }
                self.expr(&c.func);
                self.exprs(&c.args);
                for k in &c.keywords {
                    self.expr(&k.value);
                }
            }
            Expr::FormattedValue(f) => {
                self.expr(&f.value);
                self.opt(f.format_spec.as_deref());
            }
            Expr::JoinedStr(j) => self.exprs(&j.values),
            Expr::Constant(_) => {}
            Expr::Attribute(a) => {
                if a.attr.as_str() == "stdin" {
                    self.input_lines.insert(self.stmt_line);
                }
                match a.value.as_ref() {
                    Expr::Name(n) if n.ctx == ast::ExprContext::Load => {
                        let line = self.line(n);
                        self.load(n.id.as_str(), line, Some(a.attr.as_str()));
                    }
                    other => self.expr(other),
                }
            }
            Expr::Subscript(s) => {
                self.expr(&s.value);
                self.expr(&s.slice);
            }
            Expr::Starred(s) => self.expr(&s.value),
            Expr::Name(n) => match n.ctx {
                ast::ExprContext::Load => {
                    let line = self.line(n);
                    self.load(n.id.as_str(), line, None);
                }
                ast::ExprContext::Store => self.bind(n.id.as_str()),
                ast::ExprContext::Del => {}
            },
            Expr::List(l) => self.exprs(&l.elts),
            Expr::Tuple(t) => self.exprs(&t.elts),
            Expr::Slice(s) => {
                self.opt(s.lower.as_deref());
                self.opt(s.upper.as_deref());
                self.opt(s.step.as_deref());
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::source::parse_module;

    fn facts(code: &str) -> NameFacts {
        let src = SourceFile::new(code);
        let suite = parse_module(&src).unwrap();
        analyse(&src, &suite)
    }

    #[test]
    fn free_names_are_the_unbound_non_builtins() {
        let f = facts(
            "n = 4\nfor i in range(n):\n    x = gcd(i, n) + math.floor(2.5)\nprint(mat.pi, x)\n\
             def g(a, *b, k=dflt):\n    return a + b + k\ny = [z for z in q]\n",
        );
        let names: Vec<&str> = f.free.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["gcd", "math", "mat", "dflt", "q"]);
        let math = &f.free[1];
        assert_eq!(math.line, 3);
        assert!(!math.bare);
        assert_eq!(math.attrs.iter().collect::<Vec<_>>(), ["floor"]);
        assert!(f.free[0].bare);
        assert!(f.module_returns.is_empty(), "the return is inside g");
    }

    #[test]
    fn input_reading_statements_are_found() {
        let f = facts(
            "import sys\na = int(input())\nb = sys.stdin.readline()\nfor line in open(0):\n    \
             pass\nc = 1\n",
        );
        assert_eq!(f.input_lines.iter().copied().collect::<Vec<_>>(), [2, 3, 4]);
        assert!(f.free.is_empty());
        // An alias of a reader reads nothing until it is called.
        let f = facts("import sys\nread = sys.stdin.readline\nn = 4\nm = int(read())\n");
        assert_eq!(f.input_lines.iter().copied().collect::<Vec<_>>(), [4]);
        let f = facts("import sys\ninput = sys.stdin.readline\nn = 4\n");
        assert!(!f.reads_input());
    }

    #[test]
    fn module_level_returns_are_located() {
        let code = "x = 1\nif x:\n    return x + 1\nreturn\n";
        let f = facts(code);
        assert_eq!(f.module_returns.len(), 2);
        let r = f.module_returns[0];
        assert_eq!(r.line, 3);
        assert_eq!(&code[r.start..r.keyword_end], "return");
        assert_eq!(&code[r.start..r.end], "return x + 1");
        assert_eq!(f.module_returns[1].line, 4);
    }

    #[test]
    fn augmented_assignment_to_an_unbound_name_is_a_use() {
        let f = facts("total += 1\n");
        assert_eq!(f.free.len(), 1);
        assert_eq!(f.free[0].name, "total");
    }
}
