//! The built-in tools answer the model in pi 1.6.0's words: a scripted mock-model session
//! calls read, write, edit, bash, grep, find and ls (successes and errors) through our `pi`
//! and, when `PI_TS16` names pi 1.6.0's wrapper, through pi 1.6.0 on the same files, and
//! the tool result texts must be equal (temporary paths aside). pi 1.6.0's grep and find
//! run `rg` and `fd` (it downloads the newest when online); without ripgrep 14 or later and
//! an fd that knows `--no-require-git` on PATH, those cases are checked against our
//! expectations only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;

use base64::Engine;
use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ours, ts16, ts16_pi};

/// A 1x1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// How a result is compared.
#[derive(Clone, Copy, PartialEq)]
enum Compare {
    /// The whole text.
    Text,
    /// The text with its lines sorted (tools whose order depends on a parallel walk).
    Sorted,
    /// Only the `[...]` notice lines (the entries shown depend on a parallel walk).
    Notices,
}

/// One tool call: the tool, its arguments, how to compare the result, and what ours says.
struct Case {
    tool: &'static str,
    args: Value,
    compare: Compare,
    expected: Option<(&'static str, bool)>,
}

fn case(tool: &'static str, args: Value) -> Case {
    Case {
        tool,
        args,
        compare: Compare::Text,
        expected: None,
    }
}

impl Case {
    fn expect(mut self, text: &'static str, is_error: bool) -> Case {
        self.expected = Some((text, is_error));
        self
    }

    fn compare(mut self, compare: Compare) -> Case {
        self.compare = compare;
        self
    }

