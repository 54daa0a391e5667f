//! What an MCP server answers a request that names a method it serves but
//! whose params rmcp could not read (`"arguments": [1]` for `tools/call`).
//!
//! rmcp reads every request into its typed `ClientRequest`; one whose
//! params do not fit the named method's type falls through to
//! `CustomRequest`, which rmcp's default handler answers with -32601
//! "method not found": wrong for a method the server does serve, and it
//! names nothing the client could fix. Both of Switchboard's MCP servers
//! answer such a request here instead: -32602 (invalid params) naming the
//! method and what in its params did not fit, in serde's words, for the
//! methods that server serves.

use rmcp::model::{
    CallToolRequestParams, CustomRequest, ErrorCode, GetPromptRequestParams,
    InitializeRequestParams, PaginatedRequestParams,
};
use rmcp::ErrorData as McpError;
use serde::de::DeserializeOwned;

/// The methods besides `initialize` that the session MCP server serves.
pub const SESSION_METHODS: &[&str] = &["tools/list", "tools/call", "prompts/list", "prompts/get"];

/// The methods besides `initialize` that the workflow-editing MCP server
/// serves.
pub const WORKFLOW_METHODS: &[&str] = &["tools/list", "tools/call"];

/// The error for `request` to a server that serves `methods`: invalid
/// params when it names one of them or `initialize` (saying why its params
/// were refused), else method not found, as rmcp says it.
pub fn refused(request: &CustomRequest, methods: &[&str]) -> McpError {
    let method = request.method.as_str();
    if method != "initialize" && !methods.contains(&method) {
        return McpError::new(ErrorCode::METHOD_NOT_FOUND, request.method.clone(), None);
    }
    let why = match method {
        "tools/call" => unreadable::<CallToolRequestParams>(request),
        "prompts/get" => unreadable::<GetPromptRequestParams>(request),
        "initialize" => unreadable::<InitializeRequestParams>(request),
        _ => unreadable::<PaginatedRequestParams>(request),
    };
    McpError::invalid_params(
        format!(
            "the params of `{method}` could not be read: {}",
            why.unwrap_or_else(|| "they are missing".to_owned())
        ),
        None,
    )
}

/// Why `request`'s params are not a `T` (`None` when there are none).
fn unreadable<T: DeserializeOwned>(request: &CustomRequest) -> Option<String> {
    match request.params_as::<T>() {
        Err(e) => Some(e.to_string()),
        Ok(None) => None,
        // It fits now, so rmcp refused it for a reason of its own.
        Ok(Some(_)) => Some("they do not fit the method".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_served_method_with_bad_params_is_invalid_params_naming_why() {
        let e = refused(
            &CustomRequest::new(
                "tools/call",
                Some(json!({"name": "get_server_time", "arguments": [1]})),
            ),
            WORKFLOW_METHODS,
        );
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("`tools/call`"), "{}", e.message);
        assert!(
            e.message.contains("invalid type: sequence"),
            "{}",
            e.message
        );
        let e = refused(&CustomRequest::new("prompts/get", None), SESSION_METHODS);
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("missing"), "{}", e.message);
        // A method this server does not serve is not found, params or not.
        let e = refused(&CustomRequest::new("prompts/get", None), WORKFLOW_METHODS);
        assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
    }

    #[test]
    fn an_unknown_method_is_still_method_not_found() {
        let e = refused(
            &CustomRequest::new("tools/frobnicate", Some(json!({}))),
            SESSION_METHODS,
        );
        assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(e.message, "tools/frobnicate");
    }
}
