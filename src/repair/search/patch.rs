//! The `patch` proposer: the model rewrites only the statements fault localisation ranks most
//! suspicious, and the rest of the parent stays as it is.
//!
//! Two forms. The embedded model (which takes raw prompts) fills in the middle: a prompt of
//! the task and the tests as comments, the program up to the suspicious line, the model's own
//! `<|fim_suffix|>` marker and the program after it, then `<|fim_middle|>`; it writes the
//! line(s) in between, a few tokens. Every sample of one hole shares the prompt, which the
//! backend evaluates once. An endpoint gets a chat prompt showing the program with the lines
//! marked `# <-- FIX`, and replies with the corrected lines only (`--patch-form` chooses).

use std::time::Instant;

use crate::generate::model::{ChatModel, ChatRequest};
use crate::generate::prompts::Prompts;
use crate::repair::conversation::Conversation;
use crate::repair::record::{CallPurpose, EditRecord};
use crate::repair::search::{sample_seed, Proposer, Search};
use crate::repair::{ms, AgentError};
use crate::run::TestOutcome;
use crate::task::Task;

/// How `patch` asks the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PatchForm {
    /// Fill-in-the-middle where the backend takes raw prompts (the embedded model), else chat.
    #[default]
    Auto,
    /// Fill-in-the-middle with Qwen2.5-Coder's tokens (`<|fim_prefix|>` ...).
    Fim,
    /// A chat prompt with the lines marked; the reply holds the corrected lines.
    Chat,
    /// A chat prompt with the lines marked; the reply holds the whole program, of which only
    /// the marked lines are taken (a change elsewhere is refused).
    ChatProgram,
}

/// A program with a hole where its suspicious lines were.
struct Hole {
    /// Text before the hole's first line, and that line's indentation.
    before: String,
    indent: String,
    /// Text after the hole's last line (from its line end on).
    after: String,
    first: u32,
    last: u32,
    /// The lines the hole replaces, as they are.
    old: String,
}

