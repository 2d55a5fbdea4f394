//! Trace units: what counts as "one step" at each level, derived from the program's CFG.
//!
//! Block level: a basic block. Line level: one statement (all of its lines). Function level: a
//! whole call. Each unit gets a program-wide id; every scope gets a line → unit table that the
//! worker's recorder uses to spot unit boundaries.

use serde::Serialize;

use super::{Level, ScopeUnits};
use crate::python::cfg::{BlockKind, ProgramCfg, ScopeKind};

/// Where a unit lives in the program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnitInfo {
    pub id: u32,
    pub scope: usize,
    /// Block number within the scope (absent at function level).
    pub block: Option<usize>,
    /// Statement index within the block (line level only).
    pub stmt: Option<usize>,
    /// Source line ranges the unit covers, merged.
    pub lines: Vec<(u32, u32)>,
}

#[derive(Debug, Clone)]
pub struct UnitMap {
    pub level: Level,
    units: Vec<UnitInfo>,
    scopes: Vec<ScopeUnits>,
}

impl UnitMap {
    /// Units for `level`. Module-level code and class bodies are traced only when
    /// `include_module` is set (scripts), since for a function under test they are just `def`s.
    pub fn build(cfg: &ProgramCfg, level: Level, include_module: bool, line_count: u32) -> Self {
        let table_len = line_count as usize + 1;
        let mut units: Vec<UnitInfo> = Vec::new();
        let mut scopes = Vec::new();
        for (si, scope) in cfg.scopes.iter().enumerate() {
            let module_time = matches!(scope.kind, ScopeKind::Module | ScopeKind::Class);
            if module_time && !include_module {
                continue;
            }
            let mut table = vec![0u32; table_len];
            let mut new_unit = |block, stmt, lines: Vec<(u32, u32)>| -> u32 {
                let id = units.len() as u32 + 1;
                units.push(UnitInfo {
                    id,
                    scope: si,
                    block,
                    stmt,
                    lines,
                });
                id
            };
            let function_unit = (level == Level::Function).then(|| {
                let header = if scope.kind == ScopeKind::Module {
                    Vec::new()
                } else {
                    vec![scope.def_lines]
                };
                new_unit(None, None, header)
            });
            for block in scope.graph.node_weights() {
                if block.kind != BlockKind::Code {
                    continue;
                }
                let block_unit = match level {
                    Level::Block => Some(new_unit(
                        Some(block.number),
                        None,
                        cfg.block_lines(si, block.number),
                    )),
                    _ => function_unit,
                };
                for (k, stmt) in block.stmts.iter().enumerate() {
                    let id = match block_unit {
                        Some(id) => id,
                        None => {
                            new_unit(Some(block.number), Some(k), vec![(stmt.first, stmt.last)])
                        }
                    };
                    for line in stmt.first..=stmt.last {
                        // The first statement on a shared line owns it (`if x: y()`).
                        if let Some(slot @ 0) = table.get_mut(line as usize) {
                            *slot = id;
                        }
                    }
                }
            }
            scopes.push(ScopeUnits {
                name: scope.name.clone(),
                first_line: if scope.kind == ScopeKind::Module {
                    1
                } else {
                    scope.def_lines.0
                },
                units: table,
            });
        }
        UnitMap {
            level,
            units,
            scopes,
        }
    }

    pub fn get(&self, id: u32) -> Option<&UnitInfo> {
        self.units.get((id as usize).checked_sub(1)?)
    }

    pub fn scopes(&self) -> &[ScopeUnits] {
        &self.scopes
    }

    pub fn len(&self) -> usize {
        self.units.len()
    }

    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }
}
