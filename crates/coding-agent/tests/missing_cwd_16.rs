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

#[test]
fn the_terminal_ui_offers_to_fork_into_the_current_folder() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push(Script::text("Hello."));
    let env = Env::new(&server, 128_000, json!({}));
    let gone = env.work.join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    let made = run_in(&env, &gone, ours(), &["-p", "Hi."]);
    assert!(made.status.success(), "{made:?}");
    let file = env.session_files()[0].clone();
    let before = std::fs::read_to_string(&file).unwrap();
    std::fs::remove_dir_all(&gone).unwrap();

    let file_arg = file.display().to_string();
    let pi = Tmux::start(&env, &["--session", &file_arg], 100, 30);
    let screen = pi.wait_for("Choose 1-3");
    assert!(
        screen.contains(&format!("Session cwd does not exist: {}", gone.display())),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("2. Fork into {}", env.work.display())),
        "{screen}"
    );
    pi.type_text("2");
    pi.keys(&["Enter"]);
    pi.wait_for("mock-model");
    pi.keys(&["C-d"]);
    assert_eq!(pi.wait_exit(Duration::from_secs(20)), 0);

    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    let files = env.session_files();
    assert_eq!(files.len(), 2, "{files:?}");
    let forked = files.iter().find(|f| **f != file).unwrap();
    let header: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(forked)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["cwd"], env.work.display().to_string());
}
