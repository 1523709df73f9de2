//! Extensions importing pi's modules by the `@earendil-works/*` scope (pi 0.74.0's move from
//! `@mariozechner/*`), through ours and pi 1.6.0 (`PI_TS16`) side by side: the values
//! each scope's modules give an extension, and one module behind both scopes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program_with_host};

/// Imports from `@earendil-works/pi-coding-agent`, `pi-tui`, `pi-ai` and `typebox`, and
/// reports the kind of each value (and whether the old scope's module is the same).
const EXTENSION: &str = r#"import { getSettingsListTheme, DynamicBorder, isToolCallEventType } from "@earendil-works/pi-coding-agent";
import { Text, Container, matchesKey } from "@earendil-works/pi-tui";
import { StringEnum, complete } from "@earendil-works/pi-ai";
import { Type } from "typebox";
import * as old from "@mariozechner/pi-coding-agent";
export default function (pi) {
  pi.registerCommand("scopes", { handler: async (args, ctx) => {
    const values = { getSettingsListTheme, DynamicBorder, isToolCallEventType, Text, Container, matchesKey, StringEnum, complete, Type };
    const kinds = Object.fromEntries(Object.entries(values).map(([name, value]) => [name, typeof value]));
    kinds.sameAcrossScopes = old.DynamicBorder === DynamicBorder;
    ctx.ui.notify(JSON.stringify(kinds), "info");
  } });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_import_the_earendil_works_scope() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        let path = env.work.join("scopes.ts");
        std::fs::write(&path, EXTENSION).unwrap();
        let mut rpc = Rpc::start_program(
            &env,
            program_with_host(&wrapper),
            &["-e", path.to_str().unwrap()],
        );
        rpc.send(json!({"id": "p", "type": "prompt", "message": "/scopes"}));
        let lines = rpc.until("notify", |l| l["method"] == "notify");
        rpc.finish();
        let message = lines.last().unwrap()["message"]
            .as_str()
            .unwrap()
            .to_owned();
        let kinds: Value = serde_json::from_str(&message).unwrap();
        assert_eq!(
            kinds,
            json!({
                "getSettingsListTheme": "function",
                "DynamicBorder": "function",
                "isToolCallEventType": "function",
                "Text": "function",
                "Container": "function",
                "matchesKey": "function",
                "StringEnum": "function",
                "complete": "function",
                "Type": "object",
                "sameAcrossScopes": true,
            }),
            "{who}"
        );
    }
}
