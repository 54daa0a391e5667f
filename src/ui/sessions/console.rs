//! The admins' console on a session's page: call any catalogue tool
//! (refused ones too) as the agent would, with arguments from a form
//! generated from the tool's JSON Schema, or raw JSON. The same rules apply
//! as to a real agent, so it is how an admin tries them without an LLM.

use crate::api::sessions::ConsoleCall;
use crate::domain::catalogue::CatalogueTool;
use crate::ui::current;
use crate::ui::sessions::console_form::{console_arguments, fields, schema_of, ConsoleField};
use leptos::prelude::*;
use std::collections::BTreeMap;

/// The console: tool choice, the tool's fields, raw JSON, Call, result.
/// `tools` is the session's listing (what it may call now, described as
/// REST and MCP describe it), the rest of the catalogue, and then the
/// session's plugin tools, which come and go as the plugin registers them.
#[component]
pub fn Console(session_id: String, tools: Signal<Vec<CatalogueTool>>) -> impl IntoView {
    let selected = RwSignal::new(
        tools.with_untracked(|t| t.first().map(|t| t.id.to_string()).unwrap_or_default()),
    );
    let values = RwSignal::new(BTreeMap::<String, String>::new());
    let raw = RwSignal::new(String::new());
    let problem = RwSignal::new(None::<String>);
    let call = ServerAction::<ConsoleCall>::new();
    let call_result = call.value();
    let schema = move || tools.with(|list| schema_of(list, &selected.get()));
    let session_id = StoredValue::new(session_id);
    let submit = move |_| {
        problem.set(None);
        match console_arguments(&schema(), &values.get_untracked(), &raw.get_untracked()) {
            Ok(arguments) => {
                call.dispatch(ConsoleCall {
                    id: session_id.get_value(),
                    name: selected.get_untracked(),
                    arguments,
                });
            }
            Err(message) => problem.set(Some(message)),
        }
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
                        // A new tool starts blank: the last tool's fields,
                        // raw arguments and answer are not this one's.
                        selected.set(event_target_value(&ev));
                        values.set(Default::default());
                        raw.set(String::new());
                        problem.set(None);
                        call_result.set(None);
                    }
                >
                    <For each=move || tools.get() key=|t| t.id.clone() let:t>
                        {
                            let id = t.id.to_string();
                            let chosen = move || selected.get() == id;
                            view! { <option value=t.id.to_string() selected=chosen>{t.id.to_string()}</option> }
                        }
                    </For>
                </select>
            </label>
            {move || {
                fields(&schema())
                    .into_iter()
                    .map(|field| view! { <ConsoleInput field values /> })
                    .collect_view()
            }}
            <label class="field">
                <span>"…or raw JSON arguments"</span>
                <textarea
                    rows="2"
                    data-testid="console-raw"
                    prop:value=move || raw.get()
                    on:input=move |ev| raw.set(event_target_value(&ev))
                ></textarea>
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

/// One parameter's input: free text, or a choice for an `enum`; what is
/// typed goes into `values` under the parameter's name.
#[component]
fn ConsoleInput(field: ConsoleField, values: RwSignal<BTreeMap<String, String>>) -> impl IntoView {
    let ConsoleField {
        name,
        label,
        placeholder,
        options,
    } = field;
    let key = name.clone();
    let on_input = move |ev| {
        let v = event_target_value(&ev);
        values.update(|f| {
            f.insert(key.clone(), v);
        });
    };
    view! {
        <label class="field">
            <span>{label}</span>
            {if options.is_empty() {
                view! {
                    <input type="text" data-field=name placeholder=placeholder on:input=on_input />
                }
                    .into_any()
            } else {
                view! {
                    <select data-field=name on:change=on_input>
                        <option value="">"—"</option>
                        {options
                            .into_iter()
                            .map(|o| view! { <option value=o.clone()>{o.clone()}</option> })
                            .collect_view()}
                    </select>
                }
                    .into_any()
            }}
        </label>
    }
}
