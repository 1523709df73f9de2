//! `/nav <entry id>`: an extension command that moves the session's leaf to an entry, so
//! RPC tests can navigate the tree as `/tree` does in the interactive UI.
#![allow(dead_code)]

use std::path::Path;

use serde_json::{Value, json};

use super::rpc::Rpc;

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
