//! One print-mode run per pi against a fresh mock, with the agent's `models.json` and
//! `auth.json`, `~/.aws/credentials` and the environment a case sets (and none of the test
//! machine's provider variables): the run's output and the requests the mock received.
//! Used to compare what ours and pi 1.6.0 (`PI_TS16`) do with the same configuration.
#![allow(dead_code)]

use std::process::{Command, Output};

use serde_json::{Value, json};

use mock_llm::{MockServer, RecordedRequest, Script};

use super::rpc::Env;
use super::ts16::{pis, program_with_host, run};

/// Variables of the machine running the tests that would change what the pis resolve.
const AMBIENT: [&str; 18] = [
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_BEDROCK_SKIP_AUTH",
    "CLOUDFLARE_API_KEY",
    "CLOUDFLARE_ACCOUNT_ID",
    "CLOUDFLARE_GATEWAY_ID",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_BASE_URL",
    "AZURE_OPENAI_RESOURCE_NAME",
    "AZURE_OPENAI_API_VERSION",
    "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
];

/// Two profiles in `~/.aws/credentials`, each with its own access key id.
pub const AWS_CREDENTIALS: &str = "[default]\naws_access_key_id = AKIDDEFAULTPROFILE\n\
aws_secret_access_key = default-secret\n\n[scoped]\naws_access_key_id = AKIDSCOPEDPROFILE\n\
aws_secret_access_key = scoped-secret\n";

/// One case: the providers of `models.json` and the agent's `auth.json` (in both, `{url}`
/// stands for the mock's root and `{port}` for its port), the environment, the `provider/id` prompted, the arguments after
/// `--model` and the mock's answers.
pub struct Case {
    pub providers: Value,
    pub auth: Value,
    pub env: Vec<(&'static str, &'static str)>,
    pub model: String,
    pub args: Vec<&'static str>,
    pub scripts: Vec<Script>,
    /// Files written into the work dir first (name, content), e.g. an extension.
    pub files: Vec<(&'static str, &'static str)>,
    /// Work-dir files read back after the run (an extension's record; `PI_CASE_WORK` names
    /// the work dir to the pi).
    pub read_back: Vec<&'static str>,
    /// Settings of the mock's sign-in stand-in (`POST /_mock/oauth`), e.g. token lifetimes.
    pub mock_oauth: Option<Value>,
    /// The agent's `settings.json`.
    pub settings: Value,
}

/// What one run left.
pub struct Run {
    pub output: Output,
    pub requests: Vec<RecordedRequest>,
    /// The `read_back` files, by name (`None`: not written).
    pub files: Vec<(&'static str, Option<String>)>,
}

impl Case {
    /// A case prompting `model` once (`-p`), answered with one line of text.
    pub fn new(providers: Value, model: impl Into<String>) -> Self {
        Case {
            providers,
            auth: json!({}),
            env: vec![],
            model: model.into(),
            args: vec!["-p", "Which configuration?"],
            scripts: vec![Script::text("Configured.")],
            files: vec![],
            read_back: vec![],
            mock_oauth: None,
            settings: json!({}),
        }
    }
}

/// A custom Bedrock model `id` on the mock (signed requests over HTTP/1.1), its entry
/// `support::shapes::model` with `fields` merged over it.
pub fn bedrock_case(id: &str, fields: Value) -> Case {
    let model = super::shapes::model(id, fields);
    let mut case = Case::new(
        json!({"amazon-bedrock": {"baseUrl": "{url}", "api": "bedrock-converse-stream",
            "models": [model]}}),
        format!("amazon-bedrock/{id}"),
    );
    case.env.push(("AWS_BEDROCK_FORCE_HTTP1", "1"));
    case
}

/// `case` through `program` on a fresh mock and agent dir: the run's output and the
/// requests the mock received.
pub async fn prompt(program: Command, case: &Case) -> (Output, Vec<RecordedRequest>) {
    let run = prompt_run(program, case).await;
    (run.output, run.requests)
}

/// [`prompt`], with the files the case reads back.
pub async fn prompt_run(mut program: Command, case: &Case) -> Run {
    let server = MockServer::start().await.unwrap();
    server.push_all(case.scripts.clone());
    if let Some(settings) = &case.mock_oauth {
        super::logins::configure(&server, settings.clone());
    }
    let env = Env::new(&server, 128_000, json!({}));
    let port = server.addr().port().to_string();
    let providers = case
        .providers
        .to_string()
        .replace("{url}", &server.url())
        .replace("{port}", &port);
    let providers: Value = serde_json::from_str(&providers).unwrap();
    std::fs::write(
        env.agent.join("models.json"),
        json!({ "providers": providers }).to_string(),
    )
    .unwrap();
    std::fs::write(env.agent.join("settings.json"), case.settings.to_string()).unwrap();
    let auth = case
        .auth
        .to_string()
        .replace("{url}", &server.url())
        .replace("{port}", &port);
    std::fs::write(env.agent.join("auth.json"), auth).unwrap();
    for (name, content) in &case.files {
        std::fs::write(env.work.join(name), content).unwrap();
    }
    let aws = env.dir.path().join(".aws");
    std::fs::create_dir_all(&aws).unwrap();
    std::fs::write(aws.join("credentials"), AWS_CREDENTIALS).unwrap();
    for name in AMBIENT {
        program.env_remove(name);
    }
    program
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env("PI_CASE_WORK", &env.work)
        .envs(case.env.iter().copied());
    let mut args = vec!["--model", case.model.as_str()];
    args.extend(case.args.iter().copied());
    let output = run(&env, program, &args);
    let files = case
        .read_back
        .iter()
        .map(|name| (*name, std::fs::read_to_string(env.work.join(name)).ok()))
        .collect();
    Run {
        output,
        requests: server.requests(),
        files,
    }
}

/// `case` through each pi (ours, and pi 1.6.0 when installed), reduced by `part` to what
/// the case is about; asserts every pi got the same and returns it.
pub async fn compare(case: &Case, part: impl Fn(&Output, &[RecordedRequest]) -> Value) -> Value {
    compare_runs(case, |run| part(&run.output, &run.requests)).await
}

/// [`compare`] on whole runs (with the files read back); ours runs the shared test
/// extension host.
pub async fn compare_runs(case: &Case, part: impl Fn(&Run) -> Value) -> Value {
    let mut seen: Option<(&str, Value)> = None;
    for (name, wrapper) in pis() {
        let run = prompt_run(program_with_host(&wrapper), case).await;
        let got = part(&run);
        match &seen {
            Some((first, expected)) => {
                assert_eq!(*expected, got, "{first} (left) and {name} (right) differ")
            }
            None => seen = Some((name, got)),
        }
    }
    seen.map(|(_, value)| value).unwrap_or_default()
}

/// The assistant messages a `--mode json` run ended (its `message_end` lines).
pub fn assistant_messages(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["type"] == "message_end" && line["message"]["role"] == "assistant")
        .map(|line| line["message"].clone())
        .collect()
}
