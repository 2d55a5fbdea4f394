//! Loading tasks and seeds: ldb's own format, every error kind, the HumanEval, MBPP and LDB
//! datasets (read from `../shared/datasets` when present, skipped otherwise), and malformed input.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ldb::task::{
    docstring_asserts, load_ldb_layout, load_seeds, load_tasks, ErrorKind, IoTest, Location,
    SourceCode, Task, TaskError,
};
use serde_json::{json, Value};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tasks")
        .join(name)
}

/// Writes `content` to a file named `name` in a fresh temporary directory.
fn temp_file(name: &str, content: impl AsRef<[u8]>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    std::fs::write(&path, content).expect("write temp file");
    (dir, path)
}

fn load_err(name: &str, content: impl AsRef<[u8]>) -> TaskError {
    let (_dir, path) = temp_file(name, content);
    match load_tasks(&path) {
        Ok(tasks) => panic!("expected an error for {name}, loaded {tasks:?}"),
        Err(e) => e,
    }
}

fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("valid jsonl"))
        .collect()
}

/// Whether `code` calls `name` (allowing a space before the parenthesis, as MBPP 77 has).
fn calls(code: &str, name: &str) -> bool {
    code.match_indices(name)
        .any(|(i, _)| code[i + name.len()..].trim_start().starts_with('('))
}

fn valid_task() -> Value {
    json!({
        "task_id": "t/0",
        "prompt": "Add one.",
        "entry_point": "inc",
        "visible_tests": ["assert inc(1) == 2"],
    })
}

// ---------------------------------------------------------------- our format

#[test]
fn loads_single_task_json() {
    let tasks = load_tasks(&fixture("single.json")).expect("load");
    assert_eq!(
        tasks,
        vec![Task {
            task_id: "demo/0".into(),
            prompt: "def f(xs: list) -> int:\n    \"\"\"Return the sum of xs.\"\"\"\n".into(),
            entry_point: "f".into(),
            visible_tests: vec!["assert f([1, 2]) == 3".into()],
            hidden_tests: Some(
                "def check(candidate):\n    assert candidate([]) == 0\n\ncheck(f)\n".into()
            ),
            seed: Some("def f(xs):\n    return sum(xs)\n".into()),
            source: Some(SourceCode {
                language: "cpp".into(),
                code: "int f(std::vector<int> xs);".into()
            }),
            io_tests: vec![IoTest {
                stdin: "3\n1 2 3\n".into(),
                stdout: "6\n".into()
            }],
            scope: Default::default(),
            peers: Vec::new(),
            pytest_nodes: Vec::new(),
            untold: false,
            in_project: false,
        }]
    );
}

#[test]
fn loads_json_array() {
    let tasks = load_tasks(&fixture("array.json")).expect("load");
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0].entry_point, "largest");
    assert_eq!(tasks[0].visible_tests.len(), 2);
    // A pure stdin/stdout task needs no entry point; a missing stdin means empty input.
    assert_eq!(tasks[1].entry_point, "");
    assert!(tasks[1].is_script());
    assert_eq!(
        tasks[1].io_tests[1],
        IoTest {
            stdin: String::new(),
            stdout: "0\n".into()
        }
    );
}

#[test]
fn loads_jsonl_skipping_blank_lines() {
    let tasks = load_tasks(&fixture("tasks.jsonl")).expect("load");
    let ids: Vec<&str> = tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["demo/3", "demo/4", "demo/5"]);
    assert_eq!(
        tasks[1].hidden_tests.as_deref(),
        Some("assert neg(1) == -1\n")
    );
    assert!(tasks[1].visible_tests.is_empty());
}

#[test]
fn uncalled_check_in_hidden_tests_gets_called() {
    let mut t = valid_task();
    t["hidden_tests"] = json!("def check(candidate):\n    assert candidate(1) == 2\n");
    let (_dir, path) = temp_file("h.json", t.to_string());
    let task = &load_tasks(&path).expect("load")[0];
    let hidden = "def check(candidate):\n    assert candidate(1) == 2\n\n\ncheck(inc)\n";
    assert_eq!(task.hidden_tests.as_deref(), Some(hidden));
    // Saving and reloading does not add a second call.
    std::fs::write(&path, serde_json::to_string(task).expect("json")).expect("write");
    assert_eq!(
        load_tasks(&path).expect("reload")[0]
            .hidden_tests
            .as_deref(),
        Some(hidden)
    );
}

#[test]
fn crlf_and_byte_order_mark_are_accepted() {
    let line = valid_task().to_string();
    let (_dir, path) = temp_file("t.jsonl", format!("\u{feff}{line}\r\n\r\n"));
    assert_eq!(load_tasks(&path).expect("load").len(), 1);
}

