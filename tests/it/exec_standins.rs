//! `ldb exec`'s model-free stand-ins on real sandbox runs: the shims every variant carries
//! (`open` of a missing file, `exit` that returns once, `isinstance` of a stand-in) and the
//! variants that make `==` answer, standard modules real, names tested with `is None` None and
//! calls inside `try` (and making instances of stand-in classes there) raise, and relative
//! imports, which give stand-in modules; two names tested with `a is b` are one object.

use crate::common;

use std::time::Duration;

use ldb::exec::standins::VARIANTS;
use ldb::exec::tree::Step;
use ldb::exec::{make_runnable, Ending, ExecOptions, ExecReport, Snippet};
use ldb::generate::model::scripted::ScriptedModel;
use ldb::generate::prompts::Prompts;

/// Stand-ins only: no model step runs.
fn search(snippet: &str) -> ExecReport {
    search_variants(snippet, false, ldb::exec::EXPLORE)
}

/// Stand-ins only, the seven variants or all 96, then at most `explore` seeded runs.
fn search_variants(snippet: &str, all_variants: bool, explore: usize) -> ExecReport {
    let options = ExecOptions {
        standins: true,
        use_model: false,
        all_variants,
        explore,
        ..ExecOptions::default()
    };
    let snippet = Snippet::new("snippet.py", snippet).expect("a valid snippet");
    let prompts = Prompts::new().expect("prompts");
    let model = ScriptedModel::new(Vec::<String>::new());
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let report = runtime
        .block_on(make_runnable(
            &snippet,
            &model,
            &common::runner(Duration::from_secs(30)),
            &prompts,
            &options,
            &|_| {},
        ))
        .expect("search runs");
    assert!(model.requests().is_empty(), "no model call");
    report
}

fn set_covered(report: &ExecReport) -> (usize, usize) {
    (report.set_coverage.covered, report.set_coverage.total)
}

/// A snippet with no undefined name still gets one stand-in run, for its shims: the file it
/// reads is made (`{}` for JSON), so is the folder of one it appends to, Python 2's unbuffered
/// text mode is buffered, and `exit()` returns the first time so the lines after it run.
#[test]
fn missing_files_are_made_and_exit_returns_once() {
    let snippet = "\
import json
with open('data.json') as f:
    data = json.load(f)
log = open('logs/run.log', 'a', 0)
aux = data
exit(aux)
print('after exit', data)
";
    let report = search(snippet);
    let steps: Vec<Step> = report.tree.iter().map(|n| n.step).collect();
    assert_eq!(steps, [Step::AsIs, Step::StandIns], "one variant, no names");
    let root = report.tree[0].ending.as_ref().expect("as-is ran");
    assert_eq!(root.error(), Some("FileNotFoundError"));
    assert_eq!(set_covered(&report), (7, 7));
    assert_eq!(report.stop, ldb::exec::Stop::FullCoverage);
}

/// A folder the snippet walks but that is not there is made, with a file in it, so the loop
/// bodies run (as is, `os.walk` of a missing folder yields nothing).
#[test]
fn a_missing_folder_that_is_listed_is_made() {
    let snippet = "\
import os
for root, dirs, files in os.walk('photos/2024'):
    for name in files:
        print(os.path.join(root, name))
print(sorted(os.listdir('notes')))
";
    let report = search(snippet);
    let root = report.tree[0].ending.as_ref().expect("as-is ran");
    assert_eq!(root.error(), Some("FileNotFoundError"), "listdir of notes");
    assert_eq!(set_covered(&report), (5, 5));
}

/// `exit()` at a place it was called before ends the run: a loop around it does not spin until
/// the time limit.
#[test]
fn exit_ends_the_run_the_second_time_a_place_calls_it() {
    let report = search("while True:\n    exit(status)\n");
    let node = report.tree.last().expect("a stand-in run");
    assert_eq!(node.step, Step::StandIns);
    assert_eq!(node.ending, Some(Ending::Finished), "{:?}", node.ending);
}

/// A stand-in is a list when `isinstance` asks (in the variants that answer yes first) and is
/// not (in those that answer no), so both branches run.
#[test]
fn isinstance_of_a_stand_in_against_a_builtin_type_takes_both_branches() {
    let snippet = "\
if isinstance(a, list) and len(a) == 2:
    print('a pair')
else:
    print('something else')
";
    let report = search(snippet);
    assert_eq!(set_covered(&report), (3, 3));
}

