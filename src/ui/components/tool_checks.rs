//! Tool checkboxes grouped by category (the catalogue's column groups), for
//! an agent's tools, a vibe's core and app tools, and a workflow step's
//! tools.

use crate::domain::catalogue::{by_category, CatalogueTool};
use crate::domain::ids::ToolId;
use leptos::prelude::*;

/// A fieldset of checkboxes, one per tool in `tools`, grouped by category;
/// `list` reads and `toggle` flips membership of the edited list. Each box
/// is `data-testid="{prefix}-{tool}"` and labelled with the tool's id.
#[component]
pub fn ToolChecks<R, W>(
    /// The tools offered, in catalogue order.
    tools: Vec<CatalogueTool>,
    /// The legend.
    legend: &'static str,
    /// `data-testid` prefix of each box (`agent-tool`).
    prefix: &'static str,
    /// Whether a tool is ticked now.
    ticked: R,
    /// Ticks or unticks a tool.
    toggle: W,
) -> impl IntoView
where
    R: Fn(&str) -> bool + Copy + Send + Sync + 'static,
    W: Fn(ToolId, bool) + Copy + Send + Sync + 'static,
{
    let groups = by_category(&tools);
    view! {
        <fieldset class="tool-checks" data-testid=prefix>
            <legend>{legend}</legend>
            <For each=move || groups.clone() key=|(category, _)| category.clone() let:group>
                <div class="tool-group">
                    <span class="muted small tool-category">{group.0.clone()}</span>
                    <For each=move || group.1.clone() key=|t| t.id.clone() let:tool>
                        <ToolCheck tool prefix ticked toggle />
                    </For>
                </div>
            </For>
        </fieldset>
    }
    .into_any()
}

/// One box: the tool's id, its description as the tooltip.
#[component]
fn ToolCheck<R, W>(tool: CatalogueTool, prefix: &'static str, ticked: R, toggle: W) -> impl IntoView
where
    R: Fn(&str) -> bool + Copy + Send + Sync + 'static,
    W: Fn(ToolId, bool) + Copy + Send + Sync + 'static,
{
    let id = tool.id.clone();
    let name = id.to_string();
    let on = {
        let name = name.clone();
        move || ticked(&name)
    };
    view! {
        <label class="small tool-check" title=tool.description.clone()>
            <input
                type="checkbox"
                data-testid=format!("{prefix}-{name}")
                checked=untrack(on.clone())
                prop:checked=on
                on:change=move |ev| toggle(id.clone(), event_target_checked(&ev))
            />
            <code>{name.clone()}</code>
        </label>
    }
}

/// Adds or removes `tool` in `list`, keeping order and each tool once.
pub fn set_tool(list: &mut Vec<ToolId>, tool: ToolId, on: bool) {
    list.retain(|t| *t != tool);
    if on {
        list.push(tool);
    }
}
