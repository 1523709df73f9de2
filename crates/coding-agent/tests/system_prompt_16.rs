//! The system prompt as pi 1.6.0 sends it: context files in `<project_context>` under
//! `<project_instructions path=…>` tags (a folder named `AGENTS.md` passed over, a nested
//! linked worktree's file read once), no date, the `<cwd>` section, and rules that name only
//! the exploring tools that are active; the default prompt is pi 1.5.0's tightened one: its
//! sections in pi 1.6.0's order, in our own words, no longer than 1.6.0's, with the `PI_*`
//! hint while bash is active. Our `pi` and pi 1.6.0 (`PI_TS16`) run in print mode from the
//! same folders against the mock model; the sections are compared as sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::git::git;
use support::rpc::Env;
use support::ts16::{pis, program, run_in};

/// What one run sent and printed.
struct Sent {
    prompt: String,
    stderr: String,
}

/// Runs `program -p Hello.` in `dir` with `args`; returns the system prompt it sent.
fn send(server: &MockServer, env: &Env, dir: &Path, program: Command, args: &[&str]) -> Sent {
    server.clear_queue();
    server.clear_requests();
    server.push(Script::text("Ok."));
    let mut all = vec!["--no-session", "-p", "Hello."];
    all.extend_from_slice(args);
    let output = run_in(env, dir, program, &all);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let requests = server.requests();
    let body = &requests.first().expect("a request").body;
    let prompt = body["messages"][0]["content"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| {
            body["messages"][0]["content"][0]["text"]
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| panic!("no system prompt in {body}"));
    Sent { prompt, stderr }
}

/// The text of the `<name>` section, without its tags.
fn section<'a>(prompt: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>\n");
    let close = format!("\n</{name}>");
    let start = prompt.find(&open)? + open.len();
    let end = start + prompt[start..].find(&close)?;
    Some(&prompt[start..end])
}

/// The `<project_context>` text pi 1.6.0 lays out for these files.
fn project_context(files: &[(&Path, &str)]) -> String {
    let mut parts = vec!["Project-specific instructions and guidelines:".to_owned()];
    for (path, content) in files {
        parts.push(format!(
            "<project_instructions path=\"{}\">\n{content}\n</project_instructions>",
            path.display()
        ));
    }
    parts.join("\n\n")
}

/// Today's date as `YYYY-MM-DD` in UTC and in local time (what a prompt would carry).
fn today() -> Vec<String> {
    [vec!["-u", "+%F"], vec!["+%F"]]
        .iter()
        .map(|args| {
            let out = Command::new("date").args(args).output().unwrap();
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        })
        .collect()
}

