//! What the published data gets wrong for debugging, repaired after loading: MBPP entry points
//! that name a helper the visible tests never call, and set-up code the tests need.

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
