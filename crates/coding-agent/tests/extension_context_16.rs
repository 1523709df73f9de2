//! What pi 1.6.0 added to the extension context, read by a command of one extension in each
//! mode: `ctx.mode`, `ctx.isProjectTrusted()`, `ctx.scopedModels` and the command ctx's
//! `ctx.getSystemPromptOptions()`. The records of ours and of 1.6.0 (`PI_TS16`) must be
//! equal; without `PI_TS16` ours must still give what 1.6.0 gives (spelled out here).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::rpc::{Env, Rpc};
use support::ts16::{run, ts16, ts16_pi};

/// A command `/ctx` that appends what the context says to `$CTX_LOG`, with the
/// `systemPromptOptions` fields reduced to what does not depend on pi's own wording (the
/// built-in tools' snippets and rules are each pi's own text).
const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.registerTool({
    name: "greet", label: "Greet", description: "Greets someone",
    promptSnippet: "Greet a person by name",
    promptGuidelines: ["Greet before anything else."],
    parameters: { type: "object", properties: { name: { type: "string" } } },
    async execute() { return { content: [{ type: "text", text: "hi" }], details: {} }; },
  });
  pi.registerTool({
    name: "quiet", label: "Quiet", description: "Has no snippet",
    parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: "" }], details: {} }; },
  });
  pi.registerCommand("ctx", {
    description: "logs the context",
    handler: async (_args, ctx) => {
      const options = ctx.getSystemPromptOptions();
      const reduced = {
        keys: Object.keys(options).sort(),
        customPrompt: options.customPrompt,
        selectedTools: options.selectedTools,
        hiddenTools: options.hiddenTools,
        builtinSnippets: ["read", "bash", "edit", "write"].map((n) => typeof options.toolSnippets[n]),
        greetSnippet: options.toolSnippets.greet,
        quietSnippet: options.toolSnippets.quiet ?? null,
        greetGuidelines: options.toolGuidelines.greet,
        promptGuidelines: options.promptGuidelines,
        appendSystemPrompt: options.appendSystemPrompt,
        sections: options.sections,
        cwd: options.cwd,
        contextFiles: options.contextFiles,
        skills: options.skills.map((s) => [s.name, s.description]),
      };
      appendFileSync(process.env.CTX_LOG, JSON.stringify({
        mode: ctx.mode,
        hasUI: ctx.hasUI,
        trusted: ctx.isProjectTrusted(),
        scoped: ctx.scopedModels.map((s) => [s.model.provider, s.model.id, s.thinkingLevel ?? null]),
        options: reduced,
      }) + "\n");
    },
  });
}
"#;

/// One run: how pi is started and in which work dir.
struct Case {
    args: &'static [&'static str],
    /// Runs in a project whose own extension needs trust.
    untrusted_project: bool,
}

const CASES: &[Case] = &[
    Case {
        args: &["-p", "/ctx"],
        untrusted_project: false,
    },
    Case {
        args: &["--mode", "json", "/ctx"],
        untrusted_project: true,
    },
    Case {
        args: &["--approve", "-p", "/ctx"],
        untrusted_project: true,
    },
];

