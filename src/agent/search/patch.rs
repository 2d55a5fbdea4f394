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

use super::{sample_seed, Proposer, Search};
use crate::agent::conversation::Conversation;
use crate::agent::report::{CallPurpose, EditRecord};
use crate::agent::{ms, AgentError};
use crate::model::ChatRequest;

/// How `patch` asks the model.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum PatchForm {
    /// Fill-in-the-middle where the backend takes raw prompts (the embedded model), else chat.
    #[default]
    Auto,
    /// Fill-in-the-middle with Qwen2.5-Coder's tokens (`<|fim_prefix|>` ...).
    Fim,
    /// A chat prompt with the lines marked; the reply holds the corrected lines.
    Chat,
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

impl Search<'_> {
    /// Patch `parent` at its most suspicious statements, `k` samples per statement.
    pub(super) async fn patch(&mut self, parent: usize, k: usize) -> Result<(), AgentError> {
        let program = self.node(parent).tested.program.clone();
        let holes: Vec<(usize, (u32, u32))> = self
            .suspects(parent, None)
            .await?
            .into_iter()
            .take(self.options.patch_top)
            .enumerate()
            .collect();
        let model = self.fixer.debugger.clone();
        let fim = match self.options.patch_form {
            PatchForm::Fim => true,
            PatchForm::Chat => false,
            PatchForm::Auto => model.fills_in_middle(),
        };
        for (rank, (first, last)) in holes {
            let Some(h) = hole(&program, first, last) else {
                continue;
            };
            let request = if fim {
                self.fim_request(parent, &h)?
            } else {
                self.chat_request(parent, &program, &h)?
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
                let reply_cost = 24 * (u64::from(last - first) + 2);
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
                let response = model.chat(&r).await?;
                self.remember_raw(&r);
                let mut conv = Conversation::new(&self.fixer.prompts)?;
                conv.record(CallPurpose::Patch, &response);
                let calls = std::mem::take(&mut conv.calls);
                let middle = if fim {
                    response.content.clone()
                } else {
                    chat_middle(&response.content, &h.indent)
                };
                let (candidate, problem) = match h.fill(&middle) {
                    Some(p) => (Some(p), None),
                    None => (
                        None,
                        Some("the patch left the lines as they were".to_string()),
                    ),
                };
                let llm_ms = ms(started.elapsed());
                self.consider(
                    self.round,
                    Proposer::Patch,
                    Some(parent),
                    candidate,
                    problem,
                    calls,
                    llm_ms,
                )
                .await?;
                if let Some(c) = self.candidates.last_mut() {
                    c.edit = Some(EditRecord {
                        line: h.first,
                        rank,
                        description: if h.first == h.last {
                            format!("line {}", h.first)
                        } else {
                            format!("lines {}-{}", h.first, h.last)
                        },
                    });
                }
            }
        }
        Ok(())
    }

    fn fim_request(&self, parent: usize, h: &Hole) -> Result<ChatRequest, AgentError> {
        let tested = &self.node(parent).tested;
        let failing = tested
            .outcomes
            .iter()
            .find(|o| !o.passed())
            .map(|o| format!("{} ({})", o.test.describe(), o.summary));
        let header = self.fixer.prompts.render(
            "patch_fim",
            serde_json::json!({
                "task_lines": self.task.prompt.trim().lines().collect::<Vec<_>>(),
                "tests": self.tests.iter().map(|t| t.describe()).collect::<Vec<_>>(),
                "failing": failing,
            }),
        )?;
        let raw = format!(
            "<|fim_prefix|>{header}{}{}<|fim_suffix|>{}<|fim_middle|>",
            h.before, h.indent, h.after
        );
        let mut request = ChatRequest::new(vec![crate::model::Message::user(format!(
            "fill in line {} of the program",
            h.first
        ))]);
        request.raw_prompt = Some(raw);
        request.max_lines = Some(h.last - h.first + 2);
        request.max_tokens = Some(48 * (h.last - h.first + 2));
        Ok(request)
    }

    fn chat_request(
        &self,
        parent: usize,
        program: &str,
        h: &Hole,
    ) -> Result<ChatRequest, AgentError> {
        let marked: String = program
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
        let mut vars = self.context_vars(parent);
        vars["program"] = marked.trim_end().into();
        vars["hole_lines"] = (h.last - h.first + 1).into();
        let mut conv = Conversation::new(&self.fixer.prompts)?;
        conv.user(self.fixer.prompts.render("patch_chat", vars)?);
        let mut request = ChatRequest::new(conv.messages);
        request.max_tokens = Some(64 * (h.last - h.first + 2) + 32);
        Ok(request)
    }

    fn sent_raw(&self, r: &ChatRequest) -> bool {
        self.sent.contains(&raw_hash(r))
    }

    fn remember_raw(&mut self, r: &ChatRequest) {
        self.sent.insert(raw_hash(r));
    }
}

fn request_bytes(r: &ChatRequest) -> usize {
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
