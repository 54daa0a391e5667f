//! `/sessions`: every recent session, refreshed whenever one opens, ends or
//! changes workflow; admins can start a demo session from here.

use crate::api::sessions::{list_sessions, NewDemoSession, SessionListData};
use crate::domain::agent_session::SessionSummary;
use crate::domain::catalogue::{workflow_name, Workflow};
use crate::domain::state_labels::StateLabels;
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::ui::auth::{signed_in_admin, RequireRole};
use crate::ui::components::{Loaded, LocalTime, MaybeEmpty};
use crate::ui::sessions::events::{subscribe, Link, LinkBadge};
use leptos::prelude::*;

impl MaybeEmpty for SessionListData {
    fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}

/// The page: teachers and admins. The resource is created here, outside the
/// role guard, so server rendering and hydration create it in the same order;
/// every event on the list's stream refetches it.
#[component]
pub fn SessionsPage() -> impl IntoView {
    let changes = RwSignal::new(0u32);
    let sessions = Resource::new(move || changes.get(), |_| list_sessions());
    view! {
        <RequireRole role=Role::Teacher>
            <SessionList sessions changes />
        </RequireRole>
    }
}

/// The heading with the live badge (and for admins "New demo session"), then
/// the table.
#[component]
fn SessionList(
    sessions: Resource<Result<SessionListData, ApiError>>,
    changes: RwSignal<u32>,
) -> impl IntoView {
    let link = RwSignal::new(Link::Connecting);
    subscribe(
        "/api/sessions/events".into(),
        move |_| changes.update(|n| *n += 1),
        link,
    );
    let demo = ServerAction::<NewDemoSession>::new();
    view! {
        <section class="page-head split">
            <div>
                <h1>"Live sessions"</h1>
                <p class="muted">
                    "Every agent session, its current workflow and step, updated as it changes. "
                    <LinkBadge link testid="list-connection" />
                </p>
            </div>
            {signed_in_admin()
                .then(|| {
                    view! {
                        <ActionForm action=demo>
                            <button type="submit" class="button primary">
                                "New demo session"
                            </button>
                        </ActionForm>
                    }
                })}
        </section>
        <Loaded
            resource=sessions
            loading="Loading sessions…"
            empty=|| {
                view! {
                    <section class="panel empty">
                        <p>"No sessions yet. Agent backends open them with POST /api/sessions."</p>
                    </section>
                }
            }
            let:data
        >
            <SessionTable data />
        </Loaded>
    }
    .into_any()
}

/// The table of sessions.
#[component]
fn SessionTable(data: SessionListData) -> impl IntoView {
    let SessionListData {
        sessions,
        workflows,
        labels,
    } = data;
    let (workflows, labels) = (StoredValue::new(workflows), StoredValue::new(labels));
    view! {
        <section class="panel">
            <table class="table" data-testid="session-list">
                <thead>
                    <tr>
                        <th>"Session"</th>
                        <th>"Workflow"</th>
                        <th>"Step"</th>
                        <th>"Last activity"</th>
                        <th>"Status"</th>
                    </tr>
                </thead>
                <tbody>
                    // Keyed by everything a row shows, so only changed
                    // rows are rebuilt.
                    <For
                        each=move || sessions.clone()
                        key=|s| {
                            (
                                s.id.clone(),
                                s.state.current_workflow.clone(),
                                s.state.current_step.clone(),
                                s.last_activity,
                                s.ended,
                            )
                        }
                        let:session
                    >
                        <SessionRow session workflows labels />
                    </For>
                </tbody>
            </table>
        </section>
    }
    .into_any()
}

/// One session: id (linking to its visualiser), workflow name, step
/// description, last activity in local time, open or ended.
#[component]
fn SessionRow(
    session: SessionSummary,
    workflows: StoredValue<Vec<Workflow>>,
    labels: StoredValue<StateLabels>,
) -> impl IntoView {
    let s = session;
    let workflow = workflows.with_value(|w| workflow_name(w, &s.state.current_workflow));
    let step = labels.with_value(|l| l.step(&s.state.current_step));
    view! {
        <tr data-session=s.id.clone()>
            <td>
                <a href=format!("/sessions/{}", s.id)>
                    <code>{s.id.clone()}</code>
                </a>
            </td>
            <td title=s.state.current_workflow.clone()>{workflow}</td>
            <td title=s.state.current_step.clone() data-step=s.state.current_step.clone()>{step}</td>
            <td class="muted">
                <LocalTime ms=s.last_activity * 1000 />
            </td>
            <td>
                {if s.ended {
                    view! { <span class="badge warn">"ended"</span> }.into_any()
                } else {
                    view! { <span class="badge ok">"open"</span> }.into_any()
                }}
            </td>
        </tr>
    }
}
