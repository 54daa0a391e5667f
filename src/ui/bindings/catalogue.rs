//! Catalogue management under the matrix: add or edit a tool (id, name,
//! description, category, JSON Schema) or a workflow, with each problem
//! shown next to its field. Saving reloads the page's data, since the
//! matrix's columns and rows come from the catalogue.

use crate::api::bindings::{SaveTool, SaveWorkflow};
use crate::domain::catalogue::{
    tool_fields, tool_from_fields, workflow_fields, workflow_from_fields, CatalogueTool,
    FormFields, FormProblems, Workflow,
};
use crate::error::ApiError;
use crate::ui::components::FieldProblem;
use crate::ui::current;
use leptos::prelude::*;

/// One editor form's state: what is typed, whether it creates or edits, and
/// the problems to show.
#[derive(Clone, Copy)]
struct Form {
    fields: RwSignal<FormFields>,
    create: RwSignal<bool>,
    problems: RwSignal<FormProblems>,
}

impl Form {
    fn new() -> Self {
        Self {
            fields: RwSignal::new(FormFields::new()),
            create: RwSignal::new(true),
            problems: RwSignal::new(FormProblems::new()),
        }
    }

    /// Starts editing `fields`, or (with `None`) a new one.
    fn load(self, fields: Option<FormFields>) {
        self.create.set(fields.is_none());
        self.fields.set(fields.unwrap_or_default());
        self.problems.set(FormProblems::new());
    }

    /// Reacts to the save's outcome: a clean form and a reload, or the
    /// server's problem next to its field (`form` when it has none).
    fn saved(self, result: Option<Result<(), ApiError>>, reload: RwSignal<u32>) {
        match result {
            Some(Ok(())) => {
                self.fields.set(FormFields::new());
                self.create.set(true);
                reload.update(|n| *n += 1);
            }
            Some(Err(ApiError::Invalid(e))) => self
                .problems
                .set(FormProblems::from([(e.field.clone(), e.rule.clone())])),
            Some(Err(e)) => self
                .problems
                .set(FormProblems::from([("form".to_owned(), e.to_string())])),
            None => {}
        }
    }

    /// A labelled input (or textarea) for field `key`, with its problem.
    fn input(
        self,
        key: &'static str,
        label: &'static str,
        prefix: &'static str,
        multiline: bool,
    ) -> AnyView {
        let Form {
            fields, problems, ..
        } = self;
        let id = format!("{prefix}-{key}");
        let value = move || fields.with(|f| f.get(key).cloned().unwrap_or_default());
        let on_input = move |ev| {
            let v = event_target_value(&ev);
            fields.update(|f| {
                f.insert(key, v);
            });
        };
        view! {
            <div class="field">
                <label for=id.clone()>{label}</label>
                {if multiline {
                    view! { <textarea id=id rows="4" prop:value=value on:input=on_input></textarea> }.into_any()
                } else {
                    view! { <input id=id type="text" prop:value=value on:input=on_input /> }.into_any()
                }}
                <FieldProblem message=move || problems.with(|e| e.get(key).cloned()) />
            </div>
        }
        .into_any()
    }

    /// A labelled checkbox for field `key`, kept as `"true"` or `""` like
    /// the form parser reads it, so editing a tool never resets it.
    fn checkbox(self, key: &'static str, label: &'static str, prefix: &'static str) -> AnyView {
        let fields = self.fields;
        let id = format!("{prefix}-{key}");
        let on =
            move || fields.with(|f| matches!(f.get(key).map(String::as_str), Some("true" | "on")));
        view! {
            <div class="field">
                <label>
                    <input
                        id=id
                        type="checkbox"
                        prop:checked=on
                        on:change=move |ev| {
                            let v = if event_target_checked(&ev) { "true" } else { "" };
                            fields.update(|f| {
                                f.insert(key, v.to_owned());
                            });
                        }
                    />
                    " "
                    {label}
                </label>
            </div>
        }
        .into_any()
    }

    /// The problem that belongs to no field, as a line of its own.
    fn form_problem(self) -> impl IntoView {
        let problems = self.problems;
        move || {
            problems
                .with(|e| e.get("form").cloned())
                .map(|e| view! { <p class="error">{e}</p> })
        }
    }
}