/// `kind == 'async'` is never true of a stand-in that equals only itself; the variants whose
/// `==` answers like a comparison take the branch.
#[test]
fn equality_with_a_stand_in_answers_in_some_variants() {
    let snippet = "\
if kind == 'async':
    print('async')
";
    let report = search(snippet);
    assert_eq!(set_covered(&report), (2, 2));
    let best = report.best.as_ref().expect("a best prefix");
    assert!(best.prefix.contains("__eq__ = _ldb_ask"), "{}", best.prefix);
}

/// An undefined `sys` is the real module in one variant: `sys.version_info[1]` is a number, so
/// the range has elements and the loop body runs (a stand-in's range is empty).
#[test]
fn a_standard_module_name_is_the_module_in_one_variant() {
    let snippet = "\
versions = [(3, minor) for minor in range(3, sys.version_info[1] + 1)]
for version in versions:
    print(version)
";
    let report = search(snippet);
    assert_eq!(set_covered(&report), (3, 3));
    let best = report.best.as_ref().expect("a best prefix");
    assert!(
        best.prefix.contains("sys = _ldb_module('sys')"),
        "{}",
        best.prefix
    );
}

/// `hi is None` is never true of a stand-in; the variants that make a name the snippet tests
/// against None be None take that branch.
#[test]
fn a_name_tested_with_is_none_is_none_in_some_variants() {
    let snippet = "\
if hi is None:
    hi = len(items)
print(hi)
";
    let report = search(snippet);
    assert_eq!(set_covered(&report), (3, 3));
    assert!(
        report.tree.iter().any(|n| n.prefix.contains("hi = None\n")),
        "a variant binds hi to None"
    );
}

/// A call of a stand-in inside `try` raises, in one variant, what the handler catches, so the
/// `except` body runs; an undefined name an `except` clause catches is an exception class (a
/// plain stand-in class there is a TypeError once anything raises).
#[test]
fn a_call_inside_try_raises_what_the_handler_catches_in_one_variant() {
    let snippet = "\
try:
    rv = loader.get_source(name)
except TemplateNotFound:
    rv = None
try:
    check(rv)
except AssertionError:
    print('not equal')
";
    let report = search(snippet);
    assert_eq!(set_covered(&report), (8, 8));
    let first = &report.tree[1].prefix;
    assert!(
        first.contains(
            "TemplateNotFound = _LdbAnyType('TemplateNotFound', (Exception, _LdbAny), {})"
        ),
        "{first}"
    );
}

/// Making an instance of a stand-in class is a call too: inside `try` it raises, in the raising
/// variant, what the handler catches (a tuple of classes: the first).
#[test]
fn making_an_instance_of_a_stand_in_class_inside_try_raises_in_one_variant() {
    let snippet = "\
try:
    pool = ProcessPool(max_workers=workers)
except (ImportError, OSError):
    pool = ThreadPool(max_workers=1)
print(pool)
";
    let report = search(snippet);
    assert_eq!(set_covered(&report), (5, 5));
}

/// A relative import names a module of the snippet's own project, which nothing installs: the
/// stand-in prefixes run the snippet in a stand-in package, so the import gives stand-ins and
/// the lines after it run (as is it is an ImportError).
#[test]
fn a_relative_import_gives_a_stand_in_module_of_the_project() {
    let snippet = "\
from .debughelpers import explain
from .. import config
explain(config.DEBUG)
print('done')
";
    let report = search(snippet);
    let root = report.tree[0].ending.as_ref().expect("as-is ran");
    assert_eq!(root.error(), Some("ImportError"));
    assert_eq!(set_covered(&report), (4, 4));
}

/// `exc is _sentinel` is never true of two stand-ins; the variants that make `is None` true
/// bind the second name to the first, so the branch runs.
#[test]
fn two_names_tested_for_identity_are_one_object_in_some_variants() {
    let snippet = "\
if exc is _sentinel:
    exc = None
print(exc)
";
    let report = search(snippet);
    assert_eq!(set_covered(&report), (3, 3));
    assert!(
        report
            .tree
            .iter()
            .any(|n| n.prefix.ends_with("_sentinel = exc\n")),
        "a variant binds _sentinel to exc"
    );
}

