//! Model-free prefixes: every undefined name bound to a permissive stand-in (an object that
//! answers any attribute, call, index, operator or `with` with another stand-in; a capitalised
//! name becomes a class of them, so `isinstance` and class attributes work). Treefix's model
//! writes such objects itself (`type("Mock", ...)`, its "MockSelf"); here they come first and
//! for free, so the model's prefixes only have to add what a stand-in cannot give: real
//! imports, domain values, branches a stand-in's fixed answers never take.
//!
//! Several variants, because no fixed answer suits every loop and branch: iterating a stand-in
//! yields nothing (loops are skipped), one or two stand-ins; a stand-in answers truth tests,
//! comparisons and membership (and in some variants `==`) with yes or with no the first time a
//! place in the code asks (the other answer after, so a loop waiting on a stand-in ends); an
//! undefined name of a standard module (`sys`) is a stand-in or the module itself; a name the
//! snippet tests with `is None` is a stand-in or None (and two it tests with `a is b` one
//! object, or two); a call of a stand-in inside `try` (making
//! an instance of a stand-in class too) returns or raises what the handler catches (a name an
//! `except` clause catches is an exception class in every variant). Unpacking
//! (`a, b = x`) always gets as many stand-ins as it asks for. The variants cover different
//! statements, and the minimal set takes what each adds. After the chosen [`VARIANTS`], the
//! search runs [`seeded`] ones: a variant picked from all 96 in which every place answers first
//! by a coin, so branches that need different answers at different places are taken too. In the
//! variants that make `is None` true, a stand-in call whose result goes straight into a name the
//! snippet tests with `is None` (or `is` against another name) gives None (or that name's value)
//! the first time at that place.
//!
//! Every variant's prelude also carries shims: `isinstance` of a stand-in against any type
//! answers as the variant does; `exit()` returns the first time a place calls it (a body cut
//! out of its function ends each path with `exit(x)`); `open()` of a file that is not there
//! makes it (content by its extension), and Python 2's unbuffered text mode is buffered; a
//! folder `os.listdir`, `os.scandir` or `os.walk` lists that is not there is made, with a file
//! (and one for each file suffix the snippet names, `'.py'`);
//! the snippet runs in a stand-in package, so a relative import (`from .helpers import f`, a
//! module of the snippet's own project, which nothing installs) gives a stand-in module.

use super::prefix::Prefix;
use crate::python::names::undefined::Undefined;

const ANY: &str = include_str!("any.py");

/// How a stand-in iterates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Iteration {
    Empty,
    Once,
    Twice,
}

/// One way the stand-ins behave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub iteration: Iteration,
    /// The first answer to a truth test, comparison or membership test.
    pub yes: bool,
    /// `==` answers as comparisons do (else a stand-in equals only itself).
    pub equal: bool,
    /// A name of a standard module (`sys`, `os`) is that module, not a stand-in.
    pub modules: bool,
    /// A name the snippet tests with `is None` is None, and two names it tests with `a is b`
    /// are one object.
    pub none: bool,
    /// A call of a stand-in inside `try` raises what the handler catches, once per place.
    pub raises: bool,
    /// Not 0: the first answer at each place is a coin toss seeded by this, not `yes`.
    pub seed: u32,
}

const fn variant(iteration: Iteration, yes: bool, equal: bool, modules: bool) -> Variant {
    Variant {
        iteration,
        yes,
        equal,
        modules,
        none: false,
        raises: false,
        seed: 0,
    }
}

const fn with_none(v: Variant) -> Variant {
    Variant { none: true, ..v }
}

const fn raising(v: Variant) -> Variant {
    Variant { raises: true, ..v }
}

/// The variants run, in order: chosen greedily (each adding the most line coverage to those
/// before it) on the held-out standard-library bodies of `benchmarks/exec_heldout.py`, stopping
/// when the next added less than 0.2 points: six among 48, then one that raises among 96
/// (added to the six, so no held-out record lost what it had).
pub const VARIANTS: [Variant; 7] = [
    variant(Iteration::Twice, false, true, false),
    variant(Iteration::Twice, true, true, false),
    with_none(variant(Iteration::Empty, true, false, true)),
    with_none(variant(Iteration::Once, true, false, false)),
    with_none(variant(Iteration::Empty, false, true, true)),
    variant(Iteration::Twice, true, false, true),
    raising(variant(Iteration::Once, false, true, false)),
];

/// Seeded variant `i` (from 1): one of all 96 variants, picked by `i`, in which each place in
/// the code answers its own way first, so branches that need different answers at different
/// places are taken together ([`crate::exec::prefix_search`] runs these after [`VARIANTS`]).
pub fn seeded(i: u32) -> Variant {
    // A fixed mix of `i`'s bits (splitmix64's finaliser), so consecutive seeds pick unrelated
    // variants.
    let mut x = u64::from(i).wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    let all: Vec<Variant> = all_variants().collect();
    let pick = all
        .get((x % all.len().max(1) as u64) as usize)
        .copied()
        .unwrap_or(VARIANTS[0]);
    Variant {
        seed: i.max(1),
        ..pick
    }
}

