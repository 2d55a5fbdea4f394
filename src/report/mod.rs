//! The report of a fix run as pages a person reads: the program's diff, every round's tests,
//! the debugger's verdicts on the traced blocks ([`html`]). The record itself is filled by the
//! fix loop ([`crate::repair::record`]); `ldb eval` builds its index page on these pages.

pub mod html;
