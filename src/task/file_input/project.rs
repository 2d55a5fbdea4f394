//! A program that is a file of a project, tested by the project's own pytest suite: where the
//! project is, which Python environment its tests expect, whether pytest is the tool its
//! tests need, and how a collected node reads in a prompt. Nothing here runs Python.

use std::path::{Component, Path, PathBuf};

use super::FileInputError;

/// Files that make a directory pytest's rootdir (pytest looks for these).
const INI_FILES: &[&str] = &[
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
];
/// Files that mark a project's root when no ini file does.
const ROOT_MARKERS: &[&str] = &["setup.py", ".git"];

/// `path/to/module.py::function` split into the file and the function.
pub fn split_target(target: &Path) -> (PathBuf, Option<String>) {
    let text = target.to_string_lossy();
    match text.split_once("::") {
        Some((file, function)) if !function.is_empty() => {
            (PathBuf::from(file), Some(function.to_string()))
        }
        Some((file, _)) => (PathBuf::from(file), None),
        None => (target.to_path_buf(), None),
    }
}

/// `tests/test_x.py::test_y` split into the path and the node part (`test_y`).
pub fn split_node(tests: &Path) -> (PathBuf, Option<String>) {
    let text = tests.to_string_lossy();
    match text.split_once("::") {
        Some((file, rest)) => (PathBuf::from(file), Some(rest.to_string())),
        None => (tests.to_path_buf(), None),
    }
}

/// `path` made absolute against `cwd`, with `.` and `..` resolved by name.
pub fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The directory the sandbox shows as the project: the nearest directory above the program
/// and the tests that holds a pytest ini file (pytest's rootdir), else a project marker
/// (`setup.py`, `.git`), else the deepest directory holding both. The search stops at `cwd`
/// when both are under it, and never takes `/` or the home directory, which would show the
/// sandboxed program far more than the project.
pub fn find_root(
    program: &Path,
    tests: &Path,
    cwd: &Path,
    home: Option<&Path>,
) -> Result<PathBuf, FileInputError> {
    let program_dir = program.parent().unwrap_or(Path::new("/"));
    let tests_dir = if tests.is_dir() {
        tests
    } else {
        tests.parent().unwrap_or(Path::new("/"))
    };
    let mut base = common_ancestor(program_dir, tests_dir);
    let too_wide = |dir: &Path| dir == Path::new("/") || home.is_some_and(|h| dir == h);
    let stop = base.starts_with(cwd).then_some(cwd);
    let ancestors: Vec<&Path> = base
        .ancestors()
        .take_while(|d| !too_wide(d))
        .take_while(|d| stop.is_none_or(|s| d.starts_with(s)))
        .collect();
    let has = |dir: &Path, names: &[&str]| names.iter().any(|n| dir.join(n).exists());
    let found = ancestors
        .iter()
        .find(|d| has(d, INI_FILES))
        .or_else(|| ancestors.iter().find(|d| has(d, ROOT_MARKERS)))
        .map(|d| d.to_path_buf());
    if let Some(found) = found {
        base = found;
    }
    if too_wide(&base) {
        return Err(FileInputError::new(
            program,
            format!(
                "the program and its tests have no project directory in common but {}",
                base.display()
            ),
            "keep the module and its tests in one project directory (e.g. src/ and tests/ \
             under it) and run ldb from there",
        ));
    }
    Ok(base)
}

fn common_ancestor(a: &Path, b: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for (x, y) in a.components().zip(b.components()) {
        if x != y {
            break;
        }
        out.push(x);
    }
    if out.as_os_str().is_empty() {
        PathBuf::from("/")
    } else {
        out
    }
}

/// Whether the suite relies on pytest beyond what a plain test file does: a `conftest.py`
/// between the tests and the root, or pytest settings in the root's ini files.
pub fn uses_pytest_config(root: &Path, tests: &Path) -> bool {
    let start = if tests.is_dir() {
        tests
    } else {
        tests.parent().unwrap_or(root)
    };
    let conftest = start
        .ancestors()
        .take_while(|d| d.starts_with(root))
        .any(|d| d.join("conftest.py").is_file());
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap_or_default();
    conftest
        || root.join("pytest.ini").is_file()
        || root.join(".pytest.ini").is_file()
        || read("pyproject.toml").contains("[tool.pytest.ini_options]")
        || read("setup.cfg").contains("[tool:pytest]")
        || read("tox.ini").contains("[pytest]")
}

/// What the shell says about a project's surroundings: `HOME` (where the search for its root
/// stops), `VIRTUAL_ENV` (the active virtualenv) and `PYTHONPATH` (what the tests import from,
/// as in the shell). The settings read them (`cli::settings::shell_env`); the loaders take
/// them from there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellEnv {
    pub home: Option<PathBuf>,
    pub virtual_env: Option<PathBuf>,
    pub python_path: Option<std::ffi::OsString>,
}