/// `--all-variants` runs every variant: here only one that both makes `sys` the real module (so
/// the loop runs) and raises inside `try` (so the handler runs) reaches the last line, and the
/// seven chosen variants have no such one.
#[test]
fn all_variants_reach_what_the_seven_chosen_do_not() {
    let snippet = "\
for minor in range(3, sys.version_info[1] + 1):
    try:
        tree = parse(src, minor)
    except SyntaxError as e:
        error = str(e)
print(error)
";
    let chosen = search_variants(snippet, false, 0);
    assert_eq!(chosen.tree.len(), 1 + VARIANTS.len());
    assert!(set_covered(&chosen).0 < 6, "{:?}", set_covered(&chosen));
    let all = search_variants(snippet, true, 0);
    assert_eq!(all.tree.len(), 1 + 96);
    assert_eq!(set_covered(&all), (6, 6));
}

/// Every fixed variant answers the first question at every place the same way, so a branch that
/// needs `a` true and then `b` false is never taken; the seeded runs that follow answer each
/// place its own way, and stop once every statement is covered.
#[test]
fn seeded_runs_take_branches_that_need_different_answers() {
    let snippet = "\
if a:
    x = 1
    if b:
        y = 2
    else:
        y = 3
print(x, y)
";
    let fixed = search_variants(snippet, false, 0);
    assert_eq!(fixed.tree.len(), 1 + VARIANTS.len());
    assert_eq!(set_covered(&fixed), (5, 6), "y = 3 needs yes, then no");
    let explored = search_variants(snippet, false, 64);
    assert_eq!(set_covered(&explored), (6, 6));
    let seeded = explored.tree.len() - 1 - VARIANTS.len();
    assert!(seeded > 0 && seeded < 64, "{seeded} seeded runs");
    assert!(explored
        .tree
        .iter()
        .skip(1 + VARIANTS.len())
        .all(|n| n.step == Step::StandIns));
}

/// The folder made for a listing also holds a file for each suffix the snippet names, so a
/// filter by extension finds one.
#[test]
fn a_missing_folder_gets_a_file_for_each_suffix_the_snippet_names() {
    let snippet = "\
import os
found = [f for f in os.listdir('scripts') if f.endswith('.py')]
for name in found:
    print(name)
";
    let report = search(snippet);
    assert_eq!(set_covered(&report), (4, 4));
    assert!(report.tree[1].prefix.contains("_ldb_suffixes = ('.py',)\n"));
}

/// A stand-in call never returns None, so `if handler is None:` after `handler = f(...)` was
/// never taken; in the variants that make `is None` true, a call whose result goes straight
/// into a name the snippet tests against None gives None the first time at that place.
#[test]
fn a_call_stored_in_a_name_tested_against_none_gives_none_in_the_none_variants() {
    let snippet = "\
handler = registry.find(kind)
if handler is None:
    result = 'none'
else:
    result = handler(kind)
print(result)
";
    let report = search_variants(snippet, false, 0);
    assert_eq!(set_covered(&report), (5, 5));
    let gives_none: Vec<&str> = report
        .tree
        .iter()
        .filter(|n| n.prefix.contains("_ldb_results = {'handler': None}"))
        .map(|n| n.prefix.as_str())
        .collect();
    assert_eq!(
        gives_none.len(),
        VARIANTS.iter().filter(|v| v.none).count(),
        "every none variant, and only those"
    );
}

/// The same for `is` between a name the snippet binds from a stand-in call and another name: a
/// new stand-in is never `self`, so the check after `ctx = stack.get()` always raised.
#[test]
fn a_call_stored_in_a_name_tested_for_identity_gives_the_other_name() {
    let snippet = "\
ctx = stack.get()
if ctx is not self:
    raise AssertionError('popped the wrong context')
done = True
";
    let report = search_variants(snippet, false, 0);
    assert_eq!(set_covered(&report), (3, 4), "all but the raise");
    assert!(report
        .tree
        .iter()
        .any(|n| n.prefix.contains("_ldb_results = {'ctx': 'self'}")));
}