fn hole(program: &str, first: u32, last: u32) -> Option<Hole> {
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
    fn fill(&self, middle: &str) -> Option<String> {
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
fn chat_middle(reply: &str, indent: &str) -> String {
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
fn body_only<'m>(middle: &'m str, indent: &str) -> &'m str {
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
fn program_middle(program: &str, h: &Hole, reply: &str) -> (Option<String>, Option<String>) {
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

/// What a patch is made from: the task, the program, its visible results and the lines to
/// rewrite.
pub struct PatchSite<'a> {
    pub task: &'a Task,
    pub program: &'a str,
    pub outcomes: &'a [TestOutcome],
    pub first: u32,
    pub last: u32,
    /// The function whose placeholder body `first..=last` is, when the model is to write that
    /// body (`complete`) rather than correct the lines.
    pub body_of: Option<&'a str>,
}

/// Lines the model may write for a function body in place of its placeholder.
const BODY_LINES: u32 = 14;

impl PatchSite<'_> {
    /// Lines the model may write in place of `first..=last`.
    fn room(&self) -> u32 {
        match self.body_of {
            Some(_) => BODY_LINES,
            None => self.last.saturating_sub(self.first) + 2,
        }
    }
}

/// One patch the model wrote.
pub struct Patched {
    /// The program with the lines rewritten; `None` when the reply gave none (`problem` says
    /// why).
    pub program: Option<String>,
    pub problem: Option<String>,
    pub calls: Vec<crate::repair::record::CallRecord>,
}

/// The request for a patch of `site` in `form` (`Fim` or a chat form; `Auto` is resolved by the
/// caller). `None` when the lines are not in the program.
pub fn patch_request(
    prompts: &Prompts,
    site: &PatchSite<'_>,
    form: PatchForm,
) -> Result<Option<ChatRequest>, AgentError> {
    let Some(h) = hole(site.program, site.first, site.last) else {
        return Ok(None);
    };
    Ok(Some(match form {
        PatchForm::Fim => fim_request(prompts, site, &h)?,
        other => chat_request(prompts, site, &h, other == PatchForm::ChatProgram)?,
    }))
}

/// Send `request` (from [`patch_request`]) and read the reply as a patch of `site`.
pub async fn sample_patch(
    model: &dyn crate::generate::model::ChatModel,
    prompts: &Prompts,
    site: &PatchSite<'_>,
    form: PatchForm,
    request: &ChatRequest,
) -> Result<Patched, AgentError> {
    let Some(h) = hole(site.program, site.first, site.last) else {
        return Ok(Patched {
            program: None,
            problem: Some("the lines are not in the program".into()),
            calls: Vec::new(),
        });
    };
    let response = model.chat(request).await?;
    let mut conv = Conversation::new(prompts)?;
    conv.record(CallPurpose::Patch, &response);
    let (program, problem) = match form {
        PatchForm::ChatProgram => program_middle(site.program, &h, &response.content),
        _ => {
            let middle = if form == PatchForm::Fim {
                // The embedded model stops at the room's line ends; an endpoint cannot be told
                // to, so its middle is cut there.
                response
                    .content
                    .split_inclusive('\n')
                    .take(site.room() as usize)
                    .collect()
            } else {
                chat_middle(&response.content, &h.indent)
            };
            let middle = match site.body_of {
                Some(_) => body_only(&middle, &h.indent).to_string(),
                None => middle,
            };
            match h.fill(&middle) {
                Some(p) => (Some(p), None),
                None => (None, Some("the patch left the lines as they were".into())),
            }
        }
    };
    // A patch that does not parse fails every test: it is not worth a run.
    let (program, problem) = match program {
        Some(p) => match crate::python::parse_module(&crate::python::SourceFile::new(&p)) {
            Ok(_) => (Some(p), problem),
            Err(e) => (
                None,
                Some(format!("the patched program does not parse: {}", e.message)),
            ),
        },
        None => (None, problem),
    };
    Ok(Patched {
        program,
        problem,
        calls: conv.calls,
    })
}

fn fim_request(
    prompts: &Prompts,
    site: &PatchSite<'_>,
    h: &Hole,
) -> Result<ChatRequest, AgentError> {
    let failing = site
        .outcomes
        .iter()
        .find(|o| !o.passed() && !o.test.is_guard())
        .map(|o| format!("{} ({})", o.test.describe(), o.summary));
    let header = prompts.render(
        "patch_fim",
        serde_json::json!({
            "task_lines": site.task.prompt.trim().lines().collect::<Vec<_>>(),
            "tests": site
                .outcomes
                .iter()
                .filter(|o| !o.test.is_guard())
                .map(|o| o.test.describe())
                .collect::<Vec<_>>(),
            "failing": failing,
        }),
    )?;
    let (before, after) = fim_context(site, h);
    let raw = format!(
        "<|fim_prefix|>{header}{before}{}<|fim_suffix|>{after}<|fim_middle|>",
        h.indent
    );
    let mut request = ChatRequest::new(vec![crate::generate::model::Message::user(format!(
        "fill in line {} of the program",
        h.first
    ))]);
    request.raw_prompt = Some(raw);
    request.max_lines = Some(site.room());
    request.max_tokens = Some(48 * site.room());
    Ok(request)
}

/// The text a fill-in-the-middle prompt shows around the hole: the program before and after
/// it, or for one function of a user's module that function's view
/// ([`crate::python::view`]): what the function uses, then the function up to the hole, and
/// after it the rest of the function.
fn fim_context(site: &PatchSite<'_>, h: &Hole) -> (String, String) {
    let whole = (h.before.clone(), h.after.clone());
    if site.task.scope != crate::task::ProgramScope::Function {
        return whole;
    }
    let entry = &site.task.entry_point;
    let (Some(def), Some(view)) = (
        crate::python::defs::find(site.program, entry),
        crate::python::view::function_view(site.program, entry),
    ) else {
        return whole;
    };
    if h.first < def.first || h.last > def.last {
        return whole;
    }
    let lines: Vec<&str> = site.program.split_inclusive('\n').collect();
    let span = |a: u32, b: u32| -> String {
        lines
            .get(a.saturating_sub(1) as usize..(b as usize).min(lines.len()))
            .map(|ls| ls.concat())
            .unwrap_or_default()
    };
    let function = span(def.first, def.last);
    let Some(header) = view.strip_suffix(function.as_str()) else {
        return whole;
    };
    // A long function is shown around the hole: its signature, then the lines nearest the
    // hole, so the prompt stays within a project's budget and the model reads what is near.
    let header = tail_lines(header, FIM_HEADER_CHARS);
    let signature_end = (def.first..h.first)
        .find(|&n| {
            lines
                .get(n as usize - 1)
                .is_some_and(|l| l.trim_end().ends_with(':') && !l.trim_start().starts_with('@'))
        })
        .unwrap_or(def.first);
    let signature = span(def.first, signature_end);
    let near = tail_lines(&span(signature_end + 1, h.first - 1), FIM_BEFORE_CHARS);
    let skipped = span(signature_end + 1, h.first - 1).len() > near.len();
    let gap = if skipped {
        let indent: String = near
            .lines()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.chars().take_while(|c| c.is_whitespace()).collect())
            .unwrap_or_else(|| "    ".into());
        format!("{indent}...\n")
    } else {
        String::new()
    };
    let before = format!("{header}{signature}{gap}{near}");
    let after = format!(
        "\n{}",
        head_lines(&span(h.last + 1, def.last), FIM_AFTER_CHARS)
    );
    (before, after)
}

