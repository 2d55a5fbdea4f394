//! A program with a hole where a patch goes (the suspicious lines taken out), and the program
//! a reply makes of it: the lines the model wrote put in the hole, a chat reply's lines
//! dedented to the hole's indentation, a function body cut where the model went on, a whole
//! program taken only where it changes nothing but the hole.

/// A program with a hole where its suspicious lines were.
pub(super) struct Hole {
    /// Text before the hole's first line, and that line's indentation.
    pub(super) before: String,
    pub(super) indent: String,
    /// Text after the hole's last line (from its line end on).
    pub(super) after: String,
    pub(super) first: u32,
    pub(super) last: u32,
    /// The lines the hole replaces, as they are.
    old: String,
}

pub(super) fn hole(program: &str, first: u32, last: u32) -> Option<Hole> {
    let lines: Vec<&str> = program.split_inclusive('\n').collect();
    let (a, b) = (first as usize, last as usize);
    if a == 0 || b < a || b > lines.len() {
        return None;
    }
    let before: String = lines[..a - 1].concat();
    let first_line = lines[a - 1];
    let indent: String = first_line
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let old: String = lines[a - 1..b].concat();
    // The hole's own line end stays in the suffix.
    let after = format!("\n{}", lines[b..].concat());
    Some(Hole {
        before,
        indent,
        after,
        first,
        last,
        old,
    })
}

impl Hole {
    /// The program with `middle` (the model's lines, first one without its indentation) in the
    /// hole; `None` when the middle is empty or only repeats the old lines.
    pub(super) fn fill(&self, middle: &str) -> Option<String> {
        let middle = middle.trim_end_matches(['\n', '\r', ' ']);
        if middle.trim().is_empty() {
            return None;
        }
        let program = format!("{}{}{}{}", self.before, self.indent, middle, self.after);
        let rebuilt_old = format!("{}{}", self.indent, middle.trim_start());
        (rebuilt_old.trim_end() != self.old.trim_end()).then_some(program)
    }
}

/// A chat reply's lines as a middle: the first fenced block (or the whole reply), without the
/// marker the prompt used, dedented; lines after the first get the hole's indentation back.
pub(super) fn chat_middle(reply: &str, indent: &str) -> String {
    let mut in_block = false;
    let mut block: Vec<&str> = Vec::new();
    let mut fenced = false;
    for line in reply.lines() {
        if line.trim_start().starts_with("```") {
            if in_block {
                fenced = true;
                break;
            }
            in_block = true;
            continue;
        }
        if in_block {
            block.push(line);
        }
    }
    let lines: Vec<&str> = if fenced || in_block {
        block
    } else {
        reply.lines().collect()
    };
    let cleaned: Vec<String> = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.replace("# <-- FIX", "").trim_end().to_string())
        .collect();
    let common = cleaned
        .iter()
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    cleaned
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let rest = l.get(common..).unwrap_or(l.trim_start());
            if i == 0 {
                rest.to_string()
            } else {
                format!("{indent}{rest}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A function body the model wrote, without what it went on to write after it: the body ends
/// before the first line indented less than the body's `indent` (the first line comes without
/// its indentation).
pub(super) fn body_only<'m>(middle: &'m str, indent: &str) -> &'m str {
    let mut end = 0;
    for (i, line) in middle.split_inclusive('\n').enumerate() {
        let outside = i > 0 && !line.trim().is_empty() && !line.starts_with(indent);
        if outside {
            break;
        }
        end += line.len();
    }
    &middle[..end]
}

