//! What names a program uses and binds, from one walk over the parser's AST ([`walk`]: scopes,
//! bindings, uses, attributes), in the two views its users need:
//! - [`undefined`]: scoped as Python resolves them (function, enclosing functions, module,
//!   builtins): the names a snippet needs from outside, with the attributes read from each
//!   (`ldb exec` builds its prefixes from them);
//! - [`free`]: program-wide: names used anywhere and bound nowhere, standard-input reads, and a
//!   `return` outside every function (`ldb check` reads a snippet's missing imports from them).
//!
//! Both take the builtins from the one list in [`crate::python::builtins`].

pub mod free;
pub mod undefined;
mod walk;

const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// True when `name` can be the name of a Python function: an identifier that is not a keyword.
///
/// Unicode letters are accepted as Python does (approximated by `char::is_alphabetic`).
pub fn is_python_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first == '_' || first.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
        && !PYTHON_KEYWORDS.contains(&name)
}