/// How much of a function's view a fill-in-the-middle prompt shows: the names it uses, the
/// lines before the hole, the lines after it (characters, whole lines).
const FIM_HEADER_CHARS: usize = 2_000;
const FIM_BEFORE_CHARS: usize = 3_000;
const FIM_AFTER_CHARS: usize = 1_200;

/// The last whole lines of `text` within `max` characters.
fn tail_lines(text: &str, max: usize) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut size = 0;
    for line in text.split_inclusive('\n').rev() {
        if size + line.len() > max {
            break;
        }
        size += line.len();
        kept.push(line);
    }
    kept.reverse();
    kept.concat()
}

/// The first whole lines of `text` within `max` characters.
fn head_lines(text: &str, max: usize) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        if out.len() + line.len() > max {
            break;
        }
        out.push_str(line);
    }
    out
}

fn chat_request(
    prompts: &Prompts,
    site: &PatchSite<'_>,
    h: &Hole,
    whole: bool,
) -> Result<ChatRequest, AgentError> {
    let marked: String = site
        .program
        .split_inclusive('\n')
        .enumerate()
        .map(|(i, line)| {
            let n = i as u32 + 1;
            if (h.first..=h.last).contains(&n) {
                format!("{}  # <-- FIX\n", line.trim_end_matches(['\n', '\r']))
            } else {
                line.to_string()
            }
        })
        .collect();
    let mut vars =
        crate::repair::search::proposals::context_vars(site.task, site.program, site.outcomes);
    vars["program"] = crate::repair::shown_program(site.task, &marked)
        .trim_end()
        .into();
    vars["hole_lines"] = (h.last - h.first + 1).into();
    vars["whole"] = whole.into();
    vars["body_of"] = site.body_of.into();
    let mut conv = Conversation::new(prompts)?;
    conv.user(prompts.render("patch_chat", vars)?);
    let mut request = ChatRequest::new(conv.messages);
    if !whole {
        request.max_tokens = Some(64 * site.room() + 32);
    }
    Ok(request)
}