/// The program a whole-program reply gives when only the hole may change: the reply's lines
/// between the lines it shares with the program at its start and at its end, if those span no
/// more than the hole.
pub(super) fn program_middle(
    program: &str,
    h: &Hole,
    reply: &str,
) -> (Option<String>, Option<String>) {
    let Ok(found) = crate::generate::reply::code::extract_program(reply, None) else {
        return (None, Some("the reply holds no program".into()));
    };
    let old: Vec<&str> = program.lines().collect();
    let new: Vec<&str> = found.code.lines().collect();
    let same = |a: &str, b: &str| a.trim_end() == b.trim_end();
    let head = old.iter().zip(&new).take_while(|(a, b)| same(a, b)).count();
    let tail = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take_while(|(a, b)| same(a, b))
        .count()
        .min(old.len() - head)
        .min(new.len() - head);
    let (first, last) = (h.first as usize, h.last as usize);
    if head == old.len() && head == new.len() {
        return (None, Some("the patch left the lines as they were".into()));
    }
    // The changed lines of the program are head+1 ..= len-tail (1-based): inside the hole?
    if head + 1 < first || old.len() - tail > last {
        return (
            None,
            Some("the reply changed lines outside the marked ones".into()),
        );
    }
    let middle = new[head..new.len() - tail].join("\n");
    let mut out: String = old[..head].iter().map(|l| format!("{l}\n")).collect();
    if !middle.is_empty() {
        out.push_str(&middle);
        out.push('\n');
    }
    for l in &old[old.len() - tail..] {
        out.push_str(l);
        out.push('\n');
    }
    (Some(out), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hole_is_filled_between_the_lines_around_it() {
        let p = "def f(x):\n    if x > 1:\n        return 1\n    return 0\n";
        let h = hole(p, 2, 2).unwrap();
        assert_eq!(h.before, "def f(x):\n");
        assert_eq!(h.indent, "    ");
        assert_eq!(h.after, "\n        return 1\n    return 0\n");
        assert_eq!(
            h.fill("if x >= 1:").unwrap(),
            "def f(x):\n    if x >= 1:\n        return 1\n    return 0\n"
        );
        // The same line again is no patch.
        assert!(h.fill("if x > 1:\n").is_none());
        assert!(h.fill("  \n").is_none());
        assert!(hole(p, 5, 5).is_none());
    }

    #[test]
    fn a_whole_program_reply_counts_only_when_it_changes_the_marked_lines() {
        let p = "def f(x):\n    if x > 1:\n        return 1\n    return 0\n";
        let h = hole(p, 2, 2).unwrap();
        let (got, _) = program_middle(
            p,
            &h,
            "```python\ndef f(x):\n    if x >= 1:\n        return 1\n    return 0\n```",
        );
        assert_eq!(
            got.unwrap(),
            "def f(x):\n    if x >= 1:\n        return 1\n    return 0\n"
        );
        let (got, why) = program_middle(
            p,
            &h,
            "```python\ndef f(x):\n    if x >= 1:\n        return 2\n    return 0\n```",
        );
        assert!(got.is_none());
        assert!(why.unwrap().contains("outside"));
        let (got, _) = program_middle(
            p,
            &h,
            "```python\ndef f(x):\n    if x > 1:\n        return 1\n    return 0\n```",
        );
        assert!(got.is_none());
    }

    #[test]
    fn a_written_body_ends_where_the_model_went_on_at_the_margin() {
        assert_eq!(
            body_only(
                "count = 0\n    for b in bs:\n        count += 1\n\n    return count\n# Task:\ndef g():\n",
                "    "
            ),
            "count = 0\n    for b in bs:\n        count += 1\n\n    return count\n"
        );
        assert_eq!(body_only("return 1", "    "), "return 1");
        // A method's body ends at the next method.
        assert_eq!(
            body_only("return 1\n    def g(self):\n        pass\n", "        "),
            "return 1\n"
        );
    }

    #[test]
    fn a_chat_reply_gives_its_lines_at_the_holes_indentation() {
        assert_eq!(
            chat_middle(
                "Here:\n```python\n        if x >= 1:  # <-- FIX\n```\n",
                "    "
            ),
            "if x >= 1:"
        );
        assert_eq!(
            chat_middle("```python\na = 1\nif a:\n    b = 2\n```", "    "),
            "a = 1\n    if a:\n        b = 2"
        );
    }
}
