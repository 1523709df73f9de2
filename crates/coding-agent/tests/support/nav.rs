//! `/nav <entry id>`: an extension command that moves the session's leaf to an entry, so
//! RPC tests can navigate the tree as `/tree` does in the interactive UI.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::rpc::{Rpc, read_jsonl};

/// The command's source; `SUMMARIZE` is replaced by whether leaving a branch summarizes it.
const EXTENSION: &str = r#"
export default function (pi) {
  pi.registerCommand("nav", {
    description: "Go to an entry of the tree",
    handler: async (args, ctx) => {
      await ctx.navigateTree(args.trim(), { summarize: SUMMARIZE });
    },
  });
}
"#;

/// Writes the extension into `dir`; its path, for `-e`.
pub fn install(dir: &Path, summarize: bool) -> String {
    let path = dir.join("nav.ts");
    std::fs::write(
        &path,
        EXTENSION.replace("SUMMARIZE", &summarize.to_string()),
    )
    .unwrap();
    path.display().to_string()
}

/// Navigates `rpc`'s session to `entry`; the prompt command's response.
pub fn go(rpc: &mut Rpc, id: &str, entry: &str) -> Value {
    rpc.call(
        id,
        json!({"type": "prompt", "message": format!("/nav {entry}")}),
    )
}

/// Sends each prompt (ids `p1`, `p2`, …) and waits for its run to settle; the session file
/// and the id of its first reply, a place to navigate back to.
pub fn exchanges(rpc: &mut Rpc, prompts: &[&str]) -> (PathBuf, String) {
    for (i, text) in prompts.iter().enumerate() {
        rpc.call(
            &format!("p{}", i + 1),
            json!({"type": "prompt", "message": text}),
        );
        rpc.until("the run settled", |l| l["type"] == "agent_settled");
    }
    let file = rpc.call("s", json!({"type": "get_state"}))["data"]["sessionFile"]
        .as_str()
        .map(PathBuf::from)
        .unwrap();
    let first_reply = read_jsonl(&file)
        .into_iter()
        .find(|e| e["message"]["role"] == "assistant")
        .and_then(|e| e["id"].as_str().map(str::to_owned))
        .unwrap();
    (file, first_reply)
}
