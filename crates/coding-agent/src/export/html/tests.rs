use super::content::fold;
use super::format::{count, format_tokens, group_digits, time};
use super::markdown::{markdown, safe_url};
use super::tools::edit_pairs;
use super::*;

use std::path::Path;

use base64::Engine as _;
use pi_agent_core::AgentMessage;
use pi_ai::{
    AssistantBlock, AssistantMessage, ImageContent, InputBlock, StopReason, TextContent,
    ThinkingContent, ToolCall, ToolResultMessage, Usage, UsageCost, UserMessage,
};
use serde_json::{Value, json};

fn assistant(content: Vec<AssistantBlock>) -> AssistantMessage {
    AssistantMessage {
        content: content.into(),
        usage: Usage {
            input: 1200,
            output: 34,
            total_tokens: 1234,
            cost: UsageCost {
                total: 0.0125,
                ..UsageCost::default()
            },
            ..Usage::default()
        },
        ..AssistantMessage::empty("openai-completions", "mock", "mock-model")
    }
}

fn call(id: &str, name: &str, args: Value) -> AssistantBlock {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    AssistantBlock::ToolCall(ToolCall::new(id, name, args))
}

fn result(id: &str, name: &str, text: &str, is_error: bool) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content: vec![InputBlock::text(text)].into(),
        is_error,
        ..ToolResultMessage::default()
    }
}

fn session() -> SessionManager {
    SessionManager::in_memory(Path::new("/nowhere"))
}

#[test]
fn user_text_is_escaped() {
    let mut s = session();
    s.append_message(UserMessage::text("<script>alert('x')</script> & co").into())
        .unwrap();
    let html = render_session_html(&s);
    assert!(!html.contains("<script>alert"));
    assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co"));
    // Only the page's own scripts are present.
    assert_eq!(html.matches("<script").count(), 2);
}

#[test]
fn everything_user_provided_is_escaped() {
    let mut s = session();
    s.append_session_info("<b>name</b>").unwrap();
    s.append_message(
        assistant(vec![
            AssistantBlock::Text(TextContent::new("```<lang>\n</pre><script>\n```")),
            AssistantBlock::Thinking(ThinkingContent::new("<img src=x>")),
            call("c\"1", "<tool>", json!({"k": "<v>"})),
        ])
        .into(),
    )
    .unwrap();
    s.append_message(result("c\"1", "<tool>", "</pre><script>bad()</script>", true).into())
        .unwrap();
    let html = render_session_html(&s);
    assert!(!html.contains("<b>name"));
    assert!(!html.contains("<script>bad"));
    assert!(!html.contains("</pre><script>"));
    assert!(!html.contains("<img src=x"));
    assert!(!html.contains("<tool>"));
    assert!(html.contains("&lt;b&gt;name&lt;/b&gt;"));
    assert!(html.contains("id=\"tool-call-c&quot;1\""));
}

#[test]
fn header_shows_id_cwd_time_name_and_model() {
    let mut s = session();
    s.append_model_change("anthropic", "claude-x").unwrap();
    s.append_session_info("My session").unwrap();
    s.append_message(UserMessage::text("hi").into()).unwrap();
    let html = render_session_html(&s);
    let header = s.header();
    assert!(html.contains(&header.id));
    assert!(html.contains("<code>/nowhere</code>"));
    assert!(html.contains(&format!("<time datetime=\"{}\">", header.timestamp)));
    assert!(html.contains("<h1>My session</h1>"));
    assert!(html.contains("anthropic/claude-x"));
    assert!(html.contains("<title>My session · pi session</title>"));
}

#[test]
fn markdown_subset() {
    let html = markdown(
        "Hello `a<b>` world\nnext line\n\n```rust\nfn x() {}\n\nlet y = 1 < 2;\n```\nafter",
    );
    assert_eq!(
        html,
        "<p>Hello <code>a&lt;b&gt;</code> world<br>\nnext line</p>\n\
         <pre class=\"code\" data-lang=\"rust\"><code>fn x() {}\n\nlet y = 1 &lt; 2;</code></pre>\n\
         <p>after</p>\n"
    );
    assert_eq!(markdown("a `` x`y `` b"), "<p>a <code>x`y</code> b</p>\n");
    assert_eq!(markdown("un`closed"), "<p>un`closed</p>\n");
    // An unterminated fence runs to the end.
    assert_eq!(
        markdown("~~~~\ncode\n~~~"),
        "<pre class=\"code\"><code>code\n~~~</code></pre>\n"
    );
    assert_eq!(markdown("  \n\n"), "");
}

