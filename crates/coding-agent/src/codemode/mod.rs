//! `codemode`: the model writes a JavaScript script that calls the other tools, runs in
//! parallel and filters what they return; only the script's output reaches the context
//! (pi 1.6's docs/codemode.md). Scripts run in an embedded QuickJS VM on a worker thread
//! with no file system, network, timers or host APIs; their tool calls go through the
//! agent loop's own path ([`pi_agent_core::NestedCaller`]).

mod calls;
pub(crate) mod catalog;
pub mod declaration;
mod listing;
pub mod loadout;
mod model_checks;
mod models;
pub(crate) mod output;
pub mod pool;
mod presented;
mod run;
pub mod source;
mod vm;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// The tool's name.
pub const CODEMODE: &str = "codemode";
/// The custom session entry holding a successful script's `store()` writes.
pub const STORE_ENTRY: &str = "codemode-store";

/// What a script reaches of its session.
pub trait CodemodeHost: Send + Sync {
    /// Every tool a script may call now.
    fn callable(&self) -> Vec<Arc<dyn AgentTool>>;
    /// Prompt guidelines by tool name (shown with each declaration).
    fn guidelines(&self) -> HashMap<String, Vec<String>>;
    /// The stored values as the current branch left them.
    fn store(&self) -> Map<String, Value>;
    /// Records a successful script's writes (`{ set, delete }`) as a `codemode-store`
    /// entry.
    fn save_store(&self, data: Value);
    /// The catalog entries of a model type (`chat`, `image`, `classifier`), optionally of
    /// one provider, only those with working credentials when `available`.
    fn models_of_type(&self, _kind: &str, _provider: Option<&str>, _available: bool) -> Vec<Value> {
        Vec::new()
    }
    /// The key a provider's classifier requests carry (the session's credential).
    fn classifier_key(&self, _provider: &str) -> Option<String> {
        None
    }
}

/// The session a codemode tool serves, bound once the session exists.
#[derive(Clone, Default)]
pub struct Link(Arc<OnceLock<Arc<dyn CodemodeHost>>>);

impl Link {
    /// Binds the tool to its session; later calls change nothing.
    pub fn bind(&self, host: Arc<dyn CodemodeHost>) {
        let _ = self.0.set(host);
    }

    fn host(&self) -> Option<Arc<dyn CodemodeHost>> {
        self.0.get().cloned()
    }
}

/// The values a branch's `codemode-store` entries (their `data`, in order) leave: each
/// entry's deletions first, then its writes.
pub fn replay_store<'a>(entries: impl IntoIterator<Item = &'a Value>) -> Map<String, Value> {
    let mut store = Map::new();
    for data in entries {
        if let Some(Value::Array(deleted)) = data.get("delete") {
            for key in deleted.iter().filter_map(Value::as_str) {
                store.remove(key);
            }
        }
        if let Some(Value::Object(set)) = data.get("set") {
            for (key, value) in set {
                store.insert(key.clone(), value.clone());
            }
        }
    }
    store
}

const INTRO: &str = "Run a JavaScript script that calls other tools. Send the raw script (not JSON, no code fence): it runs as the body of an async function in a QuickJS sandbox, so top-level `await` and `return` work. The sandbox has no Node APIs, files, network or timers.\n- `await tools.<name>({ ...args })` gives a string, or an object where the tool's declaration says so, and rejects with an Error when the call fails. A tool declared to return an object may also resolve with that object on failure: look at its fields. Calls still running when the script ends are cancelled.\n- An optional first line sets limits: `// @options: {\"max_output_tokens\": 10000, \"timeout_ms\": 60000}`";

const GLOBALS: &str = "Globals:\n- `text(value)`, `image(dataUrlOrImageBlock)`, `console.log(...)` and a top-level `return` add to the output; `exit()` ends the script early. Several text items are each headed `==> text N/M <==`; console lines come after the rest in one `<console_output>` block. `image()` also writes the image to a temp file and names it in the result.\n- `store(key, value)` and `load(key)` keep JSON values from one codemode call to the next.\n- `ALL_TOOLS`, `await searchTools(query, { limit?, namespace? })`, `await describeTool(name)` and `await describeNamespace(name)` find tools that are not listed here, such as MCP tools.";

/// The input's grammar (Lark): an optional `// @options:` line, then the source.
const SOURCE_GRAMMAR: &str = r"
start: options_source | plain_source
options_source: OPTIONS_LINE NEWLINE SOURCE
plain_source: SOURCE

OPTIONS_LINE: /[ \t]*\/\/ @options:[^\r\n]*/
NEWLINE: /\r?\n/
SOURCE: /[\s\S]+/
";

/// The `codemode` tool.
pub struct CodemodeTool {
    link: Link,
    description: String,
    parameters: Value,
}

/// The `codemode` tool for the session `link` gets bound to.
pub fn codemode_tool(link: Link) -> Arc<dyn AgentTool> {
    Arc::new(CodemodeTool {
        link,
        description: format!(
            "{INTRO}\n\n{GLOBALS}\n- `models`: classifier and image models. Read {}/codemode.md before using it.",
            crate::auth_guidance::DOCS_URL
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "The script: raw JavaScript."}
            },
            "required": ["code"]
        }),
    })
}

impl AgentTool for CodemodeTool {
    fn name(&self) -> &str {
        CODEMODE
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// Models with OpenAI grammar tools get the script as raw text, an optional options
    /// line first.
    fn constrained_sampling(&self) -> Option<pi_ai::ConstrainedSampling> {
        Some(pi_ai::ConstrainedSampling::Grammar {
            variants: json!({ "openai_lark": SOURCE_GRAMMAR }),
        })
    }

    fn execute(
        &self,
        tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let host = self.link.host();
        let call_id = tool_call_id.to_owned();
        Box::pin(async move {
            let code = args.get("code").and_then(Value::as_str).unwrap_or_default();
            let script = source::parse(code).map_err(ToolError)?;
            let Some(host) = host else {
                return Err(ToolError::new(
                    "Nested tool calls are not available in this context",
                ));
            };
            let Some(caller) = pi_agent_core::NestedCaller::current() else {
                return Err(ToolError::new(
                    "Nested tool calls are not available in this context",
                ));
            };
            Ok(run::Script {
                call_id,
                source: script,
                host,
                caller,
                cancel,
                on_update,
            }
            .run()
            .await)
        })
    }
}