/// Where the Python packages the tests import come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvSource {
    /// A virtualenv: given with `--venv`, or the active one (`VIRTUAL_ENV`).
    Venv { dir: PathBuf, given: bool },
    /// `--python-path` directories.
    PythonPath,
    /// The Python ldb embeds, as installed.
    System,
}

/// The environment tests run in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonEnv {
    pub source: EnvSource,
    /// A virtualenv's site-packages.
    pub site_dirs: Vec<PathBuf>,
    /// Directories the site-packages' `.pth` files put on the import path (an editable
    /// install's source, say): runs must see them too.
    pub pth_dirs: Vec<PathBuf>,
    /// Whether the system's site-packages stay importable (a virtualenv made with
    /// `--system-site-packages`, or no virtualenv at all).
    pub system_site: bool,
}

impl PythonEnv {
    /// How to say where it came from: "the virtualenv /p/.venv (VIRTUAL_ENV)".
    pub fn describe(&self) -> String {
        match &self.source {
            EnvSource::Venv { dir, given: true } => {
                format!("the virtualenv {} (--venv)", dir.display())
            }
            EnvSource::Venv { dir, given: false } => {
                format!("the virtualenv {} (VIRTUAL_ENV)", dir.display())
            }
            EnvSource::PythonPath => "--python-path".into(),
            EnvSource::System => "the system's Python 3.11".into(),
        }
    }
}

