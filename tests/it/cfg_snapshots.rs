//! CFG snapshots and invariants over the fixture corpus (`tests/fixtures/programs/*.py`).
//!
//! Every fixture gets a `render_text` snapshot; targeted tests pin down the semantics a tracer
//! relies on (edges of loops and `try`, line ownership of multi-line statements and nested
//! defs); corpus-wide checks catch empty blocks and dangling owners; garbage input must not panic.

use std::path::{Path, PathBuf};

use ldb::python::{
    BlockKind, EdgeKind, LineOwner, ProgramCfg, ScopeCfg, ScopeKind, SourceFile, StmtKind,
};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/programs")
}

fn load(name: &str) -> (SourceFile, ProgramCfg) {
    let path = fixtures_dir().join(format!("{name}.py"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let src = SourceFile::new(text);
    let cfg = ProgramCfg::build(&src).unwrap_or_else(|e| panic!("{name}: {e}"));
    (src, cfg)
}

fn all_fixture_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("fixture dir")
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.extension()? == "py").then(|| path.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    names.sort();
    names
}

fn scope<'a>(cfg: &'a ProgramCfg, qualname: &str) -> (usize, &'a ScopeCfg) {
    cfg.scopes
        .iter()
        .enumerate()
        .find(|(_, s)| s.qualname == qualname)
        .unwrap_or_else(|| panic!("no scope {qualname}"))
}

/// Number of the block owning `line` within `scope`.
fn block_of(cfg: &ProgramCfg, scope: usize, line: u32) -> usize {
    cfg.scope_line_owner(scope, line)
        .unwrap_or_else(|| panic!("line {line} has no owner in scope {scope}"))
        .block
}

fn has_edge(s: &ScopeCfg, from: usize, to: usize, kind: EdgeKind) -> bool {
    s.successors(from).contains(&(to, kind))
}

// ---- snapshots ----

macro_rules! snapshot_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let (src, cfg) = load(stringify!($name));
                insta::assert_snapshot!(stringify!($name), cfg.render_text(&src));
            }
        )*
        const SNAPSHOTTED: &[&str] = &[$(stringify!($name)),*];
    };
}

snapshot_tests!(
    async_def,
    bad_repr,
    big_loop,
    buggy_off_by_one,
    class_methods,
    comprehensions,
    decorators,
    early_return_loop,
    elif_chain,
    exception_escape,
    for_else_continue,
    generators,
    lambda_sort,
    match_statement,
    multiline_statements,
    nested_functions,
    nested_try,
    one_liners,
    recursion,
    try_except,
    try_finally_jumps,
    while_else_break,
    with_statement,
);

#[test]
fn every_fixture_is_snapshotted() {
    let mut listed: Vec<String> = SNAPSHOTTED.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(
        listed,
        all_fixture_names(),
        "every fixture program needs an entry in snapshot_tests! (tests/it/cfg_snapshots.rs)"
    );
}

#[test]
fn dot_snapshot() {
    let (src, cfg) = load("try_except");
    let dot = cfg.render_dot(&src);
    assert!(dot.starts_with("digraph cfg {"));
    assert_eq!(dot.matches('{').count(), dot.matches('}').count());
    insta::assert_snapshot!("dot_try_except", dot);
}

