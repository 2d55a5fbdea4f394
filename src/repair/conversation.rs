//! One conversation with a model: messages in order, every call recorded, and the two requests
//! the loop makes (a program, a set of verdicts), each with one repair request when the reply is
//! unusable.

use crate::generate::model::{ChatModel, ChatRequest, JsonSchema, Message};
use crate::generate::prompts::Prompts;
use crate::generate::reply::code::extract_program;
use crate::generate::reply::short_verdict::{first_wrong_schema, parse_first_wrong};
use crate::generate::reply::verdicts::{parse_verdicts, verdict_schema_for, Verdict};
use crate::python::self_tests::strip_self_tests;
use crate::repair::record::CallPurpose;
use crate::repair::record::CallRecord;
use crate::repair::AgentError;

/// One sample of a program request: the program (if any), what was wrong with the reply, and
/// the calls it took (its sample, and a repair request if there was one).
pub(super) struct Drawn {
    pub program: Option<String>,
    pub problem: Option<String>,
    pub calls: Vec<CallRecord>,
}

/// What a reply is read for.
#[derive(Clone, Copy)]
enum Expect<'a> {
    Text,
    /// A program that must define `entry` (when there is one).
    Program {
        entry: Option<&'a str>,
    },
}

/// A program's reply ends with its code: stop once a code block that defines `entry` closes
/// (any block, without an entry point), or once the model starts testing `entry` after its
/// code. Nothing after the block is read, and the program's own tests are dropped from it
/// ([`strip_self_tests`]), so the tokens would be spent for nothing.
fn stop_at_program_end(request: &mut ChatRequest, entry: Option<&str>) {
    // A method (`Cls.method`) is defined by its own name, and not called at the top level.
    let leaf = entry.map(|e| e.rsplit('.').next().unwrap_or(e));
    request.stop_after_code = Some(leaf.map(|e| format!("def {e}(")).unwrap_or_default());
    request.stop_at_self_tests = entry.filter(|e| !e.contains('.')).map(str::to_string);
}

#[derive(Clone)]
pub(super) struct Conversation {
    pub messages: Vec<Message>,
    pub calls: Vec<CallRecord>,
    pub temperature: f32,
    /// Sampling seed of the next request (distinct seeds give distinct samples).
    pub seed: Option<u64>,
    /// What the reply to the next program request starts with ([`ChatRequest::reply_prefix`]);
    /// used once: a repair request after it is answered from scratch.
    pub reply_prefix: Option<String>,
}

impl Conversation {
    pub fn new(prompts: &Prompts) -> Result<Self, AgentError> {
        Ok(Conversation {
            messages: vec![Message::system(prompts.render("system", ())?.trim())],
            calls: Vec::new(),
            temperature: 0.0,
            seed: None,
            reply_prefix: None,
        })
    }

    /// The same messages, no calls recorded yet, sampling at `temperature`: one of several
    /// samples drawn from one prompt.
    pub fn clone_for_sample(&self, temperature: f32) -> Conversation {
        Conversation {
            messages: self.messages.clone(),
            calls: Vec::new(),
            temperature,
            seed: None,
            reply_prefix: self.reply_prefix.clone(),
        }
    }

    pub fn user(&mut self, text: impl Into<String>) {
        self.messages.push(Message::user(text));
    }

    /// Send the conversation, record the call, append the reply and return it.
    pub async fn ask(
        &mut self,
        model: &dyn ChatModel,
        purpose: CallPurpose,
        schema: Option<JsonSchema>,
    ) -> Result<String, AgentError> {
        self.ask_with(model, purpose, schema, Expect::Text).await
    }

    /// [`Self::ask`], stopping a program's reply where the program ends ([`stop_at_program_end`]).
    async fn ask_with(
        &mut self,
        model: &dyn ChatModel,
        purpose: CallPurpose,
        schema: Option<JsonSchema>,
        expect: Expect<'_>,
    ) -> Result<String, AgentError> {
        let mut request = ChatRequest::new(self.messages.clone());
        if let Expect::Program { entry } = expect {
            stop_at_program_end(&mut request, entry);
        }
        request.reply_prefix = self.reply_prefix.take();
        request.temperature = Some(self.temperature);
        request.json_schema = schema;
        if self.temperature > 0.0 {
            request.seed = self.seed;
        }
        let response = model.chat(&request).await?;
        self.record(purpose, &response);
        self.messages
            .push(Message::assistant(response.content.clone()));
        Ok(response.content)
    }

