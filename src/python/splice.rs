//! Splicing a candidate into the user's module. When ldb debugs a function inside a file
//! (`ldb fix prog.py --tests ...`), the unit of repair is that function: a model's candidate
//! is a whole program, but only its definition of the function under test, the helpers it adds
//! and the imports it needs go into the module. Everything else in the file (other functions,
//! constants, comments, the rest of the imports) stays byte for byte, so the tests run against
//! the user's module with one function changed and the diff shows only that change.
//!
//! What a candidate contributes:
//! - its top-level `def` (or `class`) of the entry replaces the module's, decorators included;
//! - functions, classes and constants whose names the module does not bind go just above the
//!   entry (above the comment lines attached to it);
//! - imports binding a name the module does not bind go after the module's leading imports
//!   (or its docstring), never `from __future__`;
//! - everything else (its copies of other functions, test calls, `print`s) is dropped.
//!
//! New text takes the module's line endings (`\r\n` when every line of the module ends so).

use super::defs;
use super::toplevel::{def_lines_by_text, StmtClass, TopLevel};
use crate::files::read::uses_crlf;

/// Why a candidate could not be spliced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpliceError {
    /// The candidate defines no top-level `entry`: there is nothing to put in the module.
    #[error("the candidate does not define `{0}` at top level")]
    NoEntry(String),
    /// The module has no top-level `entry` to replace.
    #[error("the module does not define `{0}` at top level")]
    NotInModule(String),
}

/// `module` with `candidate`'s definition of `entry` (and the helpers and imports it adds) in
/// place of its own. `entry` is a function's dotted path: `f`, or `Cls.method` for a method,
/// whose fix is put back at the method's indentation (a candidate may define it inside its
/// class or alone, at the top level).
pub fn splice(module: &str, entry: &str, candidate: &str) -> Result<String, SpliceError> {
    let lines = split_lines(module);
    let target =
        Target::find(module, entry).ok_or_else(|| SpliceError::NotInModule(entry.to_string()))?;
    let (first, last) = (target.first, target.last);
    let cand_lines = split_lines(candidate);
    let crlf = uses_crlf(module);
    let cand_text = |a: u32, b: u32| -> String {
        let text: String = cand_lines
            .get(a.saturating_sub(1) as usize..(b as usize).min(cand_lines.len()))
            .map(|ls| ls.concat())
            .unwrap_or_default();
        let mut text = text.replace("\r\n", "\n");
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text
    };

    // The candidate's parts.
    let module_top = TopLevel::read(module);
    let binds = |name: &str| match &module_top {
        Some(top) => top.binds(name),
        // A module that does not parse: only its definitions by text are known.
        None => def_lines_by_text(module, name).is_some(),
    };
    let (entry_text, helpers, imports) = match TopLevel::read(candidate) {
        Some(top) => {
            let def = candidate_def(candidate, entry)
                .ok_or_else(|| SpliceError::NoEntry(entry.to_string()))?;
            let mut entry_text =
                reindent(&cand_text(def.first, def.last), &def.indent, &target.indent);
            // A candidate that dropped the function's docstring gets the module's back: the
            // docstring is the user's, not part of the fix.
            if let (Some((a, b)), None, Some(body)) = (target.doc, def.doc, def.body_first) {
                let doc: String = lines
                    .get(a as usize - 1..b as usize)
                    .map(|ls| ls.concat())
                    .unwrap_or_default()
                    .replace("\r\n", "\n");
                let body_text = reindent(&cand_text(body, def.last), &def.indent, &target.indent);
                let body_line = body_text.lines().next().unwrap_or("");
                let same_indent = indent(&doc) == indent(body_line) && !indent(&doc).is_empty();
                if body > def.first && same_indent {
                    entry_text = format!(
                        "{}{}{}",
                        reindent(&cand_text(def.first, body - 1), &def.indent, &target.indent),
                        doc,
                        body_text
                    );
                }
            }
            let mut helpers: Vec<(StmtClass, String)> = Vec::new();
            let mut imports: Vec<String> = Vec::new();
            for s in &top.stmts {
                // The statement that holds the entry (its class, or the entry itself) is the fix.
                if s.first <= def.first && def.last <= s.last {
                    continue;
                }
                let new = !s.names.is_empty() && s.names.iter().any(|n| !binds(n));
                match s.class {
                    StmtClass::Import if new => imports.push(cand_text(s.first, s.last)),
                    StmtClass::Def | StmtClass::Assign
                        if new && !s.names.iter().any(|n| n == entry) =>
                    {
                        helpers.push((s.class, cand_text(s.first, s.last)))
                    }
                    _ => {}
                }
            }
            (entry_text, helpers, imports)
        }
        None if !entry.contains('.') => {
            let (a, b) = def_lines_by_text(candidate, entry)
                .ok_or_else(|| SpliceError::NoEntry(entry.to_string()))?;
            (cand_text(a, b), Vec::new(), Vec::new())
        }
        None => return Err(SpliceError::NoEntry(entry.to_string())),
    };

    // Where new helpers go: above the comment lines that sit right on top of the entry (of
    // its outermost class, for a method).
    let mut attached = target.anchor;
    while attached > 1 {
        let above = lines[(attached - 2) as usize].trim_end();
        if above.starts_with('#') {
            attached -= 1;
        } else {
            break;
        }
    }
    let mut helper_block = String::new();
    for (i, (class, text)) in helpers.iter().enumerate() {
        helper_block.push_str(text);
        let next_is_assign = helpers
            .get(i + 1)
            .is_some_and(|(c, _)| *c == StmtClass::Assign);
        if *class == StmtClass::Assign && next_is_assign {
            continue;
        }
        helper_block.push_str("\n\n");
    }
    let import_block: String = imports.concat();

    let mut out = String::with_capacity(module.len() + entry_text.len() + helper_block.len());
    let import_after = import_line(module, module_top.as_ref());
    let push_lines = |out: &mut String, a: u32, b: u32| {
        for l in lines
            .get(a.saturating_sub(1) as usize..(b as usize).min(lines.len()))
            .unwrap_or_default()
        {
            out.push_str(l);
        }
    };
    let push_new = |out: &mut String, text: &str| {
        if crlf {
            out.push_str(&text.replace('\n', "\r\n"));
        } else {
            out.push_str(text);
        }
    };
    // Imports go after line `import_after` (0: at the very top); it is always above the entry.
    let import_after = import_after.min(attached.saturating_sub(1));
    push_lines(&mut out, 1, import_after);
    if !import_block.is_empty() {
        ensure_line_end(&mut out, crlf);
        push_new(&mut out, &import_block);
    }
    push_lines(&mut out, import_after + 1, attached - 1);
    if !helper_block.is_empty() {
        ensure_line_end(&mut out, crlf);
        push_new(&mut out, &helper_block);
    }
    push_lines(&mut out, attached, first - 1);
    let old_entry_ended = lines
        .get(last.saturating_sub(1) as usize)
        .is_some_and(|l| l.ends_with('\n'));
    let mut entry_text = entry_text;
    if !old_entry_ended && (last as usize) >= lines.len() {
        // The module's last line had no line end; keep it that way.
        entry_text.pop();
    }
    push_new(&mut out, &entry_text);
    push_lines(&mut out, last + 1, lines.len() as u32);
    Ok(out)
}

