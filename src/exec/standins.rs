//! Model-free prefixes: every undefined name bound to a permissive stand-in (an object that
//! answers any attribute, call, index, operator or `with` with another stand-in; a capitalised
//! name becomes a class of them, so `isinstance` and class attributes work). Treefix's model
//! writes such objects itself (`type("Mock", ...)`, its "MockSelf"); here they come first and
//! for free, so the model's prefixes only have to add what a stand-in cannot give: real
//! imports, domain values, branches a stand-in's fixed answers never take.
//!
//! Two variants, because no fixed answer suits every loop: iterating a stand-in yields nothing
//! (loops are skipped, unpacking fails) or one stand-in (loop bodies run once). They cover
//! different statements, and the minimal set takes what each adds.

use super::prefix::Prefix;

const ANY: &str = include_str!("any.py");

/// How a stand-in iterates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Iteration {
    Empty,
    Once,
}

/// The stand-in prefix for `names` (identifiers, as the name finder reports them).
pub fn standin_prefix(names: &[String], iteration: Iteration) -> Prefix {
    let mut code = classes(iteration);
    for name in names.iter().filter(|n| is_identifier(n)) {
        if name.starts_with(|c: char| c.is_ascii_uppercase()) {
            code.push_str(&format!(
                "{name} = _LdbAnyType('{name}', (_LdbAny,), {{}})\n"
            ));
        } else {
            code.push_str(&format!("{name} = _LdbAny()\n"));
        }
    }
    Prefix { code }
}

/// `code` with the stand-in classes folded into one comment line, for text output (the JSON
/// report and `--write-prefix` keep the whole prefix).
pub fn fold_classes(code: &str) -> std::borrow::Cow<'_, str> {
    for (iteration, label) in [
        (Iteration::Empty, "iterate as empty"),
        (Iteration::Once, "iterate once"),
    ] {
        let classes = classes(iteration);
        if let Some(rest) = code.strip_prefix(classes.as_str()) {
            return format!(
                "# ldb's stand-in classes _LdbAnyType and _LdbAny ({label}; {} lines, in --format json)\n{rest}",
                classes.lines().count()
            )
            .into();
        }
    }
    code.into()
}

/// The stand-in classes, iterating as `iteration` says.
fn classes(iteration: Iteration) -> String {
    let items = match iteration {
        Iteration::Empty => "()",
        Iteration::Once => "(_LdbAny(),)",
    };
    ANY.replace("ITEMS", items)
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
        let names = ["self", "Leaf", "a.b", "9x"].map(String::from);
        let p = standin_prefix(&names, Iteration::Once);
        assert!(p.code.contains("self = _LdbAny()\n"));
        assert!(p
            .code
            .contains("Leaf = _LdbAnyType('Leaf', (_LdbAny,), {})\n"));
        assert!(!p.code.contains("a.b ="));
        assert!(!p.code.contains("9x ="));
        assert!(p.code.contains("iter((_LdbAny(),))"));
        assert!(standin_prefix(&names, Iteration::Empty)
            .code
            .contains("iter(())"));
    }

    #[test]
    fn text_output_folds_the_classes_and_keeps_the_bindings() {
        let names = ["self"].map(String::from);
        for it in [Iteration::Empty, Iteration::Once] {
            let folded = fold_classes(&standin_prefix(&names, it).code).into_owned();
            assert!(folded.starts_with("# ldb's stand-in classes"), "{folded}");
            assert!(folded.ends_with("self = _LdbAny()\n"), "{folded}");
            assert_eq!(folded.lines().count(), 2);
        }
        assert_eq!(fold_classes("x = 1\n"), "x = 1\n");
    }
}
