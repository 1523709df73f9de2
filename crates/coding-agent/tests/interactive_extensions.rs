//! The extension UI of interactive mode through a real pseudo-terminal: the TypeScript
//! pi's example extensions (straight from the installed package) run in the node host
//! while `pi` runs in tmux against mock-llm; keys are typed and the screen read back.
//!
//! Needs tmux, node and npm (the host's packages install once into
//! `<target>/ext-host`), and the TypeScript package (`scripts/ts-compat.sh`); each test
//! says why it skipped otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use mock_llm::{MockServer, Script};
use support::rpc::{Env, read_jsonl};
use support::tmux::{self, Tmux};

const WAIT: Duration = Duration::from_secs(30);

/// The shared host folder under the target dir, installed once per machine.
fn host_dir() -> Option<PathBuf> {
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: node is not installed");
        return None;
    }
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()?
        .to_path_buf();
    let dir = target.join("ext-host");
    match pi_coding_agent::extension_host::install::ensure_installed(&dir) {
        Ok(_) => Some(dir),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// Everything a test needs, or `None` (with a notice) when something is missing.
fn prerequisites(examples: &[&str]) -> Option<(PathBuf, Vec<PathBuf>)> {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return None;
    }
    let host = host_dir()?;
    let mut paths = Vec::new();
    for name in examples {
        let path = support::ext_host::example(name)?;
        if !path.exists() {
            eprintln!("skipped: {} is missing", path.display());
            return None;
        }
        paths.push(path);
    }
    Some((host, paths))
}