    /// `n` samples of a program request ([`ChatModel::chat_n`]: one batched call where the
    /// backend can), each read like [`Self::ask_program`]'s reply, with its own repair request
    /// when it holds no program. Returns, per sample, the program, the problem and its calls.
    pub async fn ask_programs(
        &self,
        model: &dyn ChatModel,
        n: usize,
        entry_point: &str,
        purpose: CallPurpose,
        repair_purpose: CallPurpose,
        prompts: &Prompts,
    ) -> Result<Vec<Drawn>, AgentError> {
        let entry = (!entry_point.is_empty()).then_some(entry_point);
        let mut request = ChatRequest::new(self.messages.clone());
        stop_at_program_end(&mut request, entry);
        request.reply_prefix = self.reply_prefix.clone();
        request.temperature = Some(self.temperature);
        if self.temperature > 0.0 {
            request.seed = self.seed;
        }
        let responses = model.chat_n(&request, n).await?;
        let mut out = Vec::with_capacity(responses.len());
        for (i, response) in responses.into_iter().enumerate() {
            let mut conv = self.clone_for_sample(self.temperature);
            conv.seed = crate::generate::model::nth_seed(self.seed, i);
            conv.reply_prefix = None;
            conv.record(purpose, &response);
            conv.messages
                .push(Message::assistant(response.content.clone()));
            // Cut at the backend's own limit ([`ChatModel::reply_limit`]) with no program in
            // it: the reply ran away, and a repair request would send it back as prompt.
            let cut = model
                .reply_limit()
                .is_some_and(|max| response.usage.completion_tokens >= u64::from(max));
            let (program, problem) = match extract_program(&response.content, entry) {
                Ok(found) => (Some(strip_self_tests(&found.code, entry_point)), None),
                Err(e) if cut => (
                    None,
                    Some(format!(
                        "{e}; the reply was cut at {} tokens, so it got no repair request",
                        response.usage.completion_tokens
                    )),
                ),
                Err(e) => {
                    let problem = e.to_string();
                    conv.user(prompts.render(
                        "repair_code",
                        serde_json::json!({ "problem": problem, "entry_point": entry_point }),
                    )?);
                    let expect = Expect::Program { entry };
                    let reply = conv.ask_with(model, repair_purpose, None, expect).await?;
                    match extract_program(&reply, entry) {
                        Ok(found) => (
                            Some(strip_self_tests(&found.code, entry_point)),
                            Some(problem),
                        ),
                        Err(e) => (
                            None,
                            Some(format!("{problem}; after a repair request: {e}")),
                        ),
                    }
                }
            };
            out.push(Drawn {
                program,
                problem,
                calls: conv.calls,
            });
        }
        Ok(out)
    }

    pub(super) fn record(
        &mut self,
        purpose: CallPurpose,
        response: &crate::generate::model::ChatResponse,
    ) {
        self.calls.push(CallRecord {
            purpose,
            model: response.model.clone(),
            prompt_tokens: response.usage.prompt_tokens,
            completion_tokens: response.usage.completion_tokens,
            cached_prompt_tokens: response.usage.cached_prompt_tokens,
            latency_ms: response.latency.as_millis().min(u64::MAX as u128) as u64,
            cached: response.cached,
            attempts: response.attempts,
        });
    }

    /// Ask for a program; when the reply holds none, say why once and ask again. The model's
    /// own tests and example calls are dropped from it ([`strip_self_tests`]).
    /// Returns the program (if any) and what was wrong with the replies (if anything).
    pub async fn ask_program(
        &mut self,
        model: &dyn ChatModel,
        entry_point: &str,
        purpose: CallPurpose,
        repair_purpose: CallPurpose,
        prompts: &Prompts,
    ) -> Result<(Option<String>, Option<String>), AgentError> {
        let entry = (!entry_point.is_empty()).then_some(entry_point);
        let expect = Expect::Program { entry };
        let reply = self.ask_with(model, purpose, None, expect).await?;
        let problem = match extract_program(&reply, entry) {
            Ok(found) => return Ok((Some(strip_self_tests(&found.code, entry_point)), None)),
            Err(e) => e.to_string(),
        };
        self.user(prompts.render(
            "repair_code",
            serde_json::json!({ "problem": problem, "entry_point": entry_point }),
        )?);
        let reply = self.ask_with(model, repair_purpose, None, expect).await?;
        match extract_program(&reply, entry) {
            Ok(found) => Ok((
                Some(strip_self_tests(&found.code, entry_point)),
                Some(problem),
            )),
            Err(e) => Ok((
                None,
                Some(format!("{problem}; after a repair request: {e}")),
            )),
        }
    }

