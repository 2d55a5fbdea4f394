//! Finding the peer programs `ldb fix --peers` names: other people's programs for the same task
//! (a class's other submissions), given as files or directories.
//!
//! A directory is searched through its subdirectories, so both layouts a class hands in work:
//! every submission as a `.py` file in one folder, or a folder per student each holding the
//! program under the same name as the one being fixed. In the second, only the files named like
//! the program are peers (a student's scratch files and helpers are not submissions). Test files
//! (`test_*.py`, `*_test.py`, `conftest.py`), hidden folders, `__pycache__` and virtual
//! environments are never peers, and the program being fixed is left out wherever it appears,
//! as is any copy of it (the same text).
//! Symbolic links to directories are not followed (a link back up would never end).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::read::{caps, read_text, ReadError};

/// Directories that hold tools or caches, not anyone's submission.
const SKIPPED_DIRS: &[&str] = &["__pycache__", "venv", "site-packages", "node_modules"];

/// Why the peers could not be found.
#[derive(Debug, thiserror::Error)]
pub enum PeersError {
    #[error("--peers {}: no such file or directory", path.display())]
    Missing { path: PathBuf },
    #[error("--peers {}: cannot read the directory: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--peers: {source}")]
    Read { source: ReadError },
    #[error("--peers {}: the directory holds no .py program besides the one being fixed (test files are not programs)", path.display())]
    Empty { path: PathBuf },
}

impl PeersError {
    pub fn hint(&self) -> &'static str {
        match self {
            PeersError::Missing { .. } => {
                "check the path: --peers takes a .py file or a directory of programs"
            }
            PeersError::Unreadable { .. } => {
                "pass a directory of .py files, or the files themselves"
            }
            PeersError::Read { .. } => {
                "each peer is a Python program file (UTF-8), or a directory of them"
            }
            PeersError::Empty { .. } => {
                "pass a directory of programs (one .py file each, or a folder per person holding \
                 the program under the same name), or the files themselves"
            }
        }
    }
}

/// Whether a file name is a pytest file rather than a program.
fn is_test_file(name: &str) -> bool {
    name == "conftest.py" || name.starts_with("test_") || name.ends_with("_test.py")
}

/// The `.py` files under `dir` (sorted), test files and skipped directories left out.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), PeersError> {
    let entries = std::fs::read_dir(dir).map_err(|source| PeersError::Unreadable {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        // Not followed: a link to a directory may lead back up.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if name.starts_with('.') || SKIPPED_DIRS.contains(&name) {
                continue;
            }
            // A subdirectory that cannot be read is not where the class's programs are.
            let _ = walk(&path, out);
        } else if path.is_file() && name.ends_with(".py") && !is_test_file(name) {
            out.push(path);
        }
    }
    Ok(())
}

/// One peer: where it was found and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    pub path: PathBuf,
    pub text: String,
}

/// The program being fixed, by path and by text, and the files read so far (each is read
/// once: for the comparison with the program, then as a peer).
struct Own {
    path: Option<PathBuf>,
    text: Option<String>,
    read: HashMap<PathBuf, Result<String, ReadError>>,
}

impl Own {
    /// `p` is the program, or a copy of it (the class's submissions as handed in, while this
    /// one is fixed in place): the program itself, which must not vote for itself.
    fn is(&mut self, p: &Path) -> bool {
        if self.path.is_some() && std::fs::canonicalize(p).ok() == self.path {
            return true;
        }
        let Some(own) = &self.text else {
            return false;
        };
        let text = self
            .read
            .entry(p.to_path_buf())
            .or_insert_with(|| read_text(p, caps::SOURCE).map(|t| t.text));
        text.as_ref().is_ok_and(|t| t.trim_end() == own.trim_end())
    }

    fn take(&mut self, p: PathBuf) -> Result<Peer, PeersError> {
        let text = match self.read.remove(&p) {
            Some(text) => text,
            None => read_text(&p, caps::SOURCE).map(|t| t.text),
        };
        text.map(|text| Peer { path: p, text })
            .map_err(|source| PeersError::Read { source })
    }
}

