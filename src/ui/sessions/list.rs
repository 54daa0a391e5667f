//! `/sessions`: every recent session, refreshed whenever one opens, ends or
//! changes workflow; admins can start a demo session from here.

use crate::api::sessions::{list_sessions, NewDemoSession};
use crate::domain::agent_session::SessionSummary;
use crate::domain::time::format_utc;
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::ui::auth::{use_auth, RequireRole};
use crate::ui::components::Loaded;
use crate::ui::sessions::events::{subscribe, Link, LinkBadge};
use leptos::prelude::*;

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
    sessions: Resource<Result<Vec<SessionSummary>, ApiError>>,
    changes: RwSignal<u32>,
) -> impl IntoView {
    let auth = use_auth();
    let is_admin = move || {
        // Untracked: the role guard re-renders this list when the user changes.
        auth.user
            .get_untracked()
            .and_then(|r| r.ok())
            .flatten()
            .is_some_and(|u| u.role == Role::Admin)
    };
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
            {move || {
                is_admin()
                    .then(|| {
                        view! {
                            <ActionForm action=demo>
                                <button type="submit" class="button primary">
                                    "New demo session"
                                </button>
                            </ActionForm>
                        }
                    })
            }}
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
            let:list
        >
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
                            each=move || list.clone()
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
                            <SessionRow session />
                        </For>
                    </tbody>
                </table>
            </section>
        </Loaded>
    }
    .into_any()
}

/// One session: id (linking to its visualiser), workflow, step, last
/// activity, open or ended.
#[component]
fn SessionRow(session: SessionSummary) -> impl IntoView {
    let s = session;
    view! {
        <tr data-session=s.id.clone()>
            <td>
                <a href=format!("/sessions/{}", s.id)>
                    <code>{s.id.clone()}</code>
                </a>
            </td>
            <td>{s.state.current_workflow.clone()}</td>
            <td>{s.state.current_step.clone()}</td>
            <td class="muted">{format_utc(s.last_activity)}</td>
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