/// Add or edit catalogue tools and workflows, with errors next to fields.
/// A tool is saved on top of `catalogue_version`, the catalogue version the
/// page loaded: a change saved elsewhere since is reported, not overwritten.
#[component]
pub fn CatalogueEditor(
    tools: Vec<CatalogueTool>,
    workflows: Vec<Workflow>,
    catalogue_version: i64,
    reload: RwSignal<u32>,
) -> impl IntoView {
    let save_tool = ServerAction::<SaveTool>::new();
    let save_workflow = ServerAction::<SaveWorkflow>::new();
    let (tool_saved, workflow_saved) = (save_tool.value(), save_workflow.value());
    let tool = Form::new();
    let workflow = Form::new();
    let all_tools = StoredValue::new(tools);
    let all_workflows = StoredValue::new(workflows);

    Effect::new(move |_| tool.saved(current(&tool_saved), reload));
    Effect::new(move |_| workflow.saved(current(&workflow_saved), reload));

    let submit_tool = move |_| match tool_from_fields(&tool.fields.get_untracked()) {
        Ok(t) => {
            tool.problems.set(FormProblems::new());
            save_tool.dispatch(SaveTool {
                tool: t,
                create: tool.create.get_untracked(),
                version: Some(catalogue_version),
            });
        }
        Err(problems) => tool.problems.set(problems),
    };
    let submit_workflow = move |_| match workflow_from_fields(&workflow.fields.get_untracked()) {
        Ok(w) => {
            workflow.problems.set(FormProblems::new());
            save_workflow.dispatch(SaveWorkflow {
                workflow: w,
                create: workflow.create.get_untracked(),
            });
        }
        Err(problems) => workflow.problems.set(problems),
    };

    // Each column is its own boxed view: one nested view type for the
    // whole editor overflowed a debug build's 2 MiB worker stack.
    let tool_column = view! {
        <div>
            <h3>{move || if tool.create.get() { "Add a tool" } else { "Edit tool" }}</h3>
            <select
                aria-label="Edit an existing tool"
                on:change=move |ev| {
                    let id = event_target_value(&ev);
                    tool.load(all_tools.with_value(|list| list.iter().find(|t| t.id.as_str() == id).map(tool_fields)));
                }
            >
                <option value="">"New tool…"</option>
                {all_tools
                    .get_value()
                    .into_iter()
                    .map(|t| view! { <option value=t.id.to_string()>{format!("{} ({})", t.name, t.id)}</option> })
                    .collect_view()}
            </select>
            {tool.input("id", "Id (function name)", "tool", false)}
            {tool.input("name", "Name", "tool", false)}
            {tool.input("description", "Description (the model reads it)", "tool", false)}
            {tool.input("category", "Category", "tool", false)}
            {tool.input("parameters", "Parameters (JSON Schema)", "tool", true)}
            {tool.input("requires", "Requires checks (comma-separated)", "tool", false)}
            {tool.input("effects", "Effects of its result (JSON list)", "tool", true)}
            {tool.checkbox("ultravoxBuiltin", "One of Ultravox's own tools (selected by name, not declared)", "tool")}
            <p class="muted small">
                "An effect: "
                <code>{r#"{"when": "/verified", "equals": true, "then": {"checks": {"identity_verified": true}, "step": "identity_verified"}, "otherwise": {"checks": {"identity_verified": false}}}"#}</code>
                ". Without "<code>"when"</code>" it always applies "<code>"then"</code>"."
            </p>
            {tool.form_problem()}
            <button type="button" class="button primary" on:click=submit_tool>
                "Save tool"
            </button>
        </div>
    }
    .into_any();
    let workflow_column = view! {
        <div>
            <h3>{move || if workflow.create.get() { "Add a workflow" } else { "Edit workflow" }}</h3>
            <select
                aria-label="Edit an existing workflow"
                on:change=move |ev| {
                    let id = event_target_value(&ev);
                    workflow.load(all_workflows.with_value(|list| list.iter().find(|w| w.id.as_str() == id).map(workflow_fields)));
                }
            >
                <option value="">"New workflow…"</option>
                {all_workflows
                    .get_value()
                    .into_iter()
                    .map(|w| view! { <option value=w.id.to_string()>{w.name.clone()}</option> })
                    .collect_view()}
            </select>
            {workflow.input("id", "Id (slug)", "workflow", false)}
            {workflow.input("name", "Name", "workflow", false)}
            {workflow.input("description", "Description", "workflow", true)}
            {workflow.form_problem()}
            <button type="button" class="button primary" on:click=submit_workflow>
                "Save workflow"
            </button>
        </div>
    }
    .into_any();
    view! {
        <section class="panel" data-testid="catalogue">
            <h2>"Catalogue"</h2>
            <div class="two-col">
                {tool_column}
                {workflow_column}
            </div>
        </section>
    }
    .into_any()
}