#[test]
fn serialized_form_matches_design_and_round_trips() {
    let tasks = load_tasks(&fixture("array.json")).expect("load");
    let value = serde_json::to_value(&tasks[0]).expect("serialize");
    // Optional fields that are empty are left out.
    assert_eq!(
        value,
        json!({
            "task_id": "demo/1",
            "prompt": "Return the largest of two numbers.",
            "entry_point": "largest",
            "visible_tests": ["assert largest(1, 2) == 2", "assert largest(5, -1) == 5"],
        })
    );
    // Field order follows DESIGN.md §3.
    let full = &load_tasks(&fixture("single.json")).expect("load")[0];
    let text = serde_json::to_string(full).expect("serialize");
    let order = [
        "task_id",
        "prompt",
        "entry_point",
        "visible_tests",
        "hidden_tests",
        "seed",
        "source",
        "io_tests",
    ];
    let positions: Vec<usize> = order
        .iter()
        .map(|f| text.find(&format!("\"{f}\"")).expect("field present"))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
    // serde and the loader agree.
    let back: Task = serde_json::from_str(&text).expect("deserialize");
    assert_eq!(&back, full);
    let (_dir, path) = temp_file("back.json", &text);
    assert_eq!(&load_tasks(&path).expect("reload")[0], full);
    // serde rejects unknown fields too.
    let unknown = text.replacen("\"seed\"", "\"seeds\"", 1);
    assert!(serde_json::from_str::<Task>(&unknown).is_err());
}

// ---------------------------------------------------------------- errors

#[test]
fn wrong_type_names_file_line_field_and_hint() {
    let path = fixture("bad_type.jsonl");
    let err = load_tasks(&path).expect_err("must fail");
    assert_eq!(err.kind(), ErrorKind::Record);
    assert_eq!(
        err.location(),
        Location::Line {
            line: 3,
            column: None
        }
    );
    assert_eq!(err.field(), Some("visible_tests"));
    assert_eq!(
        err.hint(),
        "write each test as a Python statement string, e.g. \"assert f(1) == 2\""
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}:3: field `visible_tests`: expected a list of strings, found a number\n\
             hint: write each test as a Python statement string, e.g. \"assert f(1) == 2\"",
            path.display()
        )
    );
}

#[test]
fn wrong_element_type_names_the_index() {
    let mut t = valid_task();
    t["visible_tests"] = json!(["assert inc(1) == 2", 3]);
    let err = load_err("t.jsonl", format!("\n{t}\n"));
    let msg = err.to_string();
    assert!(
        msg.contains("t.jsonl:2: field `visible_tests[1]`: expected a string, found a number"),
        "{msg}"
    );
}

#[test]
fn peers_load_as_programs_and_a_wrong_one_names_its_index() {
    let mut t = valid_task();
    t["peers"] = json!([
        "def inc(x):\n    return x + 1\n",
        "def inc(x):\n    return 1 + x\n"
    ]);
    let (_dir, path) = temp_file("t.json", t.to_string());
    let task = &load_tasks(&path).expect("load")[0];
    assert_eq!(task.peers.len(), 2);
    assert_eq!(task.peers[1], "def inc(x):\n    return 1 + x\n");
    // They round-trip through the task form; a task without them writes none.
    let text = serde_json::to_string(task).expect("serialize");
    assert_eq!(
        &serde_json::from_str::<Task>(&text).expect("deserialize"),
        task
    );
    assert!(
        !serde_json::to_string(&load_tasks(&fixture("single.json")).expect("load")[0])
            .expect("serialize")
            .contains("\"peers\"")
    );
    t["peers"] = json!(["def inc(x):\n    return x + 1\n", 7]);
    let err = load_err("t.jsonl", format!("{t}\n"));
    let msg = err.to_string();
    assert!(
        msg.contains("field `peers[1]`: expected a string, found a number"),
        "{msg}"
    );
    assert!(
        msg.contains("hint: peers are other programs for the same task"),
        "{msg}"
    );
}

#[test]
fn missing_file_names_the_path() {
    let path = Path::new("/nonexistent/dir/tasks.jsonl");
    let err = load_tasks(path).expect_err("must fail");
    assert_eq!(err.kind(), ErrorKind::Read);
    assert_eq!(err.path(), path);
    assert!(err
        .to_string()
        .starts_with("/nonexistent/dir/tasks.jsonl: cannot read the file"));
    assert!(err.hint().contains("check the path"));
}

#[test]
fn directory_and_unknown_extension_name_the_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = dir.path().join("tasks.json");
    std::fs::create_dir(&folder).expect("mkdir");
    let err = load_tasks(&folder).expect_err("directory");
    assert_eq!(err.kind(), ErrorKind::Read);
    assert!(err.to_string().contains(&folder.display().to_string()));

    for name in ["tasks.txt", "tasks", "HumanEval.jsonl.gz"] {
        let err = load_err(name, valid_task().to_string());
        assert_eq!(err.kind(), ErrorKind::Extension, "{name}");
        assert!(err.to_string().contains(name), "{err}");
    }
    assert!(load_err("x.jsonl.gz", "").hint().contains("decompress"));
}

#[test]
fn empty_files_are_errors() {
    for (name, content) in [
        ("e.jsonl", ""),
        ("e.jsonl", "\n\n   \n"),
        ("e.json", ""),
        ("e.json", "  \n"),
        ("e.json", "[]"),
    ] {
        let err = load_err(name, content);
        assert_eq!(err.kind(), ErrorKind::Empty, "{content:?}");
        assert!(err.to_string().contains("no tasks in"), "{err}");
        assert!(err.to_string().contains(name), "{err}");
    }
}

