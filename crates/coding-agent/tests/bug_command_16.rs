//! `/bug`: the description editor and the transcript, summary and delivery questions (drawn
//! with their descriptions), the summary written by the model, the zip archive
//! (report.json, diagnostics.json, session.jsonl, summary.md) with redacted settings, the
//! upload to a stand-in Radius gateway (`PI_RADIUS_GATEWAY`) and its failure, the offline
//! refusal, cancelling, and the `pi.bug-report` entries. Ours and pi 1.6.0 (`PI_TS16`) side
//! by side in tmux.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mock_llm::{Fault, MockServer, Script};
use serde_json::{Value, json};
use support::http_standin::{Standin, multipart_parts};
use support::rpc::{Env, read_jsonl};
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(30);
/// The terminal's width.
const COLS: u16 = 120;

/// A border drawn whole (a frame caught half drawn has a shorter one).
fn is_border(row: &str) -> bool {
    row.chars().count() == usize::from(COLS) && row.chars().all(|c| c == '─')
}
const SUMMARY: &str = "## What the user was doing\nSharing a session.";

fn command(tmux: &Tmux, name: &str, text: &str) {
    tmux.type_text(text);
    tmux.wait(&format!("{name}: {text} typed"), WAIT, |s| s.contains(text));
    tmux.keys(&["Enter"]);
}

/// Waits for the dialog titled `title` to be drawn whole, presses `keys`, then waits until
/// it is gone; returns its rows.
fn answer(tmux: &Tmux, name: &str, title: &str, keys: &[&str]) -> Vec<String> {
    let shown = tmux.wait(&format!("{name}: {title}"), WAIT, |s| {
        dialog_rows(s, title).is_some()
    });
    let rows = dialog(&shown, title);
    for key in keys {
        tmux.keys(&[key]);
    }
    tmux.wait(&format!("{name}: {title} answered"), WAIT, |s| {
        !s.contains(title)
    });
    rows
}

/// A dialog's rows, from the border above `title` to the border below its key hints.
fn dialog(screen: &str, title: &str) -> Vec<String> {
    dialog_rows(screen, title).unwrap()
}

/// [`dialog`], or `None` while it is not drawn whole.
fn dialog_rows(screen: &str, title: &str) -> Option<Vec<String>> {
    let rows: Vec<String> = screen.lines().map(|r| r.trim_end().to_owned()).collect();
    let at = rows.iter().position(|r| r.contains(title))?;
    let start = rows[..at].iter().rposition(|r| r.starts_with('─'))?;
    let hint = at
        + rows[at..]
            .iter()
            .position(|r| r.contains("escape/ctrl+c cancel"))?;
    let end = hint + rows[hint..].iter().position(|r| r.starts_with('─'))?;
    if !is_border(&rows[start]) || !is_border(&rows[end]) {
        return None;
    }
    Some(rows[start..=end].to_vec())
}

/// The files of a zip archive, read through its central directory.
fn read_zip(path: &Path) -> Vec<(String, String)> {
    let bytes = std::fs::read(path).unwrap();
    let u16at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
    let u32at = |at: usize| {
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize
    };
    let end = bytes.len() - 22;
    assert_eq!(u32at(end), 0x0605_4b50, "end of central directory");
    let mut at = u32at(end + 16);
    let mut files = Vec::new();
    for _ in 0..u16at(end + 10) {
        assert_eq!(u32at(at), 0x0201_4b50);
        assert_eq!(u16at(at + 4), 20, "version made by");
        assert_eq!(u16at(at + 8), 0x0800, "UTF-8 names");
        assert_eq!(u16at(at + 10), 8, "deflated");
        let (crc, compressed, size) = (u32at(at + 16), u32at(at + 20), u32at(at + 24));
        let name_len = u16at(at + 28);
        assert_eq!((u16at(at + 30), u16at(at + 32)), (0, 0), "no extras");
        let local = u32at(at + 42);
        let name = String::from_utf8(bytes[at + 46..at + 46 + name_len].to_vec()).unwrap();
        let data_at = local + 30 + u16at(local + 26) + u16at(local + 28);
        let mut data = Vec::new();
        flate2::read::DeflateDecoder::new(&bytes[data_at..data_at + compressed])
            .read_to_end(&mut data)
            .unwrap();
        assert_eq!((data.len(), crc32fast::hash(&data) as usize), (size, crc));
        files.push((name, String::from_utf8(data).unwrap()));
        at += 46 + name_len;
    }
    files
}

