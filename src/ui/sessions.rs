//! `/sessions` and `/sessions/{id}`: live sessions as they change, pushed by
//! server-sent events, plus the admins' console for trying the rules without
//! an LLM.

use crate::api::sessions::{
    list_sessions, session_page, ConsoleCall, NewDemoSession, SessionPageData,
};
use crate::domain::agent_session::{
    CallOutcome, SessionEvent, SessionSummary, ToolCallRecord, WorkflowState, ACCOUNT_FOUND,
    IDENTITY_VERIFIED,
};
use crate::domain::catalogue::CatalogueTool;
use crate::domain::time::format_utc;
use crate::domain::user::Role;
use crate::ui::auth::{use_auth, RequireRole};
use crate::ui::current;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;
use std::collections::BTreeSet;

/// Connection state of an event stream, shown to the watcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Only the browser ever sees the stream open or drop.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
enum Link {
    Connecting,
    Live,
    Reconnecting,
}

impl Link {
    fn label(self) -> &'static str {
        match self {
            Link::Connecting => "connecting…",
            Link::Live => "live",
            Link::Reconnecting => "reconnecting…",
        }
    }
}

/// Subscribes to `url` with the browser's `EventSource` (which reconnects by
/// itself and sends `Last-Event-ID`), for as long as the calling component
/// lives. Does nothing on the server.
fn subscribe(url: String, on_message: impl Fn(String) + 'static, link: RwSignal<Link>) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::closure::Closure;
        use wasm_bindgen::JsCast;
        let Ok(source) = web_sys::EventSource::new(&url) else {
            link.set(Link::Reconnecting);
            return;
        };
        let message =
            Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
                if let Some(text) = ev.data().as_string() {
                    on_message(text);
                }
            });
        let open = Closure::<dyn Fn()>::new(move || link.set(Link::Live));
        let error = Closure::<dyn Fn()>::new(move || link.set(Link::Reconnecting));
        source.set_onmessage(Some(message.as_ref().unchecked_ref()));
        source.set_onopen(Some(open.as_ref().unchecked_ref()));
        source.set_onerror(Some(error.as_ref().unchecked_ref()));
        let held = send_wrapper::SendWrapper::new((source, message, open, error));
        on_cleanup(move || held.0.close());
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (url, on_message, link);
}

/// `/sessions`: every recent session, refreshed whenever one opens, ends or
/// changes workflow.
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

#[component]
fn SessionList(
    sessions: Resource<Result<Vec<SessionSummary>, crate::error::ApiError>>,
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
                    <span class=move || format!("link link-{:?}", link.get()).to_lowercase() data-testid="list-connection">
                        {move || link.get().label()}
                    </span>
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
        <Transition fallback=|| view! { <p class="muted">"Loading sessions…"</p> }>
            {move || {
                current(&sessions)
                    .map(|result| match result {
                        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                        Ok(list) if list.is_empty() => {
                            view! {
                                <section class="panel empty">
                                    <p>"No sessions yet. Agent backends open them with POST /api/sessions."</p>
                                </section>
                            }
                                .into_any()
                        }
                        Ok(list) => {
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
                                            {list
                                                .into_iter()
                                                .map(|s| {
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
                                                })
                                                .collect_view()}
                                        </tbody>
                                    </table>
                                </section>
                            }
                                .into_any()
                        }
                    })
            }}
        </Transition>
    }
    .into_any()
}

/// `/sessions/{id}`: the visualiser.
#[component]
pub fn SessionPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let page = Resource::new(id, session_page);
    view! {
        <RequireRole role=Role::Teacher>
            <Transition fallback=|| view! { <p class="muted">"Loading session…"</p> }>
                {move || {
                    current(&page)
                        .map(|result| match result {
                            Ok(data) => view! { <Visualiser data /> }.into_any(),
                            Err(e) => {
                                view! {
                                    <section class="panel notice">
                                        <p>{e.to_string()}</p>
                                        <a href="/sessions">"Back to sessions"</a>
                                    </section>
                                }
                                    .into_any()
                            }
                        })
                }}
            </Transition>
        </RequireRole>
    }
}

/// Checks the visualiser always lists, known or not.
const KNOWN_CHECKS: [&str; 2] = [IDENTITY_VERIFIED, ACCOUNT_FOUND];