#[test]
fn json_syntax_errors_report_line_and_column() {
    let good = valid_task().to_string();
    let err = load_err(
        "s.jsonl",
        format!("{good}\n{good}\n{{\"task_id\": \"x\",, }}\n"),
    );
    assert_eq!(err.kind(), ErrorKind::Syntax);
    assert_eq!(
        err.location(),
        Location::Line {
            line: 3,
            column: Some(17)
        }
    );
    assert!(
        err.to_string().contains("s.jsonl:3:17: invalid JSON"),
        "{err}"
    );

    let err = load_err("s.json", "{\n  \"task_id\": \"x\"\n  \"prompt\": \"p\"\n}");
    assert_eq!(
        err.location(),
        Location::Line {
            line: 3,
            column: Some(3)
        }
    );
    assert!(
        err.to_string()
            .contains("s.json:3:3: invalid JSON: expected `,`"),
        "{err}"
    );

    // Pretty-printed JSON in a .jsonl file, and JSONL in a .json file, get a pointed hint.
    let err = load_err("p.jsonl", "{\n \"task_id\": \"x\"\n}\n");
    assert!(err.hint().contains("one complete JSON object"), "{err}");
    let err = load_err("l.json", format!("{good}\n{good}\n"));
    assert!(err.to_string().contains("l.json:2:1"), "{err}");
    assert!(err.hint().contains(".jsonl"), "{err}");
}

#[test]
fn missing_and_unknown_fields() {
    let mut t = valid_task();
    t.as_object_mut().expect("object").remove("task_id");
    let err = load_err("m.jsonl", t.to_string());
    assert_eq!(err.field(), Some("task_id"));
    assert!(
        err.to_string()
            .contains("m.jsonl:1: field `task_id`: missing required field"),
        "{err}"
    );

    let mut t = valid_task();
    t["visible_test"] = json!(["assert inc(2) == 3"]);
    let err = load_err("u.jsonl", t.to_string());
    assert_eq!(err.field(), Some("visible_test"));
    assert!(
        err.to_string()
            .contains("u.jsonl:1: field `visible_test`: unknown field"),
        "{err}"
    );
    assert_eq!(err.hint(), "did you mean `visible_tests`?");

    // A field far from every known one is a dataset's metadata (Refactory's), not a typo.
    let mut t = valid_task();
    t["question"] = json!("question_1");
    t["file"] = json!("wrong_1_001.py");
    let (_dir, path) = temp_file("meta.jsonl", t.to_string());
    assert_eq!(load_tasks(&path).expect("metadata is ignored").len(), 1);

    let mut t = valid_task();
    t["io_tests"] = json!([{"stdin": "", "stdout": "1\n", "stderr": ""}]);
    let err = load_err("u.json", t.to_string());
    assert_eq!(err.field(), Some("io_tests[0].stderr"));

    let mut t = valid_task();
    t["io_tests"] = json!([{"stdin": "1\n", "stdout": 1}]);
    let err = load_err("u.json", t.to_string());
    assert_eq!(err.field(), Some("io_tests[0].stdout"));
    assert!(
        err.to_string()
            .contains("expected a string, found a number"),
        "{err}"
    );

    let mut t = valid_task();
    t["source"] = json!({"language": "cpp"});
    let err = load_err("u.json", t.to_string());
    assert_eq!(err.field(), Some("source.code"));
}

#[test]
fn validation_errors() {
    let cases = [
        (
            json!({"task_id": "", "prompt": "p", "entry_point": "f", "visible_tests": ["assert f()"]}),
            "task_id",
            "must not be empty",
        ),
        (
            json!({"task_id": "a", "prompt": "p", "entry_point": "f()", "visible_tests": ["assert f()"]}),
            "entry_point",
            "not a valid Python function name",
        ),
        (
            json!({"task_id": "a", "prompt": "p", "entry_point": "class", "visible_tests": ["assert f()"]}),
            "entry_point",
            "not a valid Python function name",
        ),
        (
            json!({"task_id": "a", "prompt": "p", "visible_tests": ["assert f()"]}),
            "entry_point",
            "must not be empty",
        ),
        (
            json!({"task_id": "a", "prompt": "p", "entry_point": "f", "visible_tests": []}),
            "",
            "the task has no tests",
        ),
        (
            json!({"task_id": "a", "prompt": "p", "entry_point": "f", "hidden_tests": "  "}),
            "",
            "the task has no tests",
        ),
        (
            json!({"task_id": "a", "prompt": "p", "entry_point": "f", "visible_tests": ["assert f()", " "]}),
            "visible_tests[1]",
            "empty test",
        ),
    ];
    for (record, field, problem) in cases {
        let (_dir, path) = temp_file("v.json", format!("[\n{},\n  {record}\n]", valid_task()));
        let err = load_tasks(&path).expect_err("invalid");
        assert_eq!(err.kind(), ErrorKind::Invalid, "{record}");
        assert_eq!(
            err.location(),
            Location::Record {
                index: 2,
                line: Some(3)
            }
        );
        assert_eq!(err.field().unwrap_or(""), field, "{record}");
        let msg = err.to_string();
        assert!(msg.contains("v.json:3: record 2: "), "{msg}");
        assert!(msg.contains(problem), "{msg}");
        assert!(msg.contains("\nhint: "), "{msg}");
        // Task::validate reports the same problem on the value itself.
        let task = Task::from_record(&record);
        assert!(task.is_err(), "{record}");
    }
}

