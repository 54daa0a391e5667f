//! `/bindings`: the admin's matrix of which tools are global and which belong
//! to each workflow, with unsaved-change tracking, history and restore, the
//! resulting tool list per workflow, and catalogue management.
//!
//! Cells are built once and each reads only its own per-cell signals (see
//! [`Grid`]), so a click updates a few attributes instead of re-rendering a
//! 30 × 100 table.

use crate::api::bindings::{
    bindings_history, bindings_matrix, get_bindings_version, MatrixData, RestoreBindings,
    SaveBindings, SaveTool, SaveWorkflow,
};
use crate::domain::bindings::{BindingsDiff, ToolBindings, VersionMeta};
use crate::domain::catalogue::{CatalogueTool, ToolId, Workflow, WorkflowId, WORKFLOW_SWITCH_TOOL};
use crate::domain::time::format_utc;
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::ui::auth::{RequireRole, UnsavedChanges};
use crate::ui::current;
use leptos::prelude::*;
use std::collections::{BTreeMap, HashMap};

/// One boolean signal per cell, mirroring a bindings document.
///
/// Cells must not each subscribe to the whole document: with 3,000 cells on
/// one signal, every change made the reactive graph re-subscribe thousands
/// of memos, each removal shifting its subscriber list (quadratic: ~2 s
/// per click in a debug build at 30 × 100). Instead one effect per document
/// walks the grid and sets only the cells whose value flipped.
#[derive(Clone, Copy)]
struct Grid(StoredValue<HashMap<(String, String), RwSignal<bool>>>);

