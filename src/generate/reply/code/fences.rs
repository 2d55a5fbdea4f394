//! Markdown fences in a reply: opened with any tag (or none), indented, left open when the
//! reply was cut short.

/// A fenced block as written: its info word and body (indentation of the fence removed).
pub(super) struct Fence {
    pub(super) tag: Option<String>,
    pub(super) body: String,
}

pub(super) struct FenceOpen {
    pub(super) marker: char,
    pub(super) len: usize,
    pub(super) indent: usize,
    pub(super) tag: Option<String>,
}

/// All fenced blocks in `text`, in order. A fence still open at the end takes the rest of the
/// text, since truncated output is the usual reason for a missing closing fence.
pub(super) fn fenced_blocks(text: &str) -> Vec<Fence> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(open) = lines.get(i).and_then(|l| fence_open(l)) else {
            i += 1;
            continue;
        };
        let mut body: Vec<&str> = Vec::new();
        let mut j = i + 1;
        while let Some(line) = lines.get(j) {
            if closes(line, &open) {
                break;
            }
            body.push(strip_indent(line, open.indent));
            j += 1;
        }
        out.push(Fence {
            tag: open.tag,
            body: body.join("\n"),
        });
        i = j + 1;
    }
    out
}

pub(super) fn fence_open(line: &str) -> Option<FenceOpen> {
    let rest = line.trim_start_matches([' ', '\t']);
    let indent = line.len() - rest.len();
    let marker = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.chars().take_while(|c| *c == marker).count();
    if len < 3 {
        return None;
    }
    // The marker is ASCII, so `len` characters are `len` bytes.
    let info = rest.get(len..).unwrap_or("").trim();
    // A backtick "fence" with more backticks on the line is inline code, not a block.
    if marker == '`' && info.contains('`') {
        return None;
    }
    let tag = info
        .split_whitespace()
        .next()
        .map(|w| w.trim_matches(|c| c == '{' || c == '}' || c == '.'))
        .filter(|w| !w.is_empty())
        .map(str::to_string);
    Some(FenceOpen {
        marker,
        len,
        indent,
        tag,
    })
}

pub(super) fn closes(line: &str, open: &FenceOpen) -> bool {
    let t = line.trim();
    t.len() >= open.len && t.chars().all(|c| c == open.marker)
}

/// Remove up to `n` bytes of leading spaces/tabs (the fence's own indentation).
pub(super) fn strip_indent(line: &str, n: usize) -> &str {
    let ws = line.len() - line.trim_start_matches([' ', '\t']).len();
    line.get(ws.min(n)..).unwrap_or(line)
}