/// The checks both pis must pass in `dir`: the project context and cwd sections as
/// expected, no date, no warning about the folder named like a context file.
fn check(sent: &Sent, dir: &Path, expected_context: &str, who: &str) {
    assert_eq!(
        section(&sent.prompt, "project_context"),
        Some(expected_context),
        "{who}: {}",
        sent.prompt
    );
    let cwd = dir.display().to_string();
    assert_eq!(section(&sent.prompt, "cwd"), Some(cwd.as_str()), "{who}");
    assert!(
        sent.prompt.ends_with(&format!("<cwd>\n{cwd}\n</cwd>")),
        "{who}: {}",
        sent.prompt
    );
    for date in today() {
        assert!(!sent.prompt.contains(&date), "{who}: {}", sent.prompt);
    }
    assert!(!sent.prompt.contains("Current date"), "{who}");
    assert!(!sent.stderr.contains("EISDIR"), "{who}: {}", sent.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_files_sit_in_xml_tags_without_a_date_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    std::fs::write(env.agent.join("AGENTS.md"), "Global: be brief.").unwrap();
    std::fs::write(env.work.join("AGENTS.md"), "Parent: use tabs.\n").unwrap();
    let project = env.work.join("project");
    // A folder named AGENTS.md: passed over, the CLAUDE.md beside it is read.
    std::fs::create_dir_all(project.join("AGENTS.md")).unwrap();
    std::fs::write(project.join("AGENTS.md").join("notes.txt"), "x").unwrap();
    std::fs::write(project.join("CLAUDE.md"), "Project: write Rust.\n").unwrap();
    let expected = project_context(&[
        (&env.agent.join("AGENTS.md"), "Global: be brief."),
        (&env.work.join("AGENTS.md"), "Parent: use tabs.\n"),
        (&project.join("CLAUDE.md"), "Project: write Rust.\n"),
    ]);
    for (who, wrapper) in pis() {
        let sent = send(&server, &env, &project, program(&wrapper), &[]);
        check(&sent, &project, &expected, who);
    }
}

/// A main repository with an AGENTS.md and two linked worktrees nested in it: `feat` with
/// the checked-out copy, `linked` with an AGENTS.md that is a symlink to the main one.
fn nested_worktrees(root: &Path) -> (PathBuf, PathBuf) {
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("AGENTS.md"), "Repo: run the tests.\n").unwrap();
    git(&repo, &["add", "AGENTS.md"]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    git(&repo, &["worktree", "add", "-q", ".worktrees/feat"]);
    git(&repo, &["worktree", "add", "-q", ".worktrees/linked"]);
    let feat = repo.join(".worktrees/feat");
    let linked = repo.join(".worktrees/linked");
    std::fs::remove_file(linked.join("AGENTS.md")).unwrap();
    std::os::unix::fs::symlink("../../AGENTS.md", linked.join("AGENTS.md")).unwrap();
    (feat, linked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nested_worktree_reads_its_context_file_once_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let (feat, linked) = nested_worktrees(&env.work);
    for (who, wrapper) in pis() {
        for dir in [&feat, &linked] {
            let sent = send(&server, &env, dir, program(&wrapper), &[]);
            let expected = project_context(&[(&dir.join("AGENTS.md"), "Repo: run the tests.\n")]);
            check(&sent, dir, &expected, who);
        }
        // The main checkout itself still reads its own file.
        let repo = env.work.join("repo");
        let sent = send(&server, &env, &repo, program(&wrapper), &[]);
        let expected = project_context(&[(&repo.join("AGENTS.md"), "Repo: run the tests.\n")]);
        check(&sent, &repo, &expected, who);
    }
}

/// Whether `text` names `word` as a word of its own.
fn names(text: &str, word: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .any(|w| w == word)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_name_only_the_active_exploring_tools_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    for (who, wrapper) in pis() {
        for tools in [
            "bash,grep",
            "bash,find",
            "read,bash,ls",
            "bash,grep,find,ls",
        ] {
            let sent = send(
                &server,
                &env,
                &env.work,
                program(&wrapper),
                &["--tools", tools],
            );
            let rules = section(&sent.prompt, "rules")
                .unwrap_or_else(|| panic!("{who}: no rules in {}", sent.prompt));
            let active: Vec<&str> = tools.split(',').collect();
            for explorer in ["grep", "find", "ls"] {
                assert_eq!(
                    names(rules, explorer),
                    // Ours names the active ones; pi 1.6.0 none at all.
                    who == "ours" && active.contains(&explorer),
                    "{who} with {tools}: {rules}"
                );
            }
        }
    }
}

/// The names of a prompt's sections in order, the untagged preamble first.
fn section_names(prompt: &str) -> Vec<String> {
    let mut names = vec!["preamble".to_owned()];
    for line in prompt.lines() {
        if let Some(name) = line.strip_prefix('<').and_then(|l| l.strip_suffix('>'))
            && !name.starts_with('/')
            && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            && prompt.contains(&format!("</{name}>"))
        {
            names.push(name.to_owned());
        }
    }
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_prompt_is_tight_and_laid_out_as_pi_16s() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        let full = send(&server, &env, &env.work, program(&wrapper), &[]).prompt;
        let no_bash = send(
            &server,
            &env,
            &env.work,
            program(&wrapper),
            &["--tools", "read,edit"],
        )
        .prompt;
        let hints = |prompt: &str| section(prompt, "rules").is_some_and(|r| r.contains("PI_*"));
        assert!(hints(&full), "{who}: {full}");
        assert!(!hints(&no_bash), "{who}: {no_bash}");
        let mut names = section_names(&full);
        // pi 1.6.0 points at its own docs and examples, which this build does not ship.
        names.retain(|n| n != "docs");
        seen.push((who, names, full.len()));
    }
    assert_eq!(seen[0].1, ["preamble", "tools", "rules", "cwd"]);
    for (who, names, len) in &seen[1..] {
        assert_eq!(&seen[0].1, names, "ours and {who}");
        assert!(seen[0].2 <= *len, "ours {} chars, {who} {len}", seen[0].2);
    }
}