#[test]
fn dot_escapes_quotes_and_backslashes() {
    let src = SourceFile::new("s = \"a\\\"b\"\nt = '\\\\'\n");
    let cfg = ProgramCfg::build(&src).unwrap();
    let dot = cfg.render_dot(&src);
    assert!(dot.contains(r#"1: s = \"a\\\"b\"\l"#), "{dot}");
    assert!(dot.contains(r#"2: t = '\\\\'\l"#), "{dot}");
}

#[test]
fn json_form() {
    let (_, cfg) = load("recursion");
    let json = serde_json::to_value(&cfg).unwrap();
    let fact = &json["scopes"][1];
    assert_eq!(fact["qualname"], "fact");
    assert_eq!(fact["kind"], "function");
    assert_eq!(fact["blocks"][0]["stmts"][0]["kind"], "if");
    assert!(fact["edges"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["kind"] == "return" && e["to"] == fact["exit"]));
}

// ---- corpus-wide invariants ----

#[test]
fn fixtures_start_with_a_test_comment() {
    for name in all_fixture_names() {
        let text = std::fs::read_to_string(fixtures_dir().join(format!("{name}.py"))).unwrap();
        let first = text.lines().next().unwrap_or("");
        assert!(first.starts_with("# test: "), "{name}: {first}");
    }
}

#[test]
fn corpus_invariants() {
    for name in all_fixture_names() {
        let (src, cfg) = load(&name);
        assert_eq!(cfg.scopes[0].kind, ScopeKind::Module, "{name}");
        for (si, s) in cfg.scopes.iter().enumerate() {
            let ctx = format!("{name} scope {si} {}", s.qualname);
            if let Some(p) = s.parent {
                assert!(p < si, "{ctx}: parent after child");
            }
            // Exit is the last node; display numbers are node indices.
            assert_eq!(s.exit.index(), s.graph.node_count() - 1, "{ctx}");
            for (i, b) in s.graph.node_weights().enumerate() {
                assert_eq!(b.number, i, "{ctx}");
                match b.kind {
                    BlockKind::Exit => assert_eq!(i, s.exit.index(), "{ctx}"),
                    BlockKind::Code => {
                        assert!(!b.stmts.is_empty(), "{ctx}: empty block B{i}");
                        for st in &b.stmts {
                            assert!(st.first <= st.last, "{ctx}: B{i} {st:?}");
                            assert!(st.last <= src.line_count(), "{ctx}: B{i} {st:?}");
                        }
                        // Statements of a block are in source order.
                        assert!(b.stmts.windows(2).all(|w| w[0].first <= w[1].first));
                        if i != s.entry.index() && s.predecessors(i).is_empty() {
                            // Only code after a jump may be unreachable.
                            assert!(i > 0, "{ctx}");
                        }
                    }
                }
            }
            assert!(
                s.successors(s.exit.index()).is_empty(),
                "{ctx}: exit has successors"
            );
            // Blocks are numbered in source order.
            let firsts: Vec<u32> = s
                .graph
                .node_weights()
                .filter_map(|b| b.stmts.first().map(|st| st.first))
                .collect();
            assert!(firsts.windows(2).all(|w| w[0] <= w[1]), "{ctx}: {firsts:?}");
        }
        let owners = cfg.line_owners();
        assert_eq!(owners.len(), src.line_count() as usize + 1, "{name}");
        for (line, owner) in owners.iter().enumerate() {
            let Some(LineOwner { scope, block, stmt }) = *owner else {
                continue;
            };
            let b = cfg.scopes[scope].block(block).expect("owner block exists");
            let st = b.stmts.get(stmt).expect("owner stmt exists");
            assert!(st.first as usize <= line && line <= st.last as usize);
            assert!(!cfg.block_lines(scope, block).is_empty());
        }
        // Every non-blank, non-comment line that starts a statement has an owner.
        for line in 2..=src.line_count() {
            let text = src.line(line).unwrap().trim();
            let clause = ["else:", "finally:", ")", "]", "}", "):"];
            if text.is_empty()
                || text.starts_with('#')
                || clause.contains(&text)
                || text.starts_with("\"\"\"")
            {
                continue;
            }
            assert!(
                owners[line as usize].is_some(),
                "{name}: line {line} `{text}` has no owner"
            );
        }
    }
}

// ---- targeted semantics ----

#[test]
fn while_else_break_skips_else() {
    let (_, cfg) = load("while_else_break");
    let (si, s) = scope(&cfg, "find_first_multiple");
    let header = block_of(&cfg, si, 4);
    let brk = block_of(&cfg, si, 6);
    let else_block = block_of(&cfg, si, 9);
    let after = block_of(&cfg, si, 10);
    assert_eq!(s.block(header).unwrap().stmts[0].kind, StmtKind::While);
    assert!(has_edge(s, header, else_block, EdgeKind::False));
    assert!(has_edge(s, brk, after, EdgeKind::Break));
    assert!(!has_edge(s, brk, else_block, EdgeKind::Break));
    assert!(has_edge(s, else_block, after, EdgeKind::Next));
    // The increment loops back to the header.
    assert!(has_edge(
        s,
        block_of(&cfg, si, 7),
        header,
        EdgeKind::LoopBack
    ));
}

#[test]
fn for_else_and_continue() {
    let (_, cfg) = load("for_else_continue");
    let (si, s) = scope(&cfg, "first_prime_over");
    let header = block_of(&cfg, si, 14);
    let cont = block_of(&cfg, si, 16);
    assert!(has_edge(s, cont, header, EdgeKind::LoopBack));
    let else_ret = block_of(&cfg, si, 20);
    assert!(has_edge(s, header, else_ret, EdgeKind::False));
    assert!(has_edge(s, else_ret, s.exit.index(), EdgeKind::Return));
    // `is_prime`: the break skips the `else: return True`.
    let (pi, p) = scope(&cfg, "is_prime");
    let brk = block_of(&cfg, pi, 7);
    assert!(has_edge(p, brk, block_of(&cfg, pi, 10), EdgeKind::Break));
}

#[test]
fn while_true_has_no_false_edge() {
    let (_, cfg) = load("generators");
    let (si, s) = scope(&cfg, "evens");
    let header = block_of(&cfg, si, 4);
    assert!(s
        .successors(header)
        .iter()
        .all(|&(_, k)| k != EdgeKind::False));
    // Nothing falls off the end of an endless generator loop.
    assert!(s.predecessors(s.exit.index()).is_empty());
}

#[test]
fn try_handlers_get_exception_edges_from_every_body_block() {
    let (_, cfg) = load("try_except");
    let (si, s) = scope(&cfg, "parse_all");
    let try_line = block_of(&cfg, si, 7);
    assert_eq!(
        s.block(try_line).unwrap().stmts.last().unwrap().kind,
        StmtKind::Try
    );
    let body = block_of(&cfg, si, 8);
    let h1 = block_of(&cfg, si, 9);
    let h2 = block_of(&cfg, si, 11);
    assert_eq!(block_of(&cfg, si, 12), h2, "multi-line except header");
    let else_block = block_of(&cfg, si, 15);
    let finally = block_of(&cfg, si, 17);
    assert!(has_edge(s, try_line, body, EdgeKind::Next));
    assert!(has_edge(s, body, h1, EdgeKind::Exception));
    assert!(has_edge(s, body, h2, EdgeKind::Exception));
    assert!(has_edge(s, body, else_block, EdgeKind::Next));
    assert!(!has_edge(s, else_block, h1, EdgeKind::Exception));
    // finally: after else, after each handler, and exceptionally from the body.
    assert!(has_edge(s, else_block, finally, EdgeKind::Next));
    assert!(has_edge(s, h1, finally, EdgeKind::Next));
    assert!(has_edge(s, body, finally, EdgeKind::Exception));
    // The raise in the second handler goes through finally, which re-raises out of the scope.
    assert!(has_edge(s, h2, finally, EdgeKind::Exception));
    assert!(has_edge(s, finally, s.exit.index(), EdgeKind::Raise));
    assert!(has_edge(
        s,
        finally,
        block_of(&cfg, si, 6),
        EdgeKind::LoopBack
    ));
}

#[test]
fn try_body_blocks_all_reach_handler() {
    let (_, cfg) = load("try_finally_jumps");
    let (si, s) = scope(&cfg, "retry");
    let handler = block_of(&cfg, si, 14);
    let body_blocks: Vec<usize> = [8, 10, 12, 13]
        .iter()
        .map(|&l| block_of(&cfg, si, l))
        .collect();
    for b in &body_blocks {
        assert!(has_edge(s, *b, handler, EdgeKind::Exception), "B{b}");
    }
    // return / break / continue inside try pass through the finally ...
    let finally = block_of(&cfg, si, 18);
    assert!(has_edge(
        s,
        block_of(&cfg, si, 10),
        finally,
        EdgeKind::Return
    ));
    assert!(has_edge(
        s,
        block_of(&cfg, si, 12),
        finally,
        EdgeKind::Break
    ));
    assert!(has_edge(
        s,
        block_of(&cfg, si, 16),
        finally,
        EdgeKind::LoopBack
    ));
    // ... and continue from there to their real targets.
    let exit = s.exit.index();
    assert!(has_edge(s, finally, exit, EdgeKind::Return));
    assert!(has_edge(
        s,
        finally,
        block_of(&cfg, si, 19),
        EdgeKind::Break
    ));
    assert!(has_edge(
        s,
        finally,
        block_of(&cfg, si, 5),
        EdgeKind::LoopBack
    ));
    // The explicit raise is caught by the handler, not sent straight to the exit.
    assert!(!has_edge(s, block_of(&cfg, si, 13), exit, EdgeKind::Raise));
}

#[test]
fn nested_try_propagates_outward() {
    let (_, cfg) = load("nested_try");
    let (si, s) = scope(&cfg, "ratio");
    let inner_body = block_of(&cfg, si, 5);
    let inner_handler = block_of(&cfg, si, 6);
    let outer_handler = block_of(&cfg, si, 8);
    assert!(has_edge(s, inner_body, inner_handler, EdgeKind::Exception));
    assert!(has_edge(s, inner_body, outer_handler, EdgeKind::Exception));
    assert!(has_edge(
        s,
        inner_handler,
        outer_handler,
        EdgeKind::Exception
    ));
    // The outer handler does not catch the ValueError: raise leaves the scope.
    assert!(has_edge(s, inner_handler, s.exit.index(), EdgeKind::Raise));
    // A bare except catches everything.
    let (ti, t) = scope(&cfg, "safe_ratios");
    let body = block_of(&cfg, ti, 16);
    assert!(has_edge(
        t,
        body,
        block_of(&cfg, ti, 17),
        EdgeKind::Exception
    ));
}

#[test]
fn multi_line_statements_keep_all_their_lines() {
    let (src, cfg) = load("multiline_statements");
    let owners = cfg.line_owners();
    let (si, s) = scope(&cfg, "describe");
    let owner = |l: usize| owners[l].unwrap();
    // Multi-line string assignment at module level: lines 2-3, one statement.
    assert_eq!(owner(2), owner(3));
    assert_eq!(owner(2).scope, 0);
    // Multi-line generator call: lines 7-10.
    assert!((7..=10).all(|l| owner(l) == owner(7)));
    // Multi-line `if (...)` header: lines 11-14, the header statement only.
    assert!((11..=14).all(|l| owner(l) == owner(11)));
    let header = s.block(owner(11).block).unwrap().stmts[owner(11).stmt];
    assert_eq!(
        (header.first, header.last, header.kind),
        (11, 14, StmtKind::If)
    );
    assert_ne!(owner(15).block, owner(11).block);
    // Call with keyword arguments over 7 lines.
    assert!((19..=25).all(|l| owner(l) == owner(19)));
    // Backslash continuation.
    assert_eq!(owner(26), owner(27));
    assert_eq!(cfg.block_lines(si, owner(19).block), vec![(19, 28)]);
    assert_eq!(src.line(27).unwrap().trim(), ".strip()");
}

#[test]
fn nested_def_body_lines_belong_to_inner_scope() {
    let (_, cfg) = load("nested_functions");
    let owners = cfg.line_owners();
    let (outer, _) = scope(&cfg, "make_counter");
    let (inner, s) = scope(&cfg, "make_counter.<locals>.increment");
    assert_eq!(s.parent, Some(outer));
    assert_eq!(s.def_lines, (5, 5));
    assert_eq!(owners[5].unwrap().scope, outer);
    for (line, owner) in owners.iter().enumerate().take(9).skip(6) {
        assert_eq!(owner.unwrap().scope, inner, "line {line}");
    }
    assert_eq!(owners[10].unwrap().scope, outer);
    assert_eq!(cfg.find_scope("increment", 5), Some(inner));
    assert_eq!(cfg.find_scope("<module>", 1), Some(0));
}

#[test]
fn decorated_defs_span_their_decorators() {
    let (_, cfg) = load("decorators");
    let (_, shout) = scope(&cfg, "shout");
    assert_eq!(shout.def_lines, (5, 7));
    let (_, wrapper) = scope(&cfg, "shout.<locals>.wrapper");
    assert_eq!(wrapper.def_lines, (8, 9));
    let (_, greet) = scope(&cfg, "greet");
    assert_eq!(greet.def_lines, (15, 19));
    let owners = cfg.line_owners();
    assert!((15..=19).all(|l| owners[l] == owners[15] && owners[l].unwrap().scope == 0));
    assert_eq!(owners[20].unwrap().scope, 3);
}

#[test]
fn class_scopes_and_methods() {
    let (_, cfg) = load("class_methods");
    let (ci, c) = scope(&cfg, "Stack");
    assert_eq!(c.kind, ScopeKind::Class);
    let (_, m) = scope(&cfg, "Stack.from_list");
    assert_eq!(m.parent, Some(ci));
    assert_eq!(m.def_lines, (10, 11));
    let (pi, push) = scope(&cfg, "Stack.push");
    let raise = block_of(&cfg, pi, 19);
    assert!(has_edge(push, raise, push.exit.index(), EdgeKind::Raise));
}

#[test]
fn elif_chain_is_nested() {
    let (_, cfg) = load("elif_chain");
    let (si, s) = scope(&cfg, "grade");
    let kinds: Vec<StmtKind> = [3, 5, 7, 9]
        .iter()
        .map(|&l| {
            let o = cfg.scope_line_owner(si, l).unwrap();
            s.block(o.block).unwrap().stmts[o.stmt].kind
        })
        .collect();
    assert_eq!(
        kinds,
        [StmtKind::If, StmtKind::Elif, StmtKind::Elif, StmtKind::Elif]
    );
    for (test, next) in [(3, 5), (5, 7), (7, 9), (9, 12)] {
        let (a, b) = (block_of(&cfg, si, test), block_of(&cfg, si, next));
        assert!(has_edge(s, a, b, EdgeKind::False), "{test} -> {next}");
    }
    let ret = block_of(&cfg, si, 13);
    assert_eq!(s.predecessors(ret).len(), 5);
}

#[test]
fn match_cases_chain_and_wildcard_ends() {
    let (_, cfg) = load("match_statement");
    let (si, s) = scope(&cfg, "classify");
    let subject = block_of(&cfg, si, 3);
    let cases: Vec<usize> = [4, 6, 8, 10, 12]
        .iter()
        .map(|&l| block_of(&cfg, si, l))
        .collect();
    assert!(has_edge(s, subject, cases[0], EdgeKind::Next));
    for w in cases.windows(2) {
        assert!(has_edge(s, w[0], w[1], EdgeKind::False));
    }
    assert!(has_edge(s, cases[0], block_of(&cfg, si, 5), EdgeKind::True));
    // `case _:` is irrefutable: no false edge out of it.
    let last = *cases.last().unwrap();
    assert!(s
        .successors(last)
        .iter()
        .all(|&(_, k)| k != EdgeKind::False));
}

#[test]
fn with_header_stays_in_block() {
    let (_, cfg) = load("with_statement");
    let (si, _) = scope(&cfg, "copy_upper");
    let b = block_of(&cfg, si, 20);
    for line in 21..=23 {
        assert_eq!(block_of(&cfg, si, line), b);
    }
}

#[test]
fn async_def_scope_kind() {
    let (_, cfg) = load("async_def");
    let (si, s) = scope(&cfg, "add_all");
    assert_eq!(s.kind, ScopeKind::AsyncFunction);
    let header = block_of(&cfg, si, 12);
    assert_eq!(s.block(header).unwrap().stmts[0].kind, StmtKind::For);
}

#[test]
fn early_return_and_unreachable_code() {
    let (_, cfg) = load("early_return_loop");
    let (si, s) = scope(&cfg, "index_of");
    let ret = block_of(&cfg, si, 5);
    assert!(has_edge(s, ret, s.exit.index(), EdgeKind::Return));
    assert!(has_edge(
        s,
        block_of(&cfg, si, 4),
        block_of(&cfg, si, 3),
        EdgeKind::LoopBack
    ));

    let src = SourceFile::new("def f():\n    return 1\n    x = 2\n    return x\n");
    let cfg = ProgramCfg::build(&src).unwrap();
    let s = &cfg.scopes[1];
    let dead = cfg.scope_line_owner(1, 3).unwrap().block;
    assert_ne!(dead, 0);
    assert!(s.predecessors(dead).is_empty());
    assert_eq!(cfg.block_lines(1, dead), vec![(3, 4)]);
}

#[test]
fn one_line_compound_statements() {
    let (_, cfg) = load("one_liners");
    let (si, s) = scope(&cfg, "clamp");
    // `if x < lo: return lo` is a test block and a return block on the same line.
    let test = block_of(&cfg, si, 3);
    let ret = s
        .successors(test)
        .into_iter()
        .find(|&(_, k)| k == EdgeKind::True)
        .unwrap()
        .0;
    assert_eq!(cfg.block_lines(si, ret), vec![(3, 3)]);
    // The module owns the one-line def line; the function body shares it.
    let owners = cfg.line_owners();
    assert_eq!(owners[6].unwrap().scope, 0);
    let (sq, _) = scope(&cfg, "square");
    assert!(cfg.scope_line_owner(sq, 6).is_some());
}

#[test]
fn dangling_edges_attach_to_exit() {
    let src = SourceFile::new("def f(x):\n    if x:\n        y = 1\n");
    let cfg = ProgramCfg::build(&src).unwrap();
    let s = &cfg.scopes[1];
    let exit = s.exit.index();
    assert_eq!(exit, 2);
    assert!(has_edge(s, 0, exit, EdgeKind::False));
    assert!(has_edge(s, 1, exit, EdgeKind::Next));
}

#[test]
fn module_with_only_comments_has_entry_at_exit() {
    let src = SourceFile::new("# nothing here\n\n# still nothing\n");
    let cfg = ProgramCfg::build(&src).unwrap();
    assert_eq!(cfg.scopes.len(), 1);
    assert_eq!(cfg.scopes[0].entry, cfg.scopes[0].exit);
    assert!(cfg.line_owners().iter().all(Option::is_none));
}

// ---- robustness ----

#[test]
fn syntax_errors_carry_position() {
    let err = ProgramCfg::build(&SourceFile::new("x = 1\ny = (2 +\n")).unwrap_err();
    assert!(err.line >= 2, "{err:?}");
    let err = ProgramCfg::build(&SourceFile::new("def f(:\n    pass\n")).unwrap_err();
    assert_eq!((err.line, err.column), (1, 7), "{err:?}");
    assert!(!err.message.is_empty());
}

#[test]
fn garbage_never_panics() {
    let deep_parens = format!("x = {}1{}\n", "(".repeat(500), ")".repeat(500));
    let deep_ifs: String = (0..150)
        .map(|i| format!("{}if x:\n", "    ".repeat(i)))
        .collect::<String>()
        + &"    ".repeat(150)
        + "pass\n";
    let ok_nesting: String = (0..40)
        .map(|i| format!("{}while x:\n", " ".repeat(i)))
        .collect::<String>()
        + &" ".repeat(40)
        + "break\n";
    let long_chain = format!("x = {}1\n", "1 + ".repeat(100_000));
    let long_attr = format!("x = a{}\n", ".b()".repeat(50_000));
    let long_fstring = format!("x = f\"{{{}1}}\"\n", "-".repeat(100_000));
    let long_elif = format!(
        "if x == 0:\n    pass\n{}",
        "elif x:\n    pass\n".repeat(20_000)
    );
    let inputs: Vec<String> = vec![
        String::new(),
        "\n\n\n".into(),
        "# only a comment".into(),
        "def".into(),
        "def f(:".into(),
        "if x\n  pass".into(),
        "  indented = 1\n".into(),
        "x = 1\n  y = 2\n".into(),
        "\"\"\"unterminated".into(),
        "'abc".into(),
        "f(1,,2)".into(),
        "match x:\n    case:\n        pass\n".into(),
        "try:\n    pass\n".into(),
        "else:\n".into(),
        "return".into(),
        "break\ncontinue\n".into(),
        "@deco\n".into(),
        "class A(:\n".into(),
        "x = \u{0}\n".into(),
        "\u{feff}x = 1\n".into(),
        "λ = 'ünïcødé 🎉'\nprint(λ)\n".into(),
        "x = '\u{202e}evil'\n".into(),
        "\r\r\r".into(),
        "x = 1\r\ny = 2\rz = 3".into(),
        "\t\tx = 1\n".into(),
        "if True:\n\tx = 1\n        y = 2\n".into(),
        "}{)(][".into(),
        "🎉🎉🎉".into(),
        "x = 1 +\\".into(),
        "\\".into(),
        "lambda: (yield)".into(),
        "async def f():\n    async with a as b, c:\n        async for x in y:\n            await x\n".into(),
        "while True:\n    pass\nelse:\n    x = 1\n".into(),
        "for x in y:\n    pass\nelse:\n    break\n".into(),
        "try:\n    pass\nexcept* ValueError:\n    pass\nfinally:\n    return 1\n".into(),
        deep_parens,
        deep_ifs,
        ok_nesting,
        long_chain,
        long_attr,
        long_fstring,
        long_elif,
    ];
    for text in inputs {
        let src = SourceFile::new(text.clone());
        match ProgramCfg::build(&src) {
            Ok(cfg) => {
                let _ = cfg.render_text(&src);
                let _ = cfg.render_dot(&src);
                let owners = cfg.line_owners();
                assert_eq!(owners.len(), src.line_count() as usize + 1, "{text:?}");
                for s in &cfg.scopes {
                    for b in s.graph.node_weights() {
                        assert!(b.kind == BlockKind::Exit || !b.stmts.is_empty());
                    }
                }
            }
            Err(e) => {
                assert!(e.line >= 1 && e.column >= 1, "{text:?}: {e:?}");
                assert!(e.line <= src.line_count().max(1), "{text:?}: {e:?}");
            }
        }
    }
}

#[test]
fn limits_match_cpython_not_stricter() {
    // CPython 3.11 compiles these; they must build here too.
    let chain = format!("x = {}1\n", "1 + ".repeat(2_500));
    let elifs = format!(
        "if x == 0:\n    pass\n{}else:\n    pass\n",
        "elif x:\n    pass\n".repeat(2_500)
    );
    let nested: String = (0..99)
        .map(|i| format!("{}if x:\n", " ".repeat(i)))
        .collect::<String>()
        + &" ".repeat(99)
        + "pass\n";
    let parens = format!("x = {}1{}\n", "(".repeat(199), ")".repeat(199));
    for text in [chain, elifs, nested, parens] {
        let src = SourceFile::new(text);
        let cfg = ProgramCfg::build(&src).unwrap_or_else(|e| panic!("{e}"));
        assert!(cfg.scopes[0].graph.node_count() > 1);
    }
}

#[test]
fn offsets_beyond_the_text_do_not_panic() {
    let src = SourceFile::new("a\nbc\n");
    assert_eq!(src.line_of_offset(u32::MAX), 2);
    assert_eq!(src.line(u32::MAX), None);
    let cfg = ProgramCfg::build(&src).unwrap();
    assert!(cfg.block_lines(7, 7).is_empty());
    assert!(cfg.block_lines(0, 99).is_empty());
    assert!(cfg.scope_line_owner(9, 1).is_none());
    assert!(cfg.scopes[0].successors(1000).is_empty());
}