/// The variants run behind a model's prefix whose run raised ([`behind`]): loop bodies run, and
/// both answers.
pub const BEHIND: [Variant; 2] = [
    variant(Iteration::Once, true, false, false),
    variant(Iteration::Once, false, false, false),
];

/// `prefix` (a model's) after stand-ins for `names`: the model's own bindings replace the
/// stand-ins, so the names it left out, or whose statements raised and were taken out, no longer
/// stop the run. Real values where the model gave them, stand-ins elsewhere.
pub fn behind(
    names: &[String],
    undefined: &Undefined,
    prefix: &Prefix,
    variant: Variant,
) -> Prefix {
    let mut p = standin_prefix(names, undefined, variant);
    p.code.push_str(&prefix.code);
    p
}

impl Variant {
    fn label(self) -> String {
        let iterate = match self.iteration {
            Iteration::Empty => "iterate as empty",
            Iteration::Once => "iterate once",
            Iteration::Twice => "iterate twice",
        };
        let answer = if self.yes { "yes" } else { "no" };
        // Whether standard modules are real shows in the bindings (`_ldb_module`), not here.
        let equal = if self.equal { ", == too" } else { "" };
        let raises = if self.raises {
            ", calls in try raise"
        } else {
            ""
        };
        if self.seed > 0 {
            let seed = self.seed;
            return format!("{iterate}, each place's first answer by seed {seed}{equal}{raises}");
        }
        format!("{iterate}, answer {answer} first{equal}{raises}")
    }
}

/// The stand-in prefix for `names` (identifiers, as the name finder reports them). What the
/// name finder learnt of them (`undefined`) shapes some: a name an `except` clause catches is
/// an exception class, and in a variant that says so a name tested with `is None` is None.
pub fn standin_prefix(names: &[String], undefined: &Undefined, variant: Variant) -> Prefix {
    let mut code = classes(variant);
    if !undefined.suffixes.is_empty() {
        let quoted: Vec<String> = undefined
            .suffixes
            .iter()
            .map(|s| format!("'{s}', "))
            .collect();
        code.push_str(&format!(
            "_ldb_suffixes = ({})\n",
            quoted.concat().trim_end()
        ));
    }
    if variant.none {
        let results: Vec<String> = undefined
            .none_results
            .iter()
            .filter(|n| is_identifier(n))
            .map(|n| format!("'{n}': None"))
            .chain(
                undefined
                    .identity_results
                    .iter()
                    .filter(|(a, b)| is_identifier(a) && is_identifier(b))
                    .map(|(a, b)| format!("'{a}': '{b}'")),
            )
            .collect();
        if !results.is_empty() {
            code.push_str(&format!("_ldb_results = {{{}}}\n", results.join(", ")));
        }
    }
    for name in names.iter().filter(|n| is_identifier(n)) {
        // A capitalised name is a class (`Leaf`), unless it is all capitals, a constant (`N`,
        // `MAX_SIZE`); `cls` is one by convention (`object.__new__(cls)`).
        let constant = !name.chars().any(|c| c.is_lowercase());
        let class = name.starts_with(|c: char| c.is_ascii_uppercase()) && !constant;
        if variant.none && undefined.none_tested.contains(name) {
            code.push_str(&format!("{name} = None\n"));
        } else if undefined.caught.contains(name) {
            code.push_str(&format!(
                "{name} = _LdbAnyType('{name}', (Exception, _LdbAny), {{}})\n"
            ));
        } else if class || name == "cls" {
            code.push_str(&format!(
                "{name} = _LdbAnyType('{name}', (_LdbAny,), {{}})\n"
            ));
        } else if variant.modules {
            code.push_str(&format!("{name} = _ldb_module('{name}')\n"));
        } else {
            code.push_str(&format!("{name} = _LdbAny()\n"));
        }
    }
    // `a is b` of two undefined names: one object, in the variants that make `is None` true.
    if variant.none {
        for (a, b) in &undefined.identity_tested {
            if is_identifier(a) && is_identifier(b) && names.contains(a) && names.contains(b) {
                code.push_str(&format!("{b} = {a}\n"));
            }
        }
    }
    Prefix { code }
}

/// `code` with the stand-in classes folded into one comment line, for text output (the JSON
/// report and `--write-prefix` keep the whole prefix).
pub fn fold_classes(code: &str) -> std::borrow::Cow<'_, str> {
    let folded = code.strip_prefix(LABEL).and_then(|rest| {
        let (label, rest) = rest.split_once('\n')?;
        let end = rest.find(END)? + END.len();
        let lines = rest[..end].lines().count() + 1;
        let rest = &rest[end..];
        Some(format!(
            "# ldb's stand-in classes _LdbAnyType and _LdbAny ({label}; {lines} lines, in --format json)\n{rest}"
        ))
    });
    match folded {
        Some(f) => f.into(),
        None => code.into(),
    }
}