/// A value's shape: objects' keys in order, arrays by their first item, scalars by type.
fn skeleton(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), skeleton(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().take(1).map(skeleton).collect()),
        Value::String(_) => json!("string"),
        Value::Number(_) => json!("number"),
        Value::Bool(_) => json!("bool"),
        Value::Null => Value::Null,
    }
}

/// What two pis' reports must share: the shape, and the values that do not depend on the
/// program, the time or the session.
fn report_facts(report: &Value) -> Value {
    let mut shape = skeleton(report);
    // pi 1.6 lists its built-in TypeScript extensions; ours has none.
    shape["extensions"] = Value::Null;
    let environment = &report["environment"];
    json!({
        "shape": shape,
        "schemaVersion": report["schemaVersion"],
        "hint": report["hint"],
        "platform": [environment["platform"], environment["arch"], environment["osRelease"],
                     environment["osVersion"], environment["shell"], environment["terminal"]],
        "piEnvironmentVariables": environment["piEnvironmentVariables"],
        "session": [report["session"]["included"], report["session"]["summaryIncluded"],
                    report["session"]["messageCount"], report["session"].get("cwd")],
        "model": report["model"],
        "provider": report["provider"],
        "thinkingLevel": report["thinkingLevel"],
        "extensionErrors": report["extensionErrors"],
        "settings": report["settings"],
    })
}

/// The archive written to `dir` (the one pi was started in).
fn archive_in(dir: &Path, seen: &[PathBuf]) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("pi-bug-report-"))
                && !seen.contains(p)
        })
        .unwrap()
}

fn bug_entries(env: &Env) -> Vec<Value> {
    read_jsonl(&env.session_files()[0])
        .into_iter()
        .filter(|e| e["customType"] == "pi.bug-report")
        .collect()
}