#[test]
fn duplicate_ids_name_both_places() {
    let t = valid_task().to_string();
    let err = load_err("d.jsonl", format!("{t}\n\n{t}\n"));
    assert_eq!(err.kind(), ErrorKind::Duplicate);
    let msg = err.to_string();
    assert!(
        msg.contains("d.jsonl:3: field `task_id`: duplicate task id `t/0`, first used on line 1"),
        "{msg}"
    );
}

#[test]
fn records_that_are_not_objects() {
    let err = load_err("n.jsonl", format!("{}\n[1, 2]\n", valid_task()));
    assert!(
        err.to_string()
            .contains("n.jsonl:2: expected a JSON object (one task), found a list"),
        "{err}"
    );
    let err = load_err("n.json", format!("[{}, \"x\"]", valid_task()));
    assert!(
        err.to_string()
            .contains("n.json:1: record 2: expected a JSON object"),
        "{err}"
    );
    let err = load_err("n.json", "42");
    assert!(
        err.to_string()
            .contains("expected a task object or an array of tasks, found a number"),
        "{err}"
    );
}

#[test]
fn binary_content_is_an_encoding_error() {
    let err = load_err(
        "b.jsonl",
        [
            &valid_task().to_string().into_bytes()[..],
            b"\n\xff\xfe\x00junk",
        ]
        .concat(),
    );
    assert_eq!(err.kind(), ErrorKind::Encoding);
    assert_eq!(
        err.location(),
        Location::Line {
            line: 2,
            column: Some(1)
        }
    );
    assert!(err
        .to_string()
        .starts_with(&format!("{}", err.path().display())));
}

// ---------------------------------------------------------------- other formats, small

#[test]
fn formats_are_detected_per_record_in_one_file() {
    let humaneval = json!({
        "task_id": "HE/1", "entry_point": "inc",
        "prompt": "def inc(x):\n    \"\"\"\n    >>> inc(1)\n    2\n    \"\"\"\n",
        "canonical_solution": "    return x + 1\n",
        "test": "def check(candidate):\n    assert candidate(2) == 3\n",
    });
    let mbpp = json!({
        "task_id": 7, "text": "Write a function to add one.", "code": "def inc(x):\r\n  return x + 1",
        "test_list": ["assert inc(1) == 2", "assert inc(2) == 3"],
        "test_setup_code": "", "challenge_test_list": [],
    });
    let ldb = json!({
        "task_id": "L/1", "prompt": "def inc(x):\n", "entry_point": "inc",
        "test": "\ndef check(candidate):\n    assert inc(1) == 2\ncheck(inc)\n",
        "given_tests": ["assert inc(1) == 2"], "canonical_solution": "def inc(x): return x + 1",
    });
    let (_dir, path) = temp_file(
        "mixed.jsonl",
        format!("{humaneval}\n{mbpp}\n{ldb}\n{}\n", valid_task()),
    );
    let tasks = load_tasks(&path).expect("load");
    assert_eq!(tasks[0].visible_tests, ["assert inc(1) == 2"]);
    assert_eq!(
        tasks[0].hidden_tests.as_deref(),
        Some("def check(candidate):\n    assert candidate(2) == 3\n\n\ncheck(inc)\n")
    );
    assert_eq!(tasks[1].task_id, "MBPP/7");
    assert_eq!(tasks[1].entry_point, "inc");
    assert_eq!(
        tasks[1].prompt,
        "Write a function to add one.\nYour code should pass this test:\nassert inc(1) == 2"
    );
    assert_eq!(
        tasks[1].hidden_tests.as_deref(),
        Some("assert inc(1) == 2\nassert inc(2) == 3\n")
    );
    // The LDB MBPP test already calls check: it is not called twice.
    assert_eq!(tasks[2].hidden_tests.as_deref(), ldb["test"].as_str());
    for task in &tasks {
        let text = serde_json::to_string(task).expect("serialize");
        assert!(
            !text.contains("return x + 1"),
            "reference solution leaked: {text}"
        );
    }
}

