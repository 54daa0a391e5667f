//! The preview beside the lesson editor: exactly what the tutor model will
//! get (system prompt, function declarations in the chosen API format) and
//! what it costs in tokens, estimated at once and counted exactly after a
//! pause in typing. Both figures cover the same text (prompt plus
//! declarations, `BuiltPrompt::token_text`), so they can be compared.

use crate::domain::declaration::export::export;
use crate::domain::declaration::DeclarationFormat;
use crate::domain::lesson::optimise::{optimise_choice, OptimiseMode};
use crate::domain::lesson::prompt::BuiltPrompt;
use crate::domain::lesson::tools::{tutor_tool, TUTOR_TOOLS};
use leptos::prelude::*;

/// The assembled prompt, declarations, optimisation stats and token costs.
#[component]
pub fn Preview(
    built: Memo<BuiltPrompt>,
    optimise: RwSignal<Option<OptimiseMode>>,
    format: RwSignal<DeclarationFormat>,
) -> impl IntoView {
    let exact = RwSignal::new(None::<Result<usize, String>>);
    let generation = StoredValue::new(0u64);
    // Exact BPE count of the text the estimate covers: asked of the server
    // after 600 ms without changes.
    Effect::new(move |_| {
        let text = built.with(|b| b.token_text());
        let mine = generation.get_value() + 1;
        generation.set_value(mine);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            // `try_get_value`: the editor may have been left while waiting.
            gloo_timers::future::TimeoutFuture::new(600).await;
            if generation.try_get_value() != Some(mine) {
                return;
            }
            let result = crate::api::lessons::count_tokens(text)
                .await
                .map(|c| c.tokens)
                .map_err(|e| e.to_string());
            if generation.try_get_value() == Some(mine) {
                exact.set(Some(result));
            }
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (text, exact);
    });
    let declarations = move || {
        let value = built.with(|b| export(&b.declarations, format.get()));
        serde_json::to_string_pretty(&value).unwrap_or_default()
    };
    view! {
        <section class="panel preview" data-testid="preview">
            <div class="split">
                <h2>"What the tutor gets"</h2>
                <select
                    aria-label="Optimisation"
                    data-testid="optimise-mode"
                    on:change=move |ev| {
                        optimise.set(optimise_choice(&event_target_value(&ev)))
                    }
                >
                    <option value="normal">"Optimised"</option>
                    <option value="aggressive">"Aggressively optimised"</option>
                    <option value="off">"As written"</option>
                </select>
            </div>
            <dl class="stats" data-testid="token-stats">
                <div>
                    <dt>"Prompt + declarations, estimate (chars ÷ 4)"</dt>
                    <dd data-testid="estimate">{move || format!("~{}", built.with(|b| b.estimated_tokens))}</dd>
                </div>
                <div>
                    <dt>"Prompt + declarations, exact (o200k_base)"</dt>
                    <dd data-testid="exact-tokens">
                        {move || match exact.get() {
                            None => "counting…".to_owned(),
                            Some(Ok(n)) => n.to_string(),
                            Some(Err(e)) => format!("unavailable ({e})"),
                        }}
                    </dd>
                </div>
                <div>
                    <dt>"Optimiser saved"</dt>
                    <dd data-testid="saved">
                        {move || {
                            built
                                .with(|b| {
                                    format!(
                                        "{} tokens ({}%) · {} → {} chars",
                                        b.stats.saved_tokens,
                                        percent(b.stats.saved_percent),
                                        b.stats.original_chars,
                                        b.stats.optimised_chars,
                                    )
                                })
                        }}
                    </dd>
                </div>
            </dl>
            <h3>"System prompt"</h3>
            <pre class="prompt" data-testid="preview-prompt">
                {move || built.with(|b| b.system_prompt.clone())}
            </pre>
            <div class="split">
                <h3>"Function declarations"</h3>
                <select
                    aria-label="Declaration format"
                    data-testid="declaration-format"
                    on:change=move |ev| {
                        if let Ok(f) = DeclarationFormat::parse(&event_target_value(&ev)) {
                            format.set(f);
                        }
                    }
                >
                    {DeclarationFormat::ALL
                        .into_iter()
                        .map(|f| view! { <option value=f.as_str()>{f.label()}</option> })
                        .collect_view()}
                </select>
            </div>
            <pre class="json" data-testid="preview-declarations">{declarations}</pre>
            <h3>"Token cost per tool"</h3>
            <table class="table compact" data-testid="tool-costs">
                <thead>
                    <tr>
                        <th>"Tool"</th>
                        <th>"Declaration"</th>
                        <th>"Instruction"</th>
                        <th>"Total"</th>
                    </tr>
                </thead>
                <tbody>
                    {move || {
                        built
                            .with(|b| b.tool_costs.clone())
                            .into_iter()
                            .map(|c| {
                                let name = tutor_tool(&c.tool_id).map_or_else(|| c.tool_id.to_string(), |t| t.name.to_owned());
                                view! {
                                    <tr>
                                        <td>{name}</td>
                                        <td>{format!("~{}", c.declaration_tokens)}</td>
                                        <td>{format!("~{}", c.instruction_tokens)}</td>
                                        <td>{format!("~{}", c.total_tokens)}</td>
                                    </tr>
                                }
                            })
                            .collect_view()
                    }}
                </tbody>
            </table>
            <p class="muted small">{format!("{} tutor tools in the catalogue.", TUTOR_TOOLS.len())}</p>
        </section>
    }
    .into_any()
}

/// A percentage the optimiser rounded to one decimal, as `f64`'s `Display`
/// writes it ("12.5", "40", "0"), from whole tenths: formatting the float
/// itself compiled `f64`'s shortest-representation printer (about 8 KB)
/// into the editor's bundle for this one figure.
fn percent(value: f64) -> String {
    let tenths = (value * 10.0).round() as i64;
    let sign = if tenths < 0 { "-" } else { "" };
    let (whole, tenth) = (tenths.unsigned_abs() / 10, tenths.unsigned_abs() % 10);
    if tenth == 0 {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{tenth}")
    }
}

#[cfg(test)]
mod tests {
    use super::percent;

    #[test]
    fn percentages_read_as_the_float_would() {
        for value in [0.0, 12.5, 40.0, 99.9, 100.0, 0.1, 33.3, -2.5, 7.0] {
            assert_eq!(percent(value), value.to_string(), "{value}");
        }
    }
}
