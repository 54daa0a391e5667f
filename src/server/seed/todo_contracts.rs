//! A database made before the todo tools took seed 003's contracts (issue
//! #36) still holds their old catalogue entries, whose schemas ask for
//! `text`, `todoId`, `name`, `status` and `query`: the model would be told
//! arguments the built-in todo tools no longer read. At every start, each
//! todo tool whose stored `parameters` are exactly the old shipped ones
//! gets the new name, description and parameters (its category,
//! requirements and effects stay), as one catalogue version by `system`,
//! so the change is in the history like any other. A tool an admin has
//! given other parameters is left as it is, with a warning in the log.

use crate::domain::actor::Actor;
use crate::domain::catalogue::{object, CatalogueTool};
use crate::domain::todos::todo_tools;
use crate::server::catalogue::{commit, field_as_is, plan};
use crate::server::platform::db::Db;
use crate::server::store::bindings::tools;
use crate::server::ServerError;
use serde_json::{json, Value};

/// The parameters the todo tools had before (the catalogue entries
/// shipped with issue #12), by tool id.
fn old_parameters(id: &str) -> Option<Value> {
    let todo_id = json!({"type": "integer", "minimum": 1, "description": "The todo's id, as an earlier result gave it"});
    let text = json!({"type": "string", "minLength": 1, "maxLength": 200, "description": "What is to be done, one line"});
    let list = |what: &str| json!({"type": "string", "minLength": 1, "maxLength": 40, "description": what});
    Some(match id {
        "createTodo" => object(
            json!({"text": text, "listName": list("An existing list to add to instead of the active one")}),
            &["text"],
        ),
        "toggleTodo" | "removeTodo" => object(json!({"todoId": todo_id}), &["todoId"]),
        "updateTodo" => object(
            json!({"todoId": todo_id, "text": text}),
            &["todoId", "text"],
        ),
        "filterTodos" => object(
            json!({
                "status": {"type": "string", "enum": ["all", "open", "done"], "description": "Which todos: all (when omitted), open or done"},
                "query": {"type": "string", "maxLength": 200, "description": "Words the todo's text must contain"}
            }),
            &[],
        ),
        "createList" => object(json!({"name": list("The new list's name")}), &["name"]),
        "switchList" => object(json!({"name": list("The list to switch to")}), &["name"]),
        _ => return None,
    })
}

/// The stored todo tools of `stored` that still have their old
/// parameters, as they become: the current contract's name, description
/// and parameters on the stored tool.
pub fn upgraded(stored: &[CatalogueTool]) -> Vec<CatalogueTool> {
    let current = todo_tools();
    stored
        .iter()
        .filter_map(|tool| {
            let old = old_parameters(tool.id.as_str())?;
            let new = current.iter().find(|t| t.id == tool.id)?;
            if tool.parameters != old {
                if tool.parameters != new.parameters {
                    tracing::warn!(tool = %tool.id, "a todo tool has parameters of its own; the built-in reads seed 003's (docs/api.md, Todo tools)");
                }
                return None;
            }
            Some(CatalogueTool {
                name: new.name.clone(),
                description: new.description.clone(),
                parameters: new.parameters.clone(),
                ..tool.clone()
            })
        })
        .collect()
}

/// Gives the stored todo tools with the old parameters the new contract
/// (see the module doc); nothing on a database without them.
pub async fn upgrade(db: &Db) -> Result<(), ServerError> {
    let changed = upgraded(&tools(db).await?);
    if changed.is_empty() {
        return Ok(());
    }
    let system = Actor::system("Todo tools with seed 003's contracts");
    let planned = plan(db, &system, &changed, None, &field_as_is).await?;
    commit(db, &planned, &system, Some("Seed 003's todo contracts")).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The old entries, as `todo_tools` made them before.
    fn old_tools() -> Vec<CatalogueTool> {
        todo_tools()
            .into_iter()
            .map(|mut t| {
                t.parameters = old_parameters(t.id.as_str()).unwrap();
                t.name = "Old name".into();
                t.description = "Old description with todoId.".into();
                t.category = "my-todos".into();
                t
            })
            .collect()
    }

    #[test]
    fn old_todo_tools_get_the_new_contract_and_keep_their_category() {
        let new = todo_tools();
        let up = upgraded(&old_tools());
        assert_eq!(up.len(), 7);
        for (up, new) in up.iter().zip(&new) {
            assert_eq!(up.parameters, new.parameters);
            assert_eq!(up.description, new.description);
            assert_eq!(up.category, "my-todos");
        }
    }

    #[test]
    fn current_and_customised_tools_are_left_alone() {
        assert!(upgraded(&todo_tools()).is_empty());
        let mut custom = old_tools();
        custom[0].parameters["properties"]["text"]["maxLength"] = json!(80);
        assert_eq!(upgraded(&custom).len(), 6);
        assert!(upgraded(&crate::server::seed::catalogue::demo_catalogue()).is_empty());
    }
}