#[test]
fn errors_in_other_formats_name_their_fields() {
    let err = load_err(
        "h.jsonl",
        json!({"task_id": "HE/1", "prompt": 3, "entry_point": "f", "test": ""}).to_string(),
    );
    assert_eq!(err.field(), Some("prompt"));
    let err = load_err(
        "m.jsonl",
        json!({"task_id": -4, "text": "t", "test_list": ["assert f(1)"]}).to_string(),
    );
    assert_eq!(err.field(), Some("task_id"));
    let err = load_err(
        "m.jsonl",
        json!({"task_id": 4, "text": "t", "test_list": []}).to_string(),
    );
    assert_eq!(err.field(), Some("test_list"));
    let err = load_err(
        "m.jsonl",
        json!({"task_id": 4, "text": "t", "test_list": ["assert 1 == 1"]}).to_string(),
    );
    assert_eq!(err.field(), Some("test_list[0]"));
    assert!(
        err.to_string().contains("cannot tell which function"),
        "{err}"
    );
    let err = load_err("l.jsonl", json!({"task_id": "x", "prompt": "", "entry_point": "f", "test": "", "given_tests": "assert f()"}).to_string());
    assert_eq!(err.field(), Some("given_tests"));
}

#[test]
fn docstring_examples_edge_cases() {
    // No examples at all, and examples that cannot be turned into asserts.
    assert!(docstring_asserts("def f(x):\n    \"\"\"Return x.\"\"\"\n").is_empty());
    let prompt = "def f(xs):\n    \"\"\"\n    >>> f([1, 0]) [0, 1]\n    >>> print(f([1]))\n    1\n    >>> f([2]) == [2]\n    \"\"\"\n";
    assert_eq!(docstring_asserts(prompt), ["assert f([2]) == [2]"]);
}

// ---------------------------------------------------------------- real datasets

#[test]
fn humaneval_official_file() {
    let data = common::shared();
    let path = data.join("humaneval/HumanEval.jsonl");
    let tasks = load_tasks(&path).expect("load HumanEval");
    assert_eq!(tasks.len(), 164);
    let raw = read_jsonl(&path);
    let t0 = &tasks[0];
    assert_eq!(t0.task_id, "HumanEval/0");
    assert_eq!(t0.entry_point, "has_close_elements");
    assert_eq!(
        t0.visible_tests,
        [
            "assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False",
            "assert has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3) == True",
        ]
    );
    let mut with_examples = 0;
    for (task, record) in tasks.iter().zip(&raw) {
        assert_eq!(task.task_id, record["task_id"].as_str().expect("id"));
        assert_eq!(task.prompt, record["prompt"].as_str().expect("prompt"));
        let test = record["test"].as_str().expect("test");
        assert_eq!(
            task.hidden_tests.as_deref(),
            Some(format!("{test}\n\ncheck({})\n", task.entry_point).as_str())
        );
        let solution = record["canonical_solution"]
            .as_str()
            .expect("solution")
            .trim();
        let escaped = serde_json::to_string(solution).expect("json");
        let text = serde_json::to_string(task).expect("serialize");
        assert!(
            !text.contains(escaped.trim_matches('"')),
            "{}",
            task.task_id
        );
        for field in [
            &task.prompt,
            &task.entry_point,
            task.hidden_tests.as_ref().expect("hidden"),
        ] {
            assert!(
                !field.contains(solution),
                "canonical solution in {}",
                task.task_id
            );
        }
        for test in &task.visible_tests {
            assert!(
                !test.contains(solution),
                "canonical solution in {}",
                task.task_id
            );
            assert!(test.contains("assert "), "{test}");
        }
        with_examples += usize::from(!task.visible_tests.is_empty());
    }
    // 88 prompts have no `>>>` examples (their examples are prose); see the task module docs.
    assert_eq!(with_examples, 164 - 88);
}

#[test]
fn mbpp_original_file() {
    let data = common::shared();
    let tasks = load_tasks(&data.join("mbpp/mbpp.jsonl")).expect("load MBPP");
    assert_eq!(tasks.len(), 974);
    let by_id: HashMap<&str, &Task> = tasks.iter().map(|t| (t.task_id.as_str(), t)).collect();
    let t11 = by_id["MBPP/11"];
    assert_eq!(t11.entry_point, "remove_Occ");
    assert_eq!(
        t11.visible_tests,
        ["assert remove_Occ(\"hello\",\"l\") == \"heo\""]
    );
    assert!(t11
        .prompt
        .starts_with("Write a python function to remove first and last occurrence"));
    assert!(t11.prompt.ends_with(
        "Your code should pass this test:\nassert remove_Occ(\"hello\",\"l\") == \"heo\""
    ));
    assert_eq!(
        t11.hidden_tests.as_deref().map(|h| h.lines().count()),
        Some(3)
    );
    // Wrapped calls still give the tested function.
    assert_eq!(by_id["MBPP/769"].entry_point, "Diff");
    assert_eq!(by_id["MBPP/912"].entry_point, "lobb_num");
    // Set-up code goes in front of the visible test that needs it (it uses the program's `Node`).
    let t367 = by_id["MBPP/367"];
    assert!(
        t367.visible_tests[0].starts_with("root = Node(1)"),
        "{:?}",
        t367.visible_tests
    );
    assert!(t367.visible_tests[0].ends_with("assert is_tree_balanced(root) == False"));
    // Every task's visible test calls its entry point.
    for t in &tasks {
        assert!(calls(&t.visible_tests[0], &t.entry_point), "{}", t.task_id);
    }
}

