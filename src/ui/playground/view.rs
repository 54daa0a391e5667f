//! What the playground's plugin holds, drawn: its table and its bar graph.

use crate::ui::playground::model::Playground;
use leptos::prelude::*;

/// The table (or a note that there is none yet).
#[component]
pub fn DataTable(state: RwSignal<Playground>) -> impl IntoView {
    move || {
        state.with(|p| match &p.table {
            None => view! { <p class="muted" data-testid="no-table">"No table yet: the agent creates one with createTable."</p> }
                .into_any(),
            Some(title) => {
                let rows = p
                    .rows
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        view! {
                            <tr data-testid="table-row">
                                <td>{i + 1}</td>
                                <td>{r.label.clone()}</td>
                                <td class="num">{r.value.to_string()}</td>
                            </tr>
                        }
                    })
                    .collect_view();
                view! {
                    <table class="data-table" data-testid="data-table">
                        <caption>{title.clone()}</caption>
                        <thead>
                            <tr><th>"#"</th><th>"Label"</th><th>"Value"</th></tr>
                        </thead>
                        <tbody>{rows}</tbody>
                    </table>
                }
                .into_any()
            }
        })
    }
}

/// The bar graph, once the agent drew one.
#[component]
pub fn BarGraph(state: RwSignal<Playground>) -> impl IntoView {
    move || {
        state.with(|p| {
            let title = p.graph.clone()?;
            let max = p.rows.iter().map(|r| r.value.abs()).fold(0.0_f64, f64::max).max(1e-9);
            let width = 40 * p.rows.len().max(1);
            let bars = p
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let h = (r.value.abs() / max * 100.0).round();
                    view! {
                        <g>
                            <rect x=(i * 40 + 6).to_string() y=(110.0 - h).to_string() width="28" height=h.to_string() class="bar">
                                <title>{format!("{}: {}", r.label, r.value)}</title>
                            </rect>
                            <text x=(i * 40 + 20).to_string() y="124" text-anchor="middle" class="bar-label">
                                {r.label.chars().take(5).collect::<String>()}
                            </text>
                        </g>
                    }
                })
                .collect_view();
            Some(view! {
                <figure class="bar-graph" data-testid="bar-graph">
                    <figcaption>{title}</figcaption>
                    <svg viewBox=format!("0 0 {width} 130") width=width.to_string() height="130" role="img">
                        {bars}
                    </svg>
                </figure>
            })
        })
    }
}
