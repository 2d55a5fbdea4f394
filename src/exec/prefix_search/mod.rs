//! The search for prefixes: Treefix's three steps over the model, the sandbox and the tree.
//!
//! 0. Run the snippet as it is (the tree's root); stop if that covers every statement. Then,
//!    unless turned off, model-free prefixes that bind every undefined name to a stand-in
//!    ([`crate::exec::standins`]; one when no name is undefined, for its `exit` and `open` shims),
//!    then seeded ones while a statement is uncovered (`explore`); they are never shown to the
//!    model.
//! 1. Undefinedness guidance: one prompt listing the undefined names and the attributes read
//!    from them; `n` replies, each one prefix. (No undefined names: the as-is run is step 1.)
//! 2. Error guidance: for each of up to `n` runs that raised (distinct errors, most coverage
//!    first), the step-1 exchange plus the error; `n` refined prefixes each.
//! 3. Coverage guidance, at most `k` rounds while some statement is uncovered: the step-1
//!    exchange with the best prefix so far, then the snippet with `# uncovered` on every
//!    statement no prefix has covered; `n` prefixes per round.
//!
//! Every prefix runs with the snippet in the sandbox. A prefix statement that raises is taken
//! out and the rest run again (Treefix's post-processing), a few times at most. The first
//! sample of a prompt is greedy, the others sampled with distinct seeds; a prefix met before is
//! not run again.

use std::collections::BTreeSet;
use std::time::Instant;

use serde::Serialize;

use super::coverage::{annotate_uncovered, short_ending, Ending};
use super::prefix::{prefix_schema, run_with_cleanup, Prefix};
use super::tree::{Node, Step, Tree};
use super::{ExecError, ExecOptions, Snippet};
use crate::generate::model::{ChatModel, ChatRequest, Message};
use crate::generate::prompts::Prompts;
use crate::repair::record::CallPurpose;
use crate::repair::record::CallRecord;
use crate::run::{in_parallel, Runner};

/// Why the search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// Every statement is covered.
    FullCoverage,
    /// All steps ran (`k` coverage rounds, or nothing left to refine).
    StepsDone,
    /// The token budget was spent.
    Budget,
}

/// What the search produced, before it is summarised for output.
pub struct Searched {
    pub tree: Tree,
    pub calls: Vec<CallRecord>,
    pub stop: Stop,
    pub model_ms: u64,
    pub run_ms: u64,
}

/// A progress line (for stderr).
pub type Progress<'a> = &'a (dyn Fn(String) + Send + Sync);

struct Search<'a> {
    snippet: &'a Snippet,
    model: &'a dyn ChatModel,
    runner: &'a Runner,
    prompts: &'a Prompts,
    options: &'a ExecOptions,
    progress: Progress<'a>,
    tree: Tree,
    calls: Vec<CallRecord>,
    model_ms: u64,
    run_ms: u64,
    next_seed: u64,
    /// The snippet's own statements, to recognise copies of them in a prefix.
    copies: std::collections::HashSet<String>,
    /// The undefined names every reply initialises (one schema entry each).
    names: Vec<String>,
}

mod standin_runs;

pub async fn run(
    snippet: &Snippet,
    model: &dyn ChatModel,
    runner: &Runner,
    prompts: &Prompts,
    options: &ExecOptions,
    progress: Progress<'_>,
) -> Result<Searched, ExecError> {
    let mut s = Search {
        snippet,
        model,
        runner,
        prompts,
        options,
        progress,
        tree: Tree::default(),
        calls: Vec::new(),
        model_ms: 0,
        run_ms: 0,
        next_seed: options.rng_seed,
        copies: snippet.statement_texts(),
        names: snippet.undefined.name_list(),
    };
    let stop = s.steps().await?;
    Ok(Searched {
        tree: s.tree,
        calls: s.calls,
        stop,
        model_ms: s.model_ms,
        run_ms: s.run_ms,
    })
}