/// The environment: `--venv DIR`, else the active virtualenv (`virtual_env`, the value of
/// `VIRTUAL_ENV`), else `--python-path` directories, else the system's Python. A virtualenv
/// must be one of Python 3.11, the interpreter ldb embeds.
pub fn find_env(
    venv: Option<&Path>,
    virtual_env: Option<&Path>,
    python_path_given: bool,
) -> Result<PythonEnv, FileInputError> {
    let (dir, given) = match (venv, virtual_env) {
        (Some(dir), _) => (dir.to_path_buf(), true),
        (None, Some(dir)) if !dir.as_os_str().is_empty() => (dir.to_path_buf(), false),
        _ => {
            return Ok(PythonEnv {
                source: if python_path_given {
                    EnvSource::PythonPath
                } else {
                    EnvSource::System
                },
                site_dirs: Vec::new(),
                pth_dirs: Vec::new(),
                system_site: true,
            })
        }
    };
    let flag = if given { "--venv" } else { "VIRTUAL_ENV" };
    let cfg_path = dir.join("pyvenv.cfg");
    let cfg = std::fs::read_to_string(&cfg_path).map_err(|e| {
        FileInputError::new(
            &dir,
            format!(
                "{flag} names no virtualenv here: cannot read {}: {e}",
                cfg_path.display()
            ),
            "give the directory a virtualenv was made in (python3.11 -m venv DIR), or \
             deactivate it",
        )
    })?;
    let value = |key: &str| {
        cfg.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let version = value("version_info").or_else(|| value("version"));
    if let Some(v) = &version {
        if !(v == "3.11" || v.starts_with("3.11.")) {
            return Err(FileInputError::new(
                &dir,
                format!(
                    "{flag}: the virtualenv is for Python {v}, and ldb runs tests with the \
                     CPython 3.11 it embeds"
                ),
                "make a Python 3.11 virtualenv for ldb (python3.11 -m venv DIR, then DIR/bin/pip \
                 install pytest and the project's packages) and pass it with --venv DIR",
            ));
        }
    }
    let site = dir.join("lib").join("python3.11").join("site-packages");
    if !site.is_dir() {
        return Err(FileInputError::new(
            &dir,
            format!("{flag}: the virtualenv has no {}", site.display()),
            "give a Python 3.11 virtualenv (python3.11 -m venv DIR)",
        ));
    }
    let system_site = value("include-system-site-packages").is_some_and(|v| v == "true");
    let pth_dirs = pth_dirs(&site);
    Ok(PythonEnv {
        source: EnvSource::Venv { dir, given },
        site_dirs: vec![site],
        pth_dirs,
        system_site,
    })
}

/// The directories the `.pth` files of `site` add to the import path, as `site.addsitedir`
/// reads them: a line that is neither blank, a comment nor an `import` line is a path,
/// relative to `site`, added when it is an existing directory. `/` is never one of them.
fn pth_dirs(site: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(site) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pth"))
        .collect();
    files.sort();
    let mut dirs = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for line in text.lines() {
            let line = line.trim_end();
            if line.trim().is_empty()
                || line.starts_with('#')
                || line.starts_with("import ")
                || line.starts_with("import\t")
            {
                continue;
            }
            let dir = absolute(Path::new(line), site);
            if dir.is_dir() && dir != Path::new("/") && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// A collected node, as pytest's collection described it.
#[derive(Debug, Clone, Copy)]
pub struct NodeParts<'a> {
    pub nodeid: &'a str,
    /// The test function's name.
    pub function: &'a str,
    /// Its source, when it could be read.
    pub source: Option<&'a str>,
    /// Parametrized arguments and their values, rendered.
    pub params: &'a [(String, String)],
    /// Fixtures it takes besides its parameters.
    pub fixtures: &'a [String],
}

/// A node as a prompt shows it: its id, its parameters as assignments (the values pytest
/// passed), the fixtures it takes, and the test function's source.
pub fn node_source(node: NodeParts<'_>) -> String {
    let mut out = format!("# {}\n", node.nodeid);
    if !node.fixtures.is_empty() {
        out.push_str(&format!("# fixtures: {}\n", node.fixtures.join(", ")));
    }
    for (name, value) in node.params {
        out.push_str(&format!("{name} = {value}\n"));
    }
    match node.source {
        // The parameters are filled in above: the parametrize decorator would only repeat
        // every case.
        Some(source) if !node.params.is_empty() => {
            let lines: Vec<&str> = source.trim_end().lines().collect();
            let def = lines
                .iter()
                .position(|l| l.starts_with("def ") || l.starts_with("async def "))
                .unwrap_or(0);
            out.push_str(&lines[def..].join("\n"));
        }
        Some(source) => out.push_str(source.trim_end()),
        None => out.push_str(&format!("# (no source for {})", node.function)),
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_splits_into_file_and_function() {
        assert_eq!(
            split_target(Path::new("src/pkg/algo.py::second_largest")),
            (
                PathBuf::from("src/pkg/algo.py"),
                Some("second_largest".into())
            )
        );
        assert_eq!(
            split_target(Path::new("prog.py")),
            (PathBuf::from("prog.py"), None)
        );
        assert_eq!(
            split_node(Path::new("tests/t.py::TestA::test_b[1]")),
            (PathBuf::from("tests/t.py"), Some("TestA::test_b[1]".into()))
        );
    }

    #[test]
    fn the_root_is_the_nearest_ini_file_above_program_and_tests() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join("src/pkg")).expect("src");
        std::fs::create_dir_all(root.join("tests")).expect("tests");
        std::fs::write(root.join("pyproject.toml"), "[tool.pytest.ini_options]\n").expect("toml");
        std::fs::write(root.join("src/pkg/algo.py"), "").expect("algo");
        let program = root.join("src/pkg/algo.py");
        let found = find_root(&program, &root.join("tests"), &root, None).expect("root");
        assert_eq!(found, root);
        assert!(uses_pytest_config(&root, &root.join("tests")));
        // Without any marker: the deepest common directory.
        std::fs::remove_file(root.join("pyproject.toml")).expect("rm");
        let found = find_root(&program, &root.join("tests"), dir.path(), None).expect("root");
        assert_eq!(found, root);
        assert!(!uses_pytest_config(&root, &root.join("tests")));
        // Never the home directory.
        let e = find_root(&program, &root.join("tests"), dir.path(), Some(&root)).unwrap_err();
        assert!(e.hint.contains("one project directory"), "{}", e.hint);
    }

    #[test]
    fn a_virtualenv_of_another_python_is_refused_with_a_hint() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("pyvenv.cfg"),
            "home = /usr/bin\nversion = 3.12.1\n",
        )
        .expect("cfg");
        let e = find_env(Some(dir.path()), None, false).unwrap_err();
        assert!(e.message.contains("Python 3.12.1"), "{e}");
        assert!(e.hint.contains("python3.11 -m venv"), "{}", e.hint);
        std::fs::write(
            dir.path().join("pyvenv.cfg"),
            "version = 3.11.2\ninclude-system-site-packages = false\n",
        )
        .expect("cfg");
        std::fs::create_dir_all(dir.path().join("lib/python3.11/site-packages")).expect("site");
        let site = dir.path().join("lib/python3.11/site-packages");
        std::fs::create_dir_all(dir.path().join("src")).expect("src");
        std::fs::write(
            site.join("proj.pth"),
            "# a comment\nimport os\n../../../src\n/no/such/dir\n",
        )
        .expect("pth");
        let env = find_env(None, Some(dir.path()), false).expect("env");
        assert!(!env.system_site);
        assert_eq!(env.pth_dirs, vec![dir.path().join("src")]);
        assert!(
            env.describe().ends_with("(VIRTUAL_ENV)"),
            "{}",
            env.describe()
        );
        let none = find_env(None, None, false).expect("system");
        assert_eq!(none.source, EnvSource::System);
    }

    #[test]
    fn a_node_reads_as_its_parameters_then_its_source() {
        let params = vec![
            ("xs".into(), "[-1, -2]".into()),
            ("want".into(), "-2".into()),
        ];
        let fixtures = vec!["algo".to_string()];
        let node = NodeParts {
            nodeid: "tests/test_a.py::test_f[neg]",
            function: "test_f",
            source: Some(
                "@pytest.mark.parametrize('xs, want', CASES)\ndef test_f(xs, want, algo):\n    assert algo.f(xs) == want\n",
            ),
            params: &params,
            fixtures: &fixtures,
        };
        assert_eq!(
            node_source(node),
            "# tests/test_a.py::test_f[neg]\n# fixtures: algo\nxs = [-1, -2]\nwant = -2\n\
             def test_f(xs, want, algo):\n    assert algo.f(xs) == want\n"
        );
    }
}
