//! Localise, then repair there: fault localisation on the real sandbox, the model-free `mutate`
//! proposer, and the confirmation of an edit by programs written independently (fresh samples
//! from a scripted model). No prompt carries a hidden test.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use std::sync::Mutex;

use ldb::generate::model::scripted::ScriptedModel;
use ldb::generate::model::ChatRequest;
use ldb::generate::prompts::Prompts;
use ldb::locate::{localise, Signals};
use ldb::python::normalize::program_key;
use ldb::repair::progress::{Progress, ProgressEvent, Silent};
use ldb::repair::record::{FixReport, FixStatus};
use ldb::repair::search::{Proposer, SearchOptions};
use ldb::repair::{FixOptions, Fixer, Strategy};
use ldb::run::TestInput;
use ldb::task::{load_tasks, Task};

use crate::common;

fn program_reply(code: &str) -> String {
    format!("```python\n{code}```\n")
}

fn example() -> Task {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sum_evens/task.json");
    load_tasks(&path).expect("example loads").remove(0)
}

/// A task whose visible test is weak: `sum_squares([2]) == 4`.
fn squares(seed: &str, visible: &str) -> Task {
    let mut t = example();
    t.task_id = "squares".into();
    t.prompt =
        "def sum_squares(xs):\n    \"\"\"Return the sum of the squares of xs.\"\"\"\n".into();
    t.entry_point = "sum_squares".into();
    t.visible_tests = vec![visible.into()];
    t.hidden_tests = Some("assert sum_squares([3]) == 9\nassert sum_squares([1, 2]) == 5\n".into());
    t.seed = Some(seed.into());
    t
}

struct Run {
    report: FixReport,
    requests: Vec<ChatRequest>,
    /// The notices and steps the user saw on stderr.
    said: Vec<String>,
}

/// Keeps the notices and steps a user would read.
#[derive(Default)]
struct Said(Mutex<Vec<String>>);

impl Progress for Said {
    fn event(&self, event: ProgressEvent) {
        if let ProgressEvent::Notice { message, .. } | ProgressEvent::Step { message, .. } = event {
            self.0.lock().expect("lock").push(message);
        }
    }
}

