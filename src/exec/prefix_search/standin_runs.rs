//! The model-free part of the search ([`crate::exec::standins`]): the chosen variants, the
//! seeded runs while a statement is uncovered, and model prefixes that raised run again behind
//! stand-ins.

use super::Search;
use crate::exec::standins::{behind, seeded, standin_prefix, variants_to_run, BEHIND};
use crate::exec::tree::{Node, Step};
use crate::exec::ExecError;

impl Search<'_> {
    /// The chosen variants (one when no name is undefined), then the seeded runs.
    pub(super) async fn standins(&mut self) -> Result<(), ExecError> {
        let no_names = self.snippet.undefined.names.is_empty();
        let nodes = variants_to_run(no_names, self.options.all_variants)
            .into_iter()
            .map(|v| {
                let prefix = standin_prefix(&self.names, &self.snippet.undefined, v);
                Node::new(0, Some(0), Step::StandIns, prefix)
            })
            .collect();
        let ids = self.run_nodes(nodes).await?;
        self.report_step("stand-ins", &ids);
        if !no_names {
            self.explore().await?;
        }
        Ok(())
    }

    /// Seeded stand-in runs ([`seeded`]), eight at a time, until `explore` ran or every
    /// statement is covered. A random search over each place's first answer: on the held-out
    /// bodies it went on finding lines up to about 64 runs (docs/history.md, "`ldb exec`: seeded
    /// stand-in runs").
    async fn explore(&mut self) -> Result<(), ExecError> {
        const ROUND: usize = 8;
        let mut done = 0;
        while done < self.options.explore && !self.full() {
            let count = ROUND.min(self.options.explore - done);
            let nodes = (done..done + count)
                .map(|i| {
                    let v = seeded(u32::try_from(i + 1).unwrap_or(u32::MAX));
                    let prefix = standin_prefix(&self.names, &self.snippet.undefined, v);
                    Node::new(0, Some(0), Step::StandIns, prefix)
                })
                .collect();
            done += count;
            let ids = self.run_nodes(nodes).await?;
            self.report_step("stand-ins, seeded", &ids);
        }
        Ok(())
    }

    /// Every model prefix among `ids` whose run raised, run again behind stand-ins
    /// ([`behind`]); never shown to the model.
    pub(super) async fn behind_standins(&mut self, ids: &[usize]) -> Result<(), ExecError> {
        if !self.options.standins || self.full() {
            return Ok(());
        }
        let raised = |n: &&Node| {
            n.duplicate_of.is_none() && n.execution.as_ref().is_some_and(|e| !e.ending.finished())
        };
        let nodes: Vec<Node> = ids
            .iter()
            .filter_map(|&id| self.tree.get(id))
            .filter(raised)
            .flat_map(|n| {
                BEHIND.map(|v| {
                    let prefix = behind(&self.names, &self.snippet.undefined, &n.prefix, v);
                    Node::new(0, Some(n.id), Step::StandIns, prefix)
                })
            })
            .collect();
        if !nodes.is_empty() {
            let ids = self.run_nodes(nodes).await?;
            self.report_step("stand-ins behind", &ids);
        }
        Ok(())
    }
}
