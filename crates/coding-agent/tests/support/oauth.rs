//! The OAuth-protected MCP test server (`tests/fixtures/mcp/oauth_server.py`) and a
//! sign-in that plays the browser.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use super::mcp::fixture;
use super::rpc::Env;

/// The OAuth test server, stopped when dropped.
pub struct OAuthServer {
    child: Child,
    base: String,
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl OAuthServer {
    pub fn start(dir: &Path, token_seconds: u32) -> Self {
        Self::start_with(dir, token_seconds, &[])
    }

    /// Starts it with environment variables that turn on its faults (see the fixture).
    pub fn start_with(dir: &Path, token_seconds: u32, faults: &[(&str, &str)]) -> Self {
        let port_file = dir.join("oauth-port");
        let child = Command::new("python3")
            .envs(faults.iter().copied())
            .arg(fixture("oauth_server.py"))
            .arg(&port_file)
            .arg(token_seconds.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let port = super::wait_for_port_file(&port_file, "OAuth");
        Self {
            child,
            base: format!("http://127.0.0.1:{}", port),
        }
    }

    pub fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    pub fn get(&self, path: &str) -> Value {
        let out = Command::new("python3")
            .arg("-c")
            .arg("import sys,urllib.request;print(urllib.request.urlopen(sys.argv[1]).read().decode())")
            .arg(format!("{}{path}", self.base))
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    }
}

/// Runs `pi mcp login secure` of `program` and plays the browser with the URL it prints.
pub fn login_by_visiting(program: &Path, env: &Env) -> (Option<i32>, String) {
    let (code, said, _) = login_by_visiting_full(program, env);
    (code, said)
}

/// The same, with what pi wrote to stderr.
pub fn login_by_visiting_full(program: &Path, env: &Env) -> (Option<i32>, String, String) {
    let done = login_visiting(program, env, "secure", 60);
    (done.code, done.said, done.errors)
}

/// How a `pi mcp login` the test played the browser for ended.
pub struct Login {
    pub code: Option<i32>,
    pub said: String,
    pub errors: String,
    /// The page pi's callback answered the browser with.
    pub page: String,
}

/// Runs `pi mcp login <server> --timeout <seconds>` of `program` and plays the browser:
/// it opens the URL pi prints and follows the redirect to pi's callback.
pub fn login_visiting(program: &Path, env: &Env, server: &str, seconds: u32) -> Login {
    use std::io::{BufRead, BufReader};
    let page_file = env.dir.path().join("callback-page.html");
    let _ = std::fs::remove_file(&page_file);
    let mut child = Command::new(program)
        .args(["mcp", "login", server, "--timeout", &seconds.to_string()])
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env("PI_OFFLINE", "1")
        .env("BROWSER", "true")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        said.push_str(&line);
        said.push('\n');
        if line.starts_with("http://127.0.0.1:") {
            // An error page comes with an error status: keep its body too.
            let visited = Command::new("python3")
                .args([
                    "-c",
                    "import sys,urllib.request,urllib.error\n\
                     try: body = urllib.request.urlopen(sys.argv[1]).read()\n\
                     except urllib.error.HTTPError as e: body = e.read()\n\
                     open(sys.argv[2], 'wb').write(body)",
                    &line,
                ])
                .arg(&page_file)
                .status()
                .unwrap();
            assert!(visited.success());
            break;
        }
    }
    for line in lines {
        said.push_str(&line.unwrap());
        said.push('\n');
    }
    let mut errors = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        use std::io::Read;
        let _ = stderr.read_to_string(&mut errors);
    }
    Login {
        code: child.wait().unwrap().code(),
        said,
        errors,
        page: std::fs::read_to_string(&page_file).unwrap_or_default(),
    }
}