    /// Ask for verdicts on `labels`, structured by JSON schema; repair once if unreadable.
    pub async fn ask_verdicts(
        &mut self,
        model: &dyn ChatModel,
        labels: &[String],
        prompts: &Prompts,
    ) -> Result<(Vec<Verdict>, Option<String>), AgentError> {
        let schema = || {
            Some(JsonSchema {
                name: "block_verdicts".into(),
                schema: verdict_schema_for(labels),
            })
        };
        let reply = self.ask(model, CallPurpose::Debug, schema()).await?;
        let problem = match parse_verdicts(&reply, labels) {
            Ok(parsed) => return Ok((parsed.verdicts, incomplete(&parsed.missing))),
            Err(e) => e.to_string(),
        };
        self.user(prompts.render(
            "repair_verdicts",
            serde_json::json!({ "problem": problem, "labels": labels }),
        )?);
        let reply = self
            .ask(model, CallPurpose::RepairVerdicts, schema())
            .await?;
        match parse_verdicts(&reply, labels) {
            Ok(parsed) => {
                let note = match incomplete(&parsed.missing) {
                    Some(m) => format!("{problem}; after a repair request: {m}"),
                    None => format!("{problem} (repaired)"),
                };
                Ok((parsed.verdicts, Some(note)))
            }
            Err(e) => Ok((
                Vec::new(),
                Some(format!("{problem}; after a repair request: {e}")),
            )),
        }
    }
}

impl Conversation {
    /// Ask for the first wrong block only ([`crate::generate::reply::short_verdict`]), constrained to
    /// `labels`. The answer comes back as one verdict "not correct" so repairs read both forms
    /// alike; a reply naming no shown block gives none, and a note.
    pub async fn ask_first_wrong(
        &mut self,
        model: &dyn ChatModel,
        labels: &[String],
    ) -> Result<(Vec<Verdict>, Option<String>), AgentError> {
        let schema = JsonSchema {
            name: "first_wrong_block".into(),
            schema: first_wrong_schema(labels),
        };
        let reply = self.ask(model, CallPurpose::Debug, Some(schema)).await?;
        Ok(match parse_first_wrong(&reply, labels) {
            Some(found) => {
                let note = (!found.well_formed).then(|| {
                    "the reply was not the JSON asked for; its first label was taken".into()
                });
                (
                    vec![Verdict {
                        block: found.block,
                        correct: false,
                        explanation: found.explanation,
                    }],
                    note,
                )
            }
            None => (
                Vec::new(),
                Some("the reply named no block that was shown".into()),
            ),
        })
    }
}

fn incomplete(missing: &[String]) -> Option<String> {
    (!missing.is_empty()).then(|| format!("no verdict for {}", missing.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::model::scripted::ScriptedModel;

    #[test]
    fn program_requests_stop_at_the_models_own_tests_and_other_requests_do_not() {
        let prompts = Prompts::new().unwrap();
        let model = ScriptedModel::new([
            "```python\ndef f(x):\n    return x\n```",
            "```python\ndef g(x):\n    return x\n```",
            "```python\nclass C:\n    def m(self):\n        return 1\n```",
            "Fine.",
        ]);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut conv = Conversation::new(&prompts).unwrap();
        let (program, _) = rt
            .block_on(conv.ask_program(
                &model,
                "f",
                CallPurpose::Generate,
                CallPurpose::RepairSeed,
                &prompts,
            ))
            .unwrap();
        assert!(program.is_some());
        rt.block_on(conv.ask_programs(
            &model,
            1,
            "g",
            CallPurpose::Generate,
            CallPurpose::RepairSeed,
            &prompts,
        ))
        .unwrap();
        rt.block_on(conv.ask_program(
            &model,
            "C.m",
            CallPurpose::Generate,
            CallPurpose::RepairSeed,
            &prompts,
        ))
        .unwrap();
        rt.block_on(conv.ask(&model, CallPurpose::Debug, None))
            .unwrap();
        let stops: Vec<(Option<String>, Option<String>)> = model
            .requests()
            .into_iter()
            .map(|r| (r.stop_after_code, r.stop_at_self_tests))
            .collect();
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            stops,
            vec![
                (some("def f("), some("f")),
                (some("def g("), some("g")),
                // A method's block is the one that defines it; it is not tested by a call of
                // its name.
                (some("def m("), None),
                (None, None),
            ]
        );
    }
}
