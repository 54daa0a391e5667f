//! The matrix's cells: one signal per cell and the checkbox that shows it.

use crate::domain::bindings::{ToolBindings, GLOBAL_SCOPE};
use crate::domain::catalogue::WORKFLOW_SWITCH_TOOL;
use leptos::prelude::*;
use std::collections::HashMap;

/// One boolean signal per cell, mirroring a bindings document.
///
/// Cells must not each subscribe to the whole document: with 3,000 cells on
/// one signal, every change made the reactive graph re-subscribe thousands
/// of memos, each removal shifting its subscriber list (quadratic: ~2 s
/// per click in a debug build at 30 × 100). Instead one effect per document
/// walks the grid and sets only the cells whose value flipped.
#[derive(Clone, Copy)]
pub struct Grid(StoredValue<HashMap<(String, String), RwSignal<bool>>>);

impl Grid {
    /// A signal for every (scope, tool) pair, set as in `doc`.
    pub fn new(doc: &ToolBindings, scopes: &[String], tools: &[String]) -> Self {
        let cells = scopes
            .iter()
            .flat_map(|s| tools.iter().map(move |t| (s.clone(), t.clone())))
            .map(|(s, t)| {
                let on = doc.has(&s, &t);
                ((s, t), RwSignal::new(on))
            })
            .collect();
        Self(StoredValue::new(cells))
    }

    /// Follows `doc` from now on.
    pub fn follow(self, doc: RwSignal<ToolBindings>) {
        Effect::new(move |_| {
            doc.with(|b| {
                self.0.with_value(|cells| {
                    for ((s, t), cell) in cells {
                        let on = b.has(s, t);
                        if cell.get_untracked() != on {
                            cell.set(on);
                        }
                    }
                })
            })
        });
    }

    /// The signal of `tool` in `scope`.
    pub fn at(self, scope: &str, tool: &str) -> RwSignal<bool> {
        self.0
            .with_value(|cells| cells[&(scope.to_owned(), tool.to_owned())])
    }
}

/// What one cell reads: its own state in the edited and saved documents,
/// and (outside Global) whether the tool is global, which implies it.
pub struct CellSignals {
    /// Checked in the edited document.
    pub own: RwSignal<bool>,
    /// Checked in the saved document (differing marks the cell changed).
    pub was: RwSignal<bool>,
    /// The same tool in Global, for cells outside it.
    pub implied: Option<RwSignal<bool>>,
}

/// One checkbox: `tool` in `scope`. Checking it changes `edited` and its own
/// signal only; `start_workflow` in Global is locked, and a tool checked in
/// Global shows (dimmed, disabled) as implied in every workflow.
pub fn cell(
    scope: String,
    tool: String,
    signals: CellSignals,
    edited: RwSignal<ToolBindings>,
) -> impl IntoView {
    let CellSignals { own, was, implied } = signals;
    let locked = scope == GLOBAL_SCOPE && tool == WORKFLOW_SWITCH_TOOL;
    let key = StoredValue::new((scope.clone(), tool.clone()));
    let implied = move || implied.is_some_and(|g| g.get());
    let checked = move || own.get() || implied();
    let changed = move || own.get() != was.get();
    let label = format!("{tool} in {scope}");
    let title = if locked {
        "start_workflow must stay global: without it an agent could get stuck inside a workflow"
            .to_owned()
    } else {
        label.clone()
    };
    view! {
        <td class="cell" class:changed=changed class:implied=implied>
            <input
                type="checkbox"
                aria-label=label
                title=title
                data-cell=format!("{scope}/{tool}")
                checked=own.get_untracked()
                prop:checked=checked
                disabled=move || locked || implied()
                on:change=move |ev| {
                    let on = event_target_checked(&ev);
                    own.set(on);
                    key.with_value(|(s, t)| edited.update(|b| b.set(s, t, on)));
                }
            />
        </td>
    }
}