/// Starts pi with these extensions on a 100×36 terminal and waits for the footer.
fn start(env: &Env, host: &Path, extensions: &[PathBuf]) -> Tmux {
    let mut args: Vec<String> = Vec::new();
    for path in extensions {
        args.push("-e".into());
        args.push(path.display().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let host = host.display().to_string();
    let tmux = Tmux::start_with(env, &[("PI_EXTENSION_HOST_DIR", &host)], &args, 100, 36);
    tmux.wait("the footer", WAIT, |s| s.contains("mock-model"));
    tmux
}

fn submit(tmux: &Tmux, text: &str) {
    tmux.type_text(text);
    tmux.keys(&["Enter"]);
}

/// The row index of the first line containing `needle`.
fn row_of(screen: &str, needle: &str) -> Option<usize> {
    screen.lines().position(|l| l.contains(needle))
}

/// Rows of the editor's two borders (full-width `─` lines) in order.
fn border_rows(screen: &str) -> Vec<usize> {
    screen
        .lines()
        .enumerate()
        .filter(|(_, l)| l.chars().count() >= 90 && l.chars().all(|c| c == '─'))
        .map(|(i, _)| i)
        .collect()
}

/// The text of every tool result in the session file.
fn tool_results(env: &Env) -> Vec<String> {
    let files = env.session_files();
    assert_eq!(files.len(), 1, "one session file: {files:?}");
    read_jsonl(&files[0])
        .into_iter()
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "toolResult")
        .map(|e| {
            e["message"]["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_gate_asks_before_rm_rf_and_blocks_or_allows() {
    let Some((host, extensions)) = prerequisites(&["permission-gate.ts"]) else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    std::fs::create_dir_all(env.work.join("doomed")).unwrap();
    server.push(Script::tool_call(
        "bash",
        json!({"command": "rm -rf doomed"}),
    ));
    server.push(Script::text("The command was blocked."));
    server.push(Script::tool_call(
        "bash",
        json!({"command": "rm -rf doomed"}),
    ));
    server.push(Script::text("Removed it."));
    let tmux = start(&env, &host, &extensions);

    submit(&tmux, "clean up the doomed folder");
    let dialog = tmux.wait("the confirmation", WAIT, |s| s.contains("Allow?"));
    assert!(dialog.contains("Dangerous command:"), "{dialog}");
    assert!(dialog.contains("rm -rf doomed"), "{dialog}");
    assert!(dialog.contains("→ Yes"), "{dialog}");
    assert!(dialog.contains("  No"), "{dialog}");
    assert!(dialog.contains("↑↓ navigate"), "{dialog}");
    // Keys go to the dialog, not the editor: choose "No".
    tmux.keys(&["Down"]);
    tmux.wait("No selected", WAIT, |s| s.contains("→ No"));
    tmux.keys(&["Enter"]);
    tmux.wait_for("The command was blocked.");
    tmux.wait("the dialog to close", WAIT, |s| !s.contains("Allow?"));
    assert!(
        env.work.join("doomed").exists(),
        "blocked: the folder stays"
    );

    submit(&tmux, "really remove it");
    tmux.wait("the second confirmation", WAIT, |s| s.contains("Allow?"));
    tmux.keys(&["Enter"]);
    tmux.wait_for("Removed it.");
    assert!(
        !env.work.join("doomed").exists(),
        "allowed: the folder is gone"
    );
    let results = tool_results(&env);
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0], "Blocked by user");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn widgets_sit_around_the_editor_and_statuses_in_the_footer() {
    let Some((host, extensions)) = prerequisites(&["widget-placement.ts", "status-line.ts"]) else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    server.push(Script::text("Hello from the model."));
    let tmux = start(&env, &host, &extensions);
    let screen = tmux.wait("widgets and status", WAIT, |s| {
        s.contains("Above editor widget")
            && s.contains("Below editor widget")
            && s.contains("Ready")
    });
    let above = row_of(&screen, "Above editor widget").unwrap();
    let below = row_of(&screen, "Below editor widget").unwrap();
    let borders = border_rows(&screen);
    assert_eq!(borders.len(), 2, "the editor's borders:\n{screen}");
    assert!(above < borders[0], "above the editor:\n{screen}");
    assert!(below > borders[1], "below the editor:\n{screen}");
    // The status line is the footer's last line, under the model line.
    let footer = row_of(&screen, "mock-model").unwrap();
    let status = row_of(&screen, "Ready").unwrap();
    assert!(below < footer && footer < status, "{screen}");

    // turn_start / turn_end update the status.
    submit(&tmux, "hello");
    tmux.wait_for("Hello from the model.");
    let done = tmux.wait("the turn status", WAIT, |s| s.contains("✓ Turn 1 complete"));
    assert!(!done.contains("Ready"), "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snake_is_drawn_in_place_of_the_editor_and_follows_keys() {
    let Some((host, extensions)) = prerequisites(&["snake.ts"]) else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let tmux = start(&env, &host, &extensions);

    // The command shows up in slash completion with its description.
    tmux.type_text("/sna");
    tmux.wait("the completion", WAIT, |s| s.contains("Play Snake!"));
    tmux.type_text("ke");
    tmux.keys(&["Enter"]);
    // The whole box: a capture can land while the frame is still being written.
    let game = tmux.wait("the game", WAIT, |s| {
        s.contains("SNAKE") && s.contains("Score: 0") && s.contains("ESC pause")
    });
    assert!(
        border_rows(&game).is_empty(),
        "the editor is replaced:\n{game}"
    );

    // Escape pauses: the game saves its state and closes; the editor is back.
    tmux.keys(&["Escape"]);
    tmux.wait("the editor", WAIT, |s| {
        !s.contains("SNAKE") && border_rows(s).len() == 2
    });
    // Starting again resumes the saved game, paused.
    submit(&tmux, "/snake");
    let paused = tmux.wait("the paused game", WAIT, |s| s.contains("PAUSED"));
    assert!(paused.contains("Press any key to continue"), "{paused}");
    // Any key resumes; q quits.
    tmux.keys(&["Right"]);
    tmux.wait("the running game", WAIT, |s| {
        s.contains("ESC pause") && !s.contains("PAUSED")
    });
    tmux.type_text("q");
    tmux.wait("the editor again", WAIT, |s| {
        !s.contains("SNAKE") && border_rows(s).len() == 2
    });
    // Ctrl+D on the empty editor quits pi (extensions shut down with it).
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_exit(WAIT), 0);
}

/// Input and timed select dialogs, a notify of each kind, a shortcut reading the editor,
/// a tool drawn by its own renderer, and `ctx.shutdown()`.
const EXT_UI: &str = r#"
import { Text } from "@mariozechner/pi-tui";
export default function (pi) {
  pi.registerCommand("ask", {
    description: "Asks for a name",
    handler: async (_args, ctx) => {
      const name = await ctx.ui.input("Your name?");
      ctx.ui.notify(`name=${name}`, "info");
      const pick = await ctx.ui.select("Pick one", ["red", "green"], { timeout: 1500 });
      ctx.ui.notify(`pick=${pick}`, "warning");
    },
  });
  pi.registerShortcut("ctrl+x", {
    description: "Shows the editor text",
    handler: async (ctx) => ctx.ui.notify(`editor=${ctx.ui.getEditorText()}`, "error"),
  });
  pi.registerCommand("bye", { description: "Quits", handler: async (_args, ctx) => ctx.shutdown() });
  pi.registerTool({
    name: "shout", label: "Shout", description: "Shouts",
    parameters: { type: "object", properties: { text: { type: "string" } } },
    async execute(_id, params) { return { content: [{ type: "text", text: params.text.toUpperCase() }], details: {} }; },
    renderCall(args, theme) { return new Text(`SHOUT-CALL ${args.text}`, 0, 0); },
    renderResult(result, { isPartial }) {
      return new Text(isPartial ? "shouting..." : `SHOUT-RESULT ${result.content[0].text}`, 0, 0);
    },
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialogs_shortcuts_renderers_and_shutdown() {
    let Some((host, _)) = prerequisites(&[]) else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let extension = env.work.join("ui.ts");
    std::fs::write(&extension, EXT_UI).unwrap();
    server.push(Script::tool_call("shout", json!({"text": "hey"})));
    server.push(Script::text("Shouted."));
    let tmux = start(&env, &host, &[extension]);

    submit(&tmux, "/ask");
    tmux.wait("the input dialog", WAIT, |s| s.contains("Your name?"));
    submit(&tmux, "Ada");
    tmux.wait_for("name=Ada");
    // The select has a countdown and closes by itself with no answer.
    tmux.wait("the countdown", WAIT, |s| {
        s.contains("Pick one (") && s.contains("→ red")
    });
    tmux.wait_for("Warning: pick=undefined");

    tmux.type_text("draft");
    tmux.keys(&["C-x"]);
    tmux.wait_for("Error: editor=draft");
    tmux.keys(&["C-c"]);

    submit(&tmux, "shout please");
    let drawn = tmux.wait_for("SHOUT-RESULT HEY");
    assert!(drawn.contains("SHOUT-CALL hey"), "{drawn}");
    tmux.wait_for("Shouted.");

    submit(&tmux, "/bye");
    assert_eq!(tmux.wait_exit(WAIT), 0);
}

/// Answers `user_bash`: `!ops …` runs through its own operations, `!canned` gets its result.
const USER_BASH: &str = r#"
export default function (pi) {
  pi.on("user_bash", async (event) => {
    if (event.command.startsWith("ops ")) {
      return { operations: { exec: async (command, cwd, { onData }) => {
        onData(Buffer.from("via ops: " + command + " in " + (cwd === process.cwd() ? "cwd" : cwd) + "\n"));
        return { exitCode: 3 };
      } } };
    }
    if (event.command === "canned") {
      return { result: { output: "canned output\n", exitCode: 0, cancelled: false, truncated: false } };
    }
  });
};
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_bash_runs_through_an_extensions_operations_or_result() {
    let Some((host, _)) = prerequisites(&[]) else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let ext = env.work.join("user-bash.ts");
    std::fs::write(&ext, USER_BASH).unwrap();
    let tmux = start(&env, &host, &[ext]);
    submit(&tmux, "!ops uname");
    tmux.wait("the operations' output", WAIT, |s| {
        s.contains("via ops: ops uname in cwd")
    });
    submit(&tmux, "!canned");
    tmux.wait("the extension's result", WAIT, |s| {
        s.contains("canned output")
    });
    submit(&tmux, "!echo plain-$((6*7))");
    tmux.wait("pi's own shell", WAIT, |s| s.contains("plain-42"));
    // A reply makes pi write the session file.
    server.push(Script::text("noted"));
    submit(&tmux, "thanks");
    tmux.wait("the reply", WAIT, |s| s.contains("noted"));
    tmux.keys(&["C-d"]);
    let files = env.session_files();
    let outputs: Vec<(String, serde_json::Value)> = read_jsonl(&files[0])
        .into_iter()
        .filter(|e| e["message"]["role"] == "bashExecution")
        .map(|e| {
            (
                e["message"]["output"].as_str().unwrap_or("").to_owned(),
                e["message"]["exitCode"].clone(),
            )
        })
        .collect();
    assert_eq!(
        outputs,
        vec![
            ("via ops: ops uname in cwd\n".to_owned(), json!(3)),
            ("canned output\n".to_owned(), json!(0)),
            ("plain-42\n".to_owned(), json!(0)),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_pi_sets_reaches_an_extensions_custom_editor() {
    let Some((host, extensions)) = prerequisites(&["modal-editor.ts"]) else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    // The "external editor" appends a marker to the file it is given.
    let editor = env.work.join("fake-editor.sh");
    std::fs::write(&editor, "#!/bin/sh\nprintf ' +external' >> \"$1\"\n").unwrap();
    let mut permissions = std::fs::metadata(&editor).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&editor, permissions).unwrap();
    let mut args: Vec<String> = Vec::new();
    for path in &extensions {
        args.push("-e".into());
        args.push(path.display().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let host = host.display().to_string();
    let editor = editor.display().to_string();
    let tmux = Tmux::start_with(
        &env,
        &[("PI_EXTENSION_HOST_DIR", &host), ("EDITOR", &editor)],
        &args,
        100,
        36,
    );
    tmux.wait("the modal editor", WAIT, |s| s.contains("INSERT"));
    tmux.type_text("draft");
    tmux.wait("the typed text", WAIT, |s| s.contains("draft"));
    // Ctrl+G: pi edits the custom editor's text externally and puts the result back in it.
    tmux.keys(&["C-g"]);
    tmux.wait("the edited text in the custom editor", WAIT, |s| {
        s.contains("draft +external")
    });
    tmux.keys(&["C-d"]);
}

/// Completes `#<digits>` with issue #42; other text falls through to pi's completion.
const ISSUES: &str = r##"
export default function (pi) {
  pi.on("session_start", async (_event, ctx) => {
    ctx.ui.addAutocompleteProvider((current) => ({
      async getSuggestions(lines, line, col, options) {
        const match = lines[line].slice(0, col).match(/#(\d*)$/);
        if (!match) return current.getSuggestions(lines, line, col, options);
        return { prefix: "#" + match[1], items: [{ value: "#42", label: "#42", description: "the answer issue" }] };
      },
      applyCompletion: (...args) => current.applyCompletion(...args),
    }));
    ctx.ui.setStatus("issues", "issues ready");
  });
};
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn autocomplete_providers_of_extensions_come_first_and_defer_to_pis() {
    let Some((host, _)) = prerequisites(&[]) else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let ext = env.work.join("issues.ts");
    std::fs::write(&ext, ISSUES).unwrap();
    let tmux = start(&env, &host, &[ext]);
    tmux.wait("the provider", WAIT, |s| s.contains("issues ready"));
    tmux.type_text("fix #4");
    tmux.wait("the extension's suggestion", WAIT, |s| {
        s.contains("the answer issue")
    });
    tmux.keys(&["Tab"]);
    tmux.wait("the completion applied", WAIT, |s| {
        s.contains("fix #42") && !s.contains("the answer issue")
    });
    // pi's own completion still works where the provider defers: slash commands.
    tmux.keys(&["C-u"]);
    tmux.type_text("/hotk");
    tmux.wait("pi's slash completion", WAIT, |s| s.contains("hotkeys"));
    tmux.keys(&["Escape", "C-d"]);
}
