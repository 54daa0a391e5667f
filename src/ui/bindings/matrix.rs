//! The bindings matrix: the start-up file's notice, save bar, the grid of
//! checkboxes (tools in columns grouped by category, Global then each
//! workflow in rows), the tools each workflow ends up with, and the panels
//! under it (labels, history, file, catalogue).
//!
//! Cells are built once and each reads only its own per-cell signals (see
//! [`Grid`]), so a click updates a few attributes instead of re-rendering a
//! 30 × 100 table.

use crate::api::bindings::{MatrixData, SaveBindings};
use crate::domain::bindings::{
    matrix_rows, saved_message, BindingsDiff, MatrixRow, ToolBindings, GLOBAL_SCOPE,
};
use crate::domain::catalogue::{by_category, known_checks, Workflow, WORKFLOW_SWITCH_TOOL};
use crate::ui::bindings::catalogue::CatalogueEditor;
use crate::ui::bindings::file_exchange::FileExchange;
use crate::ui::bindings::file_notice::FileNotice;
use crate::ui::bindings::grid::{cell, CellSignals, Grid};
use crate::ui::bindings::history::History;
use crate::ui::bindings::labels::LabelEditor;
use crate::ui::bindings::Fetches;
use crate::ui::components::guard_unsaved;
use crate::ui::components::{SaveMessage, SaveStatus};
use crate::ui::current;
use leptos::prelude::*;
use std::collections::HashSet;

/// What the server would refuse in `edited`, said as it is edited, by the
/// rules the save runs (`ToolBindings::validate` against the catalogue's
/// tools and the workflows, `StateLabels::problems` against the checks
/// the tools set): a file from elsewhere naming unknown tools, a label
/// that breaks its rule. Save stays off while there are any.
fn refusals_of(data: &MatrixData, edited: RwSignal<ToolBindings>) -> Memo<Vec<String>> {
    let tools: HashSet<String> = data.tools.iter().map(|t| t.id.to_string()).collect();
    let workflows: HashSet<String> = data.workflows.iter().map(|w| w.id.to_string()).collect();
    let known = StoredValue::new((tools, workflows, known_checks(&data.tools)));
    Memo::new(move |_| {
        edited.with(|b| {
            known.with_value(|(tools, workflows, checks)| {
                let refused = b.validate(tools, workflows).err().unwrap_or_default();
                refused
                    .into_iter()
                    .chain(b.labels.problems(checks))
                    .map(|p| p.message)
                    .collect()
            })
        })
    })
}

