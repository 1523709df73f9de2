//! Signing in from an editor. pi's keys and logins are its own (auth.json, the environment,
//! models.json), so the one method ACP is offered is pi itself run in a terminal, where
//! `/login` signs in: the editor runs its agent command with [`TERMINAL_FLAG`] added.
//! Requests that need a model answer `auth_required` with that method until one has a key.

use agent_client_protocol::v1::schema::{
    AuthMethod, AuthMethodAgent, AuthMethodTerminal, ClientCapabilities,
};
use agent_client_protocol::{Error, ErrorCode};
use serde_json::{Value, json};

/// The method's id, for `authenticate`.
pub const METHOD_ID: &str = "pi-login";

/// Added to the agent's command line by the editor: pi runs its terminal UI instead of ACP.
pub const TERMINAL_FLAG: &str = "--terminal-login";

const NAME: &str = "Log in with pi";

const DESCRIPTION: &str =
    "Run pi in a terminal to log into a provider or add an API key with /login";

/// The methods offered to this client: a `terminal` one when it runs agents in a terminal
/// for their login (`auth.terminal`), else an `agent` one whose `authenticate` reads pi's
/// credentials again; with Zed's earlier `_meta["terminal-auth"]` form when the client
/// announced that.
pub fn methods(capabilities: &ClientCapabilities) -> Vec<AuthMethod> {
    if capabilities.auth.terminal {
        return vec![AuthMethod::Terminal(
            AuthMethodTerminal::new(METHOD_ID, NAME)
                .description(DESCRIPTION.to_owned())
                .args(vec![TERMINAL_FLAG.to_owned()]),
        )];
    }
    let mut method = AuthMethodAgent::new(METHOD_ID, NAME).description(DESCRIPTION.to_owned());
    let legacy = capabilities
        .meta
        .as_ref()
        .and_then(|meta| meta.get("terminal-auth"))
        == Some(&Value::Bool(true));
    if legacy && let Ok(program) = std::env::current_exe() {
        let launch = json!({
            "command": program.to_string_lossy(),
            "args": [TERMINAL_FLAG],
            "label": "Launch pi",
        });
        let mut meta = serde_json::Map::new();
        meta.insert("terminal-auth".to_owned(), launch);
        method = method.meta(meta);
    }
    vec![AuthMethod::Agent(method)]
}

/// The error of a request that needs a model when none has a key: `-32000` with the
/// methods, so the editor offers the login.
pub fn required(methods: &[AuthMethod]) -> Error {
    Error::new(
        ErrorCode::AUTH_REQUIRED,
        "No models available: log into a provider or add an API key (\"Log in with pi\" opens pi, where /login does it)",
    )
    .data(json!({ "authMethods": methods }))
}

/// `authenticate` with an id this agent never offered.
pub fn unknown_method(id: &str) -> Error {
    Error::new(
        ErrorCode::INVALID_PARAMS,
        format!("Unknown authentication method {id}: pi offers {METHOD_ID}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capabilities(value: Value) -> ClientCapabilities {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_client_that_runs_terminal_logins_gets_the_terminal_method() {
        let methods = methods(&capabilities(json!({"auth": {"terminal": true}})));
        assert_eq!(
            serde_json::to_value(&methods).unwrap(),
            json!([{"type": "terminal", "id": "pi-login", "name": NAME,
                    "description": DESCRIPTION, "args": ["--terminal-login"]}])
        );
    }

    #[test]
    fn other_clients_get_the_agent_method_with_zeds_launch_when_asked() {
        let plain = serde_json::to_value(methods(&capabilities(json!({})))).unwrap();
        assert_eq!(
            plain,
            json!([{"id": "pi-login", "name": NAME, "description": DESCRIPTION}])
        );
        let zed = methods(&capabilities(json!({"_meta": {"terminal-auth": true}})));
        let zed = serde_json::to_value(zed).unwrap();
        assert_eq!(
            zed[0]["_meta"]["terminal-auth"]["args"],
            json!(["--terminal-login"])
        );
        assert!(zed[0].get("type").is_none());
    }

    #[test]
    fn the_error_is_auth_required_with_the_methods() {
        let error = required(&methods(&capabilities(json!({}))));
        assert_eq!(error.code, ErrorCode::AUTH_REQUIRED);
        assert_eq!(error.data.unwrap()["authMethods"][0]["id"], "pi-login");
    }
}