#[test]
fn markdown_renders_gfm_elements() {
    let html = markdown(
        "# Title\n\n## Sub\n\n- **bold** and *em*\n- ~~gone~~ about ~5 min or ~10\n\n\
         1. one\n2. two\n\n- [x] done\n- [ ] todo\n\n> quoted\n\n\
         | a | b |\n|---|:-:|\n| 1 | `x` |\n\n---\n\n[site](https://example.com \"t\") \
         [rel](docs/a.md) [mail](mailto:a@b.c) <https://x.org>",
    );
    for part in [
        "<h1>Title</h1>",
        "<h2>Sub</h2>",
        "<ul>\n<li><strong>bold</strong> and <em>em</em></li>",
        "<li><del>gone</del> about ~5 min or ~10</li>",
        "<ol>\n<li>one</li>\n<li>two</li>\n</ol>",
        "<input disabled=\"\" type=\"checkbox\" checked=\"\"/>\ndone",
        "<blockquote>\n<p>quoted</p>\n</blockquote>",
        "<table><thead><tr><th>a</th><th style=\"text-align: center\">b</th></tr></thead>",
        "<td style=\"text-align: center\"><code>x</code></td>",
        "<hr />",
        "<a href=\"https://example.com\" title=\"t\">site</a>",
        "<a href=\"docs/a.md\">rel</a>",
        "<a href=\"mailto:a@b.c\">mail</a>",
        "<a href=\"https://x.org\">https://x.org</a>",
    ] {
        assert!(html.contains(part), "{part} not in {html}");
    }
    // Subscript syntax is text again: `~a~` is not struck through.
    assert_eq!(markdown("~a~ b"), "<p>~a~ b</p>\n");
}

#[test]
fn markdown_escapes_raw_html_and_drops_unsafe_links() {
    let html = markdown(
        "<script>alert(1)</script>\n\ntext <b onclick=\"x()\">bold</b> <img src=x onerror=y>\n\n\
         <div>\n*block*\n</div>",
    );
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<b "), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(!html.contains("<div"), "{html}");
    assert!(
        html.contains("<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"),
        "{html}"
    );
    assert!(
        html.contains("&lt;b onclick=\"x()\"&gt;bold&lt;/b&gt;"),
        "{html}"
    );
    assert!(
        html.contains("<p>&lt;div&gt;<br>\n*block*<br>\n&lt;/div&gt;</p>"),
        "{html}"
    );

    for link in [
        "[x](javascript:alert(1))",
        "[x](JavaScript:alert(1))",
        "[x](java\tscript:alert(1))",
        "[x](<java script:alert(1)>)",
        "[x](javascript&#58;alert(1))",
        "[x](vbscript:msgbox)",
        "[x](data:text/html,hi)",
        "<javascript:alert(1)>",
        "[x][r]\n\n[r]: javascript:alert(1)",
        "![x](javascript:alert(1))",
    ] {
        let html = markdown(link);
        assert!(!html.contains("<a"), "{link}: {html}");
        assert!(!html.to_lowercase().contains("href"), "{link}: {html}");
    }
    assert_eq!(
        markdown("[click **me**](javascript:alert(1))"),
        "<p>click <strong>me</strong></p>\n"
    );
    // Images load nothing: their alt text links to them.
    assert_eq!(
        markdown("![a cat](https://example.com/cat.png)"),
        "<p><a href=\"https://example.com/cat.png\"><span class=\"md-image\">a cat</span></a></p>\n"
    );
    assert_eq!(
        markdown("[![badge](b.svg)](https://ci.example)"),
        "<p><a href=\"https://ci.example\"><span class=\"md-image\">badge</span></a></p>\n"
    );
    assert!(safe_url("https://a") && safe_url("HTTP://a") && safe_url("mailto:a@b"));
    assert!(safe_url("a/b:c") && safe_url("#frag") && safe_url("?q=a:b") && safe_url(""));
    assert!(!safe_url("file:///etc/passwd") && !safe_url(" javascript:x") && !safe_url(":x"));
}

