//! Request parity with pi 1.6.0: the same scenarios run through a pi against one capturing
//! mock server per run, and the requests it made, normalized, are what is compared.
//! pi 1.6.0's are kept as fixtures (`tests/fixtures/request_parity_16/<api>.json`,
//! rewritten by `scripts/refresh-request-parity.sh`), ours are recorded by each test run.
#![allow(dead_code)]

pub mod apis;
pub mod catalog;
pub mod catalog_known;
pub mod known;
pub mod midconvo;
pub mod normalize;
pub mod provider_rows;
pub mod row_fixture;
pub mod rows;
pub mod scenarios;
pub mod streams;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mock_llm::MockServer;
use serde_json::{Value, json};

use apis::WireApi;
use normalize::Placeholders;
use scenarios::Scenario;

/// Longest a single pi run may take before it is killed (a guard, not a synchronisation).
const RUN_GUARD: Duration = Duration::from_secs(120);

/// Which pi makes the requests.
pub enum Pi {
    /// This workspace's `pi`.
    Ours,
    /// pi 1.6.0's wrapper (`PI_TS16`).
    Ts16(PathBuf),
}

impl Pi {
    fn command(&self) -> Command {
        let mut command = match self {
            Pi::Ours => Command::new(env!("CARGO_BIN_EXE_pi")),
            Pi::Ts16(wrapper) => Command::new(wrapper),
        };
        // No catalog refresh, version check or telemetry: only the mock is reached.
        command
            .env("PI_OFFLINE", "1")
            .env("PI_SKIP_VERSION_CHECK", "1");
        command
    }
}

/// The fixture file of `api`.
pub fn fixture_path(api: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/request_parity_16")
        .join(format!("{api}.json"))
}

/// The recorded requests of every scenario of `api`, by scenario name.
pub type Recorded = BTreeMap<String, Vec<Value>>;

/// Runs every scenario of `api` through `pi`.
pub fn record_all(pi: &Pi, api: WireApi) -> Recorded {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    scenarios::all()
        .iter()
        .map(|scenario| {
            let requests = record(&runtime, pi, api, scenario)
                .unwrap_or_else(|e| panic!("{} {}: {e}", api.api, scenario.name));
            (scenario.name.clone(), requests)
        })
        .collect()
}

/// What a run is pointed at, given the mock server's URL: the agent's `models.json`, the
/// model it picks (`provider/id`) and the environment it gets.
pub struct RunSetup {
    pub models_json: Value,
    pub model: String,
    pub env: Vec<(&'static str, String)>,
    /// The agent's `auth.json`, for a provider signed in rather than keyed.
    pub auth: Option<Value>,
}

/// Runs `scenario` through `pi` on a fresh mock server and agent folder, on `api`'s
/// `parity` provider, and returns the requests the mock received, normalized.
pub fn record(
    runtime: &tokio::runtime::Runtime,
    pi: &Pi,
    api: WireApi,
    scenario: &Scenario,
) -> Result<Vec<Value>, String> {
    record_with(runtime, pi, scenario, &|url| RunSetup {
        models_json: api.models_json(url),
        model: format!("parity/{}", scenario.model),
        env: api.env(),
        auth: None,
    })
}

/// Runs `scenario` through `pi` on a fresh mock server and agent folder set up by `setup`,
/// and returns the requests the mock received, normalized.
pub fn record_with(
    runtime: &tokio::runtime::Runtime,
    pi: &Pi,
    scenario: &Scenario,
    setup: &dyn Fn(&str) -> RunSetup,
) -> Result<Vec<Value>, String> {
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push_all(scenario.scripts.clone());
    let setup = setup(&server.url());
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(agent.join("models.json"), setup.models_json.to_string()).unwrap();
    std::fs::write(agent.join("settings.json"), scenario.settings.to_string()).unwrap();
    if let Some(auth) = &setup.auth {
        std::fs::write(agent.join("auth.json"), auth.to_string()).unwrap();
    }
    std::fs::write(work.join(scenarios::NOTES_FILE), scenarios::NOTES_TEXT).unwrap();
    std::fs::write(work.join(scenarios::IMAGE_FILE), scenarios::PIXEL_PNG).unwrap();
    for args in &scenario.runs {
        let mut command = pi.command();
        command
            .arg("--model")
            .arg(&setup.model)
            .args(args)
            .current_dir(&work)
            .env("PI_CODING_AGENT_DIR", &agent)
            .env("HOME", dir.path());
        for name in FOREIGN_ENV {
            command.env_remove(name);
        }
        command.envs(setup.env.iter().map(|(k, v)| (*k, v.as_str())));
        command.envs(scenario.env.iter().copied());
        run(command)?;
    }
    let tmp = dir.path().to_string_lossy().into_owned();
    let resolved = std::fs::canonicalize(dir.path())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| tmp.clone());
    let install = match pi {
        Pi::Ours => None,
        // <install>/bin/pi
        Pi::Ts16(wrapper) => wrapper
            .parent()
            .and_then(Path::parent)
            .map(|dir| dir.to_string_lossy().into_owned()),
    };
    let placeholders = Placeholders {
        tmp: vec![resolved, tmp],
        install,
    };
    let requests = server
        .requests()
        .iter()
        .map(|r| normalize::request(r, &placeholders))
        .collect();
    drop(server);
    Ok(requests)
}

