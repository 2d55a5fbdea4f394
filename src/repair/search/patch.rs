//! The `patch` proposer: the model rewrites only the statements fault localisation ranks most
//! suspicious, and the rest of the parent stays as it is.
//!
//! Two forms. The embedded model (which takes raw prompts) fills in the middle: a prompt of
//! the task and the tests as comments, the program up to the suspicious line, the model's own
//! `<|fim_suffix|>` marker and the program after it, then `<|fim_middle|>`; it writes the
//! line(s) in between, a few tokens. Every sample of one hole shares the prompt, which the
//! backend evaluates once. An endpoint gets a chat prompt showing the program with the lines
//! marked `# <-- FIX`, and replies with the corrected lines only (`--patch-form` chooses).
//! The hole and what a reply puts in it are in `hole`.

mod hole;

use std::time::Instant;

use crate::generate::model::{ChatModel, ChatRequest};
use crate::generate::prompts::Prompts;
use crate::repair::conversation::Conversation;
use crate::repair::record::{CallPurpose, EditRecord};
use crate::repair::search::{sample_seed, Proposer, Search};
use crate::repair::{ms, AgentError};
use crate::run::TestOutcome;
use crate::task::Task;
use hole::{body_only, chat_middle, hole, program_middle, Hole};

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
                        self.round.number as u64,
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
                    self.round.number,
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
        self.memo.sent.contains(&raw_hash(r))
    }

    pub(super) fn remember_raw(&mut self, r: &ChatRequest) {
        self.memo.sent.insert(raw_hash(r));
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
