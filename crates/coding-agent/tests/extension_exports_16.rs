//! Names that pi 1.6.0's package index exports and 0.73.1's did not, imported by an
//! extension from `@earendil-works/pi-coding-agent`: what they give through ours equals
//! what they give through pi 1.6.0 (`PI_TS16`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

/// Writes what the 1.6.0 names give to `$EXPORTS_OUT` when it loads.
const EXTENSION: &str = r#"
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as pi16 from "@earendil-works/pi-coding-agent";
import {
  CONFIG_DIR_NAME, VIRTUAL_MODEL_STATE_ENTRY, formatReadLineRange, generateUnifiedPatch,
  isPowerShellToolResult, readStoredCredential, parseArgs,
} from "@earendil-works/pi-coding-agent";

export default function () {
  const args = parseArgs(["--model", "mock/mock-model", "-p", "hi"]);
  const kinds = {};
  for (const name of [
    "getDocsPath", "getExamplesPath", "getPackageDir", "getReadmePath", "resolveCliModel",
    "generateDiffString", "convertToPng", "resizeImage", "formatDimensionNote",
    "detectSupportedImageMimeTypeFromFile", "CredentialSynchronizationError",
  ]) kinds[name] = typeof pi16[name];
  writeFileSync(process.env.EXPORTS_OUT, JSON.stringify({
    CONFIG_DIR_NAME,
    VIRTUAL_MODEL_STATE_ENTRY,
    ranges: [formatReadLineRange(3, 4), formatReadLineRange(7), formatReadLineRange(undefined, 2)],
    patch: generateUnifiedPatch("a.txt", "one\ntwo\n", "one\nthree\n"),
    powershell: [isPowerShellToolResult({ toolName: "powershell" }), isPowerShellToolResult({ toolName: "bash" })],
    credential: readStoredCredential("stored", join(process.env.PI_CODING_AGENT_DIR, "auth.json")) ?? null,
    args: { model: args.model, print: args.print, messages: args.messages },
    kinds,
  }));
}
"#;

/// What the extension wrote when loaded by `program`.
async fn exports(program: Command, host: Option<PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("done"));
    let env = Env::new(&server, 128_000, json!({}));
    std::fs::write(
        env.agent.join("auth.json"),
        json!({"stored": {"type": "api_key", "key": "stored-key"}}).to_string(),
    )
    .unwrap();
    let ext = env.work.join("exports.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let out_file = env.dir.path().join("exports.json");
    let mut program = program;
    program.env("EXPORTS_OUT", &out_file);
    if let Some(host) = host {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    // The scratch dir (and the file in it) lives as long as `_env`.
    let (out, _env) = tokio::task::spawn_blocking(move || {
        let out = run(&env, program, &["-e", ext.to_str().unwrap(), "-p", "hello"]);
        (out, env)
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(&out_file).unwrap_or_else(|e| {
        panic!(
            "the extension wrote nothing ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(&written).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_added_in_16_give_what_16_gives() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let our = exports(ours(), Some(host)).await;
    assert_eq!(our["CONFIG_DIR_NAME"], ".pi");
    assert_eq!(our["ranges"], json!([":3-6", ":7", ":1-2"]));
    assert_eq!(
        our["credential"],
        json!({"type": "api_key", "key": "stored-key"})
    );
    if let Some(wrapper) = ts16() {
        let their = exports(ts16_pi(&wrapper), None).await;
        assert_eq!(our, their, "ours (left) and pi 1.6.0 (right) differ");
    }
}