/// The module's definition being replaced.
struct Target {
    first: u32,
    last: u32,
    /// The line new helpers go above (before its attached comments): the entry's own first
    /// line, or its outermost class's.
    anchor: u32,
    indent: String,
    doc: Option<(u32, u32)>,
}

impl Target {
    fn find(module: &str, entry: &str) -> Option<Target> {
        if entry.contains('.') {
            let site = defs::find(module, entry)?;
            let anchor = site.classes.first().map_or(site.first, |c| c.0);
            return Some(Target {
                first: site.first,
                last: site.last,
                anchor,
                indent: site.indent,
                doc: site.doc,
            });
        }
        match TopLevel::read(module) {
            Some(top) => top.def(entry).map(|d| Target {
                first: d.first,
                last: d.last,
                anchor: d.first,
                indent: String::new(),
                doc: d.doc,
            }),
            None => def_lines_by_text(module, entry).map(|(first, last)| Target {
                first,
                last,
                anchor: first,
                indent: String::new(),
                doc: None,
            }),
        }
    }
}

/// The candidate's definition of `entry`: at its dotted path; for a method also a function of
/// its name at the top level (the method written alone), or in some class.
fn candidate_def(candidate: &str, entry: &str) -> Option<defs::DefSite> {
    if let Some(site) = defs::find(candidate, entry) {
        return Some(site);
    }
    if !entry.contains('.') {
        return None;
    }
    let leaf = defs::leaf(entry);
    if let Some(site) = defs::find(candidate, leaf) {
        return Some(site);
    }
    defs::all_paths(candidate)
        .into_iter()
        .find(|(p, _)| p.ends_with(&format!(".{leaf}")))
        .map(|(_, site)| site)
}