/// The first line of every stand-in prefix, before the variant's label.
const LABEL: &str = "# ldb stand-ins: ";
/// The last line of the classes (`any.py`).
const END: &str = "__package__ = '_ldb_project.package'\n";

/// The variants a search runs: [`VARIANTS`], or all 96 when asked (`--all-variants`). Without
/// undefined names the variants do not differ (no stand-in is made), but the prelude's shims
/// (`exit`, `open`) may still take the run further than as is: one runs.
pub fn variants_to_run(no_names: bool, all: bool) -> Vec<Variant> {
    match (no_names, all) {
        (true, _) => VARIANTS[..1].to_vec(),
        (false, true) => all_variants().collect(),
        (false, false) => VARIANTS.to_vec(),
    }
}

/// Every variant the classes can be written for.
fn all_variants() -> impl Iterator<Item = Variant> {
    [Iteration::Empty, Iteration::Once, Iteration::Twice]
        .into_iter()
        .flat_map(|i| [true, false].map(|y| (i, y)))
        .flat_map(|(i, y)| [true, false].map(|e| (i, y, e)))
        .flat_map(|(i, y, e)| [true, false].map(|m| variant(i, y, e, m)))
        .flat_map(|v| [v, with_none(v)])
        .flat_map(|v| [v, raising(v)])
}

/// The stand-in classes, behaving as `variant` says.
fn classes(variant: Variant) -> String {
    let items = match variant.iteration {
        Iteration::Empty => "()",
        Iteration::Once => "(_LdbAny(),)",
        Iteration::Twice => "(_LdbAny(), _LdbAny())",
    };
    let yes = if variant.yes { "True" } else { "False" };
    let equal = if variant.equal {
        "_ldb_ask"
    } else {
        "object.__eq__"
    };
    let raises = if variant.raises { "True" } else { "False" };
    let none = if variant.none { "True" } else { "False" };
    let body = ANY
        .replace("SEED", &variant.seed.to_string())
        .replace("ITEMS", items)
        .replace("TRUTH", yes)
        .replace("EQUAL", equal)
        .replace("RAISES", raises)
        .replace("NONE", none);
    format!("{LABEL}{}\n{body}", variant.label())
}

fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_bound_by_case_and_non_identifiers_skipped() {
        let names = ["self", "Leaf", "a.b", "9x", "MAX_N", "cls"].map(String::from);
        let once = variant(Iteration::Once, true, false, false);
        let p = standin_prefix(&names, &Undefined::default(), once);
        assert!(p.code.contains("self = _LdbAny()\n"));
        assert!(p
            .code
            .contains("Leaf = _LdbAnyType('Leaf', (_LdbAny,), {})\n"));
        assert!(p.code.contains("MAX_N = _LdbAny()\n"));
        assert!(p
            .code
            .contains("cls = _LdbAnyType('cls', (_LdbAny,), {})\n"));
        assert!(!p.code.contains("a.b ="));
        assert!(!p.code.contains("9x ="));
        assert!(p.code.contains("_ldb_iter((_LdbAny(),))"));
        assert!(p.code.contains("first = True if not 0 else"));
        let empty = variant(Iteration::Empty, false, false, false);
        let e = standin_prefix(&names, &Undefined::default(), empty).code;
        assert!(e.contains("_ldb_iter(())"));
        assert!(e.contains("first = False if not 0 else"));
        assert!(!e.contains("ITEMS") && !e.contains("TRUTH") && !e.contains("EQUAL"));
        let modules = standin_prefix(
            &names,
            &Undefined::default(),
            variant(Iteration::Twice, true, true, true),
        )
        .code;
        assert!(modules.contains("self = _ldb_module('self')\n"));
        assert!(modules.contains("Leaf = _LdbAnyType('Leaf'"));
        assert!(modules.contains("__eq__ = _ldb_ask\n"));
        assert!(modules.contains("_ldb_iter((_LdbAny(), _LdbAny()))"));
    }

    #[test]
    fn all_variants_are_distinct_and_include_the_chosen_ones() {
        let all = variants_to_run(false, true);
        assert_eq!(all.len(), 96);
        for (i, v) in all.iter().enumerate() {
            assert!(!all[..i].contains(v), "{v:?} twice");
        }
        assert!(VARIANTS.iter().all(|v| all.contains(v)));
        assert_eq!(variants_to_run(false, false), VARIANTS);
        assert_eq!(variants_to_run(true, true), VARIANTS[..1]);
    }

    #[test]
    fn text_output_folds_the_classes_and_keeps_the_bindings() {
        let names = ["self"].map(String::from);
        for variant in all_variants() {
            let folded = fold_classes(&standin_prefix(&names, &Undefined::default(), variant).code)
                .into_owned();
            assert!(folded.starts_with("# ldb's stand-in classes"), "{folded}");
            let binding = if variant.modules {
                "self = _ldb_module('self')\n"
            } else {
                "self = _LdbAny()\n"
            };
            assert!(folded.ends_with(binding), "{folded}");
            assert_eq!(folded.lines().count(), 2);
        }
        assert_eq!(fold_classes("x = 1\n"), "x = 1\n");
    }
}