fn keys(value: &Value) -> Vec<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn bug_report_dialogs_summary_and_zip_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        server.push(Script::text("An answer to report."));
        let env = Env::new(
            &server,
            128_000,
            json!({
                "tuiMode": "regular",
                "trackingId": "track-123",
                "myApiKey": "sk-settings-secret",
                "retry": {"clientSecret": "cs-secret", "maxRetries": 2},
                "maxTokens": 5,
                "httpProxy": "http://bob:pw-secret@proxy.local:8080",
                "shellCommandPrefix": "curl https://user:pw@x.example/p?api_key=abc",
                // pi 1.6 records the changelog it has shown on its first run.
                "lastChangelogVersion": "1.6.0",
            }),
        );
        // A crash an earlier run recorded (and already told about).
        let crash = json!({"timestamp": "2026-11-30T10:00:00.000Z", "version": "1.6.0",
            "kind": "uncaught_exception", "message": "boom", "stack": null, "sessionFile": null,
            "cwd": "/elsewhere", "notified": true});
        let crashes = env.agent.join("crashes.json");
        std::fs::write(&crashes, json!([crash]).to_string()).unwrap();
        let tmux = Tmux::start_program(
            &env,
            &program_path(&wrapper),
            &[
                ("PI_OFFLINE", "1"),
                ("PI_SKIP_VERSION_CHECK", "1"),
                ("HTTP_PROXY", "http://127.0.0.1:9"),
                ("HTTPS_PROXY", "http://127.0.0.1:9"),
                ("NO_PROXY", "127.0.0.1,localhost"),
            ],
            &["A question to report."],
            COLS,
            50,
        );
        tmux.wait(&format!("{name}: answered"), WAIT, |s| {
            s.contains("An answer to report.") && !s.contains("Working")
        });

        // Escape at the first question cancels.
        command(&tmux, name, "/bug");
        answer(&tmux, name, "Report a bug", &["Escape"]);
        tmux.wait(&format!("{name}: cancelled"), WAIT, |s| {
            s.contains("Bug report cancelled")
        });

        // Every question, then Upload: refused offline.
        command(&tmux, name, "/bug the share link was wrong");
        let mut dialogs = vec![answer(&tmux, name, "Report a bug", &["Enter"])];
        dialogs.push(answer(
            &tmux,
            name,
            "Include the session transcript?",
            &["Down", "Enter"],
        ));
        dialogs.push(answer(
            &tmux,
            name,
            "Attach a summary written by",
            &["Enter"],
        ));
        dialogs.push(answer(&tmux, name, "Upload sends the report", &["Enter"]));
        tmux.wait(&format!("{name}: offline"), WAIT, |s| {
            s.contains("Uploading bug reports requires online mode. Use Export as Zip instead.")
        });

        // Escape while the summary is written cancels.
        server.push(Script::text(SUMMARY).with_fault(Fault::stall(0, 60_000)));
        command(&tmux, name, "/bug the share link was wrong");
        answer(&tmux, name, "Report a bug", &["Enter"]);
        answer(
            &tmux,
            name,
            "Include the session transcript?",
            &["Down", "Enter"],
        );
        answer(&tmux, name, "Attach a summary written by", &["Enter"]);
        answer(&tmux, name, "Upload sends the report", &["Down", "Enter"]);
        let writing = tmux.wait(&format!("{name}: writing the summary"), WAIT, |s| {
            dialog_rows(s, "Writing summary with Mock Model...").is_some()
        });
        dialogs.push(
            dialog(&writing, "Writing summary with Mock Model...")
                .iter()
                .map(|r| r.replace(|c: char| ('\u{2800}'..='\u{28ff}').contains(&c), "*"))
                .collect(),
        );
        tmux.keys(&["Escape"]);
        tmux.wait(&format!("{name}: summary cancelled"), WAIT, |s| {
            s.contains("Bug report cancelled") && !s.contains("Writing summary")
        });
        assert!(bug_entries(&env).is_empty(), "{name}");
        server.clear_queue();

        // The same with a summary, exported as a zip.
        server.clear_requests();
        server.push(Script::text(SUMMARY));
        command(&tmux, name, "/bug the share link was wrong");
        answer(&tmux, name, "Report a bug", &["Enter"]);
        answer(
            &tmux,
            name,
            "Include the session transcript?",
            &["Down", "Enter"],
        );
        answer(&tmux, name, "Attach a summary written by", &["Enter"]);
        answer(&tmux, name, "Upload sends the report", &["Down", "Enter"]);
        let shown = tmux.wait(&format!("{name}: exported"), WAIT, |s| {
            s.contains("Bug report exported to:")
                && s.lines().any(|l| {
                    l.trim()
                        .strip_prefix("Report ID: ")
                        .is_some_and(|id| id.len() == 36)
                })
        });
        let zip = archive_in(&env.work, &[]);
        let files = read_zip(&zip);
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["report.json", "diagnostics.json", "summary.md"],
            "{name}"
        );
        let everything: String = files.iter().map(|(_, d)| d.as_str()).collect();
        for secret in [
            "sk-settings-secret",
            "cs-secret",
            "pw-secret",
            "mock-key",
            "track-123",
        ] {
            assert!(!everything.contains(secret), "{name}: {secret} leaked");
        }
        assert!(files.iter().all(|(_, d)| d.ends_with('\n')), "{name}");
        let report: Value = serde_json::from_str(&files[0].1).unwrap();
        let diagnostics: Value = serde_json::from_str(&files[1].1).unwrap();
        assert_eq!(files[2].1, format!("{SUMMARY}\n"), "{name}");
        let id = report["id"].as_str().unwrap().to_owned();
        assert_eq!(
            zip.file_name().unwrap().to_string_lossy(),
            format!("pi-bug-report-{id}.zip")
        );
        assert!(shown.contains(&format!("Report ID: {id}")), "{name}");
        // The line is wrapped at the terminal's width: look for it joined.
        let joined: String = shown.lines().map(str::trim).collect();
        assert!(
            joined.contains(&format!("Bug report exported to: {}", zip.display())),
            "{name}: {shown}"
        );
        let entries = bug_entries(&env);
        assert_eq!(entries.len(), 1, "{name}");
        // The crashes went with the report.
        assert!(!crashes.exists(), "{name}: crashes.json cleared");
        let entry = &entries[0];
        assert_eq!(
            keys(entry),
            ["type", "customType", "data", "id", "parentId", "timestamp"],
            "{name}"
        );
        assert_eq!(
            entry["data"],
            json!({"id": id, "createdAt": report["createdAt"], "hint": "the share link was wrong",
                   "sessionIncluded": false, "summaryIncluded": true, "delivery": "zip",
                   "path": zip.display().to_string()}),
            "{name}"
        );
        // The summary request: pi 1.6's prompts, at most 4096 tokens.
        let requests = server.requests();
        let body = &requests.last().unwrap().body;
        let summary_request = json!({
            "messages": body["messages"],
            "max_tokens": body.get("max_tokens").or(body.get("max_completion_tokens")),
        });
        let diagnostics_facts = json!({
            "shape": skeleton(&diagnostics),
            "counts": [diagnostics["entryCount"], diagnostics["assistantMessageCount"]],
            "assistant": diagnostics["assistant"],
            "crashes": diagnostics["crashes"],
        });
        seen.push((
            dialogs,
            report_facts(&report),
            diagnostics_facts,
            summary_request,
        ));
    }
    if let [ours, theirs] = &seen[..] {
        assert_eq!(ours.0, theirs.0, "the dialogs");
        assert_eq!(ours.1, theirs.1, "report.json");
        assert_eq!(ours.2, theirs.2, "diagnostics.json");
        assert_eq!(ours.3, theirs.3, "the summary request");
    }
}

