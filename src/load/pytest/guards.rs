//! The regression tests of a project's function: the given tests' neighbours (in their files
//! or directories) that pass on the given program and call the function under test, which a fix
//! must keep passing (`--keep-passing`).

use std::path::{Path, PathBuf};

use super::KeepPassing;
use crate::load::LoadError;
use crate::run::{Runner, TestInput};
use crate::task::{PytestNode, Task};

/// The regression tests of `task` (a function of a project whose given tests are nodes):
/// the nodes of the given nodes' files (or directories) that pass on the given program and
/// call the function under test, found by one pytest session that runs the given nodes first,
/// then the rest, each reporting whether it called the function.
pub(super) fn find_guards(
    runner: &Runner,
    task: &Task,
    given: &[(PathBuf, Option<String>)],
    keep: KeepPassing,
    keyword: Option<&str>,
    quiet: bool,
) -> Result<Vec<PytestNode>, LoadError> {
    let program = task.seed.as_deref().unwrap_or_default();
    let Some(lines) = crate::python::splice::def_lines(program, &task.entry_point) else {
        return Ok(Vec::new());
    };
    // Whole files and directories given are run whole already; their passing tests must
    // keep passing as it is.
    let mut pool: Vec<String> = Vec::new();
    for (path, node) in given {
        if node.is_none() {
            continue;
        }
        let place = match keep {
            KeepPassing::None => return Ok(Vec::new()),
            KeepPassing::File => path.clone(),
            KeepPassing::Dir => path.parent().map(Path::to_path_buf).unwrap_or(path.clone()),
        };
        let place = place.display().to_string();
        if !pool.contains(&place) {
            pool.push(place);
        }
    }
    if pool.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(k) = keyword {
        pool.extend(["-k".to_string(), k.to_string()]);
    }
    let collection = runner.collect(program, &pool)?;
    let Some(report) = collection.report.filter(|r| r.collect_errors.is_empty()) else {
        if !quiet {
            eprintln!(
                "note: the given tests' files did not collect cleanly: only the given tests \
                 judge a fix"
            );
        }
        return Ok(Vec::new());
    };
    let given_ids: Vec<String> = task
        .pytest_nodes
        .iter()
        .map(|n| n.node_id.clone())
        .collect();
    let mut tests: Vec<TestInput> = task
        .pytest_nodes
        .iter()
        .map(|n| TestInput::Pytest {
            node_id: n.node_id.clone(),
            source: n.source.clone(),
            guard: false,
        })
        .collect();
    let others: Vec<&str> = report
        .items
        .iter()
        .map(|i| i.nodeid.as_str())
        .filter(|id| !given_ids.iter().any(|g| g == id))
        .collect();
    if others.is_empty() {
        return Ok(Vec::new());
    }
    if !quiet {
        // A slow suite makes this the longest silent wait of a run (tqdm's synchronisation
        // tests: 13 s before the first other line), so say what it is.
        eprintln!(
            "ldb: running the {} other test{} of {} once on the given program, to find the \
             passing ones a fix must keep passing",
            others.len(),
            if others.len() == 1 { "" } else { "s" },
            match keep {
                KeepPassing::Dir => "the tests' directories",
                _ => "the tests' files",
            },
        );
    }
    tests.extend(others.iter().map(|id| TestInput::Pytest {
        node_id: id.to_string(),
        source: String::new(),
        guard: true,
    }));
    let runs = runner.run_nodes_covering(program, &tests, &given_ids, lines)?;
    Ok(runs
        .into_iter()
        .filter(|(o, covered)| {
            o.test.is_guard()
                && o.status == crate::run::TestStatus::Passed
                && *covered == Some(true)
        })
        .filter_map(|(o, _)| match o.test {
            TestInput::Pytest { node_id, .. } => Some(PytestNode {
                source: format!("# {node_id}\n# (a regression test: passed before the fix)\n"),
                node_id,
                guard: true,
            }),
            _ => None,
        })
        .collect())
}