/// The peer programs `paths` name, in order, leaving out `program` (the one being fixed) and
/// its copies. A file is taken as it is (even a test file: it was named); a directory as the
/// module overview says.
pub fn peer_programs(paths: &[PathBuf], program: &Path) -> Result<Vec<Peer>, PeersError> {
    let mut own = Own {
        path: std::fs::canonicalize(program).ok(),
        text: read_text(program, caps::SOURCE).ok().map(|t| t.text),
        read: HashMap::new(),
    };
    let own_name = program.file_name();
    let mut files = Vec::new();
    for path in paths {
        if !path.exists() {
            return Err(PeersError::Missing { path: path.clone() });
        }
        if !path.is_dir() {
            if !own.is(path) {
                files.push(path.clone());
            }
            continue;
        }
        let mut found = Vec::new();
        walk(path, &mut found)?;
        found.retain(|p| !own.is(p));
        // A folder per person: the files named like the program are the submissions.
        let named: Vec<PathBuf> = found
            .iter()
            .filter(|p| own_name.is_some() && p.file_name() == own_name)
            .cloned()
            .collect();
        if !named.is_empty() {
            found = named;
        }
        if found.is_empty() {
            return Err(PeersError::Empty { path: path.clone() });
        }
        files.extend(found);
    }
    files.into_iter().map(|p| own.take(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        // Each file its own text: the same text would make it a copy of the program.
        std::fs::write(&path, format!("# {rel}\ndef f():\n    return 1\n")).expect("write");
    }

    fn names(root: &Path, peers: &[Peer]) -> Vec<String> {
        peers
            .iter()
            .map(|p| {
                p.path
                    .strip_prefix(root)
                    .expect("under root")
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    }

    #[test]
    fn a_flat_folder_gives_every_program_but_tests_and_the_one_being_fixed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for f in [
            "prog.py",
            "ann.py",
            "bob.py",
            "test_prog.py",
            "conftest.py",
            "x_test.py",
        ] {
            write(root, f);
        }
        write(root, "notes.txt");
        let got = peer_programs(&[root.to_path_buf()], &root.join("prog.py")).expect("peers");
        assert_eq!(names(root, &got), ["ann.py", "bob.py"]);
    }

    #[test]
    fn regression_a_folder_per_student_was_read_as_holding_no_program() {
        // submissions/<student>/prog.py, fixing one of them with the whole folder as peers:
        // the other students' prog.py, not their helpers, tests or caches.
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for f in [
            "alice/prog.py",
            "bob/prog.py",
            "bob/scratch.py",
            "bob/test_prog.py",
            "carol/prog.py",
            "carol/__pycache__/prog.py",
            "carol/.venv/lib/prog.py",
            "dan/venv/prog.py",
        ] {
            write(root, f);
        }
        let got = peer_programs(&[root.to_path_buf()], &root.join("alice/prog.py")).expect("peers");
        assert_eq!(names(root, &got), ["bob/prog.py", "carol/prog.py"]);
        // Without a same-named file elsewhere every program counts.
        let got = peer_programs(&[root.to_path_buf()], &root.join("elsewhere.py")).expect("peers");
        assert_eq!(
            names(root, &got),
            [
                "alice/prog.py",
                "bob/prog.py",
                "bob/scratch.py",
                "carol/prog.py"
            ]
        );
    }

    #[test]
    fn a_folder_with_nothing_but_the_program_and_tests_is_an_error_with_a_hint() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        write(root, "prog.py");
        write(root, "test_prog.py");
        let err = peer_programs(&[root.to_path_buf()], &root.join("prog.py")).expect_err("empty");
        assert!(err.to_string().contains("holds no .py program"), "{err}");
        assert!(err.hint().contains("folder per person"), "{}", err.hint());
        let err =
            peer_programs(&[root.join("nowhere")], &root.join("prog.py")).expect_err("missing");
        assert!(err.to_string().starts_with("--peers "), "{err}");
        assert!(
            err.to_string()
                .ends_with("nowhere: no such file or directory"),
            "{err}"
        );
    }

    #[test]
    fn a_copy_of_the_program_is_no_peer_even_where_it_alone_is_named_like_it() {
        // The class as handed in beside the folder being fixed: the copy is the program itself,
        // and the folder's other programs count.
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for f in ["prog.py", "ann.py", "handed-in/prog.py"] {
            write(root, f);
        }
        let prog = std::fs::read_to_string(root.join("prog.py")).expect("prog");
        std::fs::write(root.join("handed-in/prog.py"), format!("{prog}\n")).expect("copy");
        let got = peer_programs(&[root.to_path_buf()], &root.join("prog.py")).expect("peers");
        assert_eq!(names(root, &got), ["ann.py"]);
    }

    #[test]
    fn a_link_back_up_is_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        write(root, "a/prog.py");
        std::os::unix::fs::symlink(root, root.join("a/loop")).expect("symlink");
        let got = peer_programs(&[root.to_path_buf()], &root.join("b.py")).expect("peers");
        assert_eq!(names(root, &got), ["a/prog.py"]);
    }
}