impl Grid {
    fn new(doc: &ToolBindings, scopes: &[String], tools: &[String]) -> Self {
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
    fn follow(self, doc: RwSignal<ToolBindings>) {
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

    fn at(self, scope: &str, tool: &str) -> RwSignal<bool> {
        self.0
            .with_value(|cells| cells[&(scope.to_owned(), tool.to_owned())])
    }
}

/// The page: admins only. Resources are created here, outside the role
/// guard's reactive children, so server rendering and hydration create them
/// in the same order.
#[component]
pub fn BindingsPage() -> impl IntoView {
    let reload = RwSignal::new(0u32);
    let saves = RwSignal::new(0u32);
    let matrix = Resource::new(move || reload.get(), |_| bindings_matrix());
    let history = Resource::new(move || (reload.get(), saves.get()), |_| bindings_history());
    view! {
        <RequireRole role=Role::Admin>
            <BindingsArea matrix history reload saves />
        </RequireRole>
    }
}

type Loaded<T> = Resource<Result<T, ApiError>>;

#[component]
fn BindingsArea(
    matrix: Loaded<MatrixData>,
    history: Loaded<Vec<VersionMeta>>,
    reload: RwSignal<u32>,
    saves: RwSignal<u32>,
) -> impl IntoView {
    view! {
        <section class="page-head">
            <h1>"Tool bindings"</h1>
            <p class="muted">
                "Global tools are available in every workflow; the rest only in the workflows they are bound to. An agent in Disputes never gets the Mortgage Calculator unless you bind it there."
            </p>
        </section>
        <Transition fallback=|| view! { <p class="muted">"Loading bindings…"</p> }>
            {move || {
                current(&matrix)
                    .map(|result| match result {
                        Ok(data) => view! { <Matrix data history reload saves /> }.into_any(),
                        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    })
            }}
        </Transition>
    }
}

/// Tools grouped by category, in catalogue order of first appearance.
fn by_category(tools: &[CatalogueTool]) -> Vec<(String, Vec<CatalogueTool>)> {
    let mut groups: Vec<(String, Vec<CatalogueTool>)> = Vec::new();
    for tool in tools {
        match groups.iter_mut().find(|(c, _)| *c == tool.category) {
            Some((_, list)) => list.push(tool.clone()),
            None => groups.push((tool.category.clone(), vec![tool.clone()])),
        }
    }
    groups
}

#[component]
fn Matrix(
    data: MatrixData,
    history: Loaded<Vec<VersionMeta>>,
    reload: RwSignal<u32>,
    saves: RwSignal<u32>,
) -> impl IntoView {
    let saved = RwSignal::new(data.current.bindings.clone());
    let edited = RwSignal::new(data.current.bindings.clone());
    let version = RwSignal::new(data.current.meta.version);
    let diff = Memo::new(move |_| saved.with(|s| edited.with(|e| BindingsDiff::between(s, e))));
    let dirty = move || !diff.with(BindingsDiff::is_empty);
    let groups = StoredValue::new(by_category(&data.tools));
    let tools = StoredValue::new(data.tools.clone());
    let workflows = StoredValue::new(data.workflows.clone());

    let save = ServerAction::<SaveBindings>::new();
    let (save_result, saving) = (save.value(), save.pending());
    let message = RwSignal::new(None::<Result<String, ApiError>>);
    Effect::new(move |_| {
        if let Some(result) = current(&save_result) {
            match result {
                Ok(outcome) => {
                    version.set(outcome.version);
                    saves.update(|n| *n += 1);
                    let stored = edited.get_untracked();
                    saved.set(stored);
                    let mut text = format!("Saved as version {}.", outcome.version);
                    for note in outcome.notes {
                        text.push(' ');
                        text.push_str(&note);
                        text.push('.');
                    }
                    message.set(Some(Ok(text)));
                }
                Err(e) => message.set(Some(Err(e))),
            }
        }
    });

    // Leaving with unsaved changes asks first.
    #[cfg(feature = "hydrate")]
    {
        let handle = window_event_listener(leptos::ev::beforeunload, move |ev| {
            if !diff.with_untracked(BindingsDiff::is_empty) {
                ev.prevent_default();
                ev.set_return_value("You have unsaved binding changes.");
            }
        });
        on_cleanup(move || handle.remove());
    }

    // In-app links ask too (see `confirm_leave`).
    if let Some(unsaved) = use_context::<UnsavedChanges>() {
        Effect::new(move |_| unsaved.0.set(dirty()));
        on_cleanup(move || unsaved.0.set(false));
    }

    let scopes = move || {
        let mut rows = vec![(
            "global".to_owned(),
            "Global".to_owned(),
            "Available in every workflow".to_owned(),
        )];
        rows.extend(
            workflows
                .get_value()
                .into_iter()
                .map(|w| (w.id.to_string(), w.name.clone(), w.description.clone())),
        );
        rows
    };
    let tool_ids: Vec<String> = data.tools.iter().map(|t| t.id.to_string()).collect();
    let scope_ids: Vec<String> = scopes().into_iter().map(|(id, _, _)| id).collect();
    let own = Grid::new(&data.current.bindings, &scope_ids, &tool_ids);
    let was = Grid::new(&data.current.bindings, &scope_ids, &tool_ids);
    own.follow(edited);
    was.follow(saved);

    view! {
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
                        disabled=move || saving.try_get().unwrap_or(true) || !dirty()
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
            {move || {
                message
                    .get()
                    .map(|m| match m {
                        Ok(text) => view! { <p class="ok" role="status" data-testid="bindings-status">{text}</p> }.into_any(),
                        Err(ApiError::Conflict(text)) => {
                            view! {
                                <p class="error" role="alert" data-testid="bindings-status">
                                    {text}
                                    " "
                                    <a href="/bindings" rel="external">"Reload"</a>
                                </p>
                            }
                                .into_any()
                        }
                        Err(e) => view! { <p class="error" role="alert" data-testid="bindings-status">{e.to_string()}</p> }.into_any(),
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
                            {groups
                                .get_value()
                                .into_iter()
                                .flat_map(|(_, list)| list)
                                .map(|t| {
                                    view! {
                                        <th class="tool-col" title=t.description.clone()>
                                            <span>{t.id.to_string()}</span>
                                        </th>
                                    }
                                })
                                .collect_view()}
                        </tr>
                    </thead>
                    <tbody>
                        {scopes()
                            .into_iter()
                            .map(|(scope, name, description)| {
                                let is_global = scope == "global";
                                view! {
                                    <tr class:global-row=is_global data-scope=scope.clone()>
                                        <th class="row-head" title=description>
                                            {name}
                                        </th>
                                        {groups
                                            .get_value()
                                            .into_iter()
                                            .flat_map(|(_, list)| list)
                                            .map(|t| {
                                                let tool = t.id.to_string();
                                                let implied = (!is_global).then(|| own.at("global", &tool));
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
        </section>
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
        <div class="two-col">
            <History history version saved edited reload />
            <FileExchange edited />
        </div>
        <CatalogueEditor tools=tools.get_value() workflows=workflows.get_value() reload />
    }
    .into_any()
}

/// What one cell reads: its own state in the edited and saved documents,
/// and (outside Global) whether the tool is global, which implies it.
struct CellSignals {
    own: RwSignal<bool>,
    was: RwSignal<bool>,
    implied: Option<RwSignal<bool>>,
}

/// One checkbox: `tool` in `scope`.
fn cell(
    scope: String,
    tool: String,
    signals: CellSignals,
    edited: RwSignal<ToolBindings>,
) -> impl IntoView {
    let CellSignals { own, was, implied } = signals;
    let locked = scope == "global" && tool == WORKFLOW_SWITCH_TOOL;
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

/// Saved versions: who, when, what; diff against the current one; restore.
#[component]
fn History(
    history: Loaded<Vec<VersionMeta>>,
    version: RwSignal<i64>,
    saved: RwSignal<ToolBindings>,
    edited: RwSignal<ToolBindings>,
    reload: RwSignal<u32>,
) -> impl IntoView {
    let restore = ServerAction::<RestoreBindings>::new();
    let (restore_result, restoring) = (restore.value(), restore.pending());
    let viewing = RwSignal::new(None::<(i64, Result<BindingsDiff, String>)>);
    Effect::new(move |_| {
        if let Some(Ok(_)) = current(&restore_result) {
            reload.update(|n| *n += 1);
        }
    });
    let show_diff = move |v: i64| {
        leptos::task::spawn_local(async move {
            // `try_`: the page may have been left while the version loaded.
            let result = match get_bindings_version(v).await {
                Ok(old) => match saved
                    .try_with_untracked(|now| BindingsDiff::between(now, &old.bindings))
                {
                    Some(diff) => Ok(diff),
                    None => return,
                },
                Err(e) => Err(e.to_string()),
            };
            viewing.set(Some((v, result)));
        });
    };
    view! {
        <section class="panel" data-testid="history">
            <h2>"History"</h2>
            {move || {
                current(&restore_result)
                    .and_then(Result::err)
                    .map(|e| view! { <p class="error" role="alert">{e.to_string()}</p> })
            }}
            <Transition fallback=|| view! { <p class="muted">"Loading history…"</p> }>
                {move || {
                    current(&history)
                        .map(|result| match result {
                            Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                            Ok(list) => {
                                view! {
                                    <ol class="history">
                                        {list
                                            .into_iter()
                                            .map(|meta| {
                                                let v = meta.version;
                                                let current = v == version.get_untracked();
                                                view! {
                                                    <li data-version=v>
                                                        <div>
                                                            <strong>{format!("v{v}")}</strong>
                                                            <span>{format!(" · {} · {}", meta.author, format_utc(meta.created_at))}</span>
                                                            <span class="badge" class:hidden=!current>"current"</span>
                                                        </div>
                                                        <div class="muted small">{meta.summary.clone()}</div>
                                                        <div class="history-actions">
                                                            <button
                                                                type="button"
                                                                class="button ghost small"
                                                                on:click=move |_| show_diff(v)
                                                            >
                                                                "View diff"
                                                            </button>
                                                            <button
                                                                type="button"
                                                                class="button ghost small"
                                                                disabled=move || current || restoring.try_get().unwrap_or(true)
                                                                on:click=move |_| {
                                                                    if edited.with_untracked(|e| saved.with_untracked(|s| e != s)) {
                                                                        let ok = window()
                                                                            .confirm_with_message("Discard your unsaved changes and restore this version?")
                                                                            .unwrap_or(false);
                                                                        if !ok {
                                                                            return;
                                                                        }
                                                                    }
                                                                    restore.dispatch(RestoreBindings {
                                                                        restore: v,
                                                                        current: version.get_untracked(),
                                                                    });
                                                                }
                                                            >
                                                                "Restore"
                                                            </button>
                                                        </div>
                                                    </li>
                                                }
                                            })
                                            .collect_view()}
                                    </ol>
                                }
                                    .into_any()
                            }
                        })
                }}
            </Transition>
            {move || {
                viewing
                    .get()
                    .map(|(v, result)| match result {
                        Err(e) => view! { <p class="error">{e}</p> }.into_any(),
                        Ok(diff) => {
                            let line = |pairs: Vec<(String, String)>, sign: &'static str| {
                                pairs
                                    .into_iter()
                                    .map(|(s, t)| view! { <li class=format!("diff-{sign}")>{format!("{sign} {t} in {s}")}</li> })
                                    .collect_view()
                            };
                            view! {
                                <div class="diff" data-testid="diff">
                                    <h3>{format!("Restoring v{v} would change the current version by {}", diff.counts())}</h3>
                                    <ul>{line(diff.added, "+")} {line(diff.removed, "−")}</ul>
                                </div>
                            }
                                .into_any()
                        }
                    })
            }}
        </section>
    }
}

/// Download the saved document; load one from a file into the matrix (then
/// review and save it like any other change).
#[component]
fn FileExchange(edited: RwSignal<ToolBindings>) -> impl IntoView {
    let problem = RwSignal::new(None::<String>);
    let on_file = move |ev: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let input: Option<web_sys::HtmlInputElement> =
                ev.target().and_then(|t| t.dyn_into().ok());
            let Some(file) = input.and_then(|i| i.files()).and_then(|f| f.get(0)) else {
                return;
            };
            leptos::task::spawn_local(async move {
                let text = wasm_bindgen_futures::JsFuture::from(file.text()).await;
                match text.ok().and_then(|t| t.as_string()) {
                    Some(text) => match serde_json::from_str::<ToolBindings>(&text) {
                        Ok(doc) => {
                            edited.set(doc);
                            problem.set(None);
                        }
                        Err(e) => problem.set(Some(format!("Not a tool-bindings document: {e}"))),
                    },
                    None => problem.set(Some("The file could not be read.".into())),
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (ev, edited);
    };
    view! {
        <section class="panel">
            <h2>"tool-bindings.json"</h2>
            <p>
                <a class="button" href="/bindings/tool-bindings.json" download="tool-bindings.json" rel="external">
                    "Download current version"
                </a>
            </p>
            <label class="field">
                <span>"Load a file into the matrix (review, then Save)"</span>
                <input type="file" accept=".json,application/json" data-testid="upload-bindings" on:change=on_file />
            </label>
            {move || problem.get().map(|p| view! { <p class="error">{p}</p> })}
        </section>
    }
}

/// Add or edit catalogue tools and workflows, with errors next to fields.
#[component]
fn CatalogueEditor(
    tools: Vec<CatalogueTool>,
    workflows: Vec<Workflow>,
    reload: RwSignal<u32>,
) -> impl IntoView {
    let save_tool = ServerAction::<SaveTool>::new();
    let save_workflow = ServerAction::<SaveWorkflow>::new();
    let (tool_saved, workflow_saved) = (save_tool.value(), save_workflow.value());
    let tool_form = RwSignal::new(BTreeMap::<&'static str, String>::new());
    let tool_create = RwSignal::new(true);
    let tool_errors = RwSignal::new(BTreeMap::<String, String>::new());
    let wf_form = RwSignal::new(BTreeMap::<&'static str, String>::new());
    let wf_create = RwSignal::new(true);
    let wf_errors = RwSignal::new(BTreeMap::<String, String>::new());
    let all_tools = StoredValue::new(tools);

    Effect::new(move |_| match current(&tool_saved) {
        Some(Ok(())) => {
            tool_form.set(BTreeMap::new());
            tool_create.set(true);
            reload.update(|n| *n += 1);
        }
        Some(Err(ApiError::Invalid(e))) => {
            tool_errors.set(BTreeMap::from([(e.field.clone(), e.rule.clone())]))
        }
        Some(Err(e)) => tool_errors.set(BTreeMap::from([("form".to_owned(), e.to_string())])),
        None => {}
    });
    Effect::new(move |_| match current(&workflow_saved) {
        Some(Ok(())) => {
            wf_form.set(BTreeMap::new());
            wf_create.set(true);
            reload.update(|n| *n += 1);
        }
        Some(Err(ApiError::Invalid(e))) => {
            wf_errors.set(BTreeMap::from([(e.field.clone(), e.rule.clone())]))
        }
        Some(Err(e)) => wf_errors.set(BTreeMap::from([("form".to_owned(), e.to_string())])),
        None => {}
    });

    let submit_tool = move |_| {
        let f = tool_form.get_untracked();
        let get = |k: &str| f.get(k).cloned().unwrap_or_default();
        let mut errors = BTreeMap::new();
        let id = ToolId::parse(get("id").trim())
            .map_err(|e| errors.insert("id".to_owned(), e.rule))
            .ok();
        let raw = get("parameters");
        let parameters = if raw.trim().is_empty() {
            Some(serde_json::json!({"type": "object", "properties": {}}))
        } else {
            serde_json::from_str(&raw)
                .map_err(|e| errors.insert("parameters".to_owned(), format!("is not JSON: {e}")))
                .ok()
        };
        if let (Some(id), Some(parameters)) = (id, parameters) {
            let tool = CatalogueTool {
                id,
                name: get("name"),
                description: get("description"),
                category: get("category"),
                parameters,
            };
            for p in tool.problems() {
                errors.entry(p.field).or_insert(p.rule);
            }
            if errors.is_empty() {
                save_tool.dispatch(SaveTool {
                    tool,
                    create: tool_create.get_untracked(),
                });
            }
        }
        tool_errors.set(errors);
    };
    let submit_workflow = move |_| {
        let f = wf_form.get_untracked();
        let get = |k: &str| f.get(k).cloned().unwrap_or_default();
        let mut errors = BTreeMap::new();
        if let Ok(id) =
            WorkflowId::parse(get("id").trim()).map_err(|e| errors.insert("id".to_owned(), e.rule))
        {
            let workflow = Workflow {
                id,
                name: get("name"),
                description: get("description"),
            };
            for p in workflow.problems() {
                errors.entry(p.field).or_insert(p.rule);
            }
            if errors.is_empty() {
                save_workflow.dispatch(SaveWorkflow {
                    workflow,
                    create: wf_create.get_untracked(),
                });
            }
        }
        wf_errors.set(errors);
    };

    let input = move |form: RwSignal<BTreeMap<&'static str, String>>,
                      errors: RwSignal<BTreeMap<String, String>>,
                      key: &'static str,
                      label: &'static str,
                      prefix: &'static str,
                      multiline: bool| {
        let id = format!("{prefix}-{key}");
        let value = move || form.with(|f| f.get(key).cloned().unwrap_or_default());
        let on_input = move |ev| {
            let v = event_target_value(&ev);
            form.update(|f| {
                f.insert(key, v);
            });
        };
        view! {
            <div class="field">
                <label for=id.clone()>{label}</label>
                {if multiline {
                    view! { <textarea id=id rows="4" prop:value=value on:input=on_input></textarea> }.into_any()
                } else {
                    view! { <input id=id type="text" prop:value=value on:input=on_input /> }.into_any()
                }}
                {move || errors.with(|e| e.get(key).cloned()).map(|e| view! { <span class="field-error">{e}</span> })}
            </div>
        }
    };

    view! {
        <section class="panel" data-testid="catalogue">
            <h2>"Catalogue"</h2>
            <div class="two-col">
                <div>
                    <h3>{move || if tool_create.get() { "Add a tool" } else { "Edit tool" }}</h3>
                    <select
                        aria-label="Edit an existing tool"
                        on:change=move |ev| {
                            let id = event_target_value(&ev);
                            if let Some(t) = all_tools.get_value().into_iter().find(|t| t.id.as_str() == id) {
                                tool_form
                                    .set(
                                        BTreeMap::from([
                                            ("id", t.id.to_string()),
                                            ("name", t.name.clone()),
                                            ("description", t.description.clone()),
                                            ("category", t.category.clone()),
                                            ("parameters", serde_json::to_string_pretty(&t.parameters).unwrap_or_default()),
                                        ]),
                                    );
                                tool_create.set(false);
                            } else {
                                tool_form.set(BTreeMap::new());
                                tool_create.set(true);
                            }
                            tool_errors.set(BTreeMap::new());
                        }
                    >
                        <option value="">"New tool…"</option>
                        {all_tools
                            .get_value()
                            .into_iter()
                            .map(|t| view! { <option value=t.id.to_string()>{format!("{} ({})", t.name, t.id)}</option> })
                            .collect_view()}
                    </select>
                    {input(tool_form, tool_errors, "id", "Id (function name)", "tool", false)}
                    {input(tool_form, tool_errors, "name", "Name", "tool", false)}
                    {input(tool_form, tool_errors, "description", "Description (the model reads it)", "tool", false)}
                    {input(tool_form, tool_errors, "category", "Category", "tool", false)}
                    {input(tool_form, tool_errors, "parameters", "Parameters (JSON Schema)", "tool", true)}
                    {move || tool_errors.with(|e| e.get("form").cloned()).map(|e| view! { <p class="error">{e}</p> })}
                    <button type="button" class="button primary" on:click=submit_tool>
                        "Save tool"
                    </button>
                </div>
                <div>
                    <h3>{move || if wf_create.get() { "Add a workflow" } else { "Edit workflow" }}</h3>
                    <select
                        aria-label="Edit an existing workflow"
                        on:change={
                            let workflows = workflows.clone();
                            move |ev| {
                                let id = event_target_value(&ev);
                                if let Some(w) = workflows.iter().find(|w| w.id.as_str() == id) {
                                    wf_form
                                        .set(
                                            BTreeMap::from([
                                                ("id", w.id.to_string()),
                                                ("name", w.name.clone()),
                                                ("description", w.description.clone()),
                                            ]),
                                        );
                                    wf_create.set(false);
                                } else {
                                    wf_form.set(BTreeMap::new());
                                    wf_create.set(true);
                                }
                                wf_errors.set(BTreeMap::new());
                            }
                        }
                    >
                        <option value="">"New workflow…"</option>
                        {workflows
                            .iter()
                            .map(|w| view! { <option value=w.id.to_string()>{w.name.clone()}</option> })
                            .collect_view()}
                    </select>
                    {input(wf_form, wf_errors, "id", "Id (slug)", "workflow", false)}
                    {input(wf_form, wf_errors, "name", "Name", "workflow", false)}
                    {input(wf_form, wf_errors, "description", "Description", "workflow", true)}
                    {move || wf_errors.with(|e| e.get("form").cloned()).map(|e| view! { <p class="error">{e}</p> })}
                    <button type="button" class="button primary" on:click=submit_workflow>
                        "Save workflow"
                    </button>
                </div>
            </div>
        </section>
    }
    .into_any()
}
