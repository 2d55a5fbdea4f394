//! From a failing test to the function to fix, across a project: the functions and methods of
//! the project's files ranked by what the failing tests and the passing ones ran (the Ochiai
//! score of the function's most suspicious line, then of its body as a whole), then by the
//! tracebacks of the failing runs (the innermost
//! project frame first), then by whether a failing test called the function itself. Within each
//! function, its lines ranked the same way.
//!
//! The runs come from one pytest session that traces the project's own files (not the tests,
//! not installed packages): `ldb locate --tests NODE` and `ldb fix --tests NODE` with no
//! function named.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::spectrum::ochiai;

/// One test's run, as localisation reads it.
#[derive(Debug, Clone, Default)]
pub struct ProjectRun {
    pub passed: bool,
    /// Lines run, per project file.
    pub lines: BTreeMap<PathBuf, BTreeSet<u32>>,
    /// Functions the test called itself: file and first line.
    pub entries: BTreeSet<(PathBuf, u32)>,
    /// An exception's project frames, outermost first: file and line.
    pub frames: Vec<(PathBuf, u32)>,
}

/// A ranked function.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RankedFunction {
    pub file: PathBuf,
    /// Its dotted path in the file (`f`, `Cls.method`).
    pub function: String,
    pub first_line: u32,
    pub last_line: u32,
    pub score: f64,
    pub ochiai: f64,
    pub failing_runs: u32,
    pub passing_runs: u32,
    /// How deep a failing run's traceback holds it: 1 for the innermost project frame.
    pub traceback_depth: Option<u32>,
    /// Whether a failing test called it itself.
    pub called_by_test: bool,
    /// Its lines, most suspicious first: line and Ochiai score.
    pub lines: Vec<(u32, f64)>,
}

/// The functions the runs touched, most suspicious first. `read` gives a file's text.
pub fn rank(runs: &[ProjectRun], read: impl Fn(&Path) -> Option<String>) -> Vec<RankedFunction> {
    let failed = runs.iter().filter(|r| !r.passed).count() as u32;
    let files: BTreeSet<&PathBuf> = runs
        .iter()
        .filter(|r| !r.passed)
        .flat_map(|r| r.lines.keys())
        .collect();
    // How deep each (file, line) sits in a failing run's traceback (1: innermost).
    let mut depth: HashMap<(&Path, u32), u32> = HashMap::new();
    for r in runs.iter().filter(|r| !r.passed) {
        for (d, (file, line)) in r.frames.iter().rev().enumerate() {
            let e = depth.entry((file.as_path(), *line)).or_insert(u32::MAX);
            *e = (*e).min(d as u32 + 1);
        }
    }
    let mut out = Vec::new();
    for file in files {
        let Some(text) = read(file) else { continue };
        for (path, site) in crate::python::defs::all_paths(&text) {
            // The body: its `def` line runs when the module is imported, not when called.
            let body_first = site.body_first.unwrap_or(site.def_line);
            let body = body_first..=site.last;
            let count = |passed: bool| {
                runs.iter()
                    .filter(|r| r.passed == passed)
                    .filter(|r| {
                        r.lines
                            .get(file)
                            .is_some_and(|ls| ls.range(body.clone()).next().is_some())
                    })
                    .count() as u32
            };
            let (ef, ep) = (count(false), count(true));
            if ef == 0 {
                continue;
            }
            // A nested class's or function's lines belong to the innermost definition.
            let inner = |line: u32| {
                crate::python::defs::all_paths(&text)
                    .iter()
                    .filter(|(p, s)| {
                        p != &path
                            && s.first >= site.first
                            && s.last <= site.last
                            && s.first <= line
                            && line <= s.last
                    })
                    .count()
                    == 0
            };
            let traceback_depth = depth
                .iter()
                .filter(|((f, l), _)| *f == file.as_path() && body.contains(l) && inner(*l))
                .map(|(_, d)| *d)
                .min();
            let called_by_test = runs.iter().filter(|r| !r.passed).any(|r| {
                r.entries
                    .iter()
                    .any(|(f, l)| f == file && (*l == site.first || *l == site.def_line))
            });
            let o = ochiai(ef, ep, failed);
            let mut lines: Vec<(u32, f64)> = body
                .clone()
                .filter_map(|line| {
                    let hit = |passed: bool| {
                        runs.iter()
                            .filter(|r| r.passed == passed)
                            .filter(|r| r.lines.get(file).is_some_and(|ls| ls.contains(&line)))
                            .count() as u32
                    };
                    let lf = hit(false);
                    (lf > 0).then(|| (line, ochiai(lf, hit(true), failed)))
                })
                .collect();
            lines.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
            // A function is as suspicious as its most suspicious line: a branch only the
            // failing tests take stands out even where passing tests run the rest.
            let best_line = lines.first().map_or(o, |l| l.1);
            out.push(RankedFunction {
                file: file.clone(),
                function: path.clone(),
                first_line: site.first,
                last_line: site.last,
                score: best_line.max(o),
                ochiai: o,
                failing_runs: ef,
                passing_runs: ep,
                traceback_depth,
                called_by_test,
                lines,
            });
        }
    }
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| b.ochiai.total_cmp(&a.ochiai))
            .then_with(|| {
                a.traceback_depth
                    .unwrap_or(u32::MAX)
                    .cmp(&b.traceback_depth.unwrap_or(u32::MAX))
            })
            .then_with(|| b.called_by_test.cmp(&a.called_by_test))
            .then_with(|| (a.last_line - a.first_line).cmp(&(b.last_line - b.first_line)))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOD: &str = "def helper(x):\n    return x + 1\n\n\ndef f(x):\n    y = helper(x)\n    return y * 2\n\n\nclass C:\n    def g(self):\n        return helper(0)\n";

    fn run(passed: bool, lines: &[u32], entries: &[u32]) -> ProjectRun {
        let file = PathBuf::from("/p/m.py");
        ProjectRun {
            passed,
            lines: [(file.clone(), lines.iter().copied().collect())].into(),
            entries: entries.iter().map(|l| (file.clone(), *l)).collect(),
            frames: Vec::new(),
        }
    }

    #[test]
    fn the_function_only_the_failing_test_runs_ranks_first() {
        // The failing test calls f (which calls helper); a passing one calls C.g (helper too).
        let runs = vec![run(false, &[6, 2, 7], &[5]), run(true, &[12, 2], &[11])];
        let ranked = rank(&runs, |_| Some(MOD.to_string()));
        let names: Vec<&str> = ranked.iter().map(|r| r.function.as_str()).collect();
        assert_eq!(names, ["f", "helper"]);
        assert!(ranked[0].called_by_test);
        assert_eq!(ranked[0].lines.len(), 2);
    }

    #[test]
    fn among_equals_the_traceback_decides() {
        let mut failing = run(false, &[6, 2, 7], &[5]);
        failing.frames = vec![(PathBuf::from("/p/m.py"), 6), (PathBuf::from("/p/m.py"), 2)];
        let ranked = rank(&[failing], |_| Some(MOD.to_string()));
        assert_eq!(ranked[0].function, "helper");
        assert_eq!(ranked[0].traceback_depth, Some(1));
        assert_eq!(ranked[1].traceback_depth, Some(2));
    }
}