async fn run(task: &Task, portfolio: Vec<(Proposer, usize)>, fresh: Vec<String>) -> Run {
    let generator = Arc::new(ScriptedModel::new(fresh).with_name("generator"));
    let fixer = Fixer {
        seed: Default::default(),
        generator: generator.clone(),
        debugger: generator.clone(),
        runner: common::runner(Duration::from_secs(10)),
        prompts: Prompts::new().expect("templates load"),
        options: FixOptions {
            strategy: Strategy::Search,
            max_iters: 3,
            search: SearchOptions {
                portfolio,
                select: 2,
                verify: 2,
                // These tests follow `harden`'s set-aside edits and votes where a crash
                // abstains (rules off by default, `--rules`).
                harden: true,
                crash_abstains: true,
                // Resampling's one-at-a-time seeds; the scripted model answers in order anyway.
                ..SearchOptions::default()
            },
            ..FixOptions::default()
        },
    };
    let said = Said::default();
    let report = fixer.fix(task, &said).await;
    let said = said.0.into_inner().expect("lock");
    let requests = generator.requests();
    let hidden = task.hidden_tests.clone().unwrap_or_default();
    for r in &requests {
        for m in &r.messages {
            for line in hidden.lines().map(str::trim).filter(|l| l.len() > 8) {
                assert!(!m.content.contains(line), "hidden test sent: {line}");
            }
        }
    }
    Run {
        report,
        requests,
        said,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn localisation_ranks_the_faulty_statement_first() {
    let program = "def f(xs):\n    total = 0\n    for x in xs:\n        if x > 0:\n            total += x * 2\n    return total\n";
    let tests: Vec<TestInput> = [
        "assert f([]) == 0",
        "assert f([-1]) == 0",
        "assert f([1]) == 1",
    ]
    .iter()
    .map(|s| TestInput::Code {
        source: s.to_string(),
    })
    .collect();
    let runner = common::runner(Duration::from_secs(10));
    let (loc, outcomes) = localise(&runner, program, &tests, &Signals::default()).expect("runs");
    assert_eq!(outcomes.iter().filter(|o| o.passed()).count(), 2);
    assert_eq!(loc.lines()[0], 5, "{:#?}", loc.suspects);
    assert!((loc.suspects[0].ochiai - 1.0).abs() < 1e-9);
    assert!(!loc.spectrum_blind());

    // Every test fails, one with an exception: the statement that raised leads.
    let program = "def f(xs):\n    n = len(xs)\n    first = xs[0]\n    return first + n\n";
    let tests: Vec<TestInput> = ["assert f([]) == 0", "assert f([2]) == 2"]
        .iter()
        .map(|s| TestInput::Code {
            source: s.to_string(),
        })
        .collect();
    let (loc, _) = localise(&runner, program, &tests, &Signals::default()).expect("runs");
    assert!(loc.spectrum_blind());
    assert_eq!(loc.lines()[0], 3, "{:#?}", loc.suspects);
}

/// A seed that reads `re` and `math` without importing them failed every test with a
/// `NameError`, and only a model's fresh program could pass: the edit a person makes, the
/// imports added and nothing else, fixes it with no model call.
#[tokio::test(flavor = "multi_thread")]
async fn a_seed_missing_its_imports_gets_them_with_no_model_call() {
    let mut task = example();
    task.task_id = "digits".into();
    task.prompt = "def digits(s):\n    \"\"\"The digits of s, and pi to 2 places.\"\"\"\n".into();
    task.entry_point = "digits".into();
    task.visible_tests = vec!["assert digits('a1b2') == (['1', '2'], 3.14)".into()];
    task.hidden_tests = Some("assert digits('x9') == (['9'], 3.14)\n".into());
    let seed = "def digits(s):\n    \"\"\"The digits of s, and pi to 2 places.\"\"\"\n    \
                return re.findall(r'\\d', s), round(math.pi, 2)\n";
    task.seed = Some(seed.into());
    let run = run(&task, vec![(Proposer::Mutate, 1)], Vec::new()).await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed, "{:#?}", report.candidates);
    assert!(run.requests.is_empty(), "a model was asked");
    assert_eq!(
        report.final_program,
        format!("import re\nimport math\n{seed}"),
        "{:#?}",
        report.candidates
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn mutate_fixes_the_seed_with_no_model_call_and_never_runs_a_program_twice() {
    let task = example();
    let run = run(&task, vec![(Proposer::Mutate, 1)], Vec::new()).await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed, "{:#?}", report.candidates);
    assert!(run.requests.is_empty(), "a model was asked");
    assert_eq!(report.usage.calls, 0);
    // The fix is one edit of the seed, on the loop's line.
    let seed = task.seed.as_deref().unwrap_or("");
    let changed: Vec<(&str, &str)> = seed
        .lines()
        .zip(report.final_program.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(changed.len(), 1, "{}", report.final_program);
    assert!(changed[0].0.contains("range(1, len(xs))"), "{changed:?}");
    let chosen = report
        .candidates
        .iter()
        .find(|c| c.program.as_deref() == Some(report.final_program.as_str()))
        .expect("the fix is a candidate");
    assert_eq!(chosen.proposer, Proposer::Mutate);
    assert_eq!(chosen.tokens, 0);
    assert_eq!(chosen.edit.as_ref().map(|e| e.line), Some(3));
    // No program was tested twice: every tested candidate is a different program.
    let mut keys = std::collections::HashSet::new();
    for c in report
        .candidates
        .iter()
        .filter(|c| c.visible_passed.is_some())
    {
        if let Some(p) = &c.program {
            assert!(keys.insert(program_key(p)), "tested twice: {p}");
        }
    }
    // Nothing independent could confirm it: the report says so, and so does stderr.
    assert_eq!(
        report.confirmation.as_ref().map(|c| c.status.as_str()),
        Some("unconfirmed")
    );
    assert!(
        run.said
            .iter()
            .any(|m| m.contains("plausible, not confirmed")),
        "{:?}",
        run.said
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_the_fresh_candidates_agree_with_is_returned_confirmed() {
    let task = example();
    let other = "def sum_evens(xs: list) -> int:\n    return sum(x for x in xs if x % 2 == 0)\n";
    let run = run(
        &task,
        vec![(Proposer::Mutate, 1), (Proposer::Fresh, 2)],
        vec![program_reply(other), program_reply(other)],
    )
    .await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed);
    let confirmation = report.confirmation.as_ref().expect("confirmation");
    assert_eq!(
        confirmation.status.as_str(),
        "confirmed",
        "{confirmation:?} {:#?} {:?}",
        report
            .candidates
            .iter()
            .map(|c| (
                c.id,
                c.proposer,
                c.visible_passed,
                c.duplicate_of,
                &c.problem
            ))
            .collect::<Vec<_>>(),
        report.error
    );
    assert!(confirmation.agreeing >= 1);
    assert!(
        run.said.iter().any(|m| m.contains("the fix is confirmed")),
        "{:?}",
        run.said
    );
    // The edit, not the rewrite: the smaller change.
    assert_ne!(report.final_program, other);
    assert!(report.final_program.contains("for i in range("));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_that_passes_the_visible_tests_but_disagrees_with_fresh_candidates_is_not_returned()
{
    // `x * 3` → `x * 2` passes the weak visible test; squares need `x * x`, which no single
    // edit gives. Two fresh samples write it.
    let task = squares(
        "def sum_squares(xs):\n    return sum(x * 3 for x in xs)\n",
        "assert sum_squares([2]) == 4",
    );
    let right = "def sum_squares(xs):\n    return sum(x * x for x in xs)\n";
    let run = run(
        &task,
        vec![(Proposer::Mutate, 1), (Proposer::Fresh, 2)],
        vec![program_reply(right), program_reply(right)],
    )
    .await;
    let report = &run.report;
    let edit = report
        .candidates
        .iter()
        .find(|c| c.proposer == Proposer::Mutate && c.visible_passed == Some(1))
        .expect("the wrong edit passed the visible test");
    assert!(edit.program.as_deref().is_some_and(|p| p.contains("x * 2")));
    assert_eq!(report.final_program, right);
    let confirmation = report.confirmation.as_ref().expect("confirmation");
    assert_eq!(confirmation.status.as_str(), "majority", "{confirmation:?}");
    assert!(
        run.said
            .iter()
            .any(|m| m.contains("most independently written")),
        "{:?}",
        run.said
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lone_fresh_program_no_other_program_agrees_with_is_reported_as_plausible() {
    // HumanEval/100: one fresh program passed the visible test and nothing seconded it, while
    // edits of the given program that behaved otherwise also passed; stderr called it the
    // program "most independently written candidates agree with (1 of 1)".
    let task = squares(
        "def sum_squares(xs):\n    return sum(x * 3 for x in xs)\n",
        "assert sum_squares([2]) == 4",
    );
    let right = "def sum_squares(xs):\n    return sum(x * x for x in xs)\n";
    let failing = "def sum_squares(xs):\n    return 0\n";
    let mut replies = vec![program_reply(right)];
    replies.extend(std::iter::repeat_with(|| program_reply(failing)).take(8));
    let run = run(
        &task,
        vec![(Proposer::Mutate, 1), (Proposer::Fresh, 2)],
        replies,
    )
    .await;
    let report = &run.report;
    assert_eq!(report.final_program, right);
    let confirmation = report.confirmation.as_ref().expect("confirmation");
    assert_eq!(
        (confirmation.status.as_str(), confirmation.agreeing),
        ("majority", 0),
        "{confirmation:?}"
    );
    let said = run
        .said
        .iter()
        .find(|m| m.contains("no other program agrees with it"))
        .unwrap_or_else(|| panic!("{:?}", run.said));
    assert!(said.contains("plausible, not confirmed"), "{said}");
    assert!(
        said.contains("passing edit(s) of the given program behave otherwise"),
        "{said}"
    );
    // The user is pointed at the edit to compare it with: `x * 3` → `x * 2`.
    let smallest = report
        .candidates
        .iter()
        .filter(|c| c.proposer == Proposer::Mutate && c.visible_passed == Some(1))
        .min_by_key(|c| (c.diff_lines, c.id))
        .expect("a passing edit");
    let edit = smallest.edit.as_ref().expect("an edit records where");
    assert!(
        said.contains(&format!(
            "the smallest passing edit (candidate {}: line {}, `{}`)",
            smallest.id, edit.line, edit.description
        )),
        "{said}"
    );
    assert!(
        !run.said
            .iter()
            .any(|m| m.contains("most independently written")),
        "{:?}",
        run.said
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_passing_seed_the_fresh_majority_disagrees_with_is_edited_towards_it() {
    // `x ** 1` passes `sum_squares([1]) == 1`; the fresh programs square. One edit (1 → 2)
    // makes the seed agree with them, and that small edit is returned, not the rewrite.
    let task = squares(
        "def sum_squares(xs):\n    return sum(x ** 1 for x in xs)\n",
        "assert sum_squares([1]) == 1",
    );
    let right = "def sum_squares(xs):\n    return sum(x * x for x in xs)\n";
    let run = run(
        &task,
        vec![(Proposer::Mutate, 1), (Proposer::Fresh, 2)],
        vec![program_reply(right), program_reply(right)],
    )
    .await;
    let report = &run.report;
    assert_eq!(
        report.final_program, "def sum_squares(xs):\n    return sum(x ** 2 for x in xs)\n",
        "{:#?}",
        report.selection
    );
    assert_eq!(report.status, FixStatus::Fixed);
    assert_eq!(
        report.confirmation.as_ref().map(|c| c.status.as_str()),
        Some("confirmed")
    );
}

/// A task of one function `entry(arg)`, its docstring `doc`, with these tests and seed.
fn one_function(
    entry: &str,
    arg: &str,
    doc: &str,
    visible: &[&str],
    hidden: &str,
    seed: &str,
) -> Task {
    let mut task = example();
    task.task_id = entry.into();
    task.prompt = format!("def {entry}({arg}):\n    \"\"\"{doc}\"\"\"\n");
    task.entry_point = entry.into();
    task.visible_tests = visible.iter().map(|t| t.to_string()).collect();
    task.hidden_tests = Some(hidden.into());
    task.seed = Some(seed.into());
    task
}

/// `median` with the even case divided by 3: one constant from right.
const MEDIAN_BY_THREE: &str = "def median(xs):\n    s = sorted(xs)\n    n = len(s)\n    \
    mid = n // 2\n    if n % 2 == 1:\n        return s[mid]\n    return (s[mid - 1] + s[mid]) / 3\n";

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_set_aside_for_raising_on_an_empty_list_is_returned_when_the_votes_raise_there_too()
{
    // The edit 3 -> 2 raises IndexError on `median([])`, so `harden` set it aside for an edit
    // that guards the empty list; but the docstring says "non-empty", both fresh programs raise
    // there too and agree with the edit everywhere else. The one-line edit was lost to a
    // rewrite; it must be returned, confirmed.
    let task = one_function(
        "median",
        "xs",
        "Median of a non-empty list.",
        &[
            "assert median([3, 1, 2]) == 2",
            "assert median([1, 2, 3, 4]) == 2.5",
        ],
        "assert median([1, 3]) == 2\nassert median([4, 1, 3, 2]) == 2.5\n",
        MEDIAN_BY_THREE,
    );
    let fresh = "def median(xs):\n    ordered = sorted(xs)\n    half = len(ordered) // 2\n    \
                 if len(ordered) % 2:\n        return ordered[half]\n    \
                 return (ordered[half - 1] + ordered[half]) / 2\n";
    let run = run(
        &task,
        vec![(Proposer::Mutate, 1), (Proposer::Fresh, 2)],
        vec![program_reply(fresh), program_reply(fresh)],
    )
    .await;
    let report = &run.report;
    assert_eq!(
        report.final_program,
        MEDIAN_BY_THREE.replace("/ 3", "/ 2"),
        "{:?}",
        run.said
    );
    assert_eq!(report.status, FixStatus::Fixed);
    assert_eq!(
        report.confirmation.as_ref().map(|c| c.status.as_str()),
        Some("confirmed"),
        "{:?}",
        run.said
    );
    assert!(
        run.said
            .iter()
            .any(|m| m.contains("raises IndexError on `median([])`")
                && m.contains("it is taken back")),
        "the user is told why the set-aside edit came back: {:?}",
        run.said
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_that_crashes_where_the_votes_raise_on_purpose_is_taken_back() {
    // The edit 1 -> 0 divides by zero on `mean([])`; the fresh programs raise ValueError there
    // on purpose. Neither answers: the edit behaves as they do, and is returned.
    let seed = "def mean(xs):\n    total = 1\n    for x in xs:\n        total += x\n    \
                return total / len(xs)\n";
    let task = one_function(
        "mean",
        "xs",
        "Mean of a non-empty list.",
        &["assert mean([1, 2, 3]) == 2", "assert mean([2, 4]) == 3"],
        "assert mean([5]) == 5\n",
        seed,
    );
    let fresh = "def mean(xs):\n    if not xs:\n        raise ValueError(\"empty\")\n    \
                 return sum(xs) / len(xs)\n";
    let run = run(
        &task,
        vec![(Proposer::Mutate, 1), (Proposer::Fresh, 2)],
        vec![program_reply(fresh), program_reply(fresh)],
    )
    .await;
    let report = &run.report;
    assert_eq!(
        report.final_program,
        seed.replace("total = 1", "total = 0"),
        "{:?}",
        run.said
    );
    assert_eq!(
        report.confirmation.as_ref().map(|c| c.status.as_str()),
        Some("confirmed")
    );
    assert!(
        run.said.iter().any(|m| m.contains("it is taken back")),
        "the edit came back, not through another path: {:?}",
        run.said
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_that_crashes_where_the_votes_return_none_is_not_taken_back() {
    // `longest([])` owes `None`. The edit `1 → 0` raises IndexError there, and its guarded edit
    // answers `''`: both set aside or kept apart, the fresh programs return `None`. A crash is
    // no `None`: the crashing edit must not come back as confirmed.
    let seed = "def longest(strings):\n    best = strings[1]\n    for s in strings:\n        \
                if len(s) > len(best):\n            best = s\n    return best\n";
    let task = one_function(
        "longest",
        "strings",
        "The longest string, the first of equals; None for no strings.",
        &[
            "assert longest(['ab', 'cd']) == 'ab'",
            "assert longest(['a', 'bb', 'c']) == 'bb'",
        ],
        "assert longest([]) is None\n",
        seed,
    );
    let fresh = "def longest(strings):\n    if not strings:\n        return None\n    \
                 return max(strings, key=len)\n";
    let run = run(
        &task,
        vec![(Proposer::Mutate, 1), (Proposer::Fresh, 2)],
        vec![program_reply(fresh), program_reply(fresh)],
    )
    .await;
    let report = &run.report;
    assert!(
        !run.said.iter().any(|m| m.contains("it is taken back")),
        "{:?}",
        run.said
    );
    assert_ne!(
        report.final_program,
        seed.replace("strings[1]", "strings[0]"),
        "the crashing edit was returned: {:?}",
        run.said
    );
}

/// A search with model-free edits only (`harden` on or off); the model is never asked.
fn edits_only(generator: &Arc<ScriptedModel>, harden: bool) -> Fixer {
    Fixer {
        seed: Default::default(),
        generator: generator.clone(),
        debugger: generator.clone(),
        runner: common::runner(Duration::from_secs(10)),
        prompts: Prompts::new().expect("templates load"),
        options: FixOptions {
            strategy: Strategy::Search,
            search: SearchOptions {
                portfolio: vec![(Proposer::Mutate, 1)],
                harden,
                // Rules off by default that student programs' slips need (`--rules`).
                counter_start: true,
                ..SearchOptions::default()
            },
            ..FixOptions::default()
        },
    }
}

/// `task` fixed by a search with model-free edits only (`harden` on or off).
async fn fix_by_edits(task: &Task, harden: bool, progress: &dyn Progress) -> FixReport {
    let generator = Arc::new(ScriptedModel::new(Vec::<String>::new()));
    edits_only(&generator, harden).fix(task, progress).await
}

/// `seed` (a `search(x, seq)` function) with the guard `if not seq: return 0` as its first
/// statement.
fn guarded(seed: &str) -> String {
    let body = seed
        .strip_prefix("def search(x, seq):\n")
        .expect("a search function");
    format!("def search(x, seq):\n    if not seq:\n        return 0\n{body}")
}

/// A mean whose short-list branch names a variable that does not exist: the visible tests
/// only pass long lists.
fn mean_with_a_typo() -> Task {
    let mut t = example();
    t.task_id = "mean".into();
    t.prompt = "def mean(xs):\n    \"\"\"The mean of xs.\"\"\"\n".into();
    t.entry_point = "mean".into();
    t.visible_tests = vec![
        "assert mean([1, 2, 3]) == 2.0".into(),
        "assert mean([2, 4, 6, 8]) == 5.0".into(),
    ];
    t.hidden_tests = Some("assert mean([2, 3]) == 2.5\nassert mean([7]) == 7.0\n".into());
    t.seed = Some(
        "def mean(xs):\n    if len(xs) >= 3:\n        return sum(xs) / len(xs)\n    \
         return sum(xs) / len(x)\n"
            .into(),
    );
    t
}

#[tokio::test(flavor = "multi_thread")]
async fn a_passing_seed_that_raises_on_extra_inputs_is_reported_and_with_harden_edited() {
    let task = mean_with_a_typo();
    let generator = Arc::new(ScriptedModel::new(Vec::<String>::new()));
    let fixer = |harden: bool| edits_only(&generator, harden);
    let said = Said::default();
    let report = &fixer(true).fix(&task, &said).await;
    let run = Run {
        report: report.clone(),
        requests: generator.requests(),
        said: said.0.into_inner().expect("lock"),
    };
    assert_eq!(
        report.candidates.first().and_then(|c| c.visible_passed),
        Some(2),
        "the seed passes the visible tests"
    );
    assert_eq!(report.status, FixStatus::Fixed, "{:?}", run.said);
    assert_eq!(
        report.final_program,
        "def mean(xs):\n    if len(xs) >= 3:\n        return sum(xs) / len(xs)\n    \
         return sum(xs) / len(xs)\n",
        "{:#?}",
        report
            .candidates
            .iter()
            .map(|c| (c.id, c.visible_passed, c.diff_lines, &c.edit, &c.problem))
            .collect::<Vec<_>>()
    );
    assert!(
        run.said
            .iter()
            .any(|m| m.contains("raises NameError on `mean(")),
        "{:?}",
        run.said
    );
    assert!(run.requests.is_empty());

    // Without harden (the default) the raise is reported and the passing program kept.
    let said = Said::default();
    let kept = fixer(false).fix(&task, &said).await;
    assert_eq!(kept.status, FixStatus::AlreadyPassing);
    assert_eq!(Some(kept.final_program.as_str()), task.seed.as_deref());
    let said = said.0.into_inner().expect("lock");
    assert!(
        said.iter()
            .any(|m| m.contains("raises NameError on `mean(") && m.contains("--rules harden")),
        "{said:?}"
    );
}

/// Where x goes in a sorted sequence, with visible tests that never pass an empty one.
fn search_task(seed: &str, hidden: &str) -> Task {
    let mut task = example();
    task.task_id = "search".into();
    task.prompt = "def search(x, seq):\n    \"\"\"Where x goes in the sorted seq.\"\"\"\n".into();
    task.entry_point = "search".into();
    task.visible_tests = vec![
        "assert search(42, [1, 5, 10]) == 3".into(),
        "assert search(5, (1, 5, 10)) == 1".into(),
        "assert search(0, [1, 2]) == 0".into(),
    ];
    task.hidden_tests = Some(hidden.into());
    task.seed = Some(seed.into());
    task
}

/// [`search_task`] with visible tests that never pass a value the sequence holds: they do not
/// say where it goes beside its equal, so no rank is owed (`harden`'s own rules alone).
fn without_rank(mut task: Task) -> Task {
    task.visible_tests[1] = "assert search(7, (1, 5, 10)) == 2".into();
    task
}

#[tokio::test(flavor = "multi_thread")]
async fn with_harden_a_guard_fixes_a_program_that_indexes_an_empty_argument() {
    // Where x goes in a sorted sequence; `seq[0]` raises on an empty one, which no visible
    // test passes. No single edit stops that; `if not seq: return 0` does, with 0 the empty
    // value of the type the program answers with.
    let seed = "def search(x, seq):\n    if x <= seq[0]:\n        return 0\n    \
                for i in range(len(seq) - 1):\n        if seq[i] < x <= seq[i + 1]:\n            \
                return i + 1\n    return len(seq)\n";
    let task = search_task(
        seed,
        "assert search(3, []) == 0\nassert search(7, [1, 5, 10]) == 2\n",
    );
    let report = fix_by_edits(&task, true, &Silent).await;
    assert_eq!(report.status, FixStatus::Fixed);
    assert_eq!(report.final_program, guarded(seed));
}

#[tokio::test(flavor = "multi_thread")]
async fn with_harden_a_program_that_falls_off_its_end_on_an_empty_argument_gets_an_answer() {
    // Its loop never runs on an empty sequence, so it returns None by falling off its end;
    // it answers an index everywhere else.
    let seed =
        "def search(x, seq):\n    for i, e in enumerate(seq):\n        if x <= e:\n            \
                return i\n        elif x > seq[-1]:\n            return len(seq)\n";
    let task = without_rank(search_task(seed, "assert search(3, []) == 0\n"));
    let said = Said::default();
    let report = fix_by_edits(&task, true, &said).await;
    let said = said.0.into_inner().expect("lock");
    assert_eq!(report.status, FixStatus::Fixed, "{said:?}");
    assert!(
        said.iter()
            .any(|m| m.contains("falls off its end (None) on `search(")),
        "{said:?}"
    );
    // It owes the empty value of its answers' type, 0: single edits come before guards, and
    // a `return` added at the end answers 0 there (`return True` or `return x` would not).
    assert_eq!(report.final_program, format!("{seed}    return len(seq)\n"));

    // A `None` the program returns on purpose is its answer.
    let mut meant = task.clone();
    meant.seed = Some(format!("{seed}    return None\n"));
    let kept = fix_by_edits(&meant, true, &Silent).await;
    assert_eq!(kept.status, FixStatus::AlreadyPassing);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_that_fixes_a_visible_test_but_indexes_an_empty_argument_is_edited_again() {
    // `x < elem` fails `search(5, (1, 5, 10)) == 1`; `<=` passes every visible test, but
    // `seq[0]` still raises on an empty sequence. No single edit of the seed does both, and
    // the passing edit must not be returned as it is.
    let seed = "def search(x, seq):\n    if x < seq[0]:\n        return 0\n    \
                elif x > seq[-1]:\n        return len(seq)\n    for i, elem in enumerate(seq):\n\
                \x20       if x < elem:\n            return i\n";
    let task = search_task(seed, "assert search(3, []) == 0\n");
    let said = Said::default();
    let report = fix_by_edits(&task, true, &said).await;
    let said = said.0.into_inner().expect("lock");
    assert_eq!(report.status, FixStatus::Fixed, "{said:?}");
    assert_eq!(
        report.final_program,
        "def search(x, seq):\n    if not seq:\n        return 0\n    if x < seq[0]:\n        \
         return 0\n    elif x > seq[-1]:\n        return len(seq)\n    for i, elem in \
         enumerate(seq):\n        if x <= elem:\n            return i\n",
        "{said:?}"
    );
    assert!(
        said.iter().any(|m| m.starts_with("harden: candidate ")
            && m.contains("passes the visible tests but raises IndexError on `search(")
            && m.contains("edit(s) of it avoid that")),
        "the user is told why the passing edit was not returned: {said:?}"
    );
    let first = report
        .candidates
        .iter()
        .find(|c| c.visible_passed == Some(3) && c.proposer == Proposer::Mutate)
        .expect("a passing edit");
    assert!(
        first
            .problem
            .as_deref()
            .is_some_and(|p| p.contains("raises IndexError on `search(")),
        "{:?}",
        first.problem
    );

    // Without harden the first passing edit is returned.
    let plain = fix_by_edits(&task, false, &Silent).await;
    assert!(plain
        .final_program
        .contains("if x < seq[0]:\n        return 0"));
    assert!(!plain.final_program.contains("if not seq"));
}

/// A search that answers every visible test and falls off its end when x is the last element:
/// its loop stops one short.
const LAST_ELEMENT_FALLS_OFF: &str = "def search(x, seq):\n    if x < seq[0]:\n        \
    return 0\n    if x > seq[-1]:\n        return len(seq)\n    for i in range(len(seq) - 1):\n        \
    if seq[i] == x:\n            return i\n        if seq[i] < x < seq[i + 1]:\n            \
    return i + 1\n";

/// The given program's answer on `call`, run in the sandbox.
fn answer(program: &str, call: &str) -> Option<String> {
    let runner = common::runner(Duration::from_secs(10));
    let input = TestInput::Call { expr: call.into() };
    runner.run(program, &input, None).ok()?.actual
}

#[tokio::test(flavor = "multi_thread")]
async fn with_harden_a_passing_program_that_falls_off_its_end_on_the_last_element_is_mended() {
    // A value taken from the end of the sequence (`search(10, [1, 5, 10])`) is an input the
    // visible tests never pass; the empty sequence is guarded, so that is the only slip.
    let seed = format!(
        "def search(x, seq):\n    if not seq:\n        return 0\n{}",
        LAST_ELEMENT_FALLS_OFF
            .strip_prefix("def search(x, seq):\n")
            .expect("a search")
    );
    let task = search_task(&seed, "assert search(10, [1, 5, 10]) == 2\n");
    let said = Said::default();
    let report = fix_by_edits(&task, true, &said).await;
    let said = said.0.into_inner().expect("lock");
    assert!(
        said.iter()
            .any(|m| m.contains("falls off its end (None) on `search(10, ")),
        "{said:?}"
    );
    assert_eq!(report.status, FixStatus::Fixed, "{said:?}");
    // Not a `return` made up at the end: the loop's own answer, the element's index.
    assert_eq!(
        answer(&report.final_program, "search(10, [1, 5, 10])").as_deref(),
        Some("2"),
        "{}",
        report.final_program
    );
    assert!(
        report.final_program.ends_with("return i + 1\n"),
        "{}",
        report.final_program
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_harden_a_search_that_puts_the_last_element_after_its_equal_is_mended() {
    // `search(5, (1, 5, 10)) == 1` puts a value the sequence holds before its equal; this
    // search does so everywhere but at the last element, where it answers `len(seq)`: no raise,
    // no `None`, only an answer other than the rank the visible tests give.
    let seed = "def search(x, seq):\n    if not seq:\n        return 0\n    \
                if x >= seq[-1]:\n        return len(seq)\n    for i, elem in enumerate(seq):\n\
                \x20       if elem >= x:\n            return i\n";
    let task = search_task(seed, "assert search(10, [1, 5, 10]) == 2\n");
    let said = Said::default();
    let report = fix_by_edits(&task, true, &said).await;
    let said = said.0.into_inner().expect("lock");
    assert!(
        said.iter().any(|m| m.contains(
            "answers `3` where the visible tests' answers, the value's rank in the sorted \
             sequence, give `2` on `search(10, "
        )),
        "{said:?}"
    );
    assert_eq!(report.status, FixStatus::Fixed, "{said:?}");
    assert_eq!(
        report.final_program,
        seed.replace("x >= seq[-1]", "x > seq[-1]"),
        "{said:?}"
    );

    // Tests that never pass a value the sequence holds do not say where it goes: kept.
    let kept = fix_by_edits(&without_rank(task), true, &Silent).await;
    assert_eq!(kept.status, FixStatus::AlreadyPassing);
}

#[tokio::test(flavor = "multi_thread")]
async fn with_harden_the_empty_sequence_is_mended_first_and_the_last_element_next() {
    // Two slips the visible tests miss: `seq[0]` on an empty sequence and the last element
    // falling through. No single edit mends both; the guard comes first, then the loop.
    let seed = LAST_ELEMENT_FALLS_OFF;
    let task = search_task(
        seed,
        "assert search(3, []) == 0\nassert search(10, [1, 5, 10]) == 2\n",
    );
    let said = Said::default();
    let report = fix_by_edits(&task, true, &said).await;
    let said = said.0.into_inner().expect("lock");
    assert_eq!(report.status, FixStatus::Fixed, "{said:?}");
    assert!(report
        .final_program
        .starts_with("def search(x, seq):\n    if not seq:\n        return 0\n"));
    for (call, want) in [("search(3, [])", "0"), ("search(10, [1, 5, 10])", "2")] {
        assert_eq!(
            answer(&report.final_program, call).as_deref(),
            Some(want),
            "{call}: {}",
            report.final_program
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn with_harden_an_answer_of_another_type_on_an_empty_argument_is_edited_away() {
    // It answers an index everywhere but on an empty sequence, where it answers `()`.
    let seed = "def search(x, seq):\n    if seq == []:\n        return ()\n    \
                for i, e in enumerate(seq):\n        if x <= e:\n            return i\n    \
                return len(seq)\n";
    let task = without_rank(search_task(seed, "assert search(3, []) == 0\n"));
    let said = Said::default();
    let report = fix_by_edits(&task, true, &said).await;
    let said = said.0.into_inner().expect("lock");
    assert!(
        said.iter()
            .any(|m| m.contains("answers `()` where it answers like `0` elsewhere")),
        "{said:?}"
    );
    assert_eq!(report.status, FixStatus::Fixed, "{said:?}");
    assert!(
        !report.final_program.contains("return ()"),
        "{}",
        report.final_program
    );

    // An answer of the same kind (a number) is not suspicious, whatever its value.
    let mut numeric = task.clone();
    numeric.seed = Some(seed.replace("return ()", "return -1"));
    let kept = fix_by_edits(&numeric, true, &Silent).await;
    assert_eq!(kept.status, FixStatus::AlreadyPassing);
}

#[tokio::test(flavor = "multi_thread")]
async fn when_every_passing_edit_raises_on_an_empty_argument_the_smallest_is_edited_again() {
    // MBPP/101: the kth element as given, not sorted. Deleting `arr.sort()` and reading
    // `arr[k - 2]` of the sorted list both pass the one visible test, and both index an empty
    // list (as a correct program does: that input is outside the task). The edit the search
    // returns without the check (the smallest) is the one to guard, not the first found.
    let mut task = example();
    task.task_id = "kth".into();
    task.prompt = "def kth_element(arr, n, k):\n    \"\"\"The kth element of arr.\"\"\"\n".into();
    task.entry_point = "kth_element".into();
    task.visible_tests = vec!["assert kth_element([12, 3, 5, 7, 19], 5, 2) == 3".into()];
    task.hidden_tests = Some("assert kth_element([17, 24, 8, 23], 4, 3) == 8\n".into());
    task.seed = Some("def kth_element(arr, n, k):\n    arr.sort()\n    return arr[k - 1]\n".into());
    let report = fix_by_edits(&task, true, &Silent).await;
    assert_eq!(report.status, FixStatus::Fixed);
    assert!(
        !report.final_program.contains("sort") && report.final_program.contains("arr[k - 1]"),
        "{}",
        report.final_program
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn harden_does_not_take_a_name_unbound_for_an_index_out_of_range_mended() {
    // `seq[-1]` raises IndexError on an empty sequence. `seq[-1]` → `item[-1]` passes the
    // visible tests and raises UnboundLocalError there instead: the same slip moved, not a
    // mend. The guard is.
    let seed = "def search(x, seq):\n    a = list(enumerate(seq))\n    for item in a:\n        \
                if x <= item[1]:\n            return item[0]\n    if x > seq[-1]:\n        \
                return len(seq)\n";
    let task = search_task(seed, "assert search(3, []) == 0\n");
    let report = fix_by_edits(&task, true, &Silent).await;
    assert_eq!(report.status, FixStatus::Fixed);
    assert_eq!(report.final_program, guarded(seed));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_passing_seed_that_raises_only_by_its_own_raise_is_kept() {
    // Its own `raise IndexError` on an empty list is the program's choice, not a bug.
    let mut task = mean_with_a_typo();
    task.seed = Some(
        "def mean(xs):\n    if not xs:\n        raise IndexError('empty')\n    \
         return sum(xs) / len(xs)\n"
            .into(),
    );
    let run = run(&task, vec![(Proposer::Mutate, 1)], Vec::new()).await;
    assert_eq!(
        run.report.status,
        FixStatus::AlreadyPassing,
        "{:?}",
        run.said
    );
    assert!(
        !run.said.iter().any(|m| m.contains("raises")),
        "{:?}",
        run.said
    );
}

/// A search of `task` with one model behind every proposer and two rounds; `hidden` is a piece
/// of the task's hidden tests that no request may carry.
async fn model_run(task: &Task, model: ScriptedModel, search: SearchOptions, hidden: &str) -> Run {
    let model = Arc::new(model.with_name("writer"));
    let fixer = Fixer {
        seed: Default::default(),
        generator: model.clone(),
        debugger: model.clone(),
        runner: common::runner(Duration::from_secs(10)),
        prompts: Prompts::new().expect("templates load"),
        options: FixOptions {
            strategy: Strategy::Search,
            max_iters: 2,
            search,
            ..FixOptions::default()
        },
    };
    let said = Said::default();
    let report = fixer.fix(task, &said).await;
    let requests = model.requests();
    for r in &requests {
        let text = format!(
            "{}{}",
            r.raw_prompt.clone().unwrap_or_default(),
            r.messages
                .iter()
                .map(|m| m.content.as_str())
                .collect::<String>()
        );
        assert!(!text.contains(hidden), "hidden test sent: {text}");
    }
    Run {
        report,
        requests,
        said: said.0.into_inner().expect("lock"),
    }
}

async fn patch_run(model: ScriptedModel, form: ldb::repair::search::PatchForm) -> Run {
    let search = SearchOptions {
        portfolio: vec![(Proposer::Patch, 2)],
        select: 0,
        patch_top: 5,
        patch_form: form,
        ..SearchOptions::default()
    };
    model_run(&example(), model, search, "[10, 11, 12]").await
}

/// A scripted fill-in-the-middle model: `reply` where the hole comes right after `after`,
/// nonsense anywhere else.
fn fills_after(after: &'static str, reply: &'static str) -> ScriptedModel {
    ScriptedModel::from_fn(move |r: &ChatRequest| {
        let raw = r.raw_prompt.clone().unwrap_or_default();
        let before = raw.split("<|fim_suffix|>").next().unwrap_or("");
        Ok(if before.ends_with(after) {
            reply.to_string()
        } else {
            "x = 1".to_string()
        })
    })
    .filling_in_middle()
}

#[tokio::test(flavor = "multi_thread")]
async fn patch_fills_in_the_middle_of_the_suspicious_line() {
    // The embedded model's form: a raw prompt ending in `<|fim_middle|>`; the scripted model
    // fixes the loop's line when the hole is there, and writes nonsense elsewhere.
    let model = fills_after("total = 0\n    ", "for i in range(0, len(xs)):");
    let run = patch_run(model, ldb::repair::search::PatchForm::Auto).await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed, "{:#?}", report.candidates);
    assert!(report.final_program.contains("for i in range(0, len(xs)):"));
    let chosen = report
        .candidates
        .iter()
        .find(|c| c.program.as_deref() == Some(report.final_program.as_str()))
        .expect("candidate");
    assert_eq!(chosen.proposer, Proposer::Patch);
    assert_eq!(chosen.edit.as_ref().map(|e| e.line), Some(3));
    let raw = run.requests[0].raw_prompt.clone().expect("a raw prompt");
    assert!(raw.starts_with("<|fim_prefix|>"), "{raw}");
    assert!(raw.ends_with("<|fim_middle|>"), "{raw}");
    // The visible tests are in the prompt as comments; the rest of the program after the hole.
    assert!(raw.contains("# assert sum_evens([2, 2, 5]) == 4"), "{raw}");
    assert!(raw.contains("<|fim_suffix|>\n"), "{raw}");
}

/// A scripted chat model: `reply` when the prompt holds every one of `marks`, `pass` otherwise.
fn answers_when(marks: &'static [&'static str], reply: &'static str) -> ScriptedModel {
    ScriptedModel::from_fn(move |r: &ChatRequest| {
        let text = r
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<String>();
        Ok(if marks.iter().all(|m| text.contains(m)) {
            reply.to_string()
        } else {
            "```python\npass\n```".to_string()
        })
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn patch_asks_an_endpoint_for_the_marked_lines_only() {
    let model = answers_when(
        &["for i in range(1, len(xs)):  # <-- FIX"],
        "```python\n    for i in range(len(xs)):\n```",
    );
    let run = patch_run(model, ldb::repair::search::PatchForm::Auto).await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed, "{:#?}", report.candidates);
    assert!(report
        .final_program
        .contains("    for i in range(len(xs)):\n        if xs[i]"));
    assert!(run.requests.iter().all(|r| r.raw_prompt.is_none()));
}

#[test]
fn ldb_locate_prints_the_ranking_and_says_when_spectra_are_blind() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sum_evens/task.json");
    let out = common::ldb()
        .args(["locate", "--json"])
        .arg(&example)
        .output()
        .expect("ldb locate");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["passed"], 2);
    assert_eq!(report["spectrum_blind"], false);
    let lines: Vec<u64> = report["statements"]
        .as_array()
        .expect("statements")
        .iter()
        .map(|s| s["first_line"].as_u64().unwrap_or(0))
        .collect();
    // Lines 4-5 run in the failing test and one of the two passing ones, every other line in
    // all three: they rank first. The faulty loop header is among the rest (a known limit of
    // spectra with few tests).
    assert_eq!(&lines[..2], &[5, 4]);
    assert!(lines.contains(&3));

    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("p.py"),
        "def f(xs):\n    n = len(xs)\n    return xs[0] + n\n",
    )
    .expect("p.py");
    let out = common::ldb()
        .args(["locate", "p.py", "--test", "assert f([]) == 0"])
        .current_dir(dir.path())
        .output()
        .expect("ldb locate");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("<- raised here"), "{text}");
    assert!(text.contains("every test fails"), "{text}");
}

/// A helper that raises on a value its caller computed wrongly: the raise is in the helper,
/// and the call that led to it is named (the program's frames under the exception).
#[test]
fn ldb_locate_names_the_call_that_led_to_a_raise_in_a_helper() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("p.py"),
        "def ratio(a, b):\n    return a / b\n\ndef f(xs):\n    n = len(xs) - len(xs)\n    return ratio(sum(xs), n)\n",
    )
    .expect("p.py");
    let out = common::ldb()
        .args([
            "locate",
            "p.py",
            "--json",
            "--test",
            "assert f([2, 4]) == 3",
        ])
        .current_dir(dir.path())
        .output()
        .expect("ldb locate");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let at = |line: u64| {
        report["statements"]
            .as_array()
            .expect("statements")
            .iter()
            .find(|s| s["first_line"] == line)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(at(2)["raised"], 1, "{report}");
    assert_eq!(at(6)["called"], 1, "{report}");
    assert_eq!(at(5)["called"], 0, "{report}");
    let out = common::ldb()
        .args(["locate", "p.py", "--test", "assert f([2, 4]) == 3"])
        .current_dir(dir.path())
        .output()
        .expect("ldb locate");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("<- called where it raised"), "{text}");
}

/// A search with edits and fresh programs whose votes (`verify`, `vote_patience`,
/// `tie_votes` of `search`) come from `generator`.
fn checking_fixer(generator: Arc<ScriptedModel>, search: SearchOptions) -> Fixer {
    Fixer {
        seed: Default::default(),
        generator: generator.clone(),
        debugger: generator,
        runner: common::runner(Duration::from_secs(10)),
        prompts: Prompts::new().expect("templates load"),
        options: FixOptions {
            strategy: Strategy::Search,
            max_iters: 6,
            search: SearchOptions {
                portfolio: vec![(Proposer::Mutate, 1), (Proposer::Fresh, 4)],
                ..search
            },
            ..FixOptions::default()
        },
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn votes_stop_when_the_first_ones_all_fail_the_visible_tests() {
    // The seed passes; fresh programs that fail the visible tests cannot vote on it.
    let mut task = example();
    task.seed = Some(
        "def sum_evens(xs: list) -> int:\n    return sum(x for x in xs if x % 2 == 0)\n".into(),
    );
    let hopeless = "def sum_evens(xs: list) -> int:\n    return -1\n";
    let replies: Vec<String> = (0..4).map(|_| program_reply(hopeless)).collect();
    let generator = Arc::new(ScriptedModel::new(replies));
    let fixer = checking_fixer(
        generator.clone(),
        SearchOptions {
            verify: 4,
            vote_patience: 2,
            ..SearchOptions::default()
        },
    );
    let report = fixer.fix(&task, &Silent).await;
    assert_eq!(report.status, FixStatus::AlreadyPassing);
    assert_eq!(generator.requests().len(), 2, "drew past the patience");
}

/// A wrong seed that passes the weak visible test, checked by two votes (one agrees with the
/// right program, one fails the visible test), with up to `tie_votes` more drawn on a tie.
async fn tied_run(tie_votes: usize) -> Run {
    let task = squares(
        "def sum_squares(xs):\n    return sum(x + x for x in xs)\n",
        "assert sum_squares([2]) == 4",
    );
    let replies = [
        "def sum_squares(xs):\n    return sum(x * x for x in xs)\n",
        "def sum_squares(xs):\n    return 0\n",
        "def sum_squares(xs):\n    total = 0\n    for x in xs:\n        total += x ** 2\n    return total\n",
    ];
    let generator = Arc::new(ScriptedModel::new(replies.iter().map(|r| program_reply(r))));
    let fixer = checking_fixer(
        generator.clone(),
        SearchOptions {
            verify: 2,
            tie_votes,
            ..SearchOptions::default()
        },
    );
    let said = Said::default();
    let report = fixer.fix(&task, &said).await;
    Run {
        report,
        requests: generator.requests(),
        said: said.0.into_inner().expect("lock"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tied_vote_draws_one_more_before_choosing() {
    // The seed and the first vote disagree, one each: the third vote sides with the vote.
    let tied = tied_run(2).await;
    assert_eq!(tied.requests.len(), 3, "{:?}", tied.said);
    assert_eq!(tied.report.status, FixStatus::Fixed);
    assert!(
        tied.report.final_program.contains("x ** 2") || tied.report.final_program.contains("x * x")
    );
    assert!(
        tied.said
            .iter()
            .any(|m| m.starts_with("the votes tie (2 groups of 1")),
        "{:?}",
        tied.said
    );
    // Off, the tie goes to the seed, found first.
    let kept = tied_run(0).await;
    assert_eq!(kept.requests.len(), 2);
    assert_eq!(kept.report.status, FixStatus::AlreadyPassing);
    assert!(kept.report.final_program.contains("x + x"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_settled_vote_says_so_and_draws_no_more() {
    // The seed passes and the first of two votes agrees with it: 2 against the 1 left.
    let task = squares(
        "def sum_squares(xs):\n    return sum(x * x for x in xs)\n",
        "assert sum_squares([2]) == 4",
    );
    let replies = [
        "def sum_squares(xs):\n    total = 0\n    for x in xs:\n        total += x ** 2\n    return total\n",
        "def sum_squares(xs):\n    return 0\n",
    ];
    let generator = Arc::new(ScriptedModel::new(replies.iter().map(|r| program_reply(r))));
    let fixer = checking_fixer(
        generator.clone(),
        SearchOptions {
            verify: 2,
            ..SearchOptions::default()
        },
    );
    let said = Said::default();
    let report = fixer.fix(&task, &said).await;
    let said = said.0.into_inner().expect("lock");
    assert_eq!(generator.requests().len(), 1, "{said:?}");
    assert_eq!(report.status, FixStatus::AlreadyPassing);
    assert!(
        said.iter().any(
            |m| m.starts_with("the vote is settled: 2 vote(s) for one behaviour on")
                && m.contains("against 0; the 1 left cannot change the choice")
        ),
        "{said:?}"
    );
}

/// Refactory's question 2 in small: three functions asked for, the visible tests call two.
fn dates_task(seed: &str) -> Task {
    let mut task = example();
    task.task_id = "dates".into();
    task.prompt = "def unique_day(day, dates):\n    \"\"\"Unique day.\"\"\"\n\n\
                   def unique_month(month, dates):\n    \"\"\"Unique month.\"\"\"\n\n\
                   def contains_unique_day(month, dates):\n    \"\"\"Some day of it unique.\"\"\"\n"
        .into();
    task.entry_point = "unique_day".into();
    task.visible_tests = vec![
        "assert unique_day('1', (('May', '1'), ('June', '1'))) == False".into(),
        "assert unique_month('May', (('May', '1'), ('June', '1'))) == True".into(),
    ];
    task.hidden_tests = None;
    task.seed = Some(seed.into());
    task
}

const DAY_AND_MONTH: &str = "def unique_day(day, dates):\n    \
    return sum(1 for m, d in dates if d == day) == 1\n\n\
    def unique_month(month, dates):\n    \
    return sum(1 for m, d in dates if m == month) == 1\n\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_function_no_visible_test_runs_is_named_in_the_report_and_on_stderr() {
    let seed = format!("{DAY_AND_MONTH}def contains_unique_day(month, dates):\n    return\n");
    let said = Said::default();
    let report = fix_by_edits(&dates_task(&seed), true, &said).await;
    assert_eq!(report.status, FixStatus::AlreadyPassing);
    let names: Vec<(&str, u32, u32)> = report
        .unexercised
        .iter()
        .map(|u| (u.function.as_str(), u.first_line, u.last_line))
        .collect();
    assert_eq!(names, [("contains_unique_day", 8, 8)]);
    let said = said.0.lock().expect("lock").clone();
    assert!(
        said.iter()
            .any(|m| m.starts_with("the visible tests never run `contains_unique_day` (line 8)")),
        "{said:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_function_only_other_functions_call_counts_as_run() {
    // The twin: every function runs, `contains_unique_day` from a test and `helper` only
    // through `unique_day`.
    let seed = "def helper(day, dates):\n    return [d for m, d in dates if d == day]\n\n\
                def unique_day(day, dates):\n    return len(helper(day, dates)) == 1\n\n\
                def unique_month(month, dates):\n    return sum(1 for m, d in dates if m == month) == 1\n\n\
                def contains_unique_day(month, dates):\n    \
                return any(unique_day(d, dates) for m, d in dates if m == month)\n";
    let mut task = dates_task(seed);
    task.visible_tests
        .push("assert contains_unique_day('May', (('May', '1'), ('June', '2'))) == True".into());
    let said = Said::default();
    let report = fix_by_edits(&task, true, &said).await;
    assert_eq!(report.status, FixStatus::AlreadyPassing);
    assert!(report.unexercised.is_empty(), "{:?}", report.unexercised);
    let said = said.0.lock().expect("lock").clone();
    assert!(!said.iter().any(|m| m.contains("never run")), "{said:?}");
}

/// A program with one function written and the other left as `return`: the visible tests of
/// the second fail.
fn half_written() -> Task {
    let mut t = example();
    t.task_id = "dates".into();
    t.prompt = "def unique_day(day, dates):\n    \"\"\"Whether exactly one date has this day.\"\"\"\n\n\
                def unique_month(month, dates):\n    \"\"\"Whether exactly one date has this month.\"\"\"\n"
        .into();
    t.entry_point = "unique_day".into();
    t.visible_tests = vec![
        "assert unique_day(\"1\", ((\"Jan\", \"1\"), (\"Feb\", \"1\"))) == False".into(),
        "assert unique_month(\"Jan\", ((\"Jan\", \"1\"), (\"Jan\", \"2\"))) == False".into(),
        "assert unique_month(\"Jan\", ((\"Jan\", \"1\"), (\"Feb\", \"1\"))) == True".into(),
    ];
    t.hidden_tests = Some("assert unique_month(\"Mar\", ((\"Jan\", \"9\"),)) == False\n".into());
    t.seed = Some(
        "def unique_day(day, dates):\n    n = 0\n    for d in dates:\n        if d[1] == day:\n            n += 1\n    return n == 1\n\n\
         def unique_month(month, dates):\n    return\n"
            .into(),
    );
    t
}

async fn complete_run(task: &Task, model: ScriptedModel) -> Run {
    let search = SearchOptions {
        portfolio: vec![(Proposer::Complete, 1)],
        select: 0,
        ..SearchOptions::default()
    };
    model_run(task, model, search, "Mar").await
}

#[tokio::test(flavor = "multi_thread")]
async fn complete_writes_the_unwritten_function_and_keeps_the_rest() {
    // The scripted model writes the body when the hole is the placeholder of unique_month, and
    // goes on at the margin after it (as the embedded model does); anywhere else it writes
    // nonsense.
    let model = fills_after("def unique_month(month, dates):\n    ", "n = 0\n    for d in dates:\n        if d[0] == month:\n            n += 1\n    return n == 1\n# Task:\ndef more():\n    pass\n");
    let task = half_written();
    let run = complete_run(&task, model).await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed, "{:#?}", report.candidates);
    let seed = task.seed.clone().expect("seed");
    let kept = seed.split("    return\n").next().expect("head");
    assert_eq!(
        report.final_program,
        format!("{kept}    n = 0\n    for d in dates:\n        if d[0] == month:\n            n += 1\n    return n == 1\n"),
    );
    let chosen = report
        .candidates
        .iter()
        .find(|c| c.program.as_deref() == Some(report.final_program.as_str()))
        .expect("candidate");
    assert_eq!(chosen.proposer, Proposer::Complete);
    let edit = chosen.edit.as_ref().expect("edit record");
    assert_eq!(
        (edit.line, edit.description.as_str()),
        (9, "wrote unique_month")
    );
    let raw = run.requests[0].raw_prompt.clone().expect("a raw prompt");
    // The function already written is in the prompt: it shows what the data mean.
    assert!(raw.contains("if d[1] == day:"), "{raw}");
    assert_eq!(run.requests.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn complete_asks_an_endpoint_to_write_the_body_and_skips_written_programs() {
    let model = answers_when(
        &["`unique_month` is not written yet", "    return  # <-- FIX"],
        "```python\n    return sum(d[0] == month for d in dates) == 1\n```",
    );
    let task = half_written();
    let run = complete_run(&task, model).await;
    assert_eq!(
        run.report.status,
        FixStatus::Fixed,
        "{:#?}",
        run.report.candidates
    );
    assert!(run.report.final_program.ends_with(
        "def unique_month(month, dates):\n    return sum(d[0] == month for d in dates) == 1\n"
    ));

    // A program with every function written gives `complete` nothing to do: no request.
    let mut written = half_written();
    written.seed = Some(
        "def unique_day(day, dates):\n    return False\n\ndef unique_month(month, dates):\n    return False\n"
            .into(),
    );
    let run = complete_run(&written, ScriptedModel::new(Vec::<String>::new())).await;
    assert!(run.requests.is_empty(), "{:?}", run.requests);
    assert_ne!(run.report.status, FixStatus::Fixed);
}

#[tokio::test(flavor = "multi_thread")]
async fn complete_draws_again_a_body_that_reads_a_name_nothing_defines() {
    // `contains` is never run by a visible test: only the name check catches a body that
    // would raise NameError there.
    let mut task = half_written();
    let seed = task.seed.clone().expect("seed");
    task.seed = Some(format!("{seed}\ndef contains(month, dates):\n    pass\n"));
    let drawn = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = drawn.clone();
    let model = ScriptedModel::from_fn(move |r: &ChatRequest| {
        let raw = r.raw_prompt.clone().unwrap_or_default();
        let before = raw.split("<|fim_suffix|>").next().unwrap_or("");
        Ok(
            if before.ends_with("def unique_month(month, dates):\n    ") {
                "return sum(d[0] == month for d in dates) == 1".to_string()
            } else if before.ends_with("def contains(month, dates):\n    ") {
                if count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                    "return unique_day(day, dates)".to_string()
                } else {
                    "return any(unique_day(d[1], dates) for d in dates if d[0] == month)"
                        .to_string()
                }
            } else {
                "x = 1".to_string()
            },
        )
    })
    .filling_in_middle();
    let run = complete_run(&task, model).await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed, "{:#?}", report.candidates);
    assert!(
        report.final_program.ends_with(
            "def contains(month, dates):\n    return any(unique_day(d[1], dates) for d in dates if d[0] == month)\n"
        ),
        "{}",
        report.final_program
    );
    assert_eq!(drawn.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(run.requests.len(), 3);
    // The user is told what was written and that a draw was thrown back.
    assert!(
        run.said.iter().any(|m| m
            == "complete: wrote unique_month, contains in candidate 0's context, 1 sample(s), 1 \
                pass the visible tests; 1 body draw(s) read a name nothing defines and were drawn again"),
        "{:#?}",
        run.said
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_passing_program_that_leaves_a_function_unwritten_gets_it_written() {
    // Every visible test passes, and none runs `contains`: its placeholder is still unfinished
    // work, written in the program's context and returned in place of the given program.
    let mut task = half_written();
    task.seed = Some(
        "def unique_day(day, dates):\n    return sum(d[1] == day for d in dates) == 1\n\n\
         def unique_month(month, dates):\n    return sum(d[0] == month for d in dates) == 1\n\n\
         def contains(month, dates):\n    return\n"
            .into(),
    );
    let model = fills_after(
        "def contains(month, dates):\n    ",
        "return any(unique_day(d[1], dates) for d in dates if d[0] == month)",
    );
    let run = complete_run(&task, model).await;
    let report = &run.report;
    assert!(
        report.final_program.ends_with(
            "def contains(month, dates):\n    return any(unique_day(d[1], dates) for d in dates if d[0] == month)\n"
        ),
        "{:#?}",
        report.candidates
    );
    // Nothing independent backs it: it is returned as plausible only.
    assert_ne!(
        report.confirmation.as_ref().map(|c| c.status.as_str()),
        Some("confirmed")
    );
    assert_eq!(run.requests.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn peers_outvote_a_passing_seed_and_it_is_edited_towards_them_with_no_model_call() {
    // `x ** 1` passes `sum_squares([1]) == 1`. Two peers (a class's other submissions) square;
    // a third fails the visible test and does not vote. With edits alone, no fresh program
    // could vote: the peers do, and the one-token edit that agrees with them is returned.
    let mut task = squares(
        "def sum_squares(xs):\n    return sum(x ** 1 for x in xs)\n",
        "assert sum_squares([1]) == 1",
    );
    task.peers = vec![
        "def sum_squares(xs):\n    return sum(v * v for v in xs)\n".into(),
        "def sum_squares(xs):\n    t = 0\n    for x in xs:\n        t += x ** 2\n    return t\n"
            .into(),
        "def sum_squares(xs):\n    return 0\n".into(),
    ];
    let generator = Arc::new(ScriptedModel::new(Vec::<String>::new()));
    let said = Said::default();
    let report = edits_only(&generator, true).fix(&task, &said).await;
    let said = said.0.into_inner().expect("lock");
    assert!(generator.requests().is_empty());
    assert!(
        said.iter()
            .any(|m| m.contains("2 of 3 peer programs pass the visible tests")),
        "{said:?}"
    );
    assert_eq!(
        report.final_program, "def sum_squares(xs):\n    return sum(x ** 2 for x in xs)\n",
        "{:#?}",
        report.selection
    );
    assert_eq!(report.status, FixStatus::Fixed);
    let confirmation = report.confirmation.as_ref().expect("confirmation");
    assert_eq!(
        confirmation.status.as_str(),
        "confirmed",
        "{confirmation:?}"
    );
    assert_eq!(confirmation.agreeing, 2, "{confirmation:?}");
    let selection = report.selection.as_ref().expect("selection");
    // The peers' group is the edit's; the seed's stands alone.
    assert_eq!(selection.peers.iter().sum::<usize>(), 2, "{selection:#?}");
    let edit_group = selection
        .groups
        .iter()
        .position(|g| g.contains(&selection.chosen))
        .expect("chosen in a group");
    assert_eq!(selection.peers[edit_group], 2, "{selection:#?}");
    // No peer is a candidate, and none is returned.
    assert!(report.candidates.iter().all(|c| c
        .program
        .as_deref()
        .is_none_or(|p| !task.peers.iter().any(|q| q == p))));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_peer_is_never_returned_when_no_edit_behaves_like_it() {
    // `x * 3` → `x * 2` passes the weak visible test; the peers square, and answer -1 for an
    // empty list, which no edit of the given program (nor of that edit) does. The edit is
    // returned (a peer never is), marked outvoted, and the user is told.
    let mut task = squares(
        "def sum_squares(xs):\n    return sum(x * 3 for x in xs)\n",
        "assert sum_squares([2]) == 4",
    );
    let peer = "def sum_squares(xs):\n    return sum(x * x for x in xs) if xs else -1\n";
    task.peers = vec![peer.into(), peer.replace("x * x", "x ** 2")];
    let generator = Arc::new(ScriptedModel::new(Vec::<String>::new()));
    let said = Said::default();
    let report = edits_only(&generator, true).fix(&task, &said).await;
    let said = said.0.into_inner().expect("lock");
    assert!(
        report.final_program.contains("x * 2"),
        "{}",
        report.final_program
    );
    let confirmation = report.confirmation.as_ref().expect("confirmation");
    assert_eq!(confirmation.status.as_str(), "outvoted", "{confirmation:?}");
    assert_eq!(confirmation.disagreeing, 2, "{confirmation:?}");
    assert!(
        said.iter()
            .any(|m| m.contains("behave otherwise on extra inputs")),
        "{said:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_two_slips_the_passing_edit_is_edited_again_towards_the_peers() {
    // `x ** 3 + 1` fails `sum_squares([1]) == 1`; `+ 1` → `+ 0` (written without the term)
    // passes it but cubes. No single edit of the given program squares; one more edit of that
    // passing edit does.
    let mut task = squares(
        "def sum_squares(xs):\n    return sum(x ** 3 for x in xs) + 1\n",
        "assert sum_squares([1]) == 1",
    );
    task.peers = vec![
        "def sum_squares(xs):\n    return sum(v * v for v in xs)\n".into(),
        "def sum_squares(xs):\n    return sum([x ** 2 for x in xs])\n".into(),
    ];
    let generator = Arc::new(ScriptedModel::new(Vec::<String>::new()));
    let report = edits_only(&generator, true).fix(&task, &Silent).await;
    assert_eq!(
        report.final_program, "def sum_squares(xs):\n    return sum(x ** 2 for x in xs)\n",
        "{:#?}",
        report.selection
    );
    let confirmation = report.confirmation.as_ref().expect("confirmation");
    assert_eq!(
        confirmation.status.as_str(),
        "confirmed",
        "{confirmation:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn peers_never_reach_a_prompt_and_spare_the_votes_they_stand_in_for() {
    // The seed fails its visible test and no edit mends it, so a fresh program is drawn; once
    // one passes, the peers are the votes `select` wants and no more are drawn. No request
    // holds a line of a peer.
    let mut task = squares(
        "def sum_squares(xs):\n    return len(xs) * 7\n",
        "assert sum_squares([2]) == 4",
    );
    let peer = "def sum_squares(xs):\n    peer_total = 0\n    for v in xs:\n        peer_total += v * v\n    return peer_total\n";
    task.peers = vec![peer.into(), peer.replace("v * v", "v ** 2")];
    let right = "def sum_squares(xs):\n    return sum(x * x for x in xs)\n";
    let run = run(
        &task,
        vec![(Proposer::Mutate, 1), (Proposer::Fresh, 2)],
        vec![program_reply(right); 6],
    )
    .await;
    let report = &run.report;
    assert_eq!(report.status, FixStatus::Fixed, "{:?}", run.said);
    assert!(!run.requests.is_empty());
    for r in &run.requests {
        for m in &r.messages {
            assert!(
                !m.content.contains("peer_total"),
                "a peer was sent: {}",
                m.content
            );
        }
    }
    // `select: 2` votes wanted after the first pass; the two peers stand in for them.
    let fresh = report
        .candidates
        .iter()
        .filter(|c| c.proposer == Proposer::Fresh)
        .count();
    assert_eq!(fresh, 1, "{:?}", run.said);
    let confirmation = report.confirmation.as_ref().expect("confirmation");
    assert_eq!(confirmation.agreeing, 2, "{confirmation:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn regression_a_misspelt_name_and_a_counter_with_no_start_are_two_edits_away() {
    // Refactory's `wrong_1_568`: `ele` for the loop's `eleme`, and `position += 1` with no
    // `position = 0`. The rename still raises on every test (now UnboundLocalError), so it was
    // dropped as getting no further, and the start was never tried after it.
    let seed = "def search(x, seq):\n    for eleme in seq:\n        if x <= ele:\n            break\n        position += 1\n    return position\n";
    let task = search_task(
        seed,
        "assert search(3, [1, 5]) == 1\nassert search(9, []) == 0\n",
    );
    let report = fix_by_edits(&task, true, &Silent).await;
    assert_eq!(
        report.status,
        FixStatus::Fixed,
        "{:#?}",
        report.candidates.len()
    );
    assert_eq!(
        report.final_program,
        "def search(x, seq):\n    position = 0\n    for eleme in seq:\n        if x <= eleme:\n            break\n        position += 1\n    return position\n"
    );
}
