//! Call stages: what an agent switch answers Ultravox (`new-stage`, with the
//! new agent's prompt, voice and tools) and the hang-up, prepared once per
//! agent so a switch only fills in the session's token.

use super::tools::{
    body_parameters, credential_parameter, selected_tool_for, tool_path, HttpTarget, Runner,
    NEW_STAGE,
};
use crate::domain::declaration::FunctionDeclaration;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A tool of a stage: what the model is told and who runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageTool {
    /// The declaration.
    pub declaration: FunctionDeclaration,
    /// Who runs it.
    pub runner: Runner,
}

/// What an agent's stage gets: its prompt, voice and tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stage {
    /// The rendered system prompt.
    pub system_prompt: String,
    /// The agent's voice.
    pub voice: String,
    /// Its tools, in Ultravox's shape without an [`HttpTarget`].
    pub selected_tools: Vec<Value>,
    /// Its tools and who runs each, to render them for a session.
    #[serde(default)]
    pub tools: Vec<StageTool>,
}

impl Stage {
    /// A stage of `tools`: `selected_tools` rendered without a target.
    pub fn new(system_prompt: String, voice: String, tools: Vec<StageTool>) -> Self {
        let selected_tools = tools
            .iter()
            .map(|t| selected_tool_for(&t.declaration, t.runner, None))
            .collect();
        Self {
            system_prompt,
            voice,
            selected_tools,
            tools,
        }
    }

    /// Its tools in Ultravox's shape for `target`'s session (the same as
    /// `selected_tools` without one).
    pub fn selected_tools_for(&self, target: Option<&HttpTarget<'_>>) -> Vec<Value> {
        self.tools
            .iter()
            .map(|t| selected_tool_for(&t.declaration, t.runner, target))
            .collect()
    }
}

/// One tool of a [`PreparedStage`], serialised once: fixed, or an HTTP
/// tool's JSON up to its static parameters (the session and credential
/// are filled in per answer).
#[derive(Debug, Clone, PartialEq)]
enum PreparedTool {
    /// The same for every session.
    Fixed(String),
    /// `{"temporaryTool":{"modelToolName":…,"description":…,"dynamicParameters":[…],`
    Http { head: String, name: String },
}

/// A stage with its JSON serialised once (when the rules are built), so
/// the answer to each `switchAgent` only escapes the words to say (and
/// for HTTP tools the session's URL and credential): the switch is on the
/// conversation's critical path.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedStage {
    /// The stage.
    pub stage: Stage,
    /// `{"systemPrompt":…,"voice":…,"selectedTools":[…],"toolResultText":`
    prefix: String,
    /// `{"systemPrompt":…,"voice":…,"selectedTools":[`
    head: String,
    /// The tools, for a session with an [`HttpTarget`].
    tools: Vec<PreparedTool>,
}

impl PreparedStage {
    /// Serialises `stage`'s parts.
    pub fn new(stage: Stage) -> Self {
        let head = format!(
            "{{\"systemPrompt\":{},\"voice\":{},\"selectedTools\":[",
            Value::String(stage.system_prompt.clone()),
            Value::String(stage.voice.clone()),
        );
        let prefix = format!(
            "{{\"systemPrompt\":{},\"voice\":{},\"selectedTools\":{},\"toolResultText\":",
            Value::String(stage.system_prompt.clone()),
            Value::String(stage.voice.clone()),
            Value::Array(stage.selected_tools.clone()),
        );
        let tools = stage.tools.iter().map(prepare_tool).collect();
        Self {
            stage,
            prefix,
            head,
            tools,
        }
    }

    /// The same answer as [`stage_change`], from the prepared parts.
    pub fn change(&self, tool_result_text: &str) -> Value {
        let mut result = String::with_capacity(self.prefix.len() + tool_result_text.len() + 8);
        result.push_str(&self.prefix);
        result.push_str(&serde_json::to_string(tool_result_text).unwrap_or_default());
        result.push('}');
        json!({"responseType": NEW_STAGE, "result": result})
    }

    /// [`change`](Self::change) with the tools Switchboard runs as HTTP
    /// tools of `target`'s session, so its calls after the switch still
    /// reach Switchboard.
    pub fn change_for(&self, target: &HttpTarget<'_>, tool_result_text: &str) -> Value {
        json!({"responseType": NEW_STAGE, "result": self.body_for(target, tool_result_text)})
    }

    /// The new stage itself, as an HTTP tool's answer body:
    /// `{"systemPrompt","voice","selectedTools","toolResultText"}`.
    pub fn body_for(&self, target: &HttpTarget<'_>, tool_result_text: &str) -> String {
        let mut out = String::with_capacity(self.prefix.len() + 256 * self.tools.len());
        out.push_str(&self.head);
        for (i, tool) in self.tools.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match tool {
                PreparedTool::Fixed(json) => out.push_str(json),
                PreparedTool::Http { head, name } => {
                    out.push_str(head);
                    out.push_str("\"staticParameters\":[");
                    out.push_str(&credential_parameter(target.token).to_string());
                    out.push_str("],\"http\":{\"baseUrlPattern\":");
                    let url = format!("{}{}", target.origin, tool_path(target.session, name));
                    out.push_str(&Value::String(url).to_string());
                    out.push_str(",\"httpMethod\":\"POST\"}}}");
                }
            }
        }
        out.push_str("],\"toolResultText\":");
        out.push_str(&serde_json::to_string(tool_result_text).unwrap_or_default());
        out.push('}');
        out
    }
}

/// A stage tool's prepared JSON: an HTTP tool's when Switchboard runs it,
/// else the one shape every session gets.
fn prepare_tool(tool: &StageTool) -> PreparedTool {
    let Runner::Switchboard { .. } = tool.runner else {
        return PreparedTool::Fixed(
            selected_tool_for(&tool.declaration, tool.runner, None).to_string(),
        );
    };
    let d = &tool.declaration;
    PreparedTool::Http {
        head: format!(
            "{{\"temporaryTool\":{{\"modelToolName\":{},\"description\":{},\"dynamicParameters\":{},",
            Value::String(d.name.clone()),
            Value::String(d.description.clone()),
            serde_json::to_string(&body_parameters(&d.parameters)).unwrap_or_default(),
        ),
        name: d.name.clone(),
    }
}

/// The answer to a `switchAgent` call in Ultravox's stage-change shape:
/// `{"responseType":"new-stage","result":"<JSON of the stage and what to
/// say>"}`.
pub fn stage_change(stage: &Stage, tool_result_text: &str) -> Value {
    let result = json!({
        "systemPrompt": stage.system_prompt,
        "voice": stage.voice,
        "toolResultText": tool_result_text,
        "selectedTools": stage.selected_tools,
    });
    json!({"responseType": NEW_STAGE, "result": result.to_string()})
}