impl Search<'_> {
    fn total(&self) -> usize {
        self.snippet.statements.len()
    }

    fn full(&self) -> bool {
        self.tree.union().len() >= self.total()
    }

    fn spent(&self) -> u64 {
        self.calls.iter().map(CallRecord::cost).sum()
    }

    fn out_of_budget(&self) -> bool {
        self.options
            .budget_tokens
            .is_some_and(|b| self.spent() >= b)
    }

    async fn steps(&mut self) -> Result<Stop, ExecError> {
        let root = Node::new(0, None, Step::AsIs, Prefix::default());
        let root = self.run_nodes(vec![root]).await?;
        self.report_step("as is", &root);
        if self.full() {
            return Ok(Stop::FullCoverage);
        }
        if self.options.standins {
            self.standins().await?;
            if self.full() {
                return Ok(Stop::FullCoverage);
            }
        }
        if !self.options.use_model {
            return Ok(Stop::StepsDone);
        }
        let first_prompt = self.prompts.render(
            "exec_undefined",
            serde_json::json!({
                "snippet": self.snippet.text.trim_end(),
                "names": self.snippet.undefined.name_list(),
                "attributes": self.snippet.undefined.attributes,
                "allow_missing": self.options.allow_missing,
            }),
        )?;

        let system = Message::system(self.prompts.render("exec_system", serde_json::json!({}))?);

        // Step 1.
        let step1 = if self.snippet.undefined.names.is_empty() {
            root
        } else {
            if self.out_of_budget() {
                return Ok(Stop::Budget);
            }
            let messages = vec![system.clone(), Message::user(first_prompt.clone())];
            let nodes = self
                .ask(&messages, CallPurpose::ExecUndefined, None, Step::Undefined)
                .await?;
            let ids = self.run_nodes(nodes).await?;
            self.report_step("step 1 (undefined names)", &ids);
            self.behind_standins(&ids).await?;
            ids
        };
        if self.full() {
            return Ok(Stop::FullCoverage);
        }

        // Step 2.
        for parent in self.to_refine(&step1) {
            if self.out_of_budget() {
                return Ok(Stop::Budget);
            }
            self.learn_names();
            let Some(node) = self.tree.get(parent) else {
                continue;
            };
            let error_prompt = self.error_prompt(node)?;
            let messages = vec![
                system.clone(),
                Message::user(first_prompt.clone()),
                Message::assistant(history_reply(node)?),
                Message::user(error_prompt),
            ];
            let nodes = self
                .ask(&messages, CallPurpose::ExecError, Some(parent), Step::Error)
                .await?;
            let ids = self.run_nodes(nodes).await?;
            self.report_step(&format!("step 2 (error of #{parent})"), &ids);
            self.behind_standins(&ids).await?;
            if self.full() {
                return Ok(Stop::FullCoverage);
            }
        }

        // Step 3.
        for round in 0..self.options.k {
            if self.full() {
                return Ok(Stop::FullCoverage);
            }
            if self.out_of_budget() {
                return Ok(Stop::Budget);
            }
            self.learn_names();
            // The model builds on its own prefixes: a stand-in prefix is not shown to it.
            let Some(best) = self.tree.best_where(|n| n.step != Step::StandIns) else {
                break;
            };
            let Some(best_node) = self.tree.get(best) else {
                break;
            };
            let coverage_prompt = self.prompts.render(
                "exec_coverage",
                serde_json::json!({
                    "annotated": annotate_uncovered(self.snippet, &self.tree.union()),
                    "allow_missing": self.options.allow_missing,
                    "names": self.names,
                }),
            )?;
            let messages = vec![
                system.clone(),
                Message::user(first_prompt.clone()),
                Message::assistant(history_reply(best_node)?),
                Message::user(coverage_prompt),
            ];
            let nodes = self
                .ask(
                    &messages,
                    CallPurpose::ExecCoverage,
                    Some(best),
                    Step::Coverage,
                )
                .await?;
            let ids = self.run_nodes(nodes).await?;
            self.report_step(&format!("step 3 (coverage, round {})", round + 1), &ids);
            self.behind_standins(&ids).await?;
        }
        Ok(if self.full() {
            Stop::FullCoverage
        } else {
            Stop::StepsDone
        })
    }

    /// Add the names runs reported as not defined to the names every reply initialises.
    fn learn_names(&mut self) {
        for node in &self.tree.nodes {
            let Some(Ending::SnippetError { error, message, .. }) =
                node.execution.as_ref().map(|e| &e.ending)
            else {
                continue;
            };
            if error != "NameError" && error != "UnboundLocalError" {
                continue;
            }
            let Some(name) = message.split('\'').nth(1) else {
                continue;
            };
            let identifier = !name.is_empty()
                && name.chars().all(|c| c.is_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            if identifier && !self.names.iter().any(|n| n == name) {
                self.names.push(name.to_string());
            }
        }
    }

    /// Nodes among `ids` whose run raised, one per distinct error, most coverage first, at
    /// most `n`.
    fn to_refine(&self, ids: &[usize]) -> Vec<usize> {
        let mut failing: Vec<&Node> = ids
            .iter()
            .filter_map(|&id| self.tree.get(id))
            .filter(|n| n.duplicate_of.is_none())
            .filter(|n| n.execution.as_ref().is_some_and(|e| !e.ending.finished()))
            .collect();
        failing.sort_by_key(|n| (std::cmp::Reverse(n.covered.len()), n.id));
        let mut seen = BTreeSet::new();
        failing
            .into_iter()
            .filter(|n| {
                let key = n
                    .execution
                    .as_ref()
                    .map(|e| format!("{:?}", e.ending))
                    .unwrap_or_default();
                seen.insert(key)
            })
            .map(|n| n.id)
            .take(self.options.n.max(1))
            .collect()
    }

    fn error_prompt(&self, node: &Node) -> Result<String, ExecError> {
        let ending = node
            .execution
            .as_ref()
            .map(|e| e.ending.clone())
            .unwrap_or(Ending::Timeout);
        let prefix_lines: Vec<&str> = node.prefix.code.lines().collect();
        let line_text = |lines: &[&str], line: Option<u32>| -> String {
            line.and_then(|l| lines.get((l as usize).checked_sub(1)?))
                .map(|t| t.trim().to_string())
                .unwrap_or_default()
        };
        let snippet_lines: Vec<&str> = self.snippet.text.lines().collect();
        let missing = ending.missing_module();
        let (in_prefix, line, code_line, error, message) = match &ending {
            Ending::PrefixError {
                error,
                message,
                line,
            } => (
                true,
                *line,
                line_text(&prefix_lines, *line),
                error.clone(),
                message.clone(),
            ),
            Ending::SnippetError {
                error,
                message,
                line,
                ..
            } => (
                false,
                *line,
                line_text(&snippet_lines, *line),
                error.clone(),
                message.clone(),
            ),
            Ending::Timeout => (
                false,
                None,
                String::new(),
                "Timeout".to_string(),
                "the run did not finish within the time limit".to_string(),
            ),
            Ending::Crashed { summary } => (
                false,
                None,
                String::new(),
                "Crash".to_string(),
                summary.clone(),
            ),
            Ending::Finished => (
                false,
                None,
                String::new(),
                "None".to_string(),
                "no error".to_string(),
            ),
        };
        Ok(self.prompts.render(
            "exec_error",
            serde_json::json!({
                "in_prefix": in_prefix,
                "line": line,
                "code_line": code_line,
                "error": error,
                "message": message,
                "missing_module": missing.unwrap_or_default(),
                "missing_file": ending.missing_file().unwrap_or_default(),
                "removed": node.removed_statements,
                "allow_missing": self.options.allow_missing,
                "names": self.names,
            }),
        )?)
    }

    /// `n` replies to `messages`, each turned into a node (not yet run).
    async fn ask(
        &mut self,
        messages: &[Message],
        purpose: CallPurpose,
        parent: Option<usize>,
        step: Step,
    ) -> Result<Vec<Node>, ExecError> {
        let mut nodes = Vec::new();
        for i in 0..self.options.n.max(1) {
            if i > 0 && self.out_of_budget() {
                break;
            }
            let mut request = ChatRequest::new(messages.to_vec());
            request.temperature = Some(if i == 0 {
                0.0
            } else {
                self.options.temperature
            });
            request.max_tokens = Some(self.options.max_reply_tokens);
            request.json_schema = Some(prefix_schema(&self.names));
            request.seed = Some(self.next_seed);
            self.next_seed = self.next_seed.wrapping_add(1);
            let started = Instant::now();
            let reply = self.model.chat(&request).await?;
            self.model_ms += ms(started.elapsed());
            self.calls.push(CallRecord {
                purpose,
                model: reply.model.clone(),
                prompt_tokens: reply.usage.prompt_tokens,
                completion_tokens: reply.usage.completion_tokens,
                cached_prompt_tokens: reply.usage.cached_prompt_tokens,
                latency_ms: ms(reply.latency),
                cached: reply.cached,
                attempts: reply.attempts,
            });
            let mut node = Node::new(0, parent.or(Some(0)), step, Prefix::default());
            node.reply = Some(reply.content.clone());
            match Prefix::from_reply(&reply.content, &self.names) {
                Ok((prefix, mut dropped)) => {
                    let (prefix, copies) = prefix.without_copies(&self.copies);
                    dropped.extend(copies);
                    node.proposed = prefix.clone();
                    node.prefix = prefix;
                    node.dropped_entries = dropped;
                }
                Err(e) => node.reply_problem = Some(e.to_string()),
            }
            nodes.push(node);
        }
        Ok(nodes)
    }

    /// Run every new node (post-processing prefixes that raise), add them to the tree, and
    /// return their ids. A prefix proposed before shares the earlier run.
    async fn run_nodes(&mut self, nodes: Vec<Node>) -> Result<Vec<usize>, ExecError> {
        let ids: Vec<usize> = nodes.into_iter().map(|n| self.tree.push(n)).collect();
        let mut to_run: Vec<usize> = Vec::new();
        for &id in &ids {
            let Some(node) = self.tree.get(id) else {
                continue;
            };
            if node.reply_problem.is_some() {
                continue;
            }
            let first = self
                .tree
                .nodes
                .iter()
                .find(|n| n.id < id && n.reply_problem.is_none() && n.proposed == node.proposed)
                .map(|n| n.id);
            match first {
                Some(first) => {
                    if let Some(n) = self.tree.nodes.get_mut(id) {
                        n.duplicate_of = Some(first);
                    }
                }
                None => to_run.push(id),
            }
        }
        let runner = self.runner.clone();
        let snippet = self.snippet.clone();
        let options = self.options.clone();
        let prefixes: Vec<Prefix> = to_run
            .iter()
            .filter_map(|&id| self.tree.get(id).map(|n| n.proposed.clone()))
            .collect();
        let started = Instant::now();
        let results = tokio::task::spawn_blocking(move || {
            in_parallel(&prefixes, runner.jobs(), |prefix| {
                run_with_cleanup(&runner, &snippet, prefix, &options)
            })
        })
        .await
        .map_err(|e| ExecError::Internal(format!("sandbox thread: {e}")))?;
        self.run_ms += ms(started.elapsed());
        for (&id, result) in to_run.iter().zip(results) {
            let Some(result) = result else {
                return Err(ExecError::Internal("a sandbox run was lost".into()));
            };
            let (prefix, removed, execution) = result?;
            if let Some(node) = self.tree.nodes.get_mut(id) {
                node.prefix = prefix;
                node.removed_statements = removed;
                node.covered = execution.finished.clone();
                node.execution = Some(execution);
            }
        }
        for &id in &ids {
            let Some(first) = self.tree.get(id).and_then(|n| n.duplicate_of) else {
                continue;
            };
            let Some(original) = self.tree.get(first).cloned() else {
                continue;
            };
            if let Some(node) = self.tree.nodes.get_mut(id) {
                node.prefix = original.prefix;
                node.removed_statements = original.removed_statements;
                node.covered = original.covered;
                node.execution = original.execution;
            }
        }
        Ok(ids)
    }

    fn report_step(&self, label: &str, ids: &[usize]) {
        let total = self.total();
        let runs: Vec<String> = ids
            .iter()
            .filter_map(|&id| self.tree.get(id))
            .map(|n| match (&n.reply_problem, &n.execution) {
                (Some(p), _) => format!("#{} no prefix ({p})", n.id),
                (None, Some(e)) => format!(
                    "#{} {}/{}{}",
                    n.id,
                    n.covered.len(),
                    total,
                    match &e.ending {
                        Ending::Finished => String::new(),
                        other => format!(" {}", short_ending(other)),
                    }
                ),
                (None, None) => format!("#{} not run", n.id),
            })
            .collect();
        (self.progress)(format!(
            "{label}: {} — union {}/{}",
            runs.join(", "),
            self.tree.union().len(),
            total
        ));
    }
}

/// What the model said for `node` (a prefix it proposed), for the conversation history; the
/// snippet as given (no reply) shows as an empty prefix.
fn history_reply(node: &Node) -> Result<String, ExecError> {
    match &node.reply {
        Some(reply) => Ok(reply.trim().to_string()),
        None => serde_json::to_string(&node.prefix.as_reply())
            .map_err(|e| ExecError::Internal(format!("cannot encode a prefix: {e}"))),
    }
}

fn ms(d: std::time::Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}
