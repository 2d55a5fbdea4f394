//! Every prompt template rendered with fixed inputs, as snapshots; a missing variable is an error.

use ldb::generate::prompts::Prompts;
use serde_json::json;

fn prompts() -> Prompts {
    Prompts::new().expect("templates load")
}

#[test]
fn every_template_renders_as_expected() {
    let p = prompts();
    let cases = [
        ("system", json!({})),
        (
            "generate",
            json!({
                "task_prompt": "def add(a, b):\n    \"\"\"Return a + b.\"\"\"\n",
                "entry_point": "add",
                "visible_tests": ["assert add(1, 2) == 3"],
            }),
        ),
        (
            "translate",
            json!({
                "source_language": "cpp",
                "source_code": "int f(int x) { return x * 2; }",
                "entry_point": "f",
                "visible_tests": ["assert f(2) == 4"],
            }),
        ),
        (
            "debug",
            json!({
                "task_prompt": "Return the sum of the even numbers in xs.",
                "program": "def f(xs):\n    return 0",
                "test_summary": ["PASS `assert f([]) == 0`", "FAIL `assert f([2]) == 2`: got 0, expected 2"],
                "failing_test": "assert f([2]) == 2",
                "failing_result": "FAIL (got 0, expected 2)",
                "unit_name": "block",
                "trace": "[BLOCK-0] in f\n     2 |     return 0\n  state before: xs = [2]\n",
                "labels": ["BLOCK-0"],
            }),
        ),
        (
            "regenerate",
            json!({
                "feedback": "verdicts",
                "wrong_blocks": [{"block": "BLOCK-0", "correct": false, "explanation": "ignores xs"}],
                "traced": true,
            }),
        ),
        (
            "regenerate",
            json!({"feedback": "verdicts", "wrong_blocks": [], "traced": false}),
        ),
        (
            "repair_code",
            json!({"problem": "no code block found", "entry_point": "f"}),
        ),
        (
            "repair_verdicts",
            json!({"problem": "no JSON found", "labels": ["BLOCK-0", "BLOCK-1"]}),
        ),
        // Appended, so the numbers of the snapshots above stay put.
        (
            "context",
            json!({
                "task_prompt": "Return the sum of the even numbers in xs.",
                "program": "def f(xs):\n    return 0",
                "test_summary": ["PASS `assert f([]) == 0`", "FAIL `assert f([2]) == 2`: got 0, expected 2"],
            }),
        ),
        (
            "selfdebug_expl",
            json!({
                "task_prompt": "Return the sum of the even numbers in xs.",
                "program": "def f(xs):\n    return 0",
                "test_summary": ["PASS `assert f([]) == 0`", "FAIL `assert f([2]) == 2`: got 0, expected 2"],
                "failing_test": "assert f([2]) == 2",
                "failing_result": "FAIL (got 0, expected 2)",
            }),
        ),
        (
            "selfdebug_trace",
            json!({
                "task_prompt": "Return the sum of the even numbers in xs.",
                "program": "def f(xs):\n    return 0",
                "test_summary": ["PASS `assert f([]) == 0`", "FAIL `assert f([2]) == 2`: got 0, expected 2"],
                "failing_test": "assert f([2]) == 2",
                "failing_result": "FAIL (got 0, expected 2)",
            }),
        ),
        ("regenerate", json!({"feedback": "explain"})),
        ("regenerate", json!({"feedback": "dry_run"})),
        (
            "repair_feedback",
            json!({
                "task_prompt": "Return the sum of the even numbers in xs.",
                "program": "def f(xs):\n    return xs[0]",
                "test_summary": ["PASS `assert f([1]) == 0`", "ERROR `assert f([]) == 0`: IndexError: list index out of range (program line 2) — raised at line 2: `return xs[0]`", "FAIL `assert f([2, 4]) == 6`: got 2, expected 6"],
            }),
        ),
        (
            "debug_short",
            json!({
                "task_prompt": "Return the sum of the even numbers in xs.",
                "program": "def f(xs):\n    return 0",
                "test_summary": ["PASS `assert f([]) == 0`", "FAIL `assert f([2]) == 2`: got 0, expected 2"],
                "failing_test": "assert f([2]) == 2",
                "failing_result": "FAIL (got 0, expected 2)",
                "unit_name": "block",
                "trace": "[BLOCK-0] in f\n     2 |     return 0\n  state before: xs = [2]\n",
                "labels": ["BLOCK-0"],
            }),
        ),
        ("check_system", json!({})),
        (
            "check_predict",
            json!({
                "cfg": "Module (the program starts at its first block):\nBlock B0:\n  Statements:\n      1 | x = input()\n      2 | print(x + 1)\n  Next:\n    <END>\n",
                "stdin": null,
                "input_desc": "one integer",
                "reads_input": true,
                "imports": ["from math import gcd"],
                "unresolved": [],
                "continuing": false,
                "executed": [],
                "stop_line": null,
                "stop_block": "B0",
                "reason": null,
                "state": null,
                "start_block": "B0",
                "max_steps": 40,
            }),
        ),
        // A prediction that continues a real run (hybrid mode).
        (
            "check_predict",
            json!({
                "cfg": "Module (the program starts at its first block):\nBlock B0:\n  Statements:\n      1 | a = [1, 2]\n      2 | b = np.array(a) + 'x'\n  Next:\n    <END>\n",
                "stdin": null,
                "input_desc": null,
                "reads_input": false,
                "imports": [],
                "unresolved": ["np"],
                "continuing": true,
                "executed": [],
                "stop_line": 2,
                "stop_block": "B0",
                "reason": "`np` is not defined: it comes from code the snippet leaves out",
                "state": [{"name": "a", "value": "[1, 2]"}],
                "start_block": "B0",
                "max_steps": 40,
            }),
        ),
        (
            "patch_fim",
            json!({
                "task_lines": ["Return the sum of the even numbers in xs."],
                "tests": ["assert f([]) == 0", "assert f([2]) == 2"],
                "failing": "assert f([2]) == 2 (got 0, expected 2)",
            }),
        ),
        (
            "patch_chat",
            json!({
                "task_prompt": "Return the sum of the even numbers in xs.",
                "program": "def f(xs):\n    return 0  # <-- FIX",
                "test_summary": ["PASS `assert f([]) == 0`", "FAIL `assert f([2]) == 2`: got 0, expected 2"],
                "hole_lines": 1,
                "whole": false,
                "body_of": null,
            }),
        ),
        (
            "patch_chat",
            json!({
                "task_prompt": "Return the sum of the even numbers in xs.",
                "program": "def f(xs):\n    total = 0  # <-- FIX\n    return total  # <-- FIX",
                "test_summary": ["FAIL `assert f([2]) == 2`: got 0, expected 2"],
                "hole_lines": 2,
                "whole": true,
                "body_of": null,
            }),
        ),
        (
            "patch_chat",
            json!({
                "task_prompt": "Return the number of days in dates equal to day.",
                "program": "def count(day, dates):\n    return  # <-- FIX",
                "test_summary": ["FAIL `assert count(1, [1]) == 1`: got None, expected 1"],
                "hole_lines": 1,
                "whole": false,
                "body_of": "count",
            }),
        ),
    ];
    for (i, (name, vars)) in cases.iter().enumerate() {
        let text = p.render(name, vars).expect("renders");
        insta::assert_snapshot!(format!("prompt_{i}_{name}"), text);
    }
    // Every template is covered above (or by `exec_cases`).
    let exec = exec_cases();
    for name in Prompts::names() {
        assert!(
            cases.iter().chain(exec.iter()).any(|(n, _)| *n == name),
            "no snapshot for {name}"
        );
    }
}

