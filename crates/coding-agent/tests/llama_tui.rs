//! `/llama` and `/login llama.cpp` through a real terminal (tmux) against mock-llm's
//! stand-in llama.cpp router: the panel lists the router's models; loading (with the
//! "models are loaded" choice), stopping a load, unloading and downloading reach the router
//! and end with pi 1.6.0's notices; the login stores the connection as pi 1.6.0 does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mock_llm::{LlamaSettings, MockServer};
use support::rpc::Env;
use support::tmux::{self, Tmux};

macro_rules! require_tmux {
    () => {
        if !tmux::available() {
            eprintln!("tmux is not installed; skipping");
            return;
        }
    };
}

/// A router with one loaded and two unloaded models, loads taking `load_ms` (gamma's never
/// ends), and one Hugging Face repository to download.
fn router(server: &MockServer, load_ms: u64, api_key: Option<&str>) {
    let models = json!([
        {"id": "alpha-loaded", "status": {"value": "loaded"}, "meta": {"n_ctx": 4096}},
        {"id": "beta-unloaded", "status": {"value": "unloaded"}},
        {"id": "gamma-unloaded", "status": {"value": "unloaded"}}
    ]);
    let hub = json!([{"id": "ggml-org/tiny-GGUF", "downloads": 12345, "siblings": [
        {"rfilename": "tiny-Q4_K_M.gguf", "size": 1_000_000},
        {"rfilename": "tiny-Q8_0.gguf", "size": 2_000_000}
    ]}]);
    server.set_llama(LlamaSettings {
        models: models.as_array().unwrap().clone(),
        load_ms,
        stuck: vec!["gamma-unloaded".to_owned()],
        loaded_n_ctx: Some(8192),
        api_key: api_key.map(str::to_owned),
        hub: hub.as_array().unwrap().clone(),
        ..Default::default()
    });
}

