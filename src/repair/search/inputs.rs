//! Extra inputs for choosing among candidates: type-aware mutations of the arguments the visible
//! tests pass to the entry point.
//!
//! Visible tests are few (HumanEval 2-3, MBPP 1), so passing them says little. Calling every
//! candidate on more inputs and comparing the outputs tells programs apart without knowing the
//! right answers. The inputs come from the visible tests' own calls, found by the parser: each
//! literal argument is changed the way a tester would (an integer ±1, zero, negated; a list
//! emptied, shortened, reversed, one element changed; a string emptied, shortened, reversed),
//! one argument at a time, so the inputs keep the types the task expects; and two arguments of
//! one kind swapped.

use rustpython_parser::ast::{self, Constant, Expr, Ranged};

use crate::python::source::{parse_module, SourceFile};
use crate::run::TestInput;

/// A literal argument, as far as we can change it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Lit {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
    None,
    List(Vec<Lit>),
    Tuple(Vec<Lit>),
    /// Anything else is kept as its source text.
    Other(String),
}

impl Lit {
    /// Whether `self` and `other` could stand for the same parameter: both numbers, both
    /// strings, both lists, both tuples or both booleans.
    fn same_kind(&self, other: &Lit) -> bool {
        matches!(
            (self, other),
            (Lit::Int(_) | Lit::Float(_), Lit::Int(_) | Lit::Float(_))
                | (Lit::Str(_), Lit::Str(_))
                | (Lit::List(_), Lit::List(_))
                | (Lit::Tuple(_), Lit::Tuple(_))
                | (Lit::Bool(_), Lit::Bool(_))
        )
    }

    fn from_expr(expr: &Expr, text: &str) -> Lit {
        let source = || {
            text.get(usize::from(expr.range().start())..usize::from(expr.range().end()))
                .unwrap_or("")
                .to_string()
        };
        match expr {
            Expr::Constant(c) => match &c.value {
                Constant::Int(n) => n
                    .to_string()
                    .parse()
                    .map(Lit::Int)
                    .unwrap_or_else(|_| Lit::Other(source())),
                Constant::Float(x) => Lit::Float(*x),
                Constant::Str(s) => Lit::Str(s.clone()),
                Constant::Bool(b) => Lit::Bool(*b),
                Constant::None => Lit::None,
                _ => Lit::Other(source()),
            },
            Expr::UnaryOp(u) if matches!(u.op, ast::UnaryOp::USub) => {
                match Lit::from_expr(&u.operand, text) {
                    Lit::Int(n) => Lit::Int(-n),
                    Lit::Float(x) => Lit::Float(-x),
                    _ => Lit::Other(source()),
                }
            }
            Expr::List(l) => Lit::List(l.elts.iter().map(|e| Lit::from_expr(e, text)).collect()),
            Expr::Tuple(t) => Lit::Tuple(t.elts.iter().map(|e| Lit::from_expr(e, text)).collect()),
            _ => Lit::Other(source()),
        }
    }

    fn render(&self) -> String {
        match self {
            Lit::Int(n) => n.to_string(),
            Lit::Float(x) if x.is_finite() => {
                let s = format!("{x:?}");
                if s.contains(['.', 'e', 'E']) {
                    s
                } else {
                    format!("{s}.0")
                }
            }
            Lit::Float(x) if x.is_nan() => "float('nan')".into(),
            Lit::Float(x) => {
                if *x > 0.0 {
                    "float('inf')".into()
                } else {
                    "float('-inf')".into()
                }
            }
            Lit::Str(s) => py_str(s),
            Lit::Bool(b) => if *b { "True" } else { "False" }.into(),
            Lit::None => "None".into(),
            Lit::List(xs) => format!("[{}]", join(xs)),
            Lit::Tuple(xs) if xs.len() == 1 => format!("({},)", xs[0].render()),
            Lit::Tuple(xs) => format!("({})", join(xs)),
            Lit::Other(s) => s.clone(),
        }
    }