#[test]
fn mbpp_sanitized_file() {
    let data = common::shared();
    let tasks = load_tasks(&data.join("mbpp/sanitized-mbpp.json")).expect("load sanitized MBPP");
    assert_eq!(tasks.len(), 427);
    for t in &tasks {
        assert!(t.task_id.starts_with("MBPP/"));
        assert!(calls(&t.visible_tests[0], &t.entry_point), "{}", t.task_id);
    }
}

/// The join of `dataset`; `dropped` is how many of its visible tests do not parse (set aside).
fn check_ldb_join(data: &Path, dataset: &str, count: usize, dropped: usize) -> Vec<Task> {
    let root = data.join("ldb").join(dataset);
    let tests_path = root.join("test/tests.jsonl");
    let layout =
        load_ldb_layout(&root.join("dataset/probs.jsonl"), Some(&tests_path)).expect("join");
    assert_eq!(
        layout.dropped_tests.len(),
        dropped,
        "{dataset}: {:?}",
        layout.dropped_tests
    );
    let tasks = layout.tasks;
    assert_eq!(tasks.len(), count, "{dataset}");
    let given: HashMap<String, Value> = read_jsonl(&tests_path)
        .into_iter()
        .map(|r| {
            (
                r["task_id"].as_str().expect("id").to_string(),
                r["given_tests"].clone(),
            )
        })
        .collect();
    for t in &tasks {
        let kept: Vec<&Value> = given[&t.task_id]
            .as_array()
            .expect("given_tests")
            .iter()
            .filter(|test| t.visible_tests.iter().any(|v| json!(v) == **test))
            .collect();
        assert_eq!(json!(t.visible_tests), json!(kept), "{}", t.task_id);
        if dropped == 0 {
            assert_eq!(json!(t.visible_tests), given[&t.task_id], "{}", t.task_id);
        }
        let hidden = t.hidden_tests.as_deref().expect("hidden");
        let calls = hidden.lines().filter(|l| l.starts_with("check(")).count();
        assert_eq!(calls, 1, "{}: {hidden}", t.task_id);
    }
    tasks
}

#[test]
fn ldb_layout_join() {
    let data = common::shared();
    let he = check_ldb_join(&data, "humaneval", 164, 0);
    assert_eq!(he.iter().map(|t| t.visible_tests.len()).sum::<usize>(), 460);
    let mbpp = check_ldb_join(&data, "mbpp", 500, 0);
    assert_eq!(mbpp[0].task_id, "MBPP/11");
    assert_eq!(
        mbpp[0].visible_tests,
        ["assert remove_Occ(\"hello\",\"l\") == \"heo\""]
    );
    // LDB's TransCoder holds 48 visible tests CPython cannot parse either (integers with
    // leading zeros, NUL bytes): they are dropped, the tasks kept.
    let tc = check_ldb_join(&data, "transcoder", 560, 48);
    // The C++ to translate is the last [c++] block, not a few-shot example.
    let t1 = tc
        .iter()
        .find(|t| t.task_id == "TransCoder/1")
        .expect("TransCoder/1");
    let source = t1.source.as_ref().expect("source");
    assert_eq!(source.language, "cpp");
    assert_eq!(
        source.code,
        "int add_1_to_a_given_number_1 ( int x ) {\n  return ( - ( ~ x ) );\n}"
    );
    assert!(tc.iter().all(|t| t.source.is_some()));
    // TransCoder/13's visible tests come from tests.jsonl, where LDB fixed them.
    let probs13 = read_jsonl(&data.join("ldb/transcoder/dataset/probs.jsonl"))
        .into_iter()
        .find(|r| r["task_id"] == "TransCoder/13")
        .expect("13");
    let t13 = tc
        .iter()
        .find(|t| t.task_id == "TransCoder/13")
        .expect("13");
    assert_ne!(json!(t13.visible_tests), probs13["given_tests"]);

    // Without a tests file, LDB's MBPP probs carry given_tests and HumanEval's fall back to
    // the docstring examples.
    let alone = load_ldb_layout(&data.join("ldb/mbpp/dataset/probs.jsonl"), None)
        .expect("probs only")
        .tasks;
    assert_eq!(alone, mbpp);
    let he_alone = load_ldb_layout(&data.join("ldb/humaneval/dataset/probs.jsonl"), None)
        .expect("probs only")
        .tasks;
    assert_eq!(he_alone[0].visible_tests, he[0].visible_tests);
}