/// The loaded matrix: owns the saved and the edited document, the version
/// and the save, and asks before unsaved changes are left behind.
#[component]
pub fn Matrix(data: MatrixData, fetched: Fetches) -> impl IntoView {
    let Fetches {
        history,
        file,
        reload,
        saves,
    } = fetched;
    let saved = RwSignal::new(data.current.bindings.clone());
    let edited = RwSignal::new(data.current.bindings.clone());
    let version = RwSignal::new(data.current.meta.version);
    let diff = Memo::new(move |_| saved.with(|s| edited.with(|e| BindingsDiff::between(s, e))));
    let dirty = move || !diff.with(BindingsDiff::is_empty);
    let refusals = refusals_of(&data, edited);
    let groups = StoredValue::new(by_category(&data.tools));
    let rows = StoredValue::new(matrix_rows(&data.workflows));
    let tools = StoredValue::new(data.tools.clone());
    let withheld = StoredValue::new(data.withheld.clone());
    let workflows = StoredValue::new(data.workflows.clone());
    let catalogue_version = data.catalogue_version;

    let save = ServerAction::<SaveBindings>::new();
    let (save_result, saving) = (save.value(), save.pending());
    let message: SaveMessage = RwSignal::new(None);
    Effect::new(move |_| {
        if let Some(result) = current(&save_result) {
            match result {
                Ok(outcome) => {
                    version.set(outcome.version);
                    saves.update(|n| *n += 1);
                    let stored = edited.get_untracked();
                    saved.set(stored);
                    message.set(Some(Ok(saved_message(outcome.version, &outcome.notes))));
                }
                Err(e) => message.set(Some(Err(e))),
            }
        }
    });

    // Leaving with unsaved changes asks first.
    guard_unsaved(move || diff.try_with_untracked(|d| !d.is_empty()).unwrap_or(false));

    let tool_ids: Vec<String> = data.tools.iter().map(|t| t.id.to_string()).collect();
    let scope_ids: Vec<String> = rows.with_value(|r| r.iter().map(|r| r.scope.clone()).collect());
    let own = Grid::new(&data.current.bindings, &scope_ids, &tool_ids);
    let was = Grid::new(&data.current.bindings, &scope_ids, &tool_ids);
    own.follow(edited);
    was.follow(saved);
    let columns = move || groups.get_value().into_iter().flat_map(|(_, list)| list);

    view! {
        <FileNotice file version saved edited reload />
        <section class="panel matrix-panel">
            <div class="split save-bar-wrap">
                <div class="muted small" data-testid="bindings-version">
                    {move || format!("Version {}", version.get())}
                </div>
                <div class="save-bar">
                    <span class="badge" class:warn=dirty data-testid="change-summary">
                        {move || if dirty() { diff.with(BindingsDiff::counts) } else { "No unsaved changes".into() }}
                    </span>
                    <button
                        type="button"
                        class="button"
                        disabled=move || !dirty()
                        on:click=move |_| {
                            edited.set(saved.get_untracked());
                            message.set(None);
                        }
                    >
                        "Discard"
                    </button>
                    <button
                        type="button"
                        class="button primary"
                        data-testid="save-bindings"
                        disabled=move || {
                            saving.try_get().unwrap_or(true) || !dirty()
                                || refusals.with(|r| !r.is_empty())
                        }
                        on:click=move |_| {
                            message.set(None);
                            save.dispatch(SaveBindings {
                                version: version.get_untracked(),
                                bindings: edited.get_untracked(),
                            });
                        }
                    >
                        {move || if saving.try_get().unwrap_or(false) { "Saving…" } else { "Save" }}
                    </button>
                </div>
            </div>
            <SaveStatus message testid="bindings-status" reload="/bindings" />
            {move || {
                refusals
                    .with(|r| (!r.is_empty()).then(|| r.join("; ")))
                    .map(|words| {
                        view! {
                            <p class="error" role="alert" data-testid="bindings-problems">
                                "Not saved until fixed: "
                                {words}
                            </p>
                        }
                    })
            }}
            <div class="matrix-scroll">
                <table class="matrix" data-testid="matrix">
                    <thead>
                        <tr>
                            <th rowspan="2" class="corner">"Workflow"</th>
                            {groups
                                .get_value()
                                .into_iter()
                                .map(|(category, list)| {
                                    view! { <th colspan=list.len().to_string() class="category">{category}</th> }
                                })
                                .collect_view()}
                        </tr>
                        <tr>
                            {columns()
                                .map(|t| {
                                    let why = withheld.with_value(|w| w.get(t.id.as_str()).cloned());
                                    let title = match &why {
                                        Some(why) => format!("Unavailable: {why}. {}", t.description),
                                        None => t.description.clone(),
                                    };
                                    view! {
                                        <th class="tool-col" class:withheld=why.is_some() title=title data-withheld=why>
                                            <span>{t.id.to_string()}</span>
                                        </th>
                                    }
                                })
                                .collect_view()}
                        </tr>
                    </thead>
                    <tbody>
                        {rows
                            .get_value()
                            .into_iter()
                            .map(|MatrixRow { scope, name, description }| {
                                let is_global = scope == GLOBAL_SCOPE;
                                view! {
                                    <tr class:global-row=is_global data-scope=scope.clone()>
                                        <th class="row-head" title=description>
                                            {name}
                                        </th>
                                        {columns()
                                            .map(|t| {
                                                let tool = t.id.to_string();
                                                let implied = (!is_global).then(|| own.at(GLOBAL_SCOPE, &tool));
                                                let signals = CellSignals {
                                                    own: own.at(&scope, &tool),
                                                    was: was.at(&scope, &tool),
                                                    implied,
                                                };
                                                cell(scope.clone(), tool, signals, edited)
                                            })
                                            .collect_view()}
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
            </div>
            <p class="muted small">
                "A tool checked in Global shows as implied (dimmed) in every workflow. "
                <code>{WORKFLOW_SWITCH_TOOL}</code>
                " cannot leave Global: without it an agent could never leave a workflow."
            </p>
            {(!withheld.with_value(|w| w.is_empty()))
                .then(|| {
                    view! {
                        <p class="muted small" data-testid="withheld-note">
                            "A struck-through tool is unavailable (its MCP server no longer lists it, or was removed): it stays bound, but no session is offered it until it is back."
                        </p>
                    }
                })}
        </section>
        <ResultingTools workflows=workflows.get_value() edited />
        <LabelEditor edited tools=tools.get_value() />
        <div class="two-col">
            <History history version saved edited reload />
            <FileExchange edited />
        </div>
        <CatalogueEditor tools=tools.get_value() workflows=workflows.get_value() catalogue_version reload />
    }
    .into_any()
}

/// What each workflow's agent gets from the edited document (Global's tools
/// plus its own), updated as cells are clicked, before saving.
#[component]
fn ResultingTools(workflows: Vec<Workflow>, edited: RwSignal<ToolBindings>) -> impl IntoView {
    let workflows = StoredValue::new(workflows);
    view! {
        <section class="panel">
            <h2>"What each workflow's agent gets"</h2>
            <dl class="resulting" data-testid="resulting-tools">
                {move || {
                    workflows
                        .get_value()
                        .into_iter()
                        .map(|w| {
                            let id = w.id.to_string();
                            let list = edited.with(|b| b.available_in(&id));
                            view! {
                                <div data-workflow=id.clone()>
                                    <dt>{w.name.clone()}</dt>
                                    <dd>
                                        {list.into_iter().map(|t| view! { <span class="chip static">{t}</span> }).collect_view()}
                                    </dd>
                                </div>
                            }
                        })
                        .collect_view()
                }}
            </dl>
        </section>
    }
}
