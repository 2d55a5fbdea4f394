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