#[test]
fn tool_calls_render_with_their_results() {
    let mut s = session();
    s.append_message(UserMessage::text("do things").into())
        .unwrap();
    s.append_message(
        assistant(vec![
            call("c1", "bash", json!({"command": "ls -la", "timeout": 5})),
            call(
                "c2",
                "edit",
                json!({"path": "src/a.rs", "edits": [{"oldText": "let a = 1;\nkeep\n", "newText": "let a = 2;\nkeep\n"}]}),
            ),
            call("c3", "write", json!({"path": "notes.md", "content": "# Notes"})),
            call("c4", "grep", json!({"pattern": "foo", "path": "."})),
        ])
        .into(),
    )
    .unwrap();
    s.append_message(result("c1", "bash", "total 0", false).into())
        .unwrap();
    s.append_message(result("c2", "edit", "No match", true).into())
        .unwrap();
    s.append_message(result("c3", "write", "Wrote notes.md", false).into())
        .unwrap();
    let html = render_session_html(&s);
    assert!(html.contains("<pre class=\"command\">$ ls -la</pre>"));
    assert!(html.contains("&quot;timeout&quot;: 5"));
    assert!(html.contains("<div class=\"del\">-let a = 1;</div>"));
    assert!(html.contains("<div class=\"ins\">+let a = 2;</div>"));
    assert!(html.contains("<div class=\"eq\"> keep</div>"));
    assert!(html.contains("<span class=\"tool-path\">src/a.rs</span>"));
    assert!(html.contains("<pre class=\"code\"># Notes</pre>"));
    assert!(html.contains("&quot;pattern&quot;: &quot;foo&quot;"));
    assert!(html.contains("<div class=\"tool error\" id=\"tool-call-c2\">"));
    assert!(html.contains("<div class=\"result-label\">Error</div>"));
    assert!(html.contains("(no result recorded)"));
    // Results render once, inside their call.
    assert_eq!(html.matches("total 0").count(), 1);
    assert!(!html.contains("Tool result ·"));
    let call_at = html.find("id=\"tool-call-c1\"").unwrap();
    let result_at = html.find("total 0").unwrap();
    let next_call = html.find("id=\"tool-call-c2\"").unwrap();
    assert!(call_at < result_at && result_at < next_call);
}

#[test]
fn legacy_edit_arguments_become_a_diff() {
    let args = json!({"path": "a", "oldText": "x", "newText": "y", "edits": "[{\"oldText\":\"p\",\"newText\":\"q\"}]"});
    let Value::Object(args) = args else {
        unreachable!()
    };
    assert_eq!(
        edit_pairs(&args),
        vec![("p".into(), "q".into()), ("x".into(), "y".into())]
    );
}

#[test]
fn long_output_is_folded_and_orphan_results_stand_alone() {
    let long: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    let mut s = session();
    s.append_message(result("gone", "read", &long, false).into())
        .unwrap();
    let html = render_session_html(&s);
    assert!(html.contains("Tool result · read"));
    assert!(html.contains("<summary>Show all 100 lines</summary>"));
    assert!(html.contains("line 100"));
    assert!(html.contains("<pre class=\"output preview\">line 1\n"));
    let short = fold("a\nb", "output");
    assert_eq!(short, "<pre class=\"output\">a\nb</pre>\n");
}

#[test]
fn thinking_images_usage_and_errors() {
    let mut s = session();
    s.append_message(
        UserMessage::blocks(vec![
            InputBlock::text("look"),
            InputBlock::Image(ImageContent::new("iVBORw0KGgo=", "image/png")),
            InputBlock::Image(ImageContent::new("AAAA\"onerror=", "text/html\"")),
        ])
        .into(),
    )
    .unwrap();
    let mut reply = assistant(vec![
        AssistantBlock::Thinking(ThinkingContent::new("pondering")),
        AssistantBlock::Text(TextContent::new("answer")),
    ]);
    reply.stop_reason = StopReason::Error;
    reply.error_message = Some("rate <limited>".into());
    s.append_message(reply.into()).unwrap();
    let html = render_session_html(&s);
    assert!(html.contains("src=\"data:image/png;base64,iVBORw0KGgo=\""));
    assert!(html.contains("src=\"data:image/png;base64,AAAAonerror=\""));
    assert!(html.contains(
        "<details class=\"thinking\"><summary>Thinking</summary>\n<div class=\"thinking-body\">pondering</div>"
    ));
    assert!(html.contains("Error: rate &lt;limited&gt;"));
    assert!(html.contains("in 1.2k · out 34 · $0.0125"));
    assert!(html.contains("mock/mock-model"));
}

