//! A session whose working directory was deleted (pi 1.5.2): outside the terminal UI pi
//! stops with its message naming the stored folder, the session file and the current
//! folder, and exits 1 without touching the file. Ours and pi 1.6.0 (`PI_TS16`) run the
//! same case. In the terminal UI pi asks instead: continue in the current folder, or fork
//! the session into it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{MockServer, Script};
use serde_json::json;
use std::time::Duration;
use support::rpc::Env;

use support::tmux::{self, Tmux};
use support::ts16::{ours, pis, program, run, run_in};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_folder_is_gone_stops_with_pis_message() {
    for (name, wrapper) in pis() {
        let server = MockServer::start().await.unwrap();
        server.push(Script::text("Hello."));
        let env = Env::new(&server, 128_000, json!({}));
        let gone = env.work.join("gone");
        std::fs::create_dir_all(&gone).unwrap();
        let made = tokio::task::block_in_place(|| run_in(&env, &gone, ours(), &["-p", "Hi."]));
        assert!(made.status.success(), "{made:?}");
        let files = env.session_files();
        assert_eq!(files.len(), 1, "{files:?}");
        let file = files[0].clone();
        let before = std::fs::read_to_string(&file).unwrap();
        std::fs::remove_dir_all(&gone).unwrap();

        let file_arg = file.display().to_string();
        let output = tokio::task::block_in_place(|| {
            run(
                &env,
                program(&wrapper),
                &["--session", &file_arg, "-p", "Again."],
            )
        });
        assert_eq!(output.status.code(), Some(1), "{name}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let expected = format!(
            "Stored session working directory does not exist: {}\nSession file: {}\nCurrent working directory: {}\n",
            gone.display(),
            file.display(),
            env.work.display()
        );
        assert!(stderr.ends_with(&expected), "{name}: {stderr}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before, "{name}");
        assert_eq!(server.requests().len(), 1, "{name} sent a request");
    }
}

/// The selector's rows, from its title to its hint line, with this run's folders named.
fn selector_rows(screen: &str, env: &Env, gone: &std::path::Path) -> Vec<String> {
    screen
        .lines()
        .map(str::trim_end)
        .skip_while(|l| !l.contains("Session cwd does not exist"))
        .take_while(|l| !l.starts_with("────") || l.is_empty())
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.replace(&gone.display().to_string(), "<GONE>")
                .replace(&env.work.display().to_string(), "<HERE>")
        })
        .collect()
}

#[test]
fn the_terminal_ui_offers_to_fork_into_the_current_folder() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        server.push(Script::text("Hello."));
        let env = Env::new(&server, 128_000, json!({}));
        if wrapper.is_some() {
            support::ts16::stub_search_tools(&env.agent);
        }
        let gone = env.work.join("gone");
        std::fs::create_dir_all(&gone).unwrap();
        let made = run_in(&env, &gone, ours(), &["-p", "Hi."]);
        assert!(made.status.success(), "{made:?}");
        let file = env.session_files()[0].clone();
        let before = std::fs::read_to_string(&file).unwrap();
        std::fs::remove_dir_all(&gone).unwrap();

        // pi 1.6's startup selector, before the UI: the arrows and Enter answer it.
        let file_arg = file.display().to_string();
        let pi = support::ts16::program_path(&wrapper);
        let tmux = Tmux::start_program(
            &env,
            &pi,
            &[("PI_OFFLINE", "1")],
            &["--session", &file_arg],
            120,
            30,
        );
        let screen = tmux.wait(&format!("{name}: asked"), Duration::from_secs(15), |s| {
            s.contains("Session cwd does not exist") && s.contains("→ Continue in")
        });
        seen.push((name, selector_rows(&screen, &env, &gone)));
        tmux.keys(&["Down"]);
        tmux.wait(&format!("{name}: on fork"), Duration::from_secs(15), |s| {
            s.contains("→ Fork into")
        });
        tmux.keys(&["Enter"]);
        let screen = tmux.wait(&format!("{name}: started"), Duration::from_secs(15), |s| {
            s.contains("mock-model")
        });
        assert!(
            !screen.contains("Session cwd does not exist"),
            "{name}: the question is gone:\n{screen}"
        );
        tmux.keys(&["C-d"]);
        assert_eq!(tmux.wait_exit(Duration::from_secs(20)), 0, "{name}");

        assert_eq!(std::fs::read_to_string(&file).unwrap(), before, "{name}");
        let files = env.session_files();
        assert_eq!(files.len(), 2, "{name}: {files:?}");
        let forked = files.iter().find(|f| **f != file).unwrap();
        let header: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(forked)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(header["cwd"], env.work.display().to_string(), "{name}");
    }
    if let [(_, ours), (_, theirs)] = &seen[..] {
        assert_eq!(ours, theirs, "the startup selector");
    }
}
