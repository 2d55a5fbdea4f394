//! `ldb_snapshot!`: what a run of `ldb` showed the user (its exit status, stdout and stderr) as
//! one insta snapshot, with what changes from run to run filtered out: temporary directories,
//! timings, token counts of a live model, the version.

use std::process::Output;

/// Patterns replaced before a run is compared with its snapshot, in order.
pub const FILTERS: [(&str, &str); 5] = [
    // tempfile's directories (`/tmp/.tmpAbC123`), wherever TMPDIR points.
    (r"(?:/[^\s/:'`]+)*/\.tmp[A-Za-z0-9]{6}", "[TMP]"),
    // The sandbox's per-run directories.
    (r"/tmp/ldb-[A-Za-z0-9_-]+", "[RUN]"),
    (r"\b\d+(?:\.\d+)? ?(?:ms|s)\b", "[TIME]"),
    (r"\b\d+(?:\.\d+)?(?:ms|s) (?:elapsed|total)\b", "[TIME]"),
    (r"\bldb \d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?\b", "ldb [VERSION]"),
];

/// A run as the user saw it: `exit: N`, then stdout and stderr under headings.
pub fn render(out: &Output) -> String {
    let code = out
        .status
        .code()
        .map_or_else(|| "a signal".to_string(), |c| c.to_string());
    format!(
        "exit: {code}\n----- stdout -----\n{}----- stderr -----\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `ldb_snapshot!(output)` or `ldb_snapshot!("name", output)`: the run, rendered and filtered,
/// against its snapshot in `tests/it/snapshots/`.
#[macro_export]
macro_rules! ldb_snapshot {
    ($out:expr) => {
        insta::with_settings!({ filters => $crate::common::snapshot::FILTERS.to_vec(), omit_expression => true }, {
            insta::assert_snapshot!($crate::common::snapshot::render(&$out));
        })
    };
    ($name:expr, $out:expr) => {
        insta::with_settings!({ filters => $crate::common::snapshot::FILTERS.to_vec(), omit_expression => true }, {
            insta::assert_snapshot!($name, $crate::common::snapshot::render(&$out));
        })
    };
}