#[test]
fn bash_executions_summaries_and_custom_messages() {
    let mut s = session();
    let bash: AgentMessage = serde_json::from_value(json!({
        "role": "bashExecution", "command": "make <all>", "output": "boom",
        "exitCode": 2, "cancelled": false, "truncated": true,
        "fullOutputPath": "/tmp/out.log", "timestamp": 1
    }))
    .unwrap();
    s.append_message(bash).unwrap();
    let first = s.leaf_id().unwrap().to_owned();
    s.append_compaction(crate::session::NewCompaction {
        summary: "Summary of <old> work",
        first_kept_entry_id: &first,
        tokens_before: 123_456,
        ..Default::default()
    })
    .unwrap();
    s.append_custom_message("note", json!("shown *text*"), true, None)
        .unwrap();
    s.append_custom_message("hidden", json!("secret stuff"), false, None)
        .unwrap();
    s.branch_with_summary(Some(&first), "We tried `x`", None, None, None)
        .unwrap();
    let html = render_session_html(&s);
    assert!(html.contains("<pre class=\"command\">$ make &lt;all&gt;</pre>"));
    assert!(html.contains("class=\"msg bash error\""));
    assert!(html.contains("(exit 2)"));
    assert!(html.contains("full output in /tmp/out.log"));
    // The compaction and custom messages are off the current branch now: in the page
    // (the sidebar can switch to their branch) but hidden.
    let off = html
        .find("Summary of")
        .expect("off-branch compaction in the page");
    let holder = html[..off].rfind("<div class=\"entry\"").unwrap();
    assert!(html[holder..off].starts_with(&format!(
        "<div class=\"entry\" data-id=\"{}\" data-parent=\"{first}\" hidden>",
        s.entries()[1].id
    )));
    let on = html.find("We tried <code>x</code>").unwrap();
    let holder = html[..on].rfind("<div class=\"entry\"").unwrap();
    assert!(!html[holder..on].contains(" hidden>"));
    assert!(html.contains("Branch summary"));
    assert!(html.contains("We tried <code>x</code>"));
    assert!(html.contains("Totals cover every branch"));

    let mut linear = session();
    linear
        .append_compaction(crate::session::NewCompaction {
            summary: "Summary of <old> work",
            first_kept_entry_id: "none",
            tokens_before: 123_456,
            ..Default::default()
        })
        .unwrap();
    linear
        .append_custom_message("note", json!("shown text"), true, None)
        .unwrap();
    linear
        .append_custom_message("hidden", json!("secret stuff"), false, None)
        .unwrap();
    let html = render_session_html(&linear);
    assert!(html.contains("Compacted from 123,456 tokens"));
    assert!(html.contains("Summary of &lt;old&gt; work"));
    assert!(html.contains("[note]"));
    assert!(html.contains("shown text"));
    // The message the terminal hides is in the page, marked hidden (CSS hides it until
    // the viewer reveals hidden messages); the shown one is not marked.
    let messages = html.find("id=\"messages\"").unwrap();
    let hidden = messages
        + html[messages..]
            .find("secret stuff")
            .expect("hidden message in the page");
    assert!(
        html[..messages].contains("[hidden]: secret stuff"),
        "in the sidebar"
    );
    let open = html[..hidden].rfind("<article").unwrap();
    assert!(html[open..hidden].contains("class=\"msg custom hidden-message\""));
    assert!(html[open..hidden].contains("[hidden] · Hidden in terminal"));
    assert_eq!(
        html.matches("class=\"msg custom hidden-message\"").count(),
        1
    );
    assert!(html.contains("data-action=\"toggle-hidden-messages\""));
}