/// The records of every case and of an RPC session, run through `program()`.
async fn records(
    program: impl Fn() -> Command + Send + 'static,
    host: Option<PathBuf>,
) -> Vec<Value> {
    let server = MockServer::start().await.unwrap();
    tokio::task::spawn_blocking(move || {
        let mut all = Vec::new();
        let settings = json!({"enabledModels": ["mock/mock-model", "mock-thinker:high"]});
        for case in CASES {
            let env = Env::new(&server, 128_000, settings.clone());
            let (ext, log) = prepare(&env, case.untrusted_project);
            let mut command = program();
            command.env("CTX_LOG", &log);
            if let Some(host) = &host {
                command.env("PI_EXTENSION_HOST_DIR", host);
            }
            let mut args = vec![
                "-e",
                ext.to_str().unwrap(),
                "--append-system-prompt",
                "Extra rule.",
            ];
            args.extend(case.args);
            let output = run(&env, command, &args);
            assert!(
                output.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            all.extend(read_log(&log, &env));
        }
        let env = Env::new(&server, 128_000, json!({}));
        let (ext, log) = prepare(&env, false);
        let mut command = program();
        command.env("CTX_LOG", &log);
        if let Some(host) = &host {
            command.env("PI_EXTENSION_HOST_DIR", host);
        }
        let mut rpc = Rpc::start_program(&env, command, &["-e", ext.to_str().unwrap()]);
        let answer = rpc.call("c1", json!({"type": "prompt", "message": "/ctx"}));
        assert_eq!(answer["success"], true, "{answer:#?}");
        rpc.finish();
        all.extend(read_log(&log, &env));
        all
    })
    .await
    .unwrap()
}

/// Writes the extension, an AGENTS.md, a skill and (for an untrusted project) a project
/// extension; returns the extension's path and the log's.
fn prepare(env: &Env, untrusted_project: bool) -> (PathBuf, PathBuf) {
    let ext = env.dir.path().join("ctx-ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    std::fs::write(env.work.join("AGENTS.md"), "# Project rules\n").unwrap();
    let skill = env.agent.join("skills/demo");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: demo\ndescription: A demo skill\n---\nDo the demo.\n",
    )
    .unwrap();
    if untrusted_project {
        let own = env.work.join(".pi/extensions");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("own.ts"), "export default function () {}\n").unwrap();
    }
    (ext, env.dir.path().join("ctx.jsonl"))
}

/// The log's records with the scratch folder written as `<dir>`.
fn read_log(log: &Path, env: &Env) -> Vec<Value> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let dir = env.dir.path().display().to_string();
    text.lines()
        .map(|l| serde_json::from_str(&l.replace(&dir, "<dir>")).unwrap())
        .collect()
}

/// What 1.6.0 gives in every case (checked against it when `PI_TS16` is set).
fn expected() -> Vec<Value> {
    let record = |mode: &str, has_ui: bool, trusted: bool, scoped: Value| {
        json!({
            "mode": mode, "hasUI": has_ui, "trusted": trusted, "scoped": scoped,
            "options": {
                "keys": ["appendSystemPrompt", "contextFiles", "customPrompt", "cwd", "forceSystemPrompt",
                         "hiddenTools", "promptGuidelines", "sections", "selectedTools", "skills",
                         "toolGuidelines", "toolSnippets"],
                "selectedTools": ["read", "bash", "edit", "write", "greet", "quiet"],
                "hiddenTools": [],
                "builtinSnippets": ["string", "string", "string", "string"],
                "greetSnippet": "Greet a person by name",
                "quietSnippet": null,
                "greetGuidelines": ["Greet before anything else."],
                "promptGuidelines": [],
                "appendSystemPrompt": if mode == "rpc" { "" } else { "Extra rule." },
                "sections": {},
                "cwd": "<dir>/work",
                "contextFiles": [{"path": "<dir>/work/AGENTS.md", "content": "# Project rules\n"}],
                "skills": [["demo", "A demo skill"]],
            },
        })
    };
    let scoped = json!([
        ["mock", "mock-model", null],
        ["mock", "mock-thinker", "high"]
    ]);
    vec![
        record("print", false, true, scoped.clone()),
        record("json", false, false, scoped.clone()),
        record("print", false, true, scoped),
        record("rpc", true, true, json!([])),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_mode_trust_scope_and_prompt_options_as_in_16() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    if let Some(wrapper) = ts16() {
        let their = records(move || ts16_pi(&wrapper), None).await;
        assert_eq!(their, expected(), "pi 1.6.0 changed");
    }
    let our = records(|| Command::new(env!("CARGO_BIN_EXE_pi")), Some(host)).await;
    assert_eq!(our, expected());
}
