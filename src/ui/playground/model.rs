//! The playground's plugin: a small CODAP-like data app that runs in the
//! browser on `/playground`, registers its tools with a session, and
//! executes the agent's relayed calls on its table and graph.
//!
//! Pure: its state, which tools make sense in that state (`createTable`
//! until there is a table, then `addRow`, and `createGraph` only once the
//! table has rows — the seed's conditional tool sets), and what each call
//! does. The page only moves these values over HTTP.
//!
//! It lives beside its page, not in `domain`: only the playground page uses it
//! (pure all the same, and compiled into that page's bundle only).

use crate::domain::plugin::ToolDefinition;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Most rows the playground's table holds.
pub const MAX_ROWS: usize = 200;
/// Longest table title or row label.
pub const MAX_LABEL_CHARS: usize = 60;

/// One row: a label and a number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// What the row is.
    pub label: String,
    /// Its value.
    pub value: f64,
}

/// The plugin's data: a table (once created), its rows, and a graph of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Playground {
    /// The table's title, once created.
    pub table: Option<String>,
    /// Its rows, in order.
    pub rows: Vec<Row>,
    /// The graph's title, once created.
    pub graph: Option<String>,
}

fn tool(name: &str, description: &str, parameters: Value) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        description: description.into(),
        parameters: parameters.into(),
    }
}

/// The tools that make sense now, in a stable order.
pub fn tools_for(state: &Playground) -> Vec<ToolDefinition> {
    let mut tools = Vec::new();
    if state.table.is_none() {
        tools.push(tool(
            "createTable",
            "Creates the data table (label and value columns). Call it first; addRow becomes available after.",
            json!({"type": "object", "properties": {"title": {"type": "string", "minLength": 1, "maxLength": MAX_LABEL_CHARS}}, "required": ["title"], "additionalProperties": false}),
        ));
    } else {
        tools.push(tool(
            "addRow",
            "Adds one row to the data table. Returns the row count.",
            json!({"type": "object", "properties": {"label": {"type": "string", "minLength": 1, "maxLength": MAX_LABEL_CHARS}, "value": {"type": "number"}}, "required": ["label", "value"], "additionalProperties": false}),
        ));
    }
    if !state.rows.is_empty() {
        tools.push(tool(
            "createGraph",
            "Draws a bar graph of the table's rows. Available once the table has rows.",
            json!({"type": "object", "properties": {"title": {"type": "string", "minLength": 1, "maxLength": MAX_LABEL_CHARS}}, "required": ["title"], "additionalProperties": false}),
        ));
    }
    tools
}

fn text_arg(arguments: &Value, key: &str) -> Result<String, String> {
    let text = arguments
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| format!("`{key}` is required"))?;
    if text.chars().count() > MAX_LABEL_CHARS {
        return Err(format!(
            "`{key}` must be at most {MAX_LABEL_CHARS} characters"
        ));
    }
    Ok(text.to_owned())
}

/// Runs call `name` on `state`: its result, or why it could not run (the
/// plugin sends that back as the call's error).
pub fn execute(state: &mut Playground, name: &str, arguments: &Value) -> Result<Value, String> {
    match name {
        "createTable" => {
            if state.table.is_some() {
                return Err("there is already a table".into());
            }
            let title = text_arg(arguments, "title")?;
            state.table = Some(title.clone());
            Ok(json!({"table": title, "columns": ["label", "value"]}))
        }
        "addRow" => {
            if state.table.is_none() {
                return Err("there is no table yet; call createTable first".into());
            }
            if state.rows.len() >= MAX_ROWS {
                return Err(format!("the table is full ({MAX_ROWS} rows)"));
            }
            let label = text_arg(arguments, "label")?;
            let value = arguments
                .get("value")
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite())
                .ok_or("`value` must be a number")?;
            state.rows.push(Row { label, value });
            Ok(json!({"rows": state.rows.len()}))
        }
        "createGraph" => {
            if state.rows.is_empty() {
                return Err("the table has no rows to draw".into());
            }
            let title = text_arg(arguments, "title")?;
            state.graph = Some(title.clone());
            Ok(json!({"graph": title, "bars": state.rows.len()}))
        }
        other => Err(format!("the playground has no tool `{other}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(state: &Playground) -> Vec<String> {
        tools_for(state).into_iter().map(|t| t.name).collect()
    }

    #[test]
    fn the_tools_follow_the_data() {
        let mut p = Playground::default();
        assert_eq!(names(&p), ["createTable"]);
        execute(&mut p, "createTable", &json!({"title": "Mammals"})).unwrap();
        assert_eq!(names(&p), ["addRow"]);
        assert_eq!(
            execute(&mut p, "addRow", &json!({"label": "Cats", "value": 3})).unwrap(),
            json!({"rows": 1})
        );
        assert_eq!(names(&p), ["addRow", "createGraph"]);
        assert_eq!(
            execute(&mut p, "createGraph", &json!({"title": "Counts"})).unwrap(),
            json!({"graph": "Counts", "bars": 1})
        );
    }

    #[test]
    fn calls_that_cannot_run_say_why() {
        let mut p = Playground::default();
        assert!(
            execute(&mut p, "addRow", &json!({"label": "a", "value": 1}))
                .unwrap_err()
                .contains("createTable first")
        );
        execute(&mut p, "createTable", &json!({"title": "T"})).unwrap();
        assert!(execute(&mut p, "createTable", &json!({"title": "T"})).is_err());
        assert_eq!(
            execute(&mut p, "addRow", &json!({"label": "a", "value": "x"})).unwrap_err(),
            "`value` must be a number"
        );
        assert!(execute(&mut p, "addRow", &json!({"label": "", "value": 1})).is_err());
        assert!(execute(&mut p, "createGraph", &json!({"title": "G"})).is_err());
        assert!(execute(&mut p, "dropTable", &json!({})).is_err());
    }

    #[test]
    fn every_tool_passes_the_registration_checks() {
        let mut p = Playground::default();
        execute(&mut p, "createTable", &json!({"title": "T"})).unwrap();
        execute(&mut p, "addRow", &json!({"label": "a", "value": 1})).unwrap();
        let mut all = tools_for(&Playground::default());
        all.extend(tools_for(&p));
        for t in all {
            crate::domain::plugin::check_definition(&t, &|_| false, &|_| Ok(())).unwrap();
        }
    }
}