/// The `ldb exec` templates (prefixes that make a snippet run).
fn exec_cases() -> Vec<(&'static str, serde_json::Value)> {
    let snippet = "deltas = []\nfor i in range(len(readings)):\n    deltas.append(readings[i + 1] - readings[i])\nprint(max(deltas) / interval)";
    vec![
        ("exec_system", json!({})),
        (
            "exec_response",
            json!({"names": ["readings", "interval"], "allow_missing": false}),
        ),
        ("exec_response", json!({"names": [], "allow_missing": true})),
        (
            "exec_undefined",
            json!({
                "snippet": snippet,
                "names": ["readings", "interval"],
                "attributes": ["self.mode", "p.init()"],
                "allow_missing": false,
            }),
        ),
        (
            "exec_error",
            json!({
                "in_prefix": false,
                "line": 2,
                "code_line": "for i in range(len(readings)):",
                "error": "TypeError",
                "message": "object of type 'int' has no len()",
                "missing_module": "",
                "missing_file": "",
                "removed": [],
                "allow_missing": false,
                "names": ["readings", "interval"],
            }),
        ),
        (
            "exec_error",
            json!({
                "in_prefix": false,
                "line": 1,
                "code_line": "import numpy as np",
                "error": "ModuleNotFoundError",
                "message": "No module named 'numpy'",
                "missing_module": "numpy",
                "missing_file": "data.json",
                "removed": ["import pandas as pd"],
                "allow_missing": false,
                "names": [],
            }),
        ),
        (
            "exec_coverage",
            json!({
                "annotated": "if mode == 'fast':\n    speed = 10\nelse:\n    speed = 1 # uncovered\nprint(speed)",
                "allow_missing": false,
                "names": ["mode"],
            }),
        ),
    ]
}

#[test]
fn exec_templates_render_as_expected() {
    let p = prompts();
    for (i, (name, vars)) in exec_cases().iter().enumerate() {
        let text = p.render(name, vars).expect("renders");
        insta::assert_snapshot!(format!("prompt_exec_{i}_{name}"), text);
    }
}

#[test]
fn a_missing_variable_is_an_error() {
    let err = prompts()
        .render("debug", json!({"task_prompt": "x"}))
        .expect_err("must fail");
    assert!(err.to_string().contains("debug"), "{err}");
}

#[test]
fn a_prompt_directory_replaces_the_templates_it_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("system.j2"), "You are a careful tester.").expect("write");
    std::fs::write(dir.path().join("notes.txt"), "not a template").expect("write");
    let p = Prompts::from_dir(dir.path()).expect("loads");
    assert_eq!(
        p.render("system", json!({})).expect("renders"),
        "You are a careful tester.\n"
    );
    // The others stay built in.
    assert_eq!(
        p.render("repair_code", json!({"problem": "x", "entry_point": "f"}))
            .expect("renders"),
        prompts()
            .render("repair_code", json!({"problem": "x", "entry_point": "f"}))
            .expect("renders"),
    );
}

#[test]
fn a_template_file_that_names_no_template_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("sytem.j2"), "typo").expect("write");
    let err = Prompts::from_dir(dir.path())
        .expect_err("must fail")
        .to_string();
    assert!(err.contains("sytem.j2") && err.contains("system"), "{err}");
    let missing = Prompts::from_dir(&dir.path().join("nope"))
        .expect_err("must fail")
        .to_string();
    assert!(missing.contains("nope"), "{missing}");
}