#[test]
fn terminal_hyperlinks_and_colours_in_tool_output() {
    use super::ansi::ansi_to_html;
    // OSC 8 with ST and with BEL terminators; colours reset by SGR 0.
    let text = "see \u{1b}]8;;https://example.com/a?b=1&c=2\u{1b}\\docs\u{1b}]8;;\u{1b}\\ and \
                \u{1b}]8;id=x;mailto:me@example.com\u{7}mail\u{1b}]8;;\u{7} \u{1b}[1;31mred\u{1b}[0m \
                \u{1b}[38;5;196mx\u{1b}[48;2;1;2;3my\u{1b}[m\u{1b}[2K\u{1b}_apc\u{1b}\\ stray\u{1b}!";
    assert_eq!(
        ansi_to_html(text),
        "see <a href=\"https://example.com/a?b=1&amp;c=2\">docs</a> and \
         <a href=\"mailto:me@example.com\">mail</a> \
         <span style=\"color:#800000;font-weight:bold\">red</span> \
         <span style=\"color:#ff0000\">x</span><span style=\"color:#ff0000;background-color:rgb(1,2,3)\">y</span> stray!"
    );
    // Unsafe schemes lose the link but keep the text; a link wraps the styled span.
    assert_eq!(
        ansi_to_html("\u{1b}]8;;javascript:alert(1)\u{7}x\u{1b}]8;;\u{7}"),
        "x"
    );
    assert_eq!(
        ansi_to_html("\u{1b}[32m\u{1b}]8;;http://h/\u{1b}\\g\u{1b}]8;;\u{1b}\\\u{1b}[0m"),
        "<span style=\"color:#008000\"></span><a href=\"http://h/\"><span style=\"color:#008000\">g</span></a>\
         <span style=\"color:#008000\"></span>"
    );
}

#[test]
fn footer_totals_and_no_remote_resources() {
    let mut s = session();
    s.append_message(UserMessage::text("see https://example.com").into())
        .unwrap();
    s.append_message(assistant(vec![AssistantBlock::Text(TextContent::new("a"))]).into())
        .unwrap();
    s.append_message(assistant(vec![AssistantBlock::Text(TextContent::new("b"))]).into())
        .unwrap();
    let html = render_session_html(&s);
    assert!(html.contains("<dt>Messages</dt><dd>1 user · 2 assistant · 0 tool results</dd>"));
    assert!(html.contains("input 2,400 · output 68 · cache read 0 · cache write 0 · total 2,468"));
    assert!(html.contains("<dt>Cost</dt><dd>$0.0250</dd>"));
    for attr in [
        "src=\"http",
        "href=\"http",
        "src='http",
        "href='http",
        "url(http",
    ] {
        assert!(!html.contains(attr), "{attr}");
    }
    // The session is embedded for download and decodes back to its JSONL.
    let start = html.find("id=\"pi-session-data\">").unwrap() + "id=\"pi-session-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(&html[start..end])
        .unwrap();
    let jsonl = String::from_utf8(decoded).unwrap();
    assert_eq!(jsonl.lines().count(), 4);
    assert!(jsonl.contains("see https://example.com"));
}

#[test]
fn small_helpers() {
    assert_eq!(group_digits(0), "0");
    assert_eq!(group_digits(999), "999");
    assert_eq!(group_digits(1000), "1,000");
    assert_eq!(group_digits(1234567), "1,234,567");
    assert_eq!(format_tokens(950), "950");
    assert_eq!(format_tokens(1395), "1.4k");
    assert_eq!(format_tokens(14_600), "15k");
    assert_eq!(format_tokens(2_500_000), "2.5M");
    assert_eq!(
        time("2026-11-21T23:22:23.092Z"),
        "<time datetime=\"2026-11-21T23:22:23.092Z\">2026-11-21 23:22:23 UTC</time>"
    );
    assert_eq!(time("bad"), "<time datetime=\"bad\">bad</time>");
    assert_eq!(count(0, "line", "lines"), "0 lines");
    assert_eq!(count(1, "line", "lines"), "1 line");
    assert_eq!(count(1200, "line", "lines"), "1,200 lines");
}

#[test]
fn the_15_system_message_shows_as_the_system_prompt() {
    let mut s = session();
    let system: AgentMessage = serde_json::from_value(json!({
        "role": "system", "content": "", "sections": {"preamble": "Be <brief>.", "cwd": "<cwd>\n/w\n</cwd>"},
        "timestamp": 1, "toolsAdded": [{"name": "read", "description": "d", "parameters": {}}]
    }))
    .unwrap();
    s.append_message(system).unwrap();
    let patch: AgentMessage = serde_json::from_value(json!({
        "role": "system", "content": "", "sections": {"cwd": null}, "timestamp": 2,
        "toolsRemoved": ["read"]
    }))
    .unwrap();
    s.append_message(patch).unwrap();
    let html = render_session_html(&s);
    assert_eq!(html.matches("System prompt").count(), 2);
    assert!(
        html.contains("Be &lt;brief&gt;.\n\n&lt;cwd&gt;\n/w\n&lt;/cwd&gt;\n\nTools added: read")
    );
    assert!(html.contains("(cwd removed)\n\nTools removed: read"));
    assert!(!html.contains("&quot;role&quot;"), "not dumped as JSON");
}

