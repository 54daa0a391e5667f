//! `/workflows` and `/workflows/{id}`: the admin's workflow settings. The
//! list of workflows, and one workflow's Start button (`start`), start
//! trigger (`trigger`, its hook URL's secret in `hook_secret`) and
//! ordered steps (`steps`, one card each in `step_card`) beside the
//! workflow-editing chat (`chat`, the shared `ui::components::chat`), and
//! "Try this workflow" below them (`try_workflow`).
//!
//! The definition shown is one signal, refreshed whenever the workflow's
//! `workflow_changed` event arrives — so a change made here, by another
//! admin, over the API or by the chat agent appears without a reload — and
//! every edit is sent on top of the version shown (a stale one is refused
//! and the page refreshes).

pub mod chat;
pub mod definition_file;
pub mod hook_secret;
pub mod start;
pub mod step_card;
pub mod steps;
pub mod trigger;
pub mod try_workflow;

use crate::api::workflows::{edit_workflow, workflow_page, workflows_list, WorkflowSettings};
use crate::domain::user::Role;
use crate::domain::workflow_def::Edit;
use crate::error::ApiError;
use crate::ui::auth::RequireRole;
use crate::ui::components::events::{subscribe, Link, LinkBadge};
use crate::ui::components::{fetched, Loaded, MaybeEmpty};
use leptos::prelude::*;
use leptos::task::spawn_local;

impl MaybeEmpty for WorkflowSettings {}

/// The event names the settings page listens for.
const WORKFLOW_EVENTS: [&str; 1] = ["workflow_changed"];

/// `/workflows`: every workflow with its trigger and step count.
#[island]
pub fn WorkflowsPage() -> impl IntoView {
    crate::ui::auth::provide_auth();
    let list = fetched(|| (), |_| workflows_list());
    view! {
        <RequireRole role=Role::Admin>
            <section class="page-head">
                <h1>"Workflows"</h1>
                <p class="muted">
                    "A workflow's start trigger and its steps. Edit them by hand or ask the workflow agent beside the definition."
                </p>
            </section>
            <Loaded resource=list loading="Loading workflows…" let:list>
                <ul class="workflow-list" data-testid="workflow-list">
                    <For each=move || list.clone() key=|w| (w.id.clone(), w.version) let:w>
                        <li class="panel">
                            <a href=format!("/workflows/{}", w.id) data-testid=format!("workflow-link-{}", w.id)>
                                {w.name.clone()}
                            </a>
                            <span class="muted small">
                                {format!(
                                    " · {} · {} step{} · version {}",
                                    w.trigger.clone().unwrap_or_else(|| "no start trigger".into()),
                                    w.steps,
                                    if w.steps == 1 { "" } else { "s" },
                                    w.version,
                                )}
                            </span>
                            <p class="small">{w.description.clone()}</p>
                        </li>
                    </For>
                </ul>
            </Loaded>
        </RequireRole>
    }
}

/// `/workflows/{id}`: the settings page (admins).
#[component]
pub fn WorkflowSettingsPage() -> impl IntoView {
    let id = crate::ui::route_param("id");
    view! { <WorkflowSettingsIsland id /> }
}

/// The page's interactive part, hydrated on its own.
#[island]
fn WorkflowSettingsIsland(id: String) -> impl IntoView {
    crate::ui::auth::provide_auth();
    let page = fetched(move || id.clone(), workflow_page);
    view! {
        <RequireRole role=Role::Admin>
            <Loaded resource=page loading="Loading workflow…" back=("/workflows", "Back to workflows") let:data>
                <Settings data />
            </Loaded>
        </RequireRole>
    }
}

/// The shown definition and the way to change it, shared by the editors.
#[derive(Clone, Copy)]
pub struct Editing {
    /// The workflow as last read.
    pub page: RwSignal<WorkflowSettings>,
    /// Why the last edit failed.
    pub problem: RwSignal<Option<ApiError>>,
    /// An edit is on its way.
    pub busy: RwSignal<bool>,
}

impl Editing {
    /// Reads the workflow again (after a change anywhere).
    pub fn refresh(self) {
        let id = self.page.with_untracked(|p| p.id.clone());
        spawn_local(async move {
            if let Ok(fresh) = workflow_page(id).await {
                // A read that crossed a newer one on the way is dropped.
                if fresh.version >= self.page.with_untracked(|p| p.version) {
                    let _ = self.page.try_set(fresh);
                }
            }
        });
    }

    /// Sends `edit` on top of the version shown; refreshes after it, or
    /// shows why not (and refreshes too when the version was stale).
    pub fn apply(self, edit: Edit) {
        self.apply_then(edit, || {});
    }

    /// [`Editing::apply`], running `stored` once the edit is stored (before
    /// the refresh), so a text box drops its changed mark only then.
    pub fn apply_then(self, edit: Edit, stored: impl FnOnce() + 'static) {
        let (id, version) = self.page.with_untracked(|p| (p.id.clone(), p.version));
        self.busy.set(true);
        spawn_local(async move {
            let result = edit_workflow(id, version, edit).await;
            let _ = self.busy.try_set(false);
            match result {
                Ok(_) => {
                    stored();
                    let _ = self.problem.try_set(None);
                }
                Err(e) => {
                    let _ = self.problem.try_set(Some(e));
                }
            }
            self.refresh();
        });
    }
}

/// The definition beside the chat, live.
#[component]
fn Settings(data: WorkflowSettings) -> impl IntoView {
    let editing = Editing {
        page: RwSignal::new(data.clone()),
        problem: RwSignal::new(None),
        busy: RwSignal::new(false),
    };
    let link = RwSignal::new(Link::Connecting);
    subscribe(
        format!("/api/workflows/{}/events", data.id),
        &WORKFLOW_EVENTS,
        move |_, _| editing.refresh(),
        link,
    );
    let page = editing.page;
    view! {
        <section class="page-head split">
            <div>
                <a href="/workflows" class="muted small">"← Workflows"</a>
                <h1>{data.name.clone()}</h1>
                <p class="muted">{data.description.clone()}</p>
            </div>
            <div class="session-badges">
                <span class="badge" data-testid="workflow-version">
                    {move || format!("version {}", page.with(|p| p.version))}
                </span>
                <LinkBadge link testid="workflow-connection" state=true />
                <definition_file::DefinitionFile editing />
                <start::StartButton workflow_id=data.id.clone() />
            </div>
        </section>
        <div class="workflow-settings">
            <section class="workflow-definition" data-testid="workflow-definition">
                {move || editing.problem.get().map(|e| view! {
                    <p class="error" role="alert" data-testid="workflow-problem">{e.to_string()}</p>
                })}
                <trigger::TriggerEditor editing />
                <hook_secret::HookSecretPanel editing />
                <steps::StepsEditor editing />
            </section>
            <chat::ChatPanel
                workflow_id=data.id.clone()
                unavailable=data.chat_unavailable.clone()
                on_updated=Callback::new(move |_| editing.refresh())
            />
        </div>
        <try_workflow::TryWorkflow workflow_id=data.id.clone() />
    }
}
