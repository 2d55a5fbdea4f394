//! The benchmark files built into the binary (HumanEval and MBPP in LDB's packaging; see
//! `data/README.md`), as bytes. `eval::builtin` reads tasks from them; the sandbox blanks them
//! in the image its workers run from, since they hold hidden tests. Any file with hidden tests
//! built into the binary belongs in [`files`], as the bytes it is stored as, or programs can
//! read it (`tests/it/answers.rs` checks HumanEval's).

/// `data/humaneval.jsonl`.
pub const HUMANEVAL: &str = include_str!("../../data/humaneval.jsonl");
/// `data/mbpp.jsonl`.
pub const MBPP: &str = include_str!("../../data/mbpp.jsonl");

/// Every built-in file, hidden tests included.
pub fn files() -> [&'static [u8]; 2] {
    [HUMANEVAL.as_bytes(), MBPP.as_bytes()]
}
