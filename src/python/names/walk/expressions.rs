//! The walk over expressions: names read, walrus bindings, comprehension scopes, and the
//! attributes read from each name.

use rustpython_parser::ast::{self, Expr};

use super::{offset, AttributeRead, FunctionBody, ScopeKind, Walk};

impl Walk {
    pub(super) fn exprs(&mut self, exprs: &[Expr], scope: usize) {
        for e in exprs {
            self.expr(e, scope);
        }
    }

    pub(super) fn comprehension(
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

    pub(super) fn expr(&mut self, expr: &Expr, scope: usize) {
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
            Expr::Lambda(l) => self.function(scope, &l.args, FunctionBody::Expr(&l.body)),
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
                let before = self.uses.len();
                self.expr(&c.left, scope);
                // `name is None` / `name is not None`: a prefix that makes `name` None takes
                // the branch a stand-in never does.
                let none_test = matches!(c.ops[..], [ast::CmpOp::Is | ast::CmpOp::IsNot])
                    && matches!(
                        c.comparators[..],
                        [Expr::Constant(ast::ExprConstant {
                            value: ast::Constant::None,
                            ..
                        })]
                    );
                if none_test && matches!(*c.left, Expr::Name(_)) && self.uses.len() > before {
                    self.none_tested.push(before);
                }
                let left = (self.uses.len() == before + 1).then_some(before);
                let middle = self.uses.len();
                self.exprs(&c.comparators, scope);
                // `a is b` of two names: a prefix that binds both to one object takes the
                // branch two stand-ins never do.
                let identity = matches!(c.ops[..], [ast::CmpOp::Is | ast::CmpOp::IsNot])
                    && matches!(c.comparators[..], [Expr::Name(_)])
                    && matches!(*c.left, Expr::Name(_));
                if let (true, Some(left)) = (identity, left) {
                    if self.uses.len() == middle + 1 {
                        self.identity_tested.push((left, middle));
                    }
                }
            }
            Expr::Call(c) => {
                if let Expr::Name(n) = &*c.func {
                    let opens_stdin = n.id.as_str() == "open"
                        && matches!(c.args.first(), Some(Expr::Constant(k))
                            if matches!(&k.value, ast::Constant::Int(i) if i.to_string() == "0"));
                    let reader =
                        n.id.as_str() == "input" || self.stdin_aliases.contains(n.id.as_str());
                    if reader || opens_stdin {
                        self.reads_input();
                    }
                }
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
            Expr::Constant(c) => {
                // `'.txt'`, `'*.py'`: a file suffix the snippet filters what it lists by (not a
                // format spec such as `'.2f'`).
                if let ast::Constant::Str(text) = &c.value {
                    let suffix = text.trim_start_matches('*');
                    let ext = suffix.strip_prefix('.').unwrap_or("");
                    if (1..=5).contains(&ext.len())
                        && ext.starts_with(|c: char| c.is_ascii_alphabetic())
                        && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    {
                        self.suffixes.insert(suffix.to_string());
                    }
                }
            }
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

    pub(super) fn attribute(&mut self, a: &ast::ExprAttribute, scope: usize, called: bool) {
        if a.attr.as_str() == "stdin" {
            self.reads_input();
        }
        self.expr(&a.value, scope);
        // A plain name as the base was just recorded as the last use.
        if let (Expr::Name(_), Some(base)) = (&*a.value, self.uses.len().checked_sub(1)) {
            self.attributes.push(AttributeRead {
                base,
                attr: a.attr.to_string(),
                called,
            });
        }
    }
}
