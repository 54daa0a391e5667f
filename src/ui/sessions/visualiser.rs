//! `/sessions/{id}`: one session as it happens — what it runs (lesson,
//! workflow or vibe), step, the checks its own definition declares, the
//! tools it has now and every tool call — kept current by the session's
//! event stream.

use crate::api::sessions::{session_page, SessionPageData};
use crate::domain::agent_session::SESSION_EVENT_NAMES;
use crate::domain::agent_session::{changed_checks, CallStatus, SessionEvent};
use crate::domain::plugin::{AvailabilityUpdate, PluginSet, AVAILABILITY_EVENT};
use crate::domain::user::Role;
use crate::domain::workflow_state::WorkflowState;
use crate::ui::auth::RequireRole;
use crate::ui::components::events::{subscribe, Link, LinkBadge};
use crate::ui::components::{fetched, read_json, Loaded, MaybeEmpty};
use crate::ui::sessions::agent_panel::AgentPanel;
use crate::ui::sessions::call_row::CallRow;
use crate::ui::sessions::checks::ChecksPanel;
use crate::ui::sessions::console::Console;
use crate::ui::sessions::end_button::EndSessionButton;
use crate::ui::sessions::join_code::JoinCodeButton;
use crate::ui::sessions::plugin_panel::PluginPanel;
use crate::ui::sessions::progress::Progress;
use crate::ui::sessions::workflow_steps::WorkflowSteps;
use leptos::prelude::*;
use std::collections::BTreeSet;

impl MaybeEmpty for SessionPageData {}

/// `/sessions/{id}`: the visualiser.
#[component]
pub fn SessionPage() -> impl IntoView {
    let id = crate::ui::route_param("id");
    view! { <SessionIsland id /> }
}

/// The page's interactive part, hydrated on its own.
#[island]
fn SessionIsland(id: String) -> impl IntoView {
    crate::ui::auth::provide_auth();
    let page = fetched(move || id.clone(), session_page);
    view! {
        <RequireRole role=Role::Teacher>
            <Loaded
                resource=page
                loading="Loading session…"
                back=("/sessions", "Back to sessions")
                let:data
            >
                <Visualiser data />
            </Loaded>
        </RequireRole>
    }
}