#[test]
fn ldb_layout_join_errors() {
    let probs = json!({"task_id": "A/1", "prompt": "p", "entry_point": "f", "test": "def check(c):\n    pass\n"});
    let other = json!({"task_id": "A/2", "given_tests": ["assert f(1) == 1"]});
    let dir = tempfile::tempdir().expect("temp dir");
    let probs_path = dir.path().join("probs.jsonl");
    let tests_path = dir.path().join("tests.jsonl");
    std::fs::write(&probs_path, format!("{probs}\n")).expect("write");
    std::fs::write(&tests_path, format!("{other}\n")).expect("write");
    let err = load_ldb_layout(&probs_path, Some(&tests_path)).expect_err("missing join");
    assert_eq!(err.kind(), ErrorKind::Join);
    assert!(
        err.to_string()
            .contains("probs.jsonl:1: task `A/1` has no record in"),
        "{err}"
    );

    std::fs::write(
        &tests_path,
        format!(
            "{other}\n{}\n",
            json!({"task_id": "A/1", "given_tests": [1]})
        ),
    )
    .expect("write");
    let err = load_ldb_layout(&probs_path, Some(&tests_path)).expect_err("bad given_tests");
    assert!(
        err.to_string()
            .contains("tests.jsonl:2: field `given_tests[0]`: expected a string"),
        "{err}"
    );
}

#[test]
fn seeds_from_ldb_files() {
    let data = common::shared();
    let path = data.join("ldb/humaneval/seed/gpt-3.5-turbo-0613/seed.jsonl");
    let seeds = load_seeds(&path).expect("load seeds");
    assert_eq!(seeds.len(), 164);
    for record in read_jsonl(&path) {
        let id = record["task_id"].as_str().expect("id");
        assert_eq!(seeds[id], record["solution"].as_str().expect("solution"));
    }
    assert!(seeds["HumanEval/0"].contains("def has_close_elements("));
    // Reflexion's file has no final newline; its unsolved seeds are empty.
    let reflexion =
        load_seeds(&data.join("ldb/humaneval/seed/reflexion/seed.jsonl")).expect("reflexion");
    assert_eq!(reflexion.len(), 164);
    assert_eq!(reflexion.values().filter(|s| s.is_empty()).count(), 14);
    // Seed files are task records too (HumanEval-style when they lack given_tests).
    let as_tasks =
        load_tasks(&data.join("ldb/humaneval/seed/reflexion/seed.jsonl")).expect("tasks");
    assert_eq!(as_tasks.len(), 164);
    assert!(as_tasks.iter().all(|t| t.seed.is_none()));
    for (dataset, model, n) in [
        ("mbpp", "gpt-3.5-turbo-0613", 500),
        ("transcoder", "starcoder", 560),
    ] {
        let seeds = load_seeds(&data.join(format!("ldb/{dataset}/seed/{model}/seed.jsonl")))
            .expect("seeds");
        assert_eq!(seeds.len(), n);
    }
}

#[test]
fn seeds_generic_records_and_errors() {
    let (_dir, path) = temp_file(
        "s.jsonl",
        format!(
            "{}\n{}\n{}\n",
            json!({"task_id": "a", "program": "def f(): pass", "solution": "ignored"}),
            json!({"task_id": "b", "completion": "    return 1\n"}),
            json!({"task_id": "c", "solution": "def g(): pass"}),
        ),
    );
    let seeds = load_seeds(&path).expect("seeds");
    assert_eq!(seeds["a"], "def f(): pass");
    assert_eq!(seeds["b"], "    return 1\n");
    assert_eq!(seeds["c"], "def g(): pass");

    let (_dir, path) = temp_file(
        "s.jsonl",
        format!("{}\n", json!({"task_id": "a", "code": "x"})),
    );
    let err = load_seeds(&path).expect_err("no program");
    assert!(
        err.to_string().contains("s.jsonl:1: no seed program"),
        "{err}"
    );
    let (_dir, path) = temp_file(
        "s.jsonl",
        format!("{}\n", json!({"task_id": "a", "program": 5})),
    );
    assert_eq!(
        load_seeds(&path).expect_err("type").field(),
        Some("program")
    );
    let line = json!({"task_id": "a", "program": "p"});
    let (_dir, path) = temp_file("s.jsonl", format!("{line}\n{line}\n"));
    assert_eq!(
        load_seeds(&path).expect_err("dup").kind(),
        ErrorKind::Duplicate
    );
    assert_eq!(
        load_seeds(Path::new("/nonexistent/seeds.jsonl"))
            .expect_err("missing")
            .kind(),
        ErrorKind::Read
    );
}

// ---------------------------------------------------------------- robustness

/// Values of every JSON type, plus garbage, for substituting into fields.
fn garbage_values() -> Vec<Value> {
    let mut deep = json!(1);
    for _ in 0..100 {
        deep = json!([deep, {"k": deep.clone()}]);
        if deep.to_string().len() > 100_000 {
            break;
        }
    }
    vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(f64::MAX),
        json!([]),
        json!([1, "a", null]),
        json!({}),
        json!({"a": [{"b": null}]}),
        deep,
    ]
}

fn expect_error_no_panic(name: &str, content: &[u8]) {
    let (_dir, path) = temp_file(name, content);
    let result = std::panic::catch_unwind(|| load_tasks(&path));
    match result {
        Err(_) => panic!("panicked on {:?}", String::from_utf8_lossy(content)),
        Ok(Ok(tasks)) => panic!("accepted {:?}: {tasks:?}", String::from_utf8_lossy(content)),
        Ok(Err(err)) => {
            let msg = err.to_string();
            assert!(msg.contains(name), "error does not name the file: {msg}");
            assert!(!err.hint().is_empty(), "no hint: {msg}");
        }
    }
}