/// Waits until the router has been called with `call`.
fn wait_for_call(server: &MockServer, call: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !server.llama_calls().iter().any(|c| c == call) {
        assert!(
            Instant::now() < deadline,
            "no {call:?}; calls: {:?}",
            server.llama_calls()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The router's status of a model now.
fn status(server: &MockServer, id: &str) -> String {
    server
        .llama_models()
        .iter()
        .find(|m| m["id"] == id)
        .map(|m| m["status"]["value"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

fn open_panel(tmux: &Tmux) {
    tmux.type_text("/llama");
    tmux.keys(&["Enter"]);
    tmux.wait_for("enter load/unload/download");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_loads_stops_unloads_and_downloads() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    router(&server, 1500, None);
    let env = Env::new(&server, 128_000, json!({}));
    let url = server.url();
    let vars = [
        ("LLAMA_BASE_URL", url.as_str()),
        ("HF_ENDPOINT", url.as_str()),
    ];
    let tmux = Tmux::start_with(&env, &vars, &[], 110, 40);
    tmux.wait_for("mock-model");
    open_panel(&tmux);
    let screen = tmux.screen();
    assert!(screen.contains(" llama.cpp models"), "{screen}");
    assert!(screen.contains(&format!(" {url}")), "{screen}");
    assert!(screen.contains("→ alpha-loaded"), "{screen}");
    assert!(screen.contains("loaded · 4k context"), "{screen}");
    assert!(screen.contains("Download model…"), "{screen}");

    // Load beta, keeping alpha loaded.
    tmux.keys(&["Down", "Enter"]);
    tmux.wait_for("1 model is loaded");
    tmux.keys(&["Down", "Enter"]);
    tmux.wait_for("escape/ctrl+c stop");
    wait_for_call(&server, "POST /models/load beta-unloaded");
    tmux.wait_for("Loaded beta-unloaded");
    tmux.wait_for("enter load/unload/download");
    assert_eq!(status(&server, "alpha-loaded"), "loaded");
    assert_eq!(status(&server, "beta-unloaded"), "loaded");

    // Load gamma (its load hangs) and stop it: the router is told to unload it.
    let screen = tmux.screen();
    assert!(screen.contains("→ alpha-loaded"), "{screen}");
    tmux.keys(&["Down", "Down", "Enter"]);
    tmux.wait_for("2 models are loaded");
    tmux.keys(&["Down", "Enter"]);
    tmux.wait_for("escape/ctrl+c stop");
    wait_for_call(&server, "POST /models/load gamma-unloaded");
    tmux.keys(&["Escape"]);
    tmux.wait_for("Stop loading?");
    tmux.keys(&["Enter"]);
    wait_for_call(&server, "POST /models/unload gamma-unloaded");
    tmux.wait_for("enter load/unload/download");
    assert_eq!(status(&server, "gamma-unloaded"), "unloaded");
    assert!(!tmux.history().contains("Loaded gamma-unloaded"));

    // Unload alpha.
    tmux.keys(&["Enter"]);
    tmux.wait_for("Unload model?");
    tmux.keys(&["Enter"]);
    wait_for_call(&server, "POST /models/unload alpha-loaded");
    tmux.wait_for("Unloaded alpha-loaded");
    assert_eq!(status(&server, "alpha-loaded"), "unloaded");
    // The list again, beta (loaded) first.
    tmux.wait("the list after the unload", Duration::from_secs(15), |s| {
        s.contains("→ beta-unloaded") && s.contains("enter load/unload/download")
    });

    // Download an exact repository and quantization (the hub is the mock).
    tmux.keys(&["Up", "Enter"]);
    tmux.wait_for("Model name or owner/repository[:quant]");
    tmux.type_text("ggml-org/tiny-GGUF:Q8_0");
    tmux.keys(&["Enter"]);
    wait_for_call(&server, "POST /models ggml-org/tiny-GGUF:Q8_0");
    tmux.wait_for("Downloaded ggml-org/tiny-GGUF:Q8_0");
    tmux.wait_for("enter load/unload/download");
    assert!(
        server
            .llama_calls()
            .contains(&"GET /models?reload".to_owned())
    );

    // Closing the panel gives the editor back; /model offers the loaded model.
    tmux.keys(&["Escape"]);
    tmux.wait("the panel to close", Duration::from_secs(10), |s| {
        !s.contains("enter load/unload/download")
    });
    tmux.type_text("/model beta");
    tmux.keys(&["Enter"]);
    tmux.wait_for("beta-unloaded [llama.cpp]");
    tmux.keys(&["Escape"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn download_picks_a_quantization_from_search_results() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    router(&server, 300, None);
    let env = Env::new(&server, 128_000, json!({}));
    let url = server.url();
    let vars = [
        ("LLAMA_BASE_URL", url.as_str()),
        ("HF_ENDPOINT", url.as_str()),
    ];
    let tmux = Tmux::start_with(&env, &vars, &[], 110, 40);
    tmux.wait_for("mock-model");
    open_panel(&tmux);
    tmux.keys(&["Up", "Enter"]);
    tmux.wait_for("Type at least 2 characters");
    tmux.type_text("tiny");
    tmux.wait_for("ggml-org/tiny-GGUF  12.3k downloads");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Select quantization");
    let screen = tmux.screen();
    assert!(
        screen.contains("Q4_K_M · 976.6 KiB · recommended"),
        "{screen}"
    );
    assert!(screen.contains("Q8_0 · 1.91 MiB"), "{screen}");
    tmux.keys(&["Enter"]);
    wait_for_call(&server, "POST /models ggml-org/tiny-GGUF:Q4_K_M");
    tmux.wait_for("Downloaded ggml-org/tiny-GGUF:Q4_K_M");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_stores_the_router_and_llama_uses_it() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    router(&server, 0, Some("router-secret"));
    let env = Env::new(&server, 128_000, json!({}));
    let tmux = Tmux::start(&env, &[], 110, 40);
    tmux.wait_for("mock-model");
    // Not configured yet.
    tmux.type_text("/llama");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Warning: Configure llama.cpp with /login llama.cpp");

    // A wrong key is refused by the router and nothing is stored.
    tmux.type_text("/login llama.cpp");
    tmux.keys(&["Enter"]);
    tmux.wait_for("llama.cpp server URL:");
    tmux.wait_for("e.g. http://127.0.0.1:9931");
    tmux.type_text(&format!("{}/v1/", server.url()));
    tmux.keys(&["Enter"]);
    tmux.wait_for("API key (optional):");
    tmux.type_text("wrong-key");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Failed to log in to llama.cpp: Invalid API Key");
    let auth_path = env.agent.join("auth.json");
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(&auth_path).unwrap()).unwrap();
    assert!(auth.get("llama.cpp").is_none(), "{auth}");

    tmux.type_text("/login llama.cpp");
    tmux.keys(&["Enter"]);
    tmux.wait_for("llama.cpp server URL:");
    tmux.type_text(&format!("{}/v1/", server.url()));
    tmux.keys(&["Enter"]);
    tmux.wait_for("API key (optional):");
    tmux.type_text("router-secret");
    let screen = tmux.screen();
    assert!(!screen.contains("router-secret"), "masked:\n{screen}");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Saved API key for llama.cpp. Credentials saved to");
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(&auth_path).unwrap()).unwrap();
    assert_eq!(
        auth["llama.cpp"],
        json!({"type": "api_key", "key": "router-secret", "env": {"LLAMA_BASE_URL": server.url()}})
    );
    // The catalog is read with the new key in the background.
    let store = env.agent.join("models-store.json");
    let deadline = Instant::now() + Duration::from_secs(15);
    while !std::fs::read_to_string(&store).is_ok_and(|t| t.contains("alpha-loaded")) {
        assert!(Instant::now() < deadline, "no catalog saved");
        std::thread::sleep(Duration::from_millis(100));
    }

    open_panel(&tmux);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Unload model?");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Unloaded alpha-loaded");
    assert!(!tmux.history().contains("router-secret"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_router_offers_retry_and_close() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    // A port with nothing listening yet; the router starts there later.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let env = Env::new(&server, 128_000, json!({}));
    let tmux = Tmux::start_with(&env, &[("LLAMA_BASE_URL", url.as_str())], &[], 110, 40);
    tmux.wait_for("mock-model");
    tmux.type_text("/llama");
    tmux.keys(&["Enter"]);
    tmux.wait_for("llama.cpp unavailable");
    let screen = tmux.wait_for("→ Retry");
    assert!(
        screen.contains(&format!(
            "Could not reach llama.cpp server at {url}: connect ECONNREFUSED 127.0.0.1:{port}"
        )),
        "{screen}"
    );
    assert!(screen.contains("  Close"), "{screen}");

    // The router comes up; Retry shows its models.
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let router_server = MockServer::start_on(addr).await.unwrap();
    router(&router_server, 0, None);
    tmux.keys(&["Enter"]);
    tmux.wait_for("→ alpha-loaded");
    tmux.keys(&["Escape"]);
    tmux.wait("the panel to close", Duration::from_secs(10), |s| {
        !s.contains("enter load/unload/download")
    });

    // It goes away again; Close ends /llama quietly.
    router_server.shutdown().await;
    tmux.type_text("/llama");
    tmux.keys(&["Enter"]);
    tmux.wait_for("llama.cpp unavailable");
    tmux.keys(&["Down", "Enter"]);
    let screen = tmux.wait("the dialog to close", Duration::from_secs(10), |s| {
        !s.contains("llama.cpp unavailable")
    });
    assert!(!screen.contains("Error:"), "{screen}");
}

/// A llama.cpp router already configured in auth.json, as `/login llama.cpp` stores it.
fn configured(env: &Env, server: &MockServer) {
    let auth = json!({"llama.cpp": {"type": "api_key", "key": "k",
        "env": {"LLAMA_BASE_URL": server.url()}}});
    std::fs::write(env.agent.join("auth.json"), auth.to_string()).unwrap();
}

/// Opens `/llama` once pi has started: pi 1.6.0 refuses commands with "Startup is still in
/// progress" until its startup ends, and the command is then sent again.
fn open_panel_when_started(tmux: &Tmux) {
    const REFUSED: &str = "Startup is still in progress";
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let refused = tmux.screen().matches(REFUSED).count();
        tmux.type_text("/llama");
        tmux.keys(&["Enter"]);
        let screen = tmux.wait("the panel or a refusal", Duration::from_secs(15), |s| {
            s.contains("enter load/unload/download") || s.matches(REFUSED).count() > refused
        });
        if screen.contains("enter load/unload/download") {
            return;
        }
        assert!(Instant::now() < deadline, "pi never finished starting");
        std::thread::sleep(Duration::from_millis(200));
        // Whatever the refused command left in the editor goes.
        tmux.keys(&["C-u"]);
    }
}

/// `/model <id>` switches to the llama.cpp model `id` and says so. pi 1.6.0's editor may
/// first complete the id from the same registry (when its suggestions show before the
/// Enter): a second Enter runs it.
fn switch_model(tmux: &Tmux, id: &str) {
    let switched = format!("Model: {id}");
    let completed = format!("/model llama.cpp/{id}");
    tmux.type_text(&format!("/model {id}"));
    tmux.keys(&["Enter"]);
    let screen = tmux.wait(&switched, Duration::from_secs(15), |s| {
        s.contains(&switched) || s.contains(&completed)
    });
    if !screen.contains(&switched) {
        tmux.keys(&["Enter"]);
        tmux.wait_for(&switched);
    }
}

/// The ids of the llama.cpp entries saved in models-store.json.
fn stored_ids(env: &Env) -> Vec<String> {
    let text = std::fs::read_to_string(env.agent.join("models-store.json")).unwrap_or_default();
    let store: Value = serde_json::from_str(&text).unwrap_or_default();
    let mut ids: Vec<String> = store["llama.cpp"]["models"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["id"].as_str().map(str::to_owned))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// The startup refresh of the catalog is still waiting for the router when `/llama` starts
/// a newer one: the older is cancelled (its request dropped) and publishes nothing, so the
/// saved catalog and `/model` hold the newer answer only, in ours as in pi 1.6.0 (which
/// aborts a refresh that a newer one of the same provider supersedes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_overtaken_by_llama_is_cancelled_and_publishes_nothing_as_in_16() {
    require_tmux!();
    let mut runs = vec![env!("CARGO_BIN_EXE_pi").to_owned()];
    runs.extend(support::ts16::ts16().map(|w| w.display().to_string()));
    for pi in runs {
        let server = MockServer::start().await.unwrap();
        server.set_llama(LlamaSettings {
            models: vec![json!({"id": "old-model", "status": {"value": "loaded"}})],
            // The first list (the startup refresh's) is held for a minute.
            list_delays_ms: vec![60_000],
            ..Default::default()
        });
        let env = Env::new(&server, 128_000, json!({}));
        configured(&env, &server);
        // Online, but nothing outside this machine is reached (pi 1.6.0 would look for
        // updates and tools).
        let vars = [
            ("HTTP_PROXY", "http://127.0.0.1:9"),
            ("HTTPS_PROXY", "http://127.0.0.1:9"),
            ("NO_PROXY", "127.0.0.1,localhost"),
            ("PI_SKIP_VERSION_CHECK", "1"),
        ];
        let tmux = Tmux::start_program(&env, &pi, &vars, &[], 110, 40);
        wait_for_call(&server, "GET /models");
        server.set_llama_models(vec![
            json!({"id": "new-model", "status": {"value": "loaded"}}),
        ]);
        open_panel_when_started(&tmux);
        tmux.wait_for("new-model");
        wait_for_call(&server, "GET /models dropped");
        assert_eq!(stored_ids(&env), ["new-model"], "{pi}");
        tmux.keys(&["Escape"]);
        tmux.wait("the panel to close", Duration::from_secs(10), |s| {
            !s.contains("enter load/unload/download")
        });
        // The newer answer is what `/model` offers.
        switch_model(&tmux, "new-model");
        assert_eq!(stored_ids(&env), ["new-model"], "{pi}");
    }
}

/// Under `PI_OFFLINE` no refresh runs at startup, but `/llama` has reached the configured
/// router, so its refresh still asks it: the router's selectable models (sleeping ones and,
/// when the router autoloads, unloaded presets too) are saved and stay in `/model`, in ours as in pi 1.6.0 (0.84.3 fixed them disappearing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_under_pi_offline_keeps_the_routers_models_in_model_as_in_16() {
    require_tmux!();
    let mut runs = vec![env!("CARGO_BIN_EXE_pi").to_owned()];
    runs.extend(support::ts16::ts16().map(|w| w.display().to_string()));
    for pi in runs {
        let server = MockServer::start().await.unwrap();
        server.set_llama(LlamaSettings {
            models: vec![
                json!({"id": "kept-loaded", "status": {"value": "loaded"}}),
                json!({"id": "kept-sleeping", "status": {"value": "sleeping"}}),
                // The router loads presets on first use: this one can be chosen, the
                // unloaded model that is no preset cannot.
                json!({"id": "kept-preset", "status": {"value": "unloaded"}, "source": "preset"}),
                json!({"id": "not-kept", "status": {"value": "unloaded"}}),
            ],
            autoload: true,
            ..Default::default()
        });
        let env = Env::new(&server, 128_000, json!({}));
        configured(&env, &server);
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 110, 40);
        tmux.wait_for("mock-model");
        assert!(
            server.llama_calls().is_empty(),
            "{pi}: {:?}",
            server.llama_calls()
        );
        open_panel_when_started(&tmux);
        tmux.wait_for("kept-sleeping");
        assert_eq!(
            stored_ids(&env),
            ["kept-loaded", "kept-preset", "kept-sleeping"],
            "{pi}"
        );
        tmux.keys(&["Escape"]);
        tmux.wait("the panel to close", Duration::from_secs(10), |s| {
            !s.contains("enter load/unload/download")
        });
        // `/model <id>` switches to each.
        for id in ["kept-sleeping", "kept-preset", "kept-loaded"] {
            switch_model(&tmux, id);
        }
    }
}