    /// Changes a tester would try, each a new value of the same type.
    fn mutations(&self) -> Vec<Lit> {
        let mut out = Vec::new();
        match self {
            Lit::Int(n) => {
                let n = *n;
                out.extend([n + 1, n - 1, 0, -n, n.saturating_mul(2)].map(Lit::Int));
            }
            Lit::Float(x) => {
                let x = *x;
                out.extend([x + 1.0, x / 2.0, -x, 0.0].map(Lit::Float));
            }
            Lit::Str(s) => {
                let chars: Vec<char> = s.chars().collect();
                out.push(Lit::Str(String::new()));
                if chars.len() > 1 {
                    out.push(Lit::Str(chars[1..].iter().collect()));
                    out.push(Lit::Str(chars[..chars.len() - 1].iter().collect()));
                    out.push(Lit::Str(chars.iter().rev().collect()));
                }
                out.push(Lit::Str(format!("{s}{s}")));
                let swapped: String = chars
                    .iter()
                    .map(|c| {
                        if c.is_uppercase() {
                            c.to_lowercase().collect::<String>()
                        } else {
                            c.to_uppercase().collect()
                        }
                    })
                    .collect();
                out.push(Lit::Str(swapped));
            }
            Lit::Bool(b) => out.push(Lit::Bool(!b)),
            Lit::List(xs) | Lit::Tuple(xs) => {
                let wrap = |v: Vec<Lit>| match self {
                    Lit::List(_) => Lit::List(v),
                    _ => Lit::Tuple(v),
                };
                out.push(wrap(Vec::new()));
                if !xs.is_empty() {
                    out.push(wrap(xs[1..].to_vec()));
                    out.push(wrap(xs[..xs.len() - 1].to_vec()));
                    out.push(wrap(xs.iter().rev().cloned().collect()));
                    let mut dup = xs.clone();
                    dup.push(xs[0].clone());
                    out.push(wrap(dup));
                }
                // One element changed, for the first few elements: its first change, and a
                // number's sign (signs are where hand-written tests are thinnest).
                for (i, x) in xs.iter().enumerate().take(3) {
                    let mut changes: Vec<Lit> = x.mutations().into_iter().take(1).collect();
                    match x {
                        Lit::Int(n) if *n != 0 => changes.push(Lit::Int(-n)),
                        Lit::Float(f) if *f != 0.0 => changes.push(Lit::Float(-f)),
                        _ => {}
                    }
                    for m in changes {
                        let mut changed = xs.clone();
                        changed[i] = m;
                        out.push(wrap(changed));
                    }
                }
            }
            Lit::None | Lit::Other(_) => {}
        }
        out.retain(|m| m != self);
        out
    }
}

fn join(xs: &[Lit]) -> String {
    xs.iter().map(Lit::render).collect::<Vec<_>>().join(", ")
}

