//! The extension host's own JavaScript tests (`extension-host/test/*.test.mjs`, run with
//! `node --test`): loading, the combination rules inside the host, tools, commands, UI per
//! mode, the state mirror, and every example extension of the TypeScript pi loading.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

#[test]
fn the_host_javascript_passes_its_tests() {
    let Some(dir) = support::ext_host::host_dir() else {
        return;
    };
    let mut files: Vec<String> = std::fs::read_dir(dir.join("test"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".test.mjs"))
        .map(|name| format!("test/{name}"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut command = Command::new("node");
    command.arg("--test").args(&files).current_dir(&dir);
    if let Some(examples) = support::ext_host::example("") {
        command.env("PI_EXT_EXAMPLES_DIR", examples);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("# ") || l.starts_with("not ok"))
        .collect();
    println!("{}", summary.join("\n"));
    assert!(
        output.status.success(),
        "node --test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