/// One session: workflow, step, connection and whether it ended; its checks
/// (pulsing when they change), the tools it has now, the console for
/// admins, and the timeline of tool calls, newest first. The page's data is
/// the snapshot; events keep it current from then on. A trial shows it
/// `embedded` beside its chat: a section heading instead of the page's.
#[component]
pub fn Visualiser(
    data: SessionPageData,
    /// Shown inside another page (a trial), not as the session's page.
    #[prop(optional)]
    embedded: bool,
) -> impl IntoView {
    let id = data.snapshot.session_id.clone();
    let ws = RwSignal::new(data.snapshot.state.clone());
    let tools = RwSignal::new(data.snapshot.tools.clone());
    let calls = RwSignal::new(data.snapshot.calls.clone());
    let ended = RwSignal::new(data.snapshot.ended);
    let ended_at = RwSignal::new(data.snapshot.ended_at);
    let end_reason = RwSignal::new(data.snapshot.end_reason.clone());
    let turns = RwSignal::new(data.snapshot.turns.clone());
    let agent = RwSignal::new(data.snapshot.agent.clone());
    let who = |p: &PluginSet| format!("{} {}", p.plugin_type.as_str(), p.plugin_version);
    let plugin = RwSignal::new(data.snapshot.plugin.as_ref().map(who));
    let plugin_tools = RwSignal::new(
        data.snapshot
            .plugin
            .as_ref()
            .map(|p| p.tools.clone())
            .unwrap_or_default(),
    );
    let (started_at, planned_minutes) = (data.snapshot.started_at, data.snapshot.planned_minutes);
    let pulsing = RwSignal::new(BTreeSet::<String>::new());
    let link = RwSignal::new(Link::Connecting);
    let workflows = StoredValue::new(data.workflows.clone());
    let labels = StoredValue::new(data.labels.clone());
    let outline = StoredValue::new(data.outline.clone());
    // The checks panel and the progress panel read the same rows.
    let checks = Memo::new(move |_| {
        ws.with(|w| outline.with_value(|o| labels.with_value(|l| o.rows(w, l))))
    });

    let apply = move |event: SessionEvent| match event {
        SessionEvent::Snapshot(s) => {
            let s = *s;
            ws.set(s.state);
            tools.set(s.tools);
            calls.set(s.calls);
            ended.set(s.ended);
            ended_at.set(s.ended_at);
            end_reason.set(s.end_reason);
            if s.ended {
                // Nothing more will come: no reconnecting when it closes.
                link.set(Link::Closed);
            }
            turns.set(s.turns);
            agent.set(s.agent);
            plugin.set(s.plugin.as_ref().map(who));
            plugin_tools.set(s.plugin.map(|p| p.tools).unwrap_or_default());
        }
        SessionEvent::WorkflowUpdate(u) => {
            let changed = ws.with_untracked(|old| changed_checks(old, &u.checks));
            ws.update(|state| {
                *state = WorkflowState {
                    current_workflow: u.workflow_id,
                    current_step: u.active_step,
                    checks: u.checks,
                    failed_identity_checks: state.failed_identity_checks,
                    agent: u.agent,
                    workflow_step: u.workflow_step,
                }
            });
            if !changed.is_empty() {
                pulsing.update(|p| p.extend(changed.iter().cloned()));
                #[cfg(feature = "hydrate")]
                gloo_timers::callback::Timeout::new(1500, move || {
                    pulsing.update(|p| {
                        for c in &changed {
                            p.remove(c);
                        }
                    })
                })
                .forget();
            }
        }
        SessionEvent::ToolCall(record) => calls.update(|list| {
            if !list.iter().any(|c| c.id == record.id) {
                list.push(record);
            }
        }),
        SessionEvent::ToolResult(reported) => calls.update(|list| {
            if let Some(call) = list.iter_mut().find(|c| c.id == reported.call_id) {
                call.complete(&reported);
                // A plugin tool's call counts once its plugin answered.
                if reported.status == CallStatus::Done {
                    plugin_tools.update(|tools| {
                        if let Some(t) = tools.iter_mut().find(|t| t.definition.name == call.tool) {
                            t.usage_count += 1;
                        }
                    });
                }
            }
        }),
        SessionEvent::ToolsChanged { tools: now } => tools.set(now),
        SessionEvent::Turn(t) => turns.update(|log| {
            log.student = t.student;
            log.tutor = t.tutor;
            log.nudges.extend(t.nudges);
        }),
        SessionEvent::AgentChanged(view) => agent.set(Some(view)),
        SessionEvent::Ended { reason } => {
            ended.set(true);
            end_reason.set(Some(reason));
            link.set(Link::Closed);
            #[cfg(feature = "hydrate")]
            ended_at.set(Some((web_sys::js_sys::Date::now() / 1000.0) as i64));
        }
    };
    subscribe(
        format!("/api/sessions/{id}/events"),
        &SESSION_EVENT_NAMES,
        move |name, text| {
            if name == AVAILABILITY_EVENT {
                if let Ok(update) = read_json::<AvailabilityUpdate>(&text) {
                    if plugin.get_untracked().is_none() {
                        plugin.set(Some("registered just now".into()));
                    }
                    plugin_tools.update(|tools| *tools = update.apply_to(tools));
                }
            } else if let Ok(event) = read_json::<SessionEvent>(&text) {
                apply(event);
            }
        },
        link,
    );

    // The lesson's title, the workflow's name or the vibe's and agent's.
    let title = move || ws.with(|w| outline.with_value(|o| o.title(w)));
    // The console offers the session's listing (its callable tools, as
    // every door describes them), the rest of the catalogue, then the
    // plugin's active tools.
    let catalogue = StoredValue::new(data.console_tools.clone());
    let console_tools = Signal::derive(move || {
        let mut list = catalogue.get_value();
        plugin_tools.with(|tools| {
            list.extend(
                tools
                    .iter()
                    .filter(|t| t.status == crate::domain::plugin::ToolStatus::Active)
                    .filter_map(|t| t.as_catalogue_tool()),
            )
        });
        list
    });
    let has_console = !data.console_tools.is_empty();
    let session_id = id.clone();
    view! {
        <section class="page-head split">
            {if embedded {
                view! { <h2>"Live session " <a href=format!("/sessions/{id}") class="small"><code>{id.clone()}</code></a></h2> }.into_any()
            } else {
                view! {
                    <div>
                        <a href="/sessions" class="muted small">
                            "← Sessions"
                        </a>
                        <h1>
                            "Session " <code>{id.clone()}</code>
                        </h1>
                        <crate::ui::sessions::started_by::StartedByLine started_by=data.snapshot.started_by.clone() />
                    </div>
                }.into_any()
            }}
            <div class="session-badges">
                <span class="workflow-badge" data-testid="workflow-badge">
                    {title}
                </span>
                <span
                    class="step"
                    data-testid="step"
                    data-step=move || ws.with(|w| w.current_step.clone())
                    title=move || ws.with(|w| format!("step: {}", w.current_step))
                >
                    {move || ws.with(|w| labels.with_value(|l| l.step(&w.current_step)))}
                </span>
                {move || {
                    ended.get().then(|| {
                        view! {
                            <span class="badge warn" data-testid="ended">"ended"</span>
                            <span class="muted small" data-testid="end-reason">{end_reason.get()}</span>
                        }
                    })
                }}
                <LinkBadge link testid="connection" state=true />
                <EndSessionButton session_id=id.clone() ended />
            </div>
        </section>
        <div class="visualiser">
            <div class="vis-side">
                <ChecksPanel checks pulsing none=data.outline.none_declared() />
                <WorkflowSteps ws steps=StoredValue::new(data.workflow_steps.clone()) />
                <section class="panel">
                    <h2>"Tools available now"</h2>
                    <div class="tool-chips" data-testid="available-tools">
                        {move || {
                            tools.get().into_iter().map(|t| view! { <span class="chip static">{t}</span> }).collect_view()
                        }}
                    </div>
                </section>
                <AgentPanel agent />
                <PluginPanel plugin tools=plugin_tools />
                <JoinCodeButton session_id=id.clone() ended allowed=data.join_codes && !embedded />
                <Progress started_at planned_minutes ended_at turns checks calls />
                {has_console.then(|| view! { <Console session_id=session_id.clone() tools=console_tools /> })}
            </div>
            <section class="panel timeline-panel">
                <h2>"Tool calls"</h2>
                <ol class="timeline" data-testid="timeline">
                    // Calls never change once made: new ones are added at the
                    // top and the rest stay as they are.
                    <For each=move || calls.get().into_iter().rev() key=|call| (call.id, call.status) let:call>
                        <CallRow call workflows />
                    </For>
                </ol>
            </section>
        </div>
    }
    .into_any()
}