impl Search<'_> {
    /// Patch `parent` at its most suspicious statements, `k` samples per statement.
    pub(super) async fn patch(&mut self, parent: usize, k: usize) -> Result<(), AgentError> {
        let program = self.node(parent).tested.program.clone();
        let outcomes = self.node(parent).tested.outcomes.clone();
        let holes: Vec<(usize, (u32, u32))> = self
            .suspects(parent, None)
            .await?
            .into_iter()
            .take(self.options.patch_top)
            .enumerate()
            .collect();
        let model = self.fixer.debugger.clone();
        let form = patch_form(self.options.patch_form, &*model);
        for (rank, (first, last)) in holes {
            let site = PatchSite {
                task: self.task,
                program: &program,
                outcomes: &outcomes,
                first,
                last,
                body_of: None,
            };
            let Some(request) = patch_request(&self.fixer.prompts, &site, form)? else {
                continue;
            };
            // What one sample costs: the prompt once (then kept), a few tokens per line.
            let prompt_cost = if self.sent_raw(&request) {
                0
            } else {
                (request_bytes(&request) as f64 / 3.5).ceil() as u64
            };
            for i in 0..k {
                if self.should_stop().is_some() || self.selecting() {
                    return Ok(());
                }
                let reply_cost = match form {
                    PatchForm::ChatProgram => self.reply_estimate(),
                    _ => 24 * (u64::from(last - first) + 2),
                };
                if !self.fits(if i == 0 { prompt_cost } else { 0 } + reply_cost) {
                    return Ok(());
                }
                let mut r = request.clone();
                r.temperature = Some(self.options.temperature);
                r.seed = Some(sample_seed(
                    self.fixer.options.rng_seed,
                    &[
                        self.round as u64,
                        parent as u64,
                        Proposer::Patch.code(),
                        u64::from(first),
                        i as u64,
                    ],
                ));
                let started = Instant::now();
                let patched = sample_patch(&*model, &self.fixer.prompts, &site, form, &r).await?;
                self.remember_raw(&r);
                let llm_ms = ms(started.elapsed());
                self.consider(
                    self.round,
                    Proposer::Patch,
                    Some(parent),
                    patched.program,
                    patched.problem,
                    patched.calls,
                    llm_ms,
                )
                .await?;
                if let Some(c) = self.candidates.last_mut() {
                    c.edit = Some(EditRecord {
                        line: first,
                        rank,
                        description: if first == last {
                            format!("line {first}")
                        } else {
                            format!("lines {first}-{last}")
                        },
                    });
                }
            }
        }
        Ok(())
    }

    pub(super) fn sent_raw(&self, r: &ChatRequest) -> bool {
        self.sent.contains(&raw_hash(r))
    }

    pub(super) fn remember_raw(&mut self, r: &ChatRequest) {
        self.sent.insert(raw_hash(r));
    }
}

/// `form` with `Auto` resolved for `model`: fill-in-the-middle where it takes raw prompts.
pub(super) fn patch_form(form: PatchForm, model: &dyn ChatModel) -> PatchForm {
    match form {
        PatchForm::Auto if model.fills_in_middle() => PatchForm::Fim,
        PatchForm::Auto => PatchForm::Chat,
        other => other,
    }
}

pub(super) fn request_bytes(r: &ChatRequest) -> usize {
    match &r.raw_prompt {
        Some(raw) => raw.len(),
        None => r.messages.iter().map(|m| m.content.len()).sum(),
    }
}

/// The prompt's identity, for "the backend holds it already".
fn raw_hash(r: &ChatRequest) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    r.raw_prompt.hash(&mut h);
    for m in &r.messages {
        m.content.hash(&mut h);
    }
    h.finish()
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

    #[test]
    fn a_long_functions_hole_is_shown_with_its_signature_and_nearby_lines() {
        let mut body = String::new();
        for i in 0..400 {
            body.push_str(&format!("        x{i} = {i}\n"));
        }
        let program = format!(
            "import os\n\n\nclass C:\n    def long(self,\n             a):\n{body}        return a\n"
        );
        let mut task: Task = serde_json::from_value(serde_json::json!({
            "task_id": "t", "prompt": "", "entry_point": "C.long"
        }))
        .unwrap();
        task.scope = crate::task::ProgramScope::Function;
        // The hole: line 300 of the program, deep in the body.
        let site = PatchSite {
            task: &task,
            program: &program,
            outcomes: &[],
            first: 300,
            last: 300,
            body_of: None,
        };
        let h = hole(&program, 300, 300).unwrap();
        let (before, after) = fim_context(&site, &h);
        assert!(
            before.contains("    def long(self,\n             a):\n"),
            "{before}"
        );
        assert!(before.contains("        ...\n"), "{before}");
        assert!(before.ends_with("        x292 = 292\n"), "{before}");
        assert!(!before.contains("x10 = 10\n"));
        assert!(before.len() <= FIM_HEADER_CHARS + FIM_BEFORE_CHARS + 200);
        assert!(after.starts_with("\n        x294 = 294\n"), "{after}");
        assert!(after.len() <= FIM_AFTER_CHARS + 1);
        // A short function is shown whole.
        let short = "def f(x):\n    y = x\n    return y\n";
        let mut task = task.clone();
        task.entry_point = "f".into();
        let site = PatchSite {
            task: &task,
            program: short,
            first: 2,
            last: 2,
            ..site
        };
        let (before, after) = fim_context(&site, &hole(short, 2, 2).unwrap());
        assert!(before.ends_with("def f(x):\n"), "{before}");
        assert!(!before.contains("..."));
        assert_eq!(after, "\n    return y\n");
    }
}