/// A Python string literal for `s`.
fn py_str(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// One call of the entry point in a visible test: its arguments as literals (or source text).
#[derive(Debug, Clone)]
pub(super) struct CallSite {
    pub(super) positional: Vec<Lit>,
    keywords: Vec<(String, Lit)>,
    /// The answer the test expects, when it is `assert CALL == LITERAL` (either side).
    pub(super) answer: Option<Lit>,
}

impl CallSite {
    fn render(&self, entry: &str) -> String {
        let mut args: Vec<String> = self.positional.iter().map(Lit::render).collect();
        args.extend(
            self.keywords
                .iter()
                .map(|(k, v)| format!("{k}={}", v.render())),
        );
        format!("{entry}({})", args.join(", "))
    }
}

/// Calls of `entry` anywhere in `expr`.
fn find_calls(expr: &Expr, entry: &str, text: &str, out: &mut Vec<CallSite>) {
    match expr {
        Expr::Call(call) => {
            let is_entry = matches!(call.func.as_ref(), Expr::Name(n) if n.id.as_str() == entry);
            let plain = !call.args.iter().any(|a| matches!(a, Expr::Starred(_)))
                && call.keywords.iter().all(|k| k.arg.is_some());
            if is_entry && plain {
                out.push(CallSite {
                    answer: None,
                    positional: call.args.iter().map(|a| Lit::from_expr(a, text)).collect(),
                    keywords: call
                        .keywords
                        .iter()
                        .filter_map(|k| {
                            k.arg
                                .as_ref()
                                .map(|name| (name.to_string(), Lit::from_expr(&k.value, text)))
                        })
                        .collect(),
                });
            }
            find_calls(&call.func, entry, text, out);
            for a in &call.args {
                find_calls(a, entry, text, out);
            }
            for k in &call.keywords {
                find_calls(&k.value, entry, text, out);
            }
        }
        Expr::Compare(c) => {
            find_calls(&c.left, entry, text, out);
            for e in &c.comparators {
                find_calls(e, entry, text, out);
            }
        }
        Expr::BoolOp(b) => b
            .values
            .iter()
            .for_each(|e| find_calls(e, entry, text, out)),
        Expr::BinOp(b) => {
            find_calls(&b.left, entry, text, out);
            find_calls(&b.right, entry, text, out);
        }
        Expr::UnaryOp(u) => find_calls(&u.operand, entry, text, out),
        Expr::Subscript(s) => {
            find_calls(&s.value, entry, text, out);
            find_calls(&s.slice, entry, text, out);
        }
        Expr::Attribute(a) => find_calls(&a.value, entry, text, out),
        Expr::List(l) => l.elts.iter().for_each(|e| find_calls(e, entry, text, out)),
        Expr::Tuple(t) => t.elts.iter().for_each(|e| find_calls(e, entry, text, out)),
        Expr::IfExp(i) => {
            find_calls(&i.test, entry, text, out);
            find_calls(&i.body, entry, text, out);
            find_calls(&i.orelse, entry, text, out);
        }
        _ => {}
    }
}

pub(super) fn calls_in_test(source: &str, entry: &str) -> Vec<CallSite> {
    let src = SourceFile::new(crate::python::text::dedent(source));
    let Ok(suite) = parse_module(&src) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for stmt in &suite {
        match stmt {
            ast::Stmt::Assert(a) => {
                let at = out.len();
                find_calls(&a.test, entry, src.text(), &mut out);
                // `assert f(...) == 3`: the outer call is the first one found.
                if let (Some(answer), Some(site)) =
                    (expected_answer(&a.test, entry, src.text()), out.get_mut(at))
                {
                    site.answer = Some(answer);
                }
            }
            ast::Stmt::Expr(e) => find_calls(&e.value, entry, src.text(), &mut out),
            ast::Stmt::Assign(a) => find_calls(&a.value, entry, src.text(), &mut out),
            _ => {}
        }
    }
    out
}

/// The literal an assertion compares a call of `entry` with: `f(x) == 3` or `3 == f(x)`.
fn expected_answer(test: &Expr, entry: &str, text: &str) -> Option<Lit> {
    let Expr::Compare(c) = test else {
        return None;
    };
    if c.ops.len() != 1 || !matches!(c.ops[0], ast::CmpOp::Eq) {
        return None;
    }
    // A call `find_calls` records (no `*args`, no `**kwargs`), so the site found first is it.
    let is_entry = |e: &Expr| {
        matches!(e, Expr::Call(call)
            if matches!(call.func.as_ref(), Expr::Name(n) if n.id.as_str() == entry)
                && !call.args.iter().any(|a| matches!(a, Expr::Starred(_)))
                && call.keywords.iter().all(|k| k.arg.is_some()))
    };
    let (left, right) = (c.left.as_ref(), c.comparators.first()?);
    let literal = if is_entry(left) {
        right
    } else if is_entry(right) {
        left
    } else {
        return None;
    };
    match Lit::from_expr(literal, text) {
        Lit::Other(_) => None,
        lit => Some(lit),
    }
}

/// Every call of `entry` the visible tests make, with its arguments.
pub(super) fn call_sites(tests: &[TestInput], entry: &str) -> Vec<CallSite> {
    tests
        .iter()
        .filter_map(|t| match t {
            TestInput::Code { source } => Some(calls_in_test(source, entry)),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Up to `n` new calls of `entry`, made by changing one argument of a visible test's call (and
/// by swapping two of one kind, see [`extra_inputs_with`]); the same `seed` gives the same
/// inputs. Calls the visible tests already make are left out.
pub fn extra_inputs(tests: &[TestInput], entry: &str, n: usize, seed: u64) -> Vec<String> {
    extra_inputs_with(tests, entry, n, seed, true)
}

/// [`extra_inputs`], with calls whose two arguments of one kind are swapped only when `swapped`.
pub fn extra_inputs_with(
    tests: &[TestInput],
    entry: &str,
    n: usize,
    seed: u64,
    swapped: bool,
) -> Vec<String> {
    if entry.is_empty() || n == 0 {
        return Vec::new();
    }
    let sites = call_sites(tests, entry);
    let originals: Vec<String> = sites.iter().map(|s| s.render(entry)).collect();
    let mut found: Vec<String> = Vec::new();
    let mut push = |call: String| {
        if !originals.contains(&call) && !found.contains(&call) {
            found.push(call);
        }
    };
    for site in &sites {
        for i in 0..site.positional.len() {
            for m in site.positional[i].mutations() {
                let mut changed = site.clone();
                changed.positional[i] = m;
                push(changed.render(entry));
            }
        }
        for i in 0..site.keywords.len() {
            for m in site.keywords[i].1.mutations() {
                let mut changed = site.clone();
                changed.keywords[i].1 = m;
                push(changed.render(entry));
            }
        }
    }
    // Two arguments of one kind swapped: a program that reads them in one order only (the
    // hypotenuse always last) answers the visible tests and not this. Few, and no single-argument
    // change finds them, so they get up to a third of the inputs ahead of the shuffle.
    let mut swaps: Vec<String> = Vec::new();
    for site in sites.iter().filter(|_| swapped) {
        for i in 0..site.positional.len() {
            for j in i + 1..site.positional.len() {
                if !site.positional[i].same_kind(&site.positional[j]) {
                    continue;
                }
                let mut changed = site.clone();
                changed.positional.swap(i, j);
                let call = changed.render(entry);
                if !originals.contains(&call) && !found.contains(&call) && !swaps.contains(&call) {
                    swaps.push(call);
                }
            }
        }
    }
    // A fixed shuffle, so a small `n` still mixes every argument and every visible call.
    let mut rng = fastrand::Rng::with_seed(seed);
    rng.shuffle(&mut found);
    rng.shuffle(&mut swaps);
    swaps.truncate(n / 3);
    let rest = n.saturating_sub(swaps.len());
    found.truncate(rest);
    swaps.extend(found);
    swaps
}

/// The visible tests' calls of `entry` with one list, tuple or string argument emptied, each
/// once: the input a hand-written test most often leaves out, and where a program that indexes
/// without looking raises.
pub fn emptied_inputs(tests: &[TestInput], entry: &str) -> Vec<String> {
    if entry.is_empty() {
        return Vec::new();
    }
    let sites = call_sites(tests, entry);
    let empty = |l: &Lit| match l {
        Lit::List(xs) if !xs.is_empty() => Some(Lit::List(Vec::new())),
        Lit::Tuple(xs) if !xs.is_empty() => Some(Lit::Tuple(Vec::new())),
        Lit::Str(s) if !s.is_empty() => Some(Lit::Str(String::new())),
        _ => None,
    };
    let mut found: Vec<String> = Vec::new();
    for site in &sites {
        for i in 0..site.positional.len() {
            if let Some(e) = empty(&site.positional[i]) {
                let mut changed = site.clone();
                changed.positional[i] = e;
                let call = changed.render(entry);
                if !found.contains(&call) {
                    found.push(call);
                }
            }
        }
    }
    found
}

/// The visible tests' calls of `entry` with a number or string argument replaced by the first or
/// the last element of a list or tuple argument of the same call, where that element is of the
/// same kind: the ends are where a search or a count compares past its bounds (an index one too
/// far when the value is the last element). Only for an argument that holds values, not positions:
/// an integer counts as a value when some visible call passes one beyond its sequence's length
/// either way (a correct `get(xs, i)` raises on an element taken as a position).
pub fn member_inputs(tests: &[TestInput], entry: &str) -> Vec<String> {
    if entry.is_empty() {
        return Vec::new();
    }
    let sites = call_sites(tests, entry);
    fn items(l: &Lit) -> Option<&[Lit]> {
        match l {
            Lit::List(xs) | Lit::Tuple(xs) => Some(xs),
            _ => None,
        }
    }
    let scalar = |l: &Lit| matches!(l, Lit::Int(_) | Lit::Float(_) | Lit::Str(_));
    // Argument pairs (scalar, sequence) by position, and whether the scalar holds values.
    let mut pairs: Vec<(usize, usize, bool)> = Vec::new();
    for site in &sites {
        let args = &site.positional;
        for (i, a) in args.iter().enumerate() {
            for (j, b) in args.iter().enumerate() {
                let (true, Some(xs)) = (scalar(a), items(b)) else {
                    continue;
                };
                let value = match a {
                    Lit::Int(n) => {
                        let len = i128::try_from(xs.len()).unwrap_or(i128::MAX);
                        // Past the end even as a count (`top_k(xs, len(xs))` takes all).
                        *n > len || *n < -len
                    }
                    _ => true,
                };
                match pairs.iter_mut().find(|(pi, pj, _)| (*pi, *pj) == (i, j)) {
                    Some(pair) => pair.2 |= value,
                    None => pairs.push((i, j, value)),
                }
            }
        }
    }
    let mut found: Vec<String> = Vec::new();
    for site in &sites {
        for &(i, j, value) in &pairs {
            let (Some(a), Some(xs)) = (
                site.positional.get(i),
                site.positional.get(j).and_then(items),
            ) else {
                continue;
            };
            if !value || !scalar(a) {
                continue;
            }
            for x in [xs.first(), xs.last()].into_iter().flatten() {
                if !a.same_kind(x) || x == a {
                    continue;
                }
                let mut changed = site.clone();
                changed.positional[i] = x.clone();
                let call = changed.render(entry);
                if !found.contains(&call) {
                    found.push(call);
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_swapped_call_when_swaps_are_off() {
        let tests = [code("assert f(3, 4) == 5")];
        let with = extra_inputs_with(&tests, "f", 1000, 0, true);
        let without = extra_inputs_with(&tests, "f", 1000, 0, false);
        assert!(with.contains(&"f(4, 3)".to_string()), "{with:?}");
        assert!(!without.contains(&"f(4, 3)".to_string()), "{without:?}");
    }

    fn code(s: &str) -> TestInput {
        TestInput::Code { source: s.into() }
    }

    #[test]
    fn mutates_each_argument_of_the_entry_point_call() {
        let tests = [code("assert f([1, 2, 3], 2) == 5")];
        let inputs = extra_inputs(&tests, "f", 100, 0);
        assert!(inputs.contains(&"f([], 2)".to_string()), "{inputs:?}");
        assert!(inputs.contains(&"f([3, 2, 1], 2)".to_string()));
        assert!(inputs.contains(&"f([1, 2, 3], 3)".to_string()));
        assert!(inputs.contains(&"f([1, 2, 3], -2)".to_string()));
        assert!(inputs.contains(&"f([2, 2, 3], 2)".to_string()));
        assert!(
            !inputs.contains(&"f([1, 2, 3], 2)".to_string()),
            "the visible call itself"
        );
        assert!(inputs.iter().all(|i| i.starts_with("f(")));
    }

    #[test]
    fn strings_floats_tuples_and_keywords_keep_their_types() {
        let tests = [code(
            "assert g('ab\\'c', 1.5, (1,), flag=True) == 'x'\nassert g('', 0.0, (), flag=False)",
        )];
        let inputs = extra_inputs(&tests, "g", 1000, 7);
        assert!(
            inputs.contains(&"g('', 1.5, (1,), flag=True)".to_string()),
            "{inputs:?}"
        );
        assert!(inputs.contains(&"g('c\\'ba', 1.5, (1,), flag=True)".to_string()));
        assert!(inputs.contains(&"g('ab\\'c', 2.5, (1,), flag=True)".to_string()));
        assert!(inputs.contains(&"g('ab\\'c', 1.5, (), flag=True)".to_string()));
        assert!(inputs.contains(&"g('ab\\'c', 1.5, (1,), flag=False)".to_string()));
    }

    #[test]
    fn arguments_of_one_kind_are_swapped_others_not() {
        let tests = [
            code("assert f(3, 4, 5) == True"),
            code("assert g([1], 2, 'a') == 0"),
        ];
        let f = extra_inputs(&tests, "f", 1000, 0);
        for swapped in ["f(4, 3, 5)", "f(5, 4, 3)", "f(3, 5, 4)"] {
            assert!(f.contains(&swapped.to_string()), "{swapped} in {f:?}");
        }
        let g = extra_inputs(&tests, "g", 1000, 0);
        assert!(!g.contains(&"g(2, [1], 'a')".to_string()), "{g:?}");
        assert!(!g.contains(&"g([1], 'a', 2)".to_string()), "{g:?}");
        // Up to a third of a small `n` are swaps, whatever the shuffle does with the rest.
        let few = extra_inputs(&tests[..1], "f", 6, 0);
        let swaps = ["f(4, 3, 5)", "f(5, 4, 3)", "f(3, 5, 4)"];
        assert_eq!(few.len(), 6);
        assert_eq!(
            few.iter().filter(|c| swaps.contains(&c.as_str())).count(),
            2,
            "{few:?}"
        );
        // Equal arguments swapped give the visible call back: nothing new.
        let same = extra_inputs(&[code("assert h(2, 2) == 4")], "h", 1000, 0);
        assert_eq!(same.iter().filter(|c| c.as_str() == "h(2, 2)").count(), 0);
    }

    #[test]
    fn other_functions_and_non_literal_arguments_are_left_alone() {
        let tests = [code("assert f(helper(3), xs) == g(4)")];
        let inputs = extra_inputs(&tests, "f", 100, 0);
        assert!(inputs.is_empty(), "{inputs:?}");
        let tests = [code("assert f(helper(3), 4) == g(4)")];
        let inputs = extra_inputs(&tests, "f", 100, 0);
        assert!(
            inputs.contains(&"f(helper(3), 5)".to_string()),
            "{inputs:?}"
        );
    }

    #[test]
    fn emptied_inputs_empty_one_sequence_argument_at_a_time() {
        let tests = [
            code("assert f(42, [1, 5], 'ab') == 3"),
            code("assert f(5, (1, 5, 10), '') == 1"),
        ];
        assert_eq!(
            emptied_inputs(&tests, "f"),
            ["f(42, [], 'ab')", "f(42, [1, 5], '')", "f(5, (), '')"]
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_inputs_and_n_bounds_them() {
        let tests = [code("assert f([1, 2, 3], 'abc') == 5")];
        let a = extra_inputs(&tests, "f", 5, 42);
        assert_eq!(a, extra_inputs(&tests, "f", 5, 42));
        assert_eq!(a.len(), 5);
        assert!(extra_inputs(&tests, "f", 0, 42).is_empty());
        assert!(extra_inputs(&tests, "", 5, 42).is_empty());
        assert!(extra_inputs(&[code("assert f(1 ==")], "f", 5, 42).is_empty());
    }

    #[test]
    fn member_inputs_take_a_value_from_the_ends_of_the_sequence_beside_it() {
        let tests = [
            code("assert search(42, (-5, 1, 3, 10)) == 4"),
            code("assert search(5, [1, 5, 10]) == 1"),
        ];
        assert_eq!(
            member_inputs(&tests, "search"),
            [
                "search(-5, (-5, 1, 3, 10))",
                "search(10, (-5, 1, 3, 10))",
                "search(1, [1, 5, 10])",
                "search(10, [1, 5, 10])"
            ]
        );
    }

    #[test]
    fn member_inputs_leave_positions_and_other_kinds_alone() {
        // Every integer beside a list is an index or a count of it: a position, not a value.
        let positions = [
            code("assert get([5, 7, 9], 2) == 9"),
            code("assert top([5, 7], 2) == [7, 5]"),
        ];
        assert!(member_inputs(&positions, "get").is_empty());
        assert!(member_inputs(&positions, "top").is_empty());
        // A string beside a list of numbers, a number beside a list of records.
        let kinds = [
            code("assert f('a', [1, 2]) == 0"),
            code("assert g(1, [('a', 1)]) == 0"),
        ];
        assert!(member_inputs(&kinds, "f").is_empty());
        assert!(member_inputs(&kinds, "g").is_empty());
    }
}
