//! What the published data gets wrong for debugging, repaired after loading: MBPP entry points
//! that name a helper the visible tests never call, and set-up code the tests need; and what
//! cannot be repaired but must be said: hidden tests that use a name nothing defines.

use std::collections::HashSet;

use crate::python::names::free;
use crate::python::source::{parse_module, SourceFile};
use crate::python::toplevel::TopLevel;
use crate::task::{called_names, is_builtin_wrapper, Task};

/// A task whose entry point was changed by [`fix_helper_entry_points`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryPointFix {
    pub task_id: String,
    pub from: String,
    pub to: String,
}

/// For tasks whose visible tests never call the entry point (LDB's MBPP names the first
/// function of the reference code, sometimes a helper), make the entry point the function the
/// first visible test calls. Visible and hidden tests stay as they are. Returns what changed.
pub fn fix_helper_entry_points(tasks: &mut [Task]) -> Vec<EntryPointFix> {
    let mut fixes = Vec::new();
    for task in tasks.iter_mut() {
        if task.entry_point.is_empty() || task.visible_tests.is_empty() {
            continue;
        }
        let calls_entry = task
            .visible_tests
            .iter()
            .any(|t| called_names(t).contains(&task.entry_point));
        if calls_entry {
            continue;
        }
        let Some(first) = task.visible_tests.first() else {
            continue;
        };
        let called = called_names(first)
            .into_iter()
            .find(|n| !is_builtin_wrapper(n));
        if let Some(to) = called {
            fixes.push(EntryPointFix {
                task_id: task.task_id.clone(),
                from: task.entry_point.clone(),
                to: to.clone(),
            });
            task.entry_point = to;
        }
    }
    fixes
}

/// LDB's MBPP keeps a task's set-up code (MBPP's `test_setup_code`, e.g. task 367 building the
/// trees its asserts use) only in front of the hidden `check`, so the visible test can only fail
/// with a NameError. Put that set-up code (never an assert) in front of the visible tests too, as
/// MBPP itself does. Returns the task ids changed.
pub fn attach_setup_code(tasks: &mut [Task]) -> Vec<String> {
    let mut changed = Vec::new();
    for task in tasks.iter_mut() {
        let Some(hidden) = task.hidden_tests.as_deref() else {
            continue;
        };
        let hidden = hidden.replace("\r\n", "\n");
        let Some(at) = hidden.find("def check(") else {
            continue;
        };
        let setup = hidden[..at].trim();
        if setup.is_empty() || setup.contains("assert") {
            continue;
        }
        let mut touched = false;
        for test in &mut task.visible_tests {
            if !test.starts_with(setup) {
                *test = format!("{setup}\n{test}");
                touched = true;
            }
        }
        if touched {
            changed.push(task.task_id.clone());
        }
    }
    changed
}

/// Tasks whose hidden tests use a name that neither they, the task's code (prompt and seed) nor
/// its visible tests define or use: every program fails them, a correct one included
/// (Refactory's question 2 leaves out `tuple_of_possible_birthdays`, a global of Refactory's own
/// harness). Each task id with the names, in order of first use.
pub fn undefined_in_hidden_tests(tasks: &[Task]) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for task in tasks {
        let Some(hidden) = task.hidden_tests.as_deref() else {
            continue;
        };
        let free = free_names(hidden);
        if free.is_empty() {
            continue;
        }
        // What a program for the task is expected to define, or the tests to bring.
        let mut known: HashSet<String> = HashSet::new();
        known.insert(task.entry_point.clone());
        known.insert("candidate".into());
        for code in [Some(task.prompt.as_str()), task.seed.as_deref()]
            .into_iter()
            .flatten()
        {
            if let Some(top) = TopLevel::read(code) {
                known.extend(top.stmts.iter().flat_map(|s| s.names.iter().cloned()));
            }
        }
        for test in &task.visible_tests {
            known.extend(called_names(test));
            known.extend(free_names(test));
        }
        let missing: Vec<String> = free.into_iter().filter(|n| !known.contains(n)).collect();
        if !missing.is_empty() {
            out.push((task.task_id.clone(), missing));
        }
    }
    out
}

/// Names `source` uses and binds nowhere (not builtins); none when it does not parse.
fn free_names(source: &str) -> Vec<String> {
    let src = SourceFile::new(source.to_string());
    match parse_module(&src) {
        Ok(suite) => free::analyse(&src, &suite)
            .free
            .into_iter()
            .map(|f| f.name)
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(prompt: &str, visible: &[&str], hidden: &str) -> Task {
        serde_json::from_value(serde_json::json!({
            "task_id": "t/1", "prompt": prompt, "entry_point": "f",
            "visible_tests": visible, "hidden_tests": hidden,
        }))
        .expect("task")
    }

    #[test]
    fn a_global_the_hidden_tests_never_define_is_named() {
        // Refactory's question 2: the global of Refactory's harness is missing.
        let t = task(
            "def f(day, birthdays):\n    \"\"\"Unique day.\"\"\"\n\ndef g(month, birthdays):\n    \"\"\"Unique month.\"\"\"\n",
            &["assert f('1', (('May', '1'),)) == True"],
            "def check(candidate):\n    assert g('May', BIRTHDAYS) == False\n",
        );
        assert_eq!(
            undefined_in_hidden_tests(&[t]),
            vec![("t/1".to_string(), vec!["BIRTHDAYS".to_string()])]
        );
    }

    #[test]
    fn what_the_tests_import_define_or_the_task_brings_is_not_named() {
        let prompt =
            "import math\n\ndef helper(x):\n    return x\n\ndef f(x):\n    \"\"\"Doc.\"\"\"\n";
        let hidden = "import random\nLIMIT = 3\n\ndef check(candidate):\n    assert candidate(math.pi) == helper(math.pi)\n    assert f(random.random() < LIMIT) is not None\n    assert g(1) == SHARED\n";
        // `SHARED` and `g`: the visible tests expect the program to define them too.
        let t = task(prompt, &["assert g(1) == SHARED"], hidden);
        assert!(undefined_in_hidden_tests(&[t]).is_empty());
    }

    #[test]
    fn hidden_tests_that_do_not_parse_are_left_to_the_run() {
        let t = task(
            "def f():\n    pass\n",
            &["assert f() is None"],
            "assert f(\n",
        );
        assert!(undefined_in_hidden_tests(&[t]).is_empty());
    }
}
