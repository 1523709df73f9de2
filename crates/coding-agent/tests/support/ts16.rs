//! The TypeScript pi 1.6.0, the release this build matches: tests that compare with it find
//! its wrapper through `PI_TS16` (`scripts/install-ts-pi-16.sh` prints the path) and report
//! that they were skipped when it is unset.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use super::rpc::Env;

/// pi 1.6.0's wrapper, or `None` (with a note on stderr) when `PI_TS16` is unset.
pub fn ts16() -> Option<PathBuf> {
    let wrapper = std::env::var_os("PI_TS16")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    if wrapper.is_none() {
        // A run that must compare (CI with pi 1.6.0 installed) fails instead of skipping.
        assert!(
            std::env::var_os("PI_TEST_REQUIRE_TS16").is_none_or(|v| v.is_empty()),
            "PI_TEST_REQUIRE_TS16 is set but PI_TS16 is not: the comparison with pi 1.6.0 cannot run"
        );
        eprintln!(
            "PI_TS16 is not set: skipped the comparison with pi 1.6.0 (run scripts/install-ts-pi-16.sh)"
        );
    }
    wrapper
}

/// A command running pi 1.6.0 with its model catalogs refreshed (no `PI_OFFLINE`, which
/// turns that off) but every outside request sent to a closed local port: only servers on
/// 127.0.0.1 (the mock's) are reached.
pub fn ts16_pi_catalogs(wrapper: &PathBuf) -> Command {
    let mut command = Command::new(wrapper);
    command
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env_remove("PI_OFFLINE");
    command
}

/// A command running pi 1.6.0 offline.
pub fn ts16_pi(wrapper: &PathBuf) -> Command {
    let mut command = Command::new(wrapper);
    command.env("PI_OFFLINE", "1");
    command
}

/// A command running our `pi`.
pub fn ours() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pi"))
}

/// Runs `program` with `args` in `env`'s work dir and agent dir, stdin closed.
pub fn run(env: &Env, program: Command, args: &[&str]) -> Output {
    run_in(env, &env.work, program, args)
}

/// [`run`] in another folder than the work dir.
pub fn run_in(env: &Env, dir: &std::path::Path, mut program: Command, args: &[&str]) -> Output {
    program
        .args(args)
        .current_dir(dir)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .output()
        .expect("pi runs")
}

/// The pis a side-by-side test runs: ours, and pi 1.6.0 when `PI_TS16` names it (its
/// wrapper in the second field).
pub fn pis() -> Vec<(&'static str, Option<PathBuf>)> {
    let mut all = vec![("ours", None)];
    if let Some(wrapper) = ts16() {
        all.push(("pi 1.6.0", Some(wrapper)));
    }
    all
}

/// The path of the pi to run in a terminal: pi 1.6.0's wrapper, or ours.
pub fn program_path(wrapper: &Option<PathBuf>) -> String {
    wrapper
        .as_ref()
        .map_or(env!("CARGO_BIN_EXE_pi").to_owned(), |w| {
            w.display().to_string()
        })
}

/// [`program`], with ours running the test extension host (installed once for all tests)
/// rather than installing one into the scratch agent dir.
pub fn program_with_host(wrapper: &Option<PathBuf>) -> Command {
    let mut command = program(wrapper);
    if wrapper.is_none()
        && let Some(host) = super::ext_host::host_dir()
    {
        command.env("PI_EXTENSION_HOST_DIR", host);
    }
    command
}

/// A command for one of [`pis`].
pub fn program(wrapper: &Option<PathBuf>) -> Command {
    match wrapper {
        Some(wrapper) => ts16_pi(wrapper),
        None => ours(),
    }
}

/// pi 1.6.0 looks for fd and rg at startup and warns when offline without them; ours needs
/// neither. Scripts in its tool folder (`<agent>/bin`) stand in for them.
pub fn stub_search_tools(agent: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let bin = agent.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["fd", "rg"] {
        std::fs::write(bin.join(tool), "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(bin.join(tool), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
