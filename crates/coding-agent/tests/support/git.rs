//! Git for the package tests: commits with a fixed author, and git's `insteadOf` URL
//! rewriting that makes `https://git.example.test/<path>` reach `<dir>/repos/<path>`.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// Runs git in `dir`; panics when it fails.
pub fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.test")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.test")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?} failed");
}

/// Points `https://git.example.test/` at the bare repositories under `<dir>/repos/`.
pub fn rewrite_test_host(command: &mut Command, dir: &Path) {
    command
        .env("GIT_CONFIG_COUNT", "1")
        .env(
            "GIT_CONFIG_KEY_0",
            format!("url.file://{}/repos/.insteadOf", dir.display()),
        )
        .env("GIT_CONFIG_VALUE_0", "https://git.example.test/")
        .env("GIT_TERMINAL_PROMPT", "0");
}