#[test]
fn emphasis_next_to_cjk_punctuation() {
    assert_eq!(
        markdown("これは**「重要」**です"),
        "<p>これは<strong>「重要」</strong>です</p>\n"
    );
    assert_eq!(
        markdown("注意*（注）*です"),
        "<p>注意<em>（注）</em>です</p>\n"
    );
    assert_eq!(
        markdown("**テスト。**テスト"),
        "<p><strong>テスト。</strong>テスト</p>\n"
    );
    // Latin text keeps CommonMark's rules; lists, rules and spaced stars are untouched.
    assert_eq!(markdown("a**\"b\"**c"), "<p>a**\"b\"**c</p>\n");
    assert_eq!(
        markdown("* 項目\n\n***"),
        "<ul>\n<li>項目</li>\n</ul>\n<hr />\n"
    );
    assert_eq!(markdown("「a」 * 「b」"), "<p>「a」 * 「b」</p>\n");
    // The mark it inserts never shows, and text holding it is left alone.
    assert!(!markdown("**「重要」**です").contains('\u{2E18}'));
    assert_eq!(
        markdown("\u{2E18}**「x」**で"),
        "<p>\u{2E18}**「x」**で</p>\n"
    );
}

#[test]
fn theme_colours_and_derived_export_backgrounds() {
    use crate::modes::interactive::theme::{DARK_JSON, Theme};
    use pi_tui::style::ColorMode;
    let mut json: Value = serde_json::from_str(DARK_JSON).unwrap();
    json["name"] = json!("plain-export");
    json.as_object_mut().unwrap().remove("export");
    json["colors"]["userMessageBg"] = json!("#262a31");
    let theme = Theme::parse("plain-export", &json.to_string(), ColorMode::TrueColor).unwrap();
    let mut s = session();
    s.append_message(UserMessage::text("hi").into()).unwrap();
    let html = render_session_html_themed(&s, Some(&theme));
    // Without an `export` section the backgrounds come from userMessageBg, as pi derives
    // them for a dark theme (page 70 %, cards 85 %, info warmer).
    assert!(html.contains("--exportPageBg: rgb(27, 29, 34);"));
    assert!(html.contains("--exportCardBg: rgb(32, 36, 42);"));
    assert!(html.contains("--exportInfoBg: rgb(58, 57, 49);"));
    assert!(html.contains("--userMessageBg: #262a31;"));
    assert!(html.contains("<meta name=\"color-scheme\" content=\"dark\">"));
    // Without a theme the page keeps its own light and dark palettes.
    let plain = render_session_html(&s);
    assert!(!plain.contains("--exportPageBg"));
    assert!(plain.contains("content=\"dark light\""));
}

#[test]
fn sidebar_lists_every_branch_in_tree_order() {
    let mut s = session();
    s.append_message(UserMessage::text("root question").into())
        .unwrap();
    let root = s.leaf_id().unwrap().to_owned();
    s.append_message(UserMessage::text("branch one").into())
        .unwrap();
    s.branch(&root).unwrap();
    s.append_message(UserMessage::text("branch two").into())
        .unwrap();
    let html = render_session_html(&s);
    let messages = html.find("id=\"messages\"").unwrap();
    let sidebar = &html[..messages];
    // Parents before children, siblings oldest first; the branch point indents its children.
    let root_at = sidebar.find("user: root question").unwrap();
    let one = sidebar.find("user: branch one").unwrap();
    let two = sidebar.find("user: branch two").unwrap();
    assert!(root_at < one && one < two);
    let node = |at: usize| &sidebar[sidebar[..at].rfind("<a ").unwrap()..at];
    assert!(node(root_at).contains("padding-left:8px"));
    assert!(node(one).contains("padding-left:22px") && !node(one).contains("in-path"));
    assert!(node(two).contains("padding-left:22px") && node(two).contains("in-path"));
    assert!(sidebar.contains("3 / 3 entries"));
}