/// Variables of the machine that would change what a pi sends.
const FOREIGN_ENV: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "MISTRAL_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "PI_CACHE_RETENTION",
    "PI_CODING_AGENT_SESSION_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
];

/// Runs one pi to its end (killed at [`RUN_GUARD`]); an exit other than 0 is an error
/// carrying its output.
fn run(mut command: Command) -> Result<(), String> {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("pi does not start: {e}"))?;
    let pid = child.id();
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let output = match finished.recv_timeout(RUN_GUARD) {
        Ok(output) => output.map_err(|e| e.to_string())?,
        Err(_) => {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            return Err(format!("pi ran past {RUN_GUARD:?} and was killed"));
        }
    };
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "pi exited with {:?}\nstdout: {}\nstderr: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

/// Reads `api`'s fixture: pi 1.6.0's requests by scenario.
pub fn read_fixture(api: &str) -> Recorded {
    let path = fixture_path(api);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (scripts/refresh-request-parity.sh writes it)",
            path.display()
        )
    });
    let file: Value = serde_json::from_str(&text).unwrap();
    serde_json::from_value(file["scenarios"].clone()).unwrap()
}

/// Writes `api`'s fixture.
pub fn write_fixture(api: &str, recorded: &Recorded) {
    let path = fixture_path(api);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = json!({
        "api": api,
        "recordedWith": "pi 1.6.0 (scripts/refresh-request-parity.sh)",
        "scenarios": recorded,
    });
    let mut text = serde_json::to_string_pretty(&file).unwrap();
    text.push('\n');
    std::fs::write(&path, text).unwrap();
}

/// Every difference between our requests and the fixture's that no entry of
/// [`known::KNOWN_DIFFERENCES`] explains, one line each.
pub fn compare(api: &str, ours: &Recorded, theirs: &Recorded) -> Vec<String> {
    let mut out = Vec::new();
    for (scenario, their_requests) in theirs {
        let Some(our_requests) = ours.get(scenario) else {
            out.push(format!("{scenario}: not run by ours"));
            continue;
        };
        let ours = known::without_known(api, scenario, our_requests);
        let theirs = known::without_known(api, scenario, their_requests);
        if ours.len() != theirs.len() {
            out.push(format!(
                "{scenario}: ours made {} requests, pi 1.6.0 {}:\nours: {}\ntheirs: {}",
                ours.len(),
                theirs.len(),
                summary(&ours),
                summary(&theirs)
            ));
            continue;
        }
        for (n, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            for line in normalize::differences(a, b) {
                out.push(format!("{scenario} request {n}: {line}"));
            }
        }
    }
    out
}

/// `METHOD path` of each request.
fn summary(requests: &[Value]) -> String {
    requests
        .iter()
        .map(|r| format!("{} {}", r["method"], r["path"]).replace('"', ""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether this run rewrites the fixtures from pi 1.6.0 instead of comparing.
pub fn refreshing() -> bool {
    std::env::var_os("PI_REQUEST_PARITY_REFRESH").is_some_and(|v| v == "1")
}

/// Path of the fixtures folder, for messages.
pub fn fixtures_dir() -> &'static Path {
    Path::new("crates/coding-agent/tests/fixtures/request_parity_16")
}
