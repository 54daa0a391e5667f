//! `/sessions`: the recent sessions the signed-in user may see (their own;
//! an admin every one), refreshed whenever one opens, ends or changes
//! workflow, narrowed by a search box and a status filter; admins
//! can start a demo session from here.

use crate::api::sessions::{list_sessions, NewDemoSession, SessionListData};
use crate::domain::agent_session::SessionSummary;
use crate::domain::catalogue::Workflow;
use crate::domain::state_labels::StateLabels;
use crate::domain::user::Role;
use crate::ui::auth::{signed_in_admin, RequireRole};
use crate::ui::components::events::{subscribe, Link, LinkBadge};
use crate::ui::components::{fetched, Fetched, Loaded, LocalTime, MaybeEmpty};
use crate::ui::sessions::session_filter::{SessionFilter, StatusFilter};
use leptos::prelude::*;

impl MaybeEmpty for SessionListData {
    fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}

/// The page: teachers and admins. The resource is created here, outside the
/// role guard, so server rendering and hydration create it in the same order;
/// every event on the list's stream refetches it.
#[island]
pub fn SessionsPage() -> impl IntoView {
    crate::ui::auth::provide_auth();
    let changes = RwSignal::new(0u32);
    let sessions = fetched(move || changes.get(), |_| list_sessions());
    view! {
        <RequireRole role=Role::Teacher>
            <SessionList sessions changes />
        </RequireRole>
    }
}

/// The heading with the live badge (and for admins "New demo session"), the
/// filter, then the table. The filter lives outside the loaded data, so a
/// live update refetches the list without touching what is typed.
#[component]
fn SessionList(sessions: Fetched<SessionListData>, changes: RwSignal<u32>) -> impl IntoView {
    let link = RwSignal::new(Link::Connecting);
    subscribe(
        "/api/sessions/events".into(),
        &crate::domain::agent_session::LIST_EVENT_NAMES,
        move |_, _| changes.update(|n| *n += 1),
        link,
    );
    let demo = ServerAction::<NewDemoSession>::new();
    let filter = RwSignal::new(SessionFilter::default());
    view! {
        <section class="page-head split">
            <div>
                <h1>"Live sessions"</h1>
                <p class="muted">
                    "Your agent sessions (your lessons', trials' and keys'; an admin's: every one), their current workflow and step, updated as they change. "
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
        <FilterBar filter />
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
            <SessionTable data filter />
        </Loaded>
    }
    .into_any()
}

/// The search box and the status choice.
#[component]
fn FilterBar(filter: RwSignal<SessionFilter>) -> impl IntoView {
    view! {
        <form class="filter-bar" role="search" data-testid="session-filter" on:submit=|ev| ev.prevent_default()>
            <label class="inline">
                <span>"Search"</span>
                <input
                    type="search"
                    placeholder="id, workflow, step or student"
                    prop:value=move || filter.with(|f| f.text.clone())
                    on:input=move |ev| {
                        let text = event_target_value(&ev);
                        filter.update(|f| f.text = text);
                    }
                />
            </label>
            <label class="inline">
                <span>"Status"</span>
                <select on:change=move |ev| {
                    let status = StatusFilter::parse(&event_target_value(&ev));
                    filter.update(|f| f.status = status);
                }>
                    {StatusFilter::ALL
                        .into_iter()
                        .map(|s| {
                            view! {
                                <option value=s.as_str() selected=move || filter.with(|f| f.status == s)>
                                    {s.label()}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </label>
        </form>
    }
}

/// The sessions that pass the filter, with how many that is.
#[component]
fn SessionTable(data: SessionListData, filter: RwSignal<SessionFilter>) -> impl IntoView {
    let SessionListData {
        sessions,
        workflows,
        labels,
    } = data;
    let total = sessions.len();
    let (workflows, labels) = (StoredValue::new(workflows), StoredValue::new(labels));
    let shown = Memo::new(move |_| {
        filter.with(|f| {
            workflows.with_value(|w| {
                labels.with_value(|l| {
                    sessions
                        .iter()
                        .filter(|s| f.matches(s, w, l))
                        .cloned()
                        .collect::<Vec<_>>()
                })
            })
        })
    });
    view! {
        <section class="panel">
            <p class="muted small" data-testid="session-count">
                {move || {
                    let n = shown.with(Vec::len);
                    if n == total { format!("{total} sessions") } else { format!("{n} of {total} sessions") }
                }}
            </p>
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
                        each=move || shown.get()
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
            {move || {
                shown
                    .with(Vec::is_empty)
                    .then(|| view! { <p class="muted empty" data-testid="no-match">"No session matches the filter."</p> })
            }}
        </section>
    }
    .into_any()
}

/// One session: id (linking to its visualiser), student, whether it is a
/// trial and what started it; workflow name, step description, last
/// activity in local time, open or ended.
#[component]
fn SessionRow(
    session: SessionSummary,
    workflows: StoredValue<Vec<Workflow>>,
    labels: StoredValue<StateLabels>,
) -> impl IntoView {
    let s = session;
    // A vibe session shows its vibe and the agent it is talking to now, a
    // tutor session its lesson.
    let workflow = workflows.with_value(|w| s.context_name(w));
    let step = labels.with_value(|l| l.step(&s.state.current_step));
    view! {
        <tr data-session=s.id.clone() data-ended=s.ended.to_string()>
            <td>
                <a href=format!("/sessions/{}", s.id)>
                    <code>{s.id.clone()}</code>
                </a>
                {s.student.clone().map(|who| view! { <div class="muted small">{format!("for {who}")}</div> })}
                {s.trial.then(|| view! { <span class="badge" data-testid="trial">"Trial"</span> })}
                {s.started_by.clone().map(|by| view! { <div class="muted small" title=by.summary.clone()>{format!("started by {}", by.trigger)}</div> })}
            </td>
            <td title=s.state.current_workflow.clone() data-testid="session-context">
                {workflow}
            </td>
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