    /// Whether pi 1.6.0 needs `rg` or `fd` for this case.
    fn needs_external_tool(&self) -> bool {
        matches!(self.tool, "grep" | "find")
    }
}

/// The files every run starts from, in `work`.
fn fixture(work: &Path) {
    let write = |name: &str, content: &[u8]| {
        let path = work.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    };
    write("hello.txt", b"line one\nline two\nline three\n");
    write("dup.txt", b"same\nsame\nother\n");
    write("sub/inner.rs", b"fn main() {}\n");
    write("lim/a.md", b"# a\n");
    write("lim/b.md", b"# b\n");
    let long: String = (1..=2500).map(|n| format!("row {n}\n")).collect();
    write("long.txt", long.as_bytes());
    write("wide.txt", "x".repeat(60 * 1024).as_bytes());
    write(
        "wideline.txt",
        format!("needle {}\n", "y".repeat(600)).as_bytes(),
    );
    write("bin.dat", b"ab\x00cd\x01\x02");
    write("crlf.txt", b"first\r\nsecond\r\n");
    // Names that sort differently by case, punctuation and dots; a hidden file.
    write("Upper.TXT", b"main\n");
    write("a_b.txt", b"x\n");
    write("a-b.txt", b"x\n");
    write(".hidden.rs", b"fn main() {}\n");
    write("quote.txt", "say \u{2018}hi\u{2019}  \nnext\n".as_bytes());
    write(
        "pixel.png",
        &base64::engine::general_purpose::STANDARD
            .decode(PNG)
            .unwrap(),
    );
    std::fs::create_dir_all(work.join("empty_dir")).unwrap();
    // Text that starts like a GIF signature (pi 0.87), mixed and lone-CR line endings
    // (pi 1.5), and path patterns relative to the search folder (pi 1.6).
    write("gif.txt", b"GIF is a picture format; this is text\n");
    write("extra.txt", b"alpha\n");
    write("mixed.txt", b"a\r\nb\nc\rd\n");
    write("cr.txt", b"one\rtwo\nneedle\nafter\n");
    write("pkg/src/a.ts", b"a\n");
    write("src/b.ts", b"b\n");
}

fn cases() -> Vec<Case> {
    use Compare::{Notices, Sorted};
    vec![
        // read
        case("read", json!({"path": "hello.txt"})).expect("line one\nline two\nline three\n", false),
        case("read", json!({"path": "hello.txt", "offset": 2, "limit": 1}))
            .expect("line two\n\n[2 more lines in file. Use offset=3 to continue.]", false),
        case("read", json!({"path": "hello.txt", "offset": 99}))
            .expect("Offset 99 is beyond end of file (4 lines total)", true),
        case("read", json!({"path": "missing.txt"}))
            .expect("ENOENT: no such file or directory, access '<TMP>/work/missing.txt'", true),
        case("read", json!({"path": "sub"})).expect("EISDIR: illegal operation on a directory, read", true),
        case("read", json!({"path": "long.txt"})),
        case("read", json!({"path": "wide.txt"})).expect(
            "[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' wide.txt | head -c 51200]",
            false,
        ),
        case("read", json!({"path": "bin.dat"})),
        case("read", json!({"path": "pixel.png"})).expect("Read image file [image/png]\n<image>", false),
        case("read", json!({"path": "hello.txt", "limit": 0})),
        case("read", json!({})),
        case("read", json!({"path": "gif.txt"}))
            .expect("GIF is a picture format; this is text\n", false),
        // write
        case("write", json!({"path": "new/dir/file.txt", "content": "fresh\n"}))
            .expect("Successfully wrote to new/dir/file.txt", false),
        case("write", json!({"path": "hello.txt/x.txt", "content": "x"})),
        case("write", json!({"path": "sub", "content": "x"})),
        // edit
        case("edit", json!({"path": "hello.txt", "edits": [{"oldText": "line two", "newText": "line 2"}]}))
            .expect("Successfully replaced 1 block(s) in hello.txt.", false),
        case("edit", json!({"path": "hello.txt", "edits": [{"oldText": "absent", "newText": "x"}]})).expect(
            "Could not find the exact text in hello.txt. The old text must match exactly including all whitespace and newlines.",
            true,
        ),
        case("edit", json!({"path": "dup.txt", "edits": [{"oldText": "same", "newText": "x"}]})).expect(
            "Found 2 occurrences of the text in dup.txt. The text must be unique. Please provide more context to make it unique.",
            true,
        ),
        case("edit", json!({"path": "dup.txt", "edits": [
            {"oldText": "other", "newText": "x"}, {"oldText": "absent", "newText": "y"}]})),
        case("edit", json!({"path": "dup.txt", "edits": [
            {"oldText": "same\nsame", "newText": "x"}, {"oldText": "same\nother", "newText": "y"}]})),
        case("edit", json!({"path": "hello.txt", "edits": [{"oldText": "", "newText": "x"}]})),
        case("edit", json!({"path": "hello.txt", "edits": [{"oldText": "line one", "newText": "line one"}]})),
        case("edit", json!({"path": "nope.txt", "edits": [{"oldText": "a", "newText": "b"}]}))
            .expect("Could not edit file: nope.txt. Error code: ENOENT.", true),
        case("edit", json!({"path": "hello.txt", "edits": []})),
        case("edit", json!({"path": "hello.txt", "edits": {"oldText": "line one", "newText": "line 1"}}))
            .expect("Successfully replaced 1 block(s) in hello.txt.", false),
        case("edit", json!({"path": "hello.txt", "oldText": "line three", "newText": "line 3"})),
        case("edit", json!({"path": "crlf.txt", "edits": [{"oldText": "first\nsecond", "newText": "one\ntwo"}]})),
        case("edit", json!({"path": "quote.txt", "edits": [{"oldText": "say 'hi'\nnext", "newText": "said"}]})),
        case("edit", json!({"path": "extra.txt", "edits": [
            {"oldText": "alpha", "newText": "beta", "reason": "rename"}]}))
            .expect("Successfully replaced 1 block(s) in extra.txt.", false),
        case("edit", json!({"path": "mixed.txt", "edits": [{"oldText": "b", "newText": "B"}]}))
            .expect("Successfully replaced 1 block(s) in mixed.txt.", false),
        case("bash", json!({"command": "od -An -c mixed.txt extra.txt"}))
            .expect("   a  \\r  \\n   B  \\n   c  \\r   d  \\n   b   e   t   a  \\n\n", false),
        // bash
        case("bash", json!({"command": "echo hello"})).expect("hello\n", false),
        case("bash", json!({"command": "true"})).expect("(no output)", false),
        case("bash", json!({"command": "printf 'no newline'"})).expect("no newline", false),
        case("bash", json!({"command": "echo out; echo err >&2; exit 3"}))
            .expect("out\nerr\n\n\nCommand exited with code 3", true),
        case("bash", json!({"command": "kill -9 $$"}))
            .expect("(no output)\n\nCommand exited with code 137", true),
        case("bash", json!({"command": "echo started; sleep 30", "timeout": 1}))
            .expect("started\n\n\nCommand timed out after 1 seconds", true),
        case("bash", json!({"command": "echo x", "timeout": 0}))
            .expect("Invalid timeout: must be a finite number of seconds", true),
        case("bash", json!({"command": "echo x", "timeout": 3_000_000}))
            .expect("Invalid timeout: maximum is 2147483.647 seconds", true),
        case("bash", json!({"command": "seq 1 3000"})),
        case("bash", json!({"command": "head -c 60000 /dev/zero | tr '\\0' z"})),
        case("bash", json!({"command": "printf 'first\\nsecond\\n'; head -c 120000 /dev/zero | tr '\\0' q"})),
        // grep
        case("grep", json!({"pattern": "line", "path": "hello.txt"})),
        case("grep", json!({"pattern": "zzz_absent"})).expect("No matches found", false),
        case("grep", json!({"pattern": "x", "path": "nope"})).expect("Path not found: <TMP>/work/nope", true),
        case("grep", json!({"pattern": "(", "path": "hello.txt"})),
        case("grep", json!({"pattern": "same", "path": "dup.txt", "limit": 1})),
        case("grep", json!({"pattern": "other", "path": "dup.txt", "context": 1})),
        case("grep", json!({"pattern": "same", "path": "dup.txt", "context": 1})),
        case("grep", json!({"pattern": "same", "path": "dup.txt", "limit": 2})),
        case("grep", json!({"pattern": "x", "glob": "["})),
        case("grep", json!({"pattern": "needle", "path": "wideline.txt"})),
        case("grep", json!({"pattern": "LINE", "path": "hello.txt", "ignoreCase": true, "literal": true})),
        case("grep", json!({"pattern": "main", "glob": "*.rs"})).compare(Sorted),
        case("grep", json!({"pattern": "needle", "path": "cr.txt", "context": 1}))
            .expect("cr.txt-1- one\rtwo\ncr.txt:2: needle\ncr.txt-3- after", false),
        // find
        case("find", json!({"pattern": "*.rs"}))
            .compare(Sorted)
            .expect(".hidden.rs\nsub/inner.rs", false),
        case("find", json!({"pattern": "*.md", "path": "lim"})).compare(Sorted),
        case("find", json!({"pattern": "*.zzz"})).expect("No files found matching pattern", false),
        case("find", json!({"pattern": "sub/*.rs"})).expect("sub/inner.rs", false),
        case("find", json!({"pattern": "./lim/*.md"})).compare(Sorted),
        case("find", json!({"pattern": "*.md", "path": "lim", "limit": 2})).compare(Sorted),
        case("find", json!({"pattern": "*", "path": "nope"})),
        case("find", json!({"pattern": "*.md", "path": "lim", "limit": 1})).compare(Notices),
        case("find", json!({"pattern": "*.md", "path": "lim", "limit": 0}))
            .compare(Notices)
            .expect("[1 results limit reached. Use limit=2 for more, or refine pattern]", false),
        case("find", json!({"pattern": "src/*.ts"})).expect("src/b.ts", false),
        case("find", json!({"pattern": "work/**/*.ts"}))
            .expect("No files found matching pattern", false),
        // ls
        case("ls", json!({})),
        case("ls", json!({"path": "sub"})).expect("inner.rs", false),
        case("ls", json!({"path": "empty_dir"})).expect("(empty directory)", false),
        case("ls", json!({"path": "nope"})).expect("Path not found: <TMP>/work/nope", true),
        case("ls", json!({"path": "hello.txt"})).expect("Not a directory: <TMP>/work/hello.txt", true),
        case("ls", json!({"path": "lim", "limit": 1}))
            .expect("a.md\n\n[1 entries limit reached. Use limit=2 for more]", false),
        case("ls", json!({"path": "lim", "limit": 0}))
            .expect("a.md\n\n[1 entries limit reached. Use limit=2 for more]", false),
    ]
}

/// The text of a tool result as the model gets it (an image as `<image>`), and whether it
/// is an error.
fn result_text(end: &Value) -> (String, bool) {
    (
        content_text(&end["result"]),
        end["isError"].as_bool().unwrap_or(false),
    )
}

/// A result's content blocks as text.
fn content_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .map(|b| match b["type"].as_str() {
                    Some("text") => b["text"].as_str().unwrap_or_default().to_owned(),
                    Some(other) => format!("<{other}>"),
                    None => String::new(),
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Temporary paths replaced: the run's directory by `<TMP>`, a bash output file by
/// `<OUTPUT>`.
fn normalize(text: &str, env: &Env) -> String {
    let mut text = text.to_owned();
    let dir = env.dir.path();
    for form in [dir.canonicalize().unwrap(), dir.to_path_buf()] {
        text = text.replace(form.to_str().unwrap(), "<TMP>");
    }
    let temp = std::env::temp_dir();
    let temp = temp.to_str().unwrap().trim_end_matches('/');
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find(&format!("{temp}/pi-bash-")) {
        out.push_str(&rest[..at]);
        out.push_str("<OUTPUT>");
        let tail = &rest[at..];
        let end = tail.find([']', '\n', ' ']).unwrap_or(tail.len());
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

fn view(text: &str, compare: Compare) -> String {
    match compare {
        Compare::Text => text.to_owned(),
        Compare::Sorted => {
            let mut lines: Vec<&str> = text.lines().collect();
            lines.sort_unstable();
            lines.join("\n")
        }
        Compare::Notices => text
            .lines()
            .filter(|l| l.starts_with('['))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// Runs every case through `program` in one RPC session on fresh fixture files; returns
/// each result's normalized text and error flag.
fn run_cases(server: &MockServer, program: Command, cases: &[Case]) -> Vec<(String, bool)> {
    server.clear_queue();
    let env = Env::new(server, 128_000, json!({}));
    fixture(&env.work);
    let mut rpc = Rpc::start_program(
        &env,
        program,
        &["--tools", "read,bash,edit,write,grep,find,ls"],
    );
    let mut results = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        server.push_all([
            Script::tool_call(case.tool, case.args.clone()),
            Script::text("done"),
        ]);
        rpc.call(
            &format!("p{n}"),
            json!({"type": "prompt", "message": format!("case {n}")}),
        );
        let lines = rpc.event("agent_end");
        let end = lines
            .iter()
            .find(|l| l["type"] == "tool_execution_end")
            .unwrap_or_else(|| panic!("case {n} ({}) ran no tool: {lines:#?}", case.tool));
        let (text, is_error) = result_text(end);
        results.push((view(&normalize(&text, &env), case.compare), is_error));
    }
    // An abort while bash runs.
    server.push(Script::tool_call(
        "bash",
        json!({"command": "echo before; sleep 30"}),
    ));
    rpc.call("pa", json!({"type": "prompt", "message": "abort case"}));
    rpc.until("the bash output", |l| {
        l["type"] == "tool_execution_update" && content_text(&l["partialResult"]).contains("before")
    });
    rpc.send(json!({"id": "abort", "type": "abort"}));
    let mut lines = rpc.event("agent_end");
    if !lines
        .iter()
        .any(|l| l["type"] == "response" && l["id"] == "abort")
    {
        lines.push(rpc.response("abort"));
    }
    let end = lines
        .iter()
        .find(|l| l["type"] == "tool_execution_end")
        .expect("the aborted call ends");
    let (text, is_error) = result_text(end);
    results.push((normalize(&text, &env), is_error));
    rpc.finish();
    results
}

/// What `program args` prints on stdout, if it runs.
fn output_of(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether the `rg` and `fd` pi 1.6.0 would run are recent enough to compare with: ripgrep
/// 14 or later (its regex errors show the pattern as it searched it) and an fd with
/// `--no-require-git`.
fn external_tools_are_current() -> bool {
    let rg_major = output_of("rg", &["--version"])
        .and_then(|v| v.split_whitespace().nth(1).map(str::to_owned))
        .and_then(|v| v.split('.').next().and_then(|m| m.parse::<u32>().ok()));
    let fd_help = ["fd", "fdfind"]
        .iter()
        .find_map(|name| output_of(name, &["--help"]));
    rg_major.is_some_and(|major| major >= 14)
        && fd_help.is_some_and(|help| help.contains("--no-require-git"))
}

/// Each case and its result, long texts shortened to their start and end.
fn render(cases: &[Case], results: &[(String, bool)]) -> String {
    let mut out = String::new();
    for (n, (text, is_error)) in results.iter().enumerate() {
        let label = cases.get(n).map_or_else(
            || "bash abort".to_owned(),
            |c| format!("{} {}", c.tool, c.args),
        );
        let shown = if text.chars().count() > 600 {
            let head: String = text.chars().take(200).collect();
            let tail: String = text
                .chars()
                .rev()
                .take(200)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            format!("{head}\n[... {} chars ...]\n{tail}", text.chars().count())
        } else {
            text.clone()
        };
        // Control characters (a binary file read as text) escaped, so the snapshot is text.
        let shown: String = shown
            .chars()
            .map(|c| {
                if c.is_control() && c != '\n' && c != '\t' {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect();
        let kind = if *is_error { "error" } else { "ok" };
        out.push_str(&format!("## {label} -> {kind}\n{shown}\n\n"));
    }
    out
}

/// A result short enough to read in a failure message.
fn brief(result: &(String, bool)) -> String {
    let text = &result.0;
    if text.chars().count() <= 600 {
        return format!("{result:?}");
    }
    let head: String = text.chars().take(300).collect();
    let tail: String = text
        .chars()
        .rev()
        .take(300)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("({head:?} ... {tail:?}, {})", result.1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_result_texts_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let cases = cases();
    let ours_results = run_cases(&server, ours(), &cases);
    let mut problems = Vec::new();
    for (case, got) in cases.iter().zip(&ours_results) {
        if let Some((text, is_error)) = case.expected
            && (got.0.as_str(), got.1) != (text, is_error)
        {
            problems.push(format!(
                "{} {}: ours {}, expected {:?}",
                case.tool,
                case.args,
                brief(got),
                (text, is_error)
            ));
        }
    }
    let aborted = ours_results.last().unwrap();
    assert_eq!(aborted, &("before\n\n\nCommand aborted".to_owned(), true));
    // Every result as compared with pi 1.6.0 (long ones shortened), so a change shows here
    // even where pi 1.6.0 is not installed.
    insta::assert_snapshot!("tool_texts_16", render(&cases, &ours_results));
    if let Some(wrapper) = ts16() {
        let external = external_tools_are_current();
        if !external {
            eprintln!(
                "no ripgrep 14+ or fd with --no-require-git on PATH: grep and find are not compared with pi 1.6.0"
            );
        }
        let theirs = run_cases(&server, ts16_pi(&wrapper), &cases);
        for (n, (ours_result, theirs_result)) in ours_results.iter().zip(&theirs).enumerate() {
            let label = cases.get(n).map_or_else(
                || "bash abort".to_owned(),
                |c| format!("{} {}", c.tool, c.args),
            );
            if cases
                .get(n)
                .is_some_and(|c| c.needs_external_tool() && !external)
            {
                continue;
            }
            if ours_result != theirs_result {
                problems.push(format!(
                    "{label}:\n  ours:   {}\n  theirs: {}",
                    brief(ours_result),
                    brief(theirs_result)
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