#[test]
fn malformed_inputs_are_errors_not_panics() {
    // Truncated JSON at every byte, as .json and .jsonl.
    let full = serde_json::to_string(&load_tasks(&fixture("single.json")).expect("load")[0])
        .expect("json");
    for cut in 0..full.len() {
        if let Some(prefix) = full.get(..cut) {
            expect_error_no_panic("t.json", prefix.as_bytes());
            expect_error_no_panic("t.jsonl", prefix.as_bytes());
        }
    }
    // Binary junk and odd text.
    let junk: Vec<Vec<u8>> = vec![
        vec![0, 1, 2, 3, 255, 254, 253],
        b"\x1f\x8b\x08\x00\x00\x00".to_vec(),
        (0u8..=255).collect(),
        b"\xef\xbb\xbf".to_vec(),
        b"null".to_vec(),
        b"[null]".to_vec(),
        b"[[[[[[[[[[[[[[[[[[[[".to_vec(),
        "[".repeat(100_000).into_bytes(),
        "{\"a\":".repeat(10_000).into_bytes(),
        b"1e999999".to_vec(),
        b"{\"task_id\": 1e999999}".to_vec(),
        b"{\"task_id\": 123456789012345678901234567890}".to_vec(),
        b"\"just a string\"".to_vec(),
        b"{\"task_id\": \"\\ud800\"}".to_vec(),
        b"{} {}".to_vec(),
        b"{}".to_vec(),
    ];
    for content in &junk {
        expect_error_no_panic("j.json", content);
        expect_error_no_panic("j.jsonl", content);
    }
    // Wrong types at every field, for every format.
    let records = [
        (
            json!({"task_id": "t", "prompt": "p", "entry_point": "f", "visible_tests": ["assert f()"],
                   "hidden_tests": "assert f()", "seed": "s", "source": {"language": "c", "code": "x"},
                   "io_tests": [{"stdin": "", "stdout": ""}]}),
            // Fields where null means "absent" and is therefore fine.
            vec![
                "entry_point",
                "visible_tests",
                "hidden_tests",
                "seed",
                "source",
                "io_tests",
            ],
        ),
        (
            json!({"task_id": "HE/1", "prompt": ">>> f(1)\n2", "entry_point": "f", "test": "def check(c): pass",
                   "canonical_solution": "x"}),
            vec!["canonical_solution"],
        ),
        (
            json!({"task_id": 3, "text": "t", "test_list": ["assert f(1) == 2"], "test_setup_code": "",
                   "code": "def f(x): pass", "challenge_test_list": []}),
            vec!["test_setup_code", "code", "challenge_test_list"],
        ),
        (
            json!({"task_id": "L/1", "prompt": "p", "entry_point": "f", "test": "assert f()",
                   "given_tests": ["assert f()"]}),
            vec![],
        ),
    ];
    for (record, nullable) in &records {
        let object = record.as_object().expect("object");
        // The untouched record loads.
        let (_dir, path) = temp_file("ok.jsonl", format!("{record}\n"));
        load_tasks(&path).unwrap_or_else(|e| panic!("{record}: {e}"));
        for field in object.keys() {
            for value in garbage_values() {
                let same_type =
                    std::mem::discriminant(&value) == std::mem::discriminant(&object[field]);
                let allowed = same_type
                    || (value.is_null() && nullable.contains(&field.as_str()))
                    || field == "canonical_solution"
                    || field == "challenge_test_list"
                    || (field == "task_id" && value.is_u64() && object[field].is_u64());
                let mut bad = record.clone();
                bad[field.as_str()] = value.clone();
                let (_dir, path) = temp_file("w.jsonl", format!("{bad}\n"));
                let result = std::panic::catch_unwind(|| load_tasks(&path));
                match result {
                    Err(_) => panic!("panicked on {bad}"),
                    Ok(Ok(_)) if allowed => {}
                    Ok(Ok(tasks)) => panic!("accepted {field} = {value}: {tasks:?}"),
                    Ok(Err(err)) => {
                        let msg = err.to_string();
                        assert!(msg.contains("w.jsonl:1:"), "{msg}");
                        if !allowed {
                            assert!(msg.contains(field.as_str()), "{field}: {msg}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn hostile_docstrings_do_not_crash() {
    let deep = format!(">>> f({}1{})\n1", "(".repeat(5_000), ")".repeat(5_000));
    let long_chain = format!(">>> {}1\n1", "-".repeat(1_900));
    let long_sum = format!(">>> {}1\n1", "1+".repeat(990));
    let attr_chain = format!(">>> a{}\n1", ".b".repeat(990));
    let many = ">>> x = 1\n".repeat(5_000) + ">>> f(x)\n1";
    let unclosed = ">>> f('''\n... \n>>> \"\"\"\n...".to_string();
    for prompt in [deep, long_chain, long_sum, attr_chain, many, unclosed] {
        // Run where the stack is the default size for spawned threads.
        let handle = std::thread::spawn(move || docstring_asserts(&prompt).len());
        assert!(handle.join().is_ok());
    }
}