#[component]
fn Visualiser(data: SessionPageData) -> impl IntoView {
    let id = data.snapshot.session_id.clone();
    let ws = RwSignal::new(data.snapshot.state.clone());
    let tools = RwSignal::new(data.snapshot.tools.clone());
    let calls = RwSignal::new(data.snapshot.calls.clone());
    let ended = RwSignal::new(data.snapshot.ended);
    let pulsing = RwSignal::new(BTreeSet::<String>::new());
    let link = RwSignal::new(Link::Connecting);
    let workflows = StoredValue::new(data.workflows.clone());

    let apply = move |event: SessionEvent| match event {
        SessionEvent::Snapshot(s) => {
            ws.set(s.state);
            tools.set(s.tools);
            calls.set(s.calls);
            ended.set(s.ended);
        }
        SessionEvent::WorkflowUpdate(u) => {
            let changed: Vec<String> = ws.with_untracked(|old| {
                u.checks
                    .iter()
                    .filter(|(k, v)| old.checks.get(*k) != Some(v))
                    .map(|(k, _)| k.clone())
                    .collect()
            });
            ws.set(WorkflowState {
                current_workflow: u.workflow_id,
                current_step: u.active_step,
                checks: u.checks,
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
        SessionEvent::ToolsChanged { tools: now } => tools.set(now),
        SessionEvent::Ended { .. } => ended.set(true),
    };
    subscribe(
        format!("/api/sessions/{id}/events"),
        move |text| {
            if let Ok(event) = serde_json::from_str::<SessionEvent>(&text) {
                apply(event);
            }
        },
        link,
    );

    let workflow_name = move || {
        let current = ws.with(|w| w.current_workflow.clone());
        workflows
            .get_value()
            .into_iter()
            .find(|w| w.id.as_str() == current)
            .map_or(current, |w| w.name)
    };
    let check_names = move || {
        let mut names: Vec<String> = KNOWN_CHECKS.iter().map(|s| s.to_string()).collect();
        ws.with(|w| {
            for k in w.checks.keys() {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
        });
        names
    };
    let console_tools = data.console_tools.clone();
    let session_id = id.clone();
    view! {
        <section class="page-head split">
            <div>
                <a href="/sessions" class="muted small">
                    "← Sessions"
                </a>
                <h1>
                    "Session " <code>{id.clone()}</code>
                </h1>
            </div>
            <div class="session-badges">
                <span class="workflow-badge" data-testid="workflow-badge">
                    {workflow_name}
                </span>
                <span class="step" data-testid="step">
                    {move || ws.with(|w| w.current_step.clone())}
                </span>
                {move || ended.get().then(|| view! { <span class="badge warn" data-testid="ended">"ended"</span> })}
                <span
                    class=move || format!("link link-{:?}", link.get()).to_lowercase()
                    data-testid="connection"
                    data-state=move || format!("{:?}", link.get()).to_lowercase()
                >
                    {move || link.get().label()}
                </span>
            </div>
        </section>
        <div class="visualiser">
            <div class="vis-side">
                <section class="panel">
                    <h2>"Checks"</h2>
                    <ul class="checks" data-testid="checks">
                        {move || {
                            check_names()
                                .into_iter()
                                .map(|name| {
                                    let value = ws.with(|w| w.checks.get(&name).copied());
                                    let (class, mark) = match value {
                                        Some(true) => ("check-true", "✅"),
                                        Some(false) => ("check-false", "✕"),
                                        None => ("check-unknown", "•"),
                                    };
                                    let pulse = pulsing.with(|p| p.contains(&name));
                                    view! {
                                        <li class=class class:pulse=pulse data-check=name.clone()>
                                            <span class="mark">{mark}</span>
                                            <span>{name.clone()}</span>
                                        </li>
                                    }
                                })
                                .collect_view()
                        }}
                    </ul>
                </section>
                <section class="panel">
                    <h2>"Tools available now"</h2>
                    <div class="tool-chips" data-testid="available-tools">
                        {move || {
                            tools.get().into_iter().map(|t| view! { <span class="chip static">{t}</span> }).collect_view()
                        }}
                    </div>
                </section>
                {(!console_tools.is_empty()).then(|| view! { <Console session_id=session_id.clone() tools=console_tools.clone() /> })}
            </div>
            <section class="panel timeline-panel">
                <h2>"Tool calls"</h2>
                <ol class="timeline" data-testid="timeline">
                    {move || {
                        let mut list = calls.get();
                        list.reverse();
                        list.into_iter().map(call_row).collect_view()
                    }}
                </ol>
            </section>
        </div>
    }
    .into_any()
}

fn call_row(call: ToolCallRecord) -> impl IntoView {
    let allowed = call.outcome == CallOutcome::Allowed;
    let detail = if allowed {
        call.result
            .as_ref()
            .map(|r| r.to_string())
            .unwrap_or_default()
    } else {
        call.reason.clone().unwrap_or_default()
    };
    view! {
        <li class=if allowed { "call allowed" } else { "call refused" } data-call=call.id>
            <div class="call-head">
                <code class="call-tool">{call.tool.clone()}</code>
                <span class=if allowed { "badge ok" } else { "badge bad" }>
                    {if allowed { "allowed" } else { "refused" }}
                </span>
                <span class="muted small">
                    {format!("in {} · {} µs · {}", call.workflow, call.duration_us, format_utc(call.at_ms / 1000))}
                </span>
            </div>
            <div class="call-args muted small">{format!("arguments: {}", call.arguments)}</div>
            <div class=if allowed { "call-detail" } else { "call-detail reason" }>{detail}</div>
        </li>
    }
}

/// The admins' console: call any catalogue tool (refused ones too) with
/// arguments from a form generated from its JSON Schema, or raw JSON.
#[component]
fn Console(session_id: String, tools: Vec<CatalogueTool>) -> impl IntoView {
    let tools = StoredValue::new(tools);
    let selected = RwSignal::new(
        tools.with_value(|t| t.first().map(|t| t.id.to_string()).unwrap_or_default()),
    );
    let fields = RwSignal::new(std::collections::BTreeMap::<String, String>::new());
    let raw = RwSignal::new(String::new());
    let problem = RwSignal::new(None::<String>);
    let call = ServerAction::<ConsoleCall>::new();
    let call_result = call.value();
    let schema = move || {
        tools.with_value(|list| {
            list.iter()
                .find(|t| t.id.as_str() == selected.get())
                .map(|t| t.parameters.clone())
                .unwrap_or_default()
        })
    };
    let properties = move || {
        schema()
            .get("properties")
            .and_then(|p| p.as_object().cloned())
            .map(|m| m.into_iter().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let session_id = StoredValue::new(session_id);
    let submit = move |_| {
        problem.set(None);
        let arguments = if raw.get_untracked().trim().is_empty() {
            let schema = schema();
            let mut object = serde_json::Map::new();
            for (name, value) in fields.get_untracked() {
                if value.trim().is_empty() {
                    continue;
                }
                let kind = schema["properties"][&name]["type"]
                    .as_str()
                    .unwrap_or("string")
                    .to_owned();
                let parsed = match kind.as_str() {
                    "integer" | "number" => serde_json::from_str(value.trim())
                        .unwrap_or(serde_json::Value::String(value)),
                    "boolean" => serde_json::Value::Bool(value == "true"),
                    _ => serde_json::Value::String(value),
                };
                object.insert(name, parsed);
            }
            serde_json::Value::Object(object)
        } else {
            match serde_json::from_str(&raw.get_untracked()) {
                Ok(v) => v,
                Err(e) => {
                    problem.set(Some(format!("Raw JSON is not valid: {e}")));
                    return;
                }
            }
        };
        call.dispatch(ConsoleCall {
            id: session_id.get_value(),
            name: selected.get_untracked(),
            arguments,
        });
    };
    view! {
        <section class="panel console" data-testid="console">
            <h2>"Console"</h2>
            <p class="muted small">"Call a tool as the agent would; the same rules apply."</p>
            <label class="field">
                <span>"Tool"</span>
                <select
                    data-testid="console-tool"
                    on:change=move |ev| {
                        selected.set(event_target_value(&ev));
                        fields.set(Default::default());
                    }
                >
                    {tools
                        .get_value()
                        .into_iter()
                        .map(|t| view! { <option value=t.id.to_string()>{t.id.to_string()}</option> })
                        .collect_view()}
                </select>
            </label>
            {move || {
                properties()
                    .into_iter()
                    .map(|(name, spec)| {
                        let label = format!(
                            "{name}{}",
                            spec.get("type").and_then(|t| t.as_str()).map(|t| format!(" ({t})")).unwrap_or_default(),
                        );
                        let options: Vec<String> = spec
                            .get("enum")
                            .and_then(|e| e.as_array())
                            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
                            .unwrap_or_default();
                        let key = name.clone();
                        let key2 = name.clone();
                        let on_input = move |ev| {
                            let v = event_target_value(&ev);
                            fields.update(|f| {
                                f.insert(key.clone(), v);
                            });
                        };
                        view! {
                            <label class="field">
                                <span>{label}</span>
                                {if options.is_empty() {
                                    view! {
                                        <input
                                            type="text"
                                            data-field=key2
                                            placeholder=spec.get("description").and_then(|d| d.as_str()).unwrap_or_default().to_owned()
                                            on:input=on_input
                                        />
                                    }
                                        .into_any()
                                } else {
                                    view! {
                                        <select data-field=key2 on:change=on_input>
                                            <option value="">"—"</option>
                                            {options.into_iter().map(|o| view! { <option value=o.clone()>{o.clone()}</option> }).collect_view()}
                                        </select>
                                    }
                                        .into_any()
                                }}
                            </label>
                        }
                    })
                    .collect_view()
            }}
            <label class="field">
                <span>"…or raw JSON arguments"</span>
                <textarea rows="2" data-testid="console-raw" on:input=move |ev| raw.set(event_target_value(&ev))></textarea>
            </label>
            {move || problem.get().map(|p| view! { <p class="error">{p}</p> })}
            <button type="button" class="button primary" data-testid="console-call" on:click=submit>
                "Call tool"
            </button>
{move || {
                current(&call_result)
                    .map(|result| {
                        let text = match result {
                            Ok(r) => serde_json::to_string_pretty(&r).unwrap_or_default(),
                            Err(e) => e.to_string(),
                        };
                        view! { <pre class="json console-result" data-testid="console-result">{text}</pre> }
                    })
            }}
        </section>
    }
    .into_any()
}