/// `text` with the indentation `from` of its lines made `to` (lines that do not start with
/// `from`, inside a multi-line string say, are left as they are; blank lines stay blank).
fn reindent(text: &str, from: &str, to: &str) -> String {
    if from == to {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        if line.trim().is_empty() {
            out.push_str(if line.ends_with('\n') { "\n" } else { "" });
            continue;
        }
        match line.strip_prefix(from) {
            Some(rest) => {
                out.push_str(to);
                out.push_str(rest);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// Whether `module` has a definition of `entry` (a dotted path) that [`splice`] can replace.
pub fn defines(module: &str, entry: &str) -> bool {
    !entry.is_empty() && Target::find(module, entry).is_some()
}

/// The lines of `module`'s definition of `entry` (a dotted path), first and last.
pub fn def_lines(module: &str, entry: &str) -> Option<(u32, u32)> {
    Target::find(module, entry).map(|t| (t.first, t.last))
}

/// The line after which new imports go: the last of the module's leading docstring, imports
/// and `from __future__` imports (0 when it starts with other code).
fn import_line(module: &str, top: Option<&TopLevel>) -> u32 {
    match top {
        Some(top) => {
            let mut after = 0;
            for s in &top.stmts {
                match s.class {
                    StmtClass::Docstring | StmtClass::Import | StmtClass::FutureImport => {
                        after = s.last
                    }
                    _ => break,
                }
            }
            after
        }
        // Not parsed: after the leading comment lines (a shebang, an encoding line).
        None => module
            .lines()
            .take_while(|l| l.starts_with('#'))
            .count()
            .try_into()
            .unwrap_or(0),
    }
}

fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

fn ensure_line_end(out: &mut String, crlf: bool) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push_str(if crlf { "\r\n" } else { "\n" });
    }
}

/// Lines with their terminators.
fn split_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "\"\"\"Running maxima, and other things.\"\"\"\nimport os\n\nLIMIT = 10  # the cap\n\n\ndef helper(x):\n    return x * 2\n\n\n# The running maximum.\n# Starts from the first element.\ndef running_max(xs):\n    \"\"\"Largest so far.\"\"\"\n    out = []\n    best = 0\n    for x in xs:\n        best = max(best, x)\n        out.append(best)\n    return out\n\n\ndef another():\n    return helper(LIMIT)\n";

    #[test]
    fn only_the_entry_changes_and_everything_else_is_kept_byte_for_byte() {
        let candidate = "import os\n\ndef helper(x):\n    return 0\n\ndef running_max(xs):\n    \"\"\"Largest so far.\"\"\"\n    out = []\n    for x in xs:\n        out.append(x if not out else max(out[-1], x))\n    return out\n\nprint(running_max([1]))\n";
        let spliced = splice(MODULE, "running_max", candidate).unwrap();
        let expected = MODULE.replace(
            "    out = []\n    best = 0\n    for x in xs:\n        best = max(best, x)\n        out.append(best)\n",
            "    out = []\n    for x in xs:\n        out.append(x if not out else max(out[-1], x))\n",
        );
        assert_eq!(spliced, expected);
    }

    #[test]
    fn a_candidate_without_the_docstring_keeps_the_modules() {
        let candidate = "def running_max(xs):\n    out = []\n    for x in xs:\n        out.append(x if not out else max(out[-1], x))\n    return out\n";
        let spliced = splice(MODULE, "running_max", candidate).unwrap();
        assert!(
            spliced.contains("def running_max(xs):\n    \"\"\"Largest so far.\"\"\"\n    out = []\n    for x in xs:\n"),
            "{spliced}"
        );
        // A body indented otherwise cannot take it.
        let two = "def running_max(xs):\n  return xs\n";
        let spliced = splice(MODULE, "running_max", two).unwrap();
        assert!(
            spliced.contains("def running_max(xs):\n  return xs\n"),
            "{spliced}"
        );
    }

    #[test]
    fn new_helpers_go_above_the_entry_and_new_imports_after_the_imports() {
        let candidate = "import math\nfrom os import path\nSCALE = 2\nOFFSET = 1\n\ndef scale(x):\n    return x * SCALE\n\ndef running_max(xs):\n    return [scale(x) for x in xs]\n";
        let spliced = splice(MODULE, "running_max", candidate).unwrap();
        assert!(
            spliced.starts_with("\"\"\"Running maxima, and other things.\"\"\"\nimport os\nimport math\nfrom os import path\n\nLIMIT = 10  # the cap\n"),
            "{spliced}"
        );
        assert!(
            spliced.contains("    return x * 2\n\n\nSCALE = 2\nOFFSET = 1\n\n\ndef scale(x):\n    return x * SCALE\n\n\n# The running maximum.\n# Starts from the first element.\ndef running_max(xs):\n    \"\"\"Largest so far.\"\"\"\n    return [scale(x) for x in xs]\n\n\ndef another():"),
            "{spliced}"
        );
        assert!(TopLevel::read(&spliced).is_some());
    }

    #[test]
    fn a_candidate_without_the_entry_is_refused_and_so_is_a_module_without_it() {
        assert_eq!(
            splice(MODULE, "running_max", "def other():\n    pass\n"),
            Err(SpliceError::NoEntry("running_max".into()))
        );
        assert_eq!(
            splice("x = 1\n", "f", "def f():\n    pass\n"),
            Err(SpliceError::NotInModule("f".into()))
        );
        assert!(defines(MODULE, "another") && !defines(MODULE, "LIMIT"));
    }

    #[test]
    fn crlf_modules_get_crlf_lines_and_a_missing_final_newline_stays_missing() {
        let module =
            "import os\r\n\r\ndef f(x):\r\n    return x - 1\r\n\r\ndef g():\r\n    return 0";
        let spliced = splice(module, "f", "import sys\ndef f(x):\n    return x + 1\n").unwrap();
        assert_eq!(
            spliced,
            "import os\r\nimport sys\r\n\r\ndef f(x):\r\n    return x + 1\r\n\r\ndef g():\r\n    return 0"
        );
        let spliced = splice(module, "g", "def g():\n    return 1\n").unwrap();
        assert!(spliced.ends_with("def g():\r\n    return 1"), "{spliced:?}");
    }

    #[test]
    fn a_module_that_does_not_parse_is_spliced_by_indentation() {
        let module = "import os\ndef f(x)\n    return x\n\ndef g():\n    return 1\n";
        let spliced = splice(module, "f", "def f(x):\n    return x\n").unwrap();
        assert_eq!(
            spliced,
            "import os\ndef f(x):\n    return x\n\ndef g():\n    return 1\n"
        );
    }

    #[test]
    fn future_imports_are_never_added_and_a_bare_module_gets_imports_on_top() {
        let module = "def f(x):\n    return x\n";
        let spliced = splice(
            module,
            "f",
            "from __future__ import annotations\nimport math\ndef f(x):\n    return math.floor(x)\n",
        )
        .unwrap();
        assert_eq!(
            spliced,
            "import math\ndef f(x):\n    return math.floor(x)\n"
        );
    }

    const CLASSY: &str = "import os\n\n\n# A shell.\nclass Fish(object):\n    \"\"\"The fish shell.\"\"\"\n\n    @memoize\n    def info(self):\n        \"\"\"Name and version.\"\"\"\n        return 'Fish Shell'\n\n    def other(self):\n        return 1\n";

    #[test]
    fn a_method_is_replaced_at_its_indentation_from_a_class_or_a_lone_function() {
        let alone = "def info(self):\n    \"\"\"Name and version.\"\"\"\n    return 'Fish Shell, version 3'\n";
        let spliced = splice(CLASSY, "Fish.info", alone).unwrap();
        assert_eq!(
            spliced,
            CLASSY.replace("    @memoize\n    def info(self):\n        \"\"\"Name and version.\"\"\"\n        return 'Fish Shell'\n", "    def info(self):\n        \"\"\"Name and version.\"\"\"\n        return 'Fish Shell, version 3'\n")
        );
        let in_class = "import re\n\nclass Fish:\n  @memoize\n  def info(self):\n      return re.sub('x', '', 'Fish')\n";
        let spliced = splice(CLASSY, "Fish.info", in_class).unwrap();
        assert!(spliced.starts_with("import os\nimport re\n"), "{spliced}");
        assert!(
            spliced.contains("    @memoize\n    def info(self):\n        \"\"\"Name and version.\"\"\"\n        return re.sub('x', '', 'Fish')\n\n    def other(self):"),
            "{spliced}"
        );
        assert!(TopLevel::read(&spliced).is_some());
    }

    #[test]
    fn a_methods_new_helper_goes_above_its_class() {
        let candidate = "def _clean(s):\n    return s.strip()\n\ndef info(self):\n    return _clean(' Fish ')\n";
        let spliced = splice(CLASSY, "Fish.info", candidate).unwrap();
        assert!(
            spliced.starts_with("import os\n\n\ndef _clean(s):\n    return s.strip()\n\n\n# A shell.\nclass Fish(object):"),
            "{spliced}"
        );
        assert!(defines(CLASSY, "Fish.info") && !defines(CLASSY, "Fish.nothing"));
        assert_eq!(def_lines(CLASSY, "Fish.info"), Some((8, 11)));
        assert_eq!(
            splice(CLASSY, "Fish.info", "def other():\n    pass\n"),
            Err(SpliceError::NoEntry("Fish.info".into()))
        );
    }
}