#[test]
fn bug_report_upload_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        server.push(Script::text("An answer to report."));
        let standin = Standin::start(vec![
            (
                400,
                r#"{"ok":false,"description":"Report rejected"}"#.into(),
            ),
            (
                200,
                r#"{"ok":true,"bug_report":{"id":"br_local_1"}}"#.into(),
            ),
        ]);
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        // Online (no PI_OFFLINE), with every outside request sent to a closed port.
        let tmux = Tmux::start_program(
            &env,
            &program_path(&wrapper),
            &[
                ("HTTP_PROXY", "http://127.0.0.1:9"),
                ("HTTPS_PROXY", "http://127.0.0.1:9"),
                ("NO_PROXY", "127.0.0.1,localhost"),
                ("PI_SKIP_VERSION_CHECK", "1"),
                ("PI_RADIUS_GATEWAY", &standin.url()),
                ("RADIUS_API_KEY", ""),
            ],
            &["A question to report."],
            COLS,
            50,
        );
        tmux.wait(&format!("{name}: answered"), WAIT, |s| {
            s.contains("An answer to report.") && !s.contains("Working")
        });
        let port = standin.port.to_string();
        let mask = |rows: Vec<String>| -> Vec<String> {
            rows.iter().map(|r| r.replace(&port, "<port>")).collect()
        };

        // The gateway refuses: asked whether to export instead; yes.
        command(&tmux, name, "/bug");
        answer(&tmux, name, "Report a bug", &["Enter"]);
        answer(&tmux, name, "Include the session transcript?", &["Enter"]);
        let mut dialogs = vec![mask(answer(
            &tmux,
            name,
            "Upload sends the report",
            &["Enter"],
        ))];
        dialogs.push(answer(&tmux, name, "Upload failed", &["Enter"]));
        tmux.wait(&format!("{name}: exported"), WAIT, |s| {
            s.contains("Bug report exported to:")
        });
        let zip = archive_in(&env.work, &[]);
        let files = read_zip(&zip);
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["report.json", "diagnostics.json", "session.jsonl"],
            "{name}"
        );
        let transcript: Vec<Value> = files[2]
            .1
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(transcript[0]["type"], "session", "{name}");
        let last = transcript.last().unwrap();
        assert_eq!(last["customType"], "pi.share", "{name}");
        assert_eq!(
            keys(last),
            ["type", "customType", "id", "parentId", "timestamp", "data"],
            "{name}"
        );
        assert_eq!(keys(&last["data"]), ["systemPrompt", "tools"], "{name}");
        assert!(
            last["data"]["systemPrompt"]
                .as_str()
                .is_some_and(|p| p.contains("pi")),
            "{name}: the system prompt after a turn"
        );
        let tools: Vec<&str> = last["data"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(
            tools.contains(&"read") && tools.contains(&"bash"),
            "{name}: {tools:?}"
        );
        assert!(
            transcript
                .iter()
                .any(|l| l["message"]["role"] == "assistant"),
            "{name}"
        );

        // Refused again, and cancelled this time.
        standin.set_replies(vec![
            (
                400,
                r#"{"ok":false,"description":"Report rejected"}"#.into(),
            ),
            (
                200,
                r#"{"ok":true,"bug_report":{"id":"br_local_1"}}"#.into(),
            ),
        ]);
        command(&tmux, name, "/bug");
        answer(&tmux, name, "Report a bug", &["Enter"]);
        answer(&tmux, name, "Include the session transcript?", &["Enter"]);
        answer(&tmux, name, "Upload sends the report", &["Enter"]);
        answer(&tmux, name, "Upload failed", &["Down", "Enter"]);
        tmux.wait(&format!("{name}: cancelled"), WAIT, |s| {
            s.contains("Bug report cancelled")
        });

        // Accepted.
        command(&tmux, name, "/bug it broke");
        answer(&tmux, name, "Report a bug", &["Enter"]);
        answer(
            &tmux,
            name,
            "Include the session transcript?",
            &["Down", "Enter"],
        );
        answer(
            &tmux,
            name,
            "Attach a summary written by",
            &["Down", "Enter"],
        );
        answer(&tmux, name, "Upload sends the report", &["Enter"]);
        tmux.wait(&format!("{name}: uploaded"), WAIT, |s| {
            s.contains("Bug report uploaded. Report ID: br_local_1")
        });

        let requests = standin.requests();
        assert_eq!(requests.len(), 3, "{name}");
        let mut parts_seen = Vec::new();
        for request in &requests {
            assert_eq!(
                (request.method.as_str(), request.target.as_str()),
                ("POST", "/v1/bug-reports"),
                "{name}"
            );
            assert!(!request.headers.contains_key("authorization"), "{name}");
            let parts = multipart_parts(&request.headers["content-type"], &request.body);
            parts_seen.push(
                parts
                    .iter()
                    .map(|(head, _)| head.clone())
                    .collect::<Vec<_>>(),
            );
            let report: Value = serde_json::from_str(&parts[0].1).unwrap();
            assert_eq!(report["schemaVersion"], 1, "{name}");
        }
        let last = multipart_parts(&requests[2].headers["content-type"], &requests[2].body);
        let report: Value = serde_json::from_str(&last[0].1).unwrap();
        assert_eq!(report["hint"], "it broke", "{name}");
        assert_eq!(report["session"]["included"], false, "{name}");
        assert!(report["session"].get("cwd").is_none(), "{name}");

        let entries = bug_entries(&env);
        let data: Vec<Value> = entries.iter().map(|e| e["data"].clone()).collect();
        assert_eq!(data.len(), 2, "{name}: {data:?}");
        assert_eq!(data[0]["delivery"], "zip", "{name}");
        assert_eq!(data[1]["delivery"], "upload", "{name}");
        assert_eq!(
            keys(&data[1]),
            [
                "id",
                "createdAt",
                "hint",
                "sessionIncluded",
                "summaryIncluded",
                "delivery"
            ],
            "{name}"
        );
        assert_eq!(data[1]["id"], report["id"], "{name}");
        seen.push((dialogs, parts_seen));
    }
    if let [ours, theirs] = &seen[..] {
        assert_eq!(ours.0, theirs.0, "the dialogs");
        assert_eq!(ours.1, theirs.1, "the uploaded parts");
    }
}
