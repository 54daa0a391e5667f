//! What the edited agent would get, beside its editor: the rendered system
//! prompt, its `selectedTools` and the exact stage-change answer a
//! `switchAgent` to it returns, computed in the browser as the admin types
//! (the same pure functions the server runs), and the token cost of prompt
//! plus tools: estimated at once, counted exactly by the server after a
//! pause in typing (the tokenizer is too large to ship to the browser).

use crate::api::vibes::preview;
use crate::domain::vibe::{Agent, Vibe};
use crate::ui::agents::Shared;
use leptos::prelude::*;

/// The preview of `edited` staged in `vibe`, with the rest of the set as
/// loaded.
#[component]
pub fn Preview(set: Shared, edited: RwSignal<Agent>, vibe: Vibe) -> impl IntoView {
    let vibe_id = vibe.id.to_string();
    let vibe = StoredValue::new(vibe);
    let built = Memo::new(move |_| {
        edited.with(|a| {
            set.with(|s| {
                let agents: Vec<Agent> = s.agents.iter().map(|a| a.value.clone()).collect();
                vibe.with_value(|v| preview(a, v, &agents, &s.tools))
            })
        })
    });
    let exact = RwSignal::new(None::<Result<usize, String>>);
    let generation = StoredValue::new(0u64);
    Effect::new(move |_| {
        let agent = edited.get();
        let mine = generation.get_value() + 1;
        generation.set_value(mine);
        #[cfg(feature = "hydrate")]
        {
            let vibe_id = vibe_id.clone();
            leptos::task::spawn_local(async move {
                // `try_get_value`: the editor may have been left while waiting.
                gloo_timers::future::TimeoutFuture::new(600).await;
                if generation.try_get_value() != Some(mine) {
                    return;
                }
                let result = crate::api::vibes::agent_preview(agent, vibe_id)
                    .await
                    .map(|p| p.tokens.unwrap_or_default())
                    .map_err(|e| e.to_string());
                if generation.try_get_value() == Some(mine) {
                    exact.set(Some(result));
                }
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (agent, &vibe_id, exact);
    });
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
    view! {
        <section class="panel preview" data-testid="agent-preview">
            <h2>{move || vibe.with_value(|v| format!("What it gets in {}", v.name))}</h2>
            <dl class="stats" data-testid="agent-tokens">
                <div>
                    <dt>"Prompt + tools, estimate (chars ÷ 4)"</dt>
                    <dd data-testid="agent-estimate">
                        {move || built.with(|b| format!("~{}", b.token_text.chars().count().div_ceil(4)))}
                    </dd>
                </div>
                <div>
                    <dt>"Prompt + tools, exact (o200k_base)"</dt>
                    <dd data-testid="agent-exact-tokens">
                        {move || match exact.get() {
                            None => "counting…".to_owned(),
                            Some(Ok(n)) => n.to_string(),
                            Some(Err(e)) => format!("unavailable ({e})"),
                        }}
                    </dd>
                </div>
                <div>
                    <dt>"Tools"</dt>
                    <dd>{move || built.with(|b| b.stage.selected_tools.len().to_string())}</dd>
                </div>
            </dl>
            <h3>"System prompt"</h3>
            <pre class="prompt" data-testid="agent-preview-prompt">
                {move || built.with(|b| b.stage.system_prompt.clone())}
            </pre>
            <h3>"Selected tools (the call's selectedTools)"</h3>
            <pre class="json" data-testid="selected-tools">
                {move || built.with(|b| pretty(&serde_json::Value::from(b.stage.selected_tools.clone())))}
            </pre>
            <h3>"Stage change (the answer to switchAgent)"</h3>
            <pre class="json" data-testid="stage-change">
                {move || built.with(|b| pretty(&b.stage_change))}
            </pre>
        </section>
    }
    .into_any()
}
