//! Images as pi 1.6.0 sends them: every new image is resized and re-encoded before it
//! enters the conversation (2000x2000 px and 4.5 MiB of base64 by default, or the model's
//! `inputLimits.images.resize` from models.json), JPEG when smaller than PNG, upright per
//! EXIF (found after an XMP segment), BMP converted to PNG, with the notes pi adds. Our `pi`
//! and pi 1.6.0 (`PI_TS16`) run each case against the mock model on the same generated
//! files; the images a request carries are decoded and compared by MIME type and size
//! (encoders differ byte for byte), the texts exactly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use base64::Engine;
use image::ImageFormat;
use mock_llm::{Item, MockServer, Script};
use serde_json::{Value, json};
use support::images::{
    SentImage, encode, flat, image_model, jpeg, jpeg_with_orientation_after_xmp, photo,
    sent_images, sent_texts,
};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program, run};

/// pi 1.6's default limit on an image's base64 payload.
const MAX_BASE64: usize = 4_718_592;

/// MIME type and dimensions of each image, the comparable part.
fn shapes(images: &[SentImage]) -> Vec<(String, u32, u32)> {
    images
        .iter()
        .map(|i| (i.mime_type.clone(), i.width, i.height))
        .collect()
}

fn note(from: (u32, u32), to: (u32, u32), scale: &str) -> String {
    format!(
        "[Image: original {}x{}, displayed at {}x{}. Multiply coordinates by {scale} to map to original image.]",
        from.0, from.1, to.0, to.1
    )
}

/// Runs `-p <args>` with each pi; the last request's texts and images, per pi.
fn print_runs(
    server: &MockServer,
    env: &Env,
    scripts: impl Fn() -> Vec<Script>,
    args: &[&str],
) -> Vec<(&'static str, Vec<String>, Vec<SentImage>)> {
    let mut out = Vec::new();
    for (who, wrapper) in pis() {
        server.clear_queue();
        server.clear_requests();
        server.push_all(scripts());
        let mut all = vec!["--no-session", "-p"];
        all.extend_from_slice(args);
        let output = run(env, program(&wrapper), &all);
        assert!(
            output.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let requests = server.requests();
        let body = &requests.last().expect("a request").body;
        out.push((who, sent_texts(body), sent_images(body)));
    }
    out
}

/// The texts the `read` tool returned (its notes).
fn read_notes(texts: &[String]) -> Vec<String> {
    texts
        .iter()
        .filter(|t| t.starts_with("Read image file"))
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_resizes_photos_keeps_flat_pngs_and_converts_bmps_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    image_model(&env, &server, None);
    std::fs::write(env.work.join("photo.jpg"), jpeg(&photo(3000, 2000))).unwrap();
    std::fs::write(
        env.work.join("flat.png"),
        encode(&flat(2600, 2600), ImageFormat::Png),
    )
    .unwrap();
    std::fs::write(
        env.work.join("small.bmp"),
        encode(&photo(64, 48), ImageFormat::Bmp),
    )
    .unwrap();
    let scripts = || {
        vec![
            Script::new(vec![
                Item::tool_call("read", json!({"path": "photo.jpg"})),
                Item::tool_call("read", json!({"path": "flat.png"})),
                Item::tool_call("read", json!({"path": "small.bmp"})),
            ]),
            Script::text("Seen."),
        ]
    };
    let runs = print_runs(&server, &env, scripts, &["Look at the images."]);
    let expected_notes = vec![
        format!(
            "Read image file [image/jpeg]\n{}",
            note((3000, 2000), (2000, 1333), "1.50")
        ),
        format!(
            "Read image file [image/png]\n{}",
            note((2600, 2600), (2000, 2000), "1.30")
        ),
        "Read image file [image/png]\n[Image converted from image/bmp to image/png.]".to_owned(),
    ];
    let expected_images = vec![
        ("image/jpeg".to_owned(), 2000, 1333),
        ("image/png".to_owned(), 2000, 2000),
        ("image/png".to_owned(), 64, 48),
    ];
    for (who, texts, images) in &runs {
        assert_eq!(read_notes(texts), expected_notes, "{who}");
        assert_eq!(shapes(images), expected_images, "{who}");
        assert!(images.iter().all(|i| i.base64_len < MAX_BASE64), "{who}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_file_images_are_converted_and_resized_with_the_prompt_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    image_model(&env, &server, None);
    std::fs::write(env.work.join("photo.jpg"), jpeg(&photo(3000, 2000))).unwrap();
    std::fs::write(
        env.work.join("small.bmp"),
        encode(&photo(64, 48), ImageFormat::Bmp),
    )
    .unwrap();
    let runs = print_runs(
        &server,
        &env,
        || vec![Script::text("Seen.")],
        &["@photo.jpg", "@small.bmp", "Describe."],
    );
    let photo_path = env.work.join("photo.jpg");
    let bmp_path = env.work.join("small.bmp");
    let expected = format!(
        "<file name=\"{}\"></file>\n<file name=\"{}\">[Image converted from image/bmp to image/png.]</file>\nDescribe.\n\n{}",
        photo_path.display(),
        bmp_path.display(),
        note((3000, 2000), (2000, 1333), "1.50")
    );
    for (who, texts, images) in &runs {
        assert_eq!(texts.last(), Some(&expected), "{who}");
        assert_eq!(
            shapes(images),
            [
                ("image/jpeg".to_owned(), 2000, 1333),
                ("image/png".to_owned(), 64, 48)
            ],
            "{who}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_json_resize_profile_and_exif_orientation_apply_to_read_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let profile =
        json!({"images": {"resize": {"maxWidth": 640, "maxHeight": 640, "jpegQuality": 70}}});
    image_model(&env, &server, Some(profile));
    std::fs::write(env.work.join("photo.jpg"), jpeg(&photo(3000, 2000))).unwrap();
    // Stored landscape, shown portrait: orientation 6 turns it a quarter clockwise.
    std::fs::write(
        env.work.join("turned.jpg"),
        jpeg_with_orientation_after_xmp(&photo(1200, 800), 6),
    )
    .unwrap();
    let scripts = || {
        vec![
            Script::new(vec![
                Item::tool_call("read", json!({"path": "photo.jpg"})),
                Item::tool_call("read", json!({"path": "turned.jpg"})),
            ]),
            Script::text("Seen."),
        ]
    };
    // The same profile holds for an `@file` attachment and for `read`.
    let runs = print_runs(&server, &env, scripts, &["@photo.jpg", "Look."]);
    for (who, texts, images) in &runs {
        let prompt = texts.iter().find(|t| t.contains("Look.")).unwrap();
        assert!(
            prompt.ends_with(&format!(
                "Look.\n\n{}",
                note((3000, 2000), (640, 427), "4.69")
            )),
            "{who}: {prompt}"
        );
        let notes = read_notes(texts);
        assert_eq!(notes.len(), 2, "{who}: {texts:?}");
        assert!(
            notes[0].ends_with(&note((3000, 2000), (640, 427), "4.69")),
            "{who}: {notes:?}"
        );
        assert!(
            notes[1].ends_with(&note((800, 1200), (427, 640), "1.87")),
            "{who}: {notes:?}"
        );
        assert_eq!(
            images
                .iter()
                .map(|i| (i.width, i.height))
                .collect::<Vec<_>>(),
            [(640, 427), (640, 427), (427, 640)],
            "{who}"
        );
        // Upright: the stored image's left edge (dark red) is now at the top.
        let turned = images[2].pixels.to_rgb8();
        let (top, bottom) = (turned.get_pixel(213, 5)[0], turned.get_pixel(213, 634)[0]);
        assert!(top < bottom, "{who}: top {top}, bottom {bottom}");
    }
    let mimes: Vec<Vec<String>> = runs
        .iter()
        .map(|(_, _, images)| images.iter().map(|i| i.mime_type.clone()).collect())
        .collect();
    assert!(mimes.windows(2).all(|w| w[0] == w[1]), "{mimes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tight_max_bytes_profile_holds_for_read_images_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let profile =
        json!({"images": {"resize": {"maxWidth": 1200, "maxHeight": 1200, "maxBytes": 60000}}});
    image_model(&env, &server, Some(profile));
    std::fs::write(env.work.join("photo.jpg"), jpeg(&photo(3000, 2000))).unwrap();
    let scripts = || {
        vec![
            Script::tool_call("read", json!({"path": "photo.jpg"})),
            Script::text("Seen."),
        ]
    };
    for (who, texts, images) in print_runs(&server, &env, scripts, &["Look."]) {
        assert_eq!(images.len(), 1, "{who}");
        let image = &images[0];
        assert_eq!(image.mime_type, "image/jpeg", "{who}");
        assert!(image.base64_len < 60_000, "{who}: {}", image.base64_len);
        assert!(image.width <= 1200 && image.height <= 1200, "{who}");
        let notes = read_notes(&texts);
        assert!(
            notes[0].contains(&format!("displayed at {}x{}", image.width, image.height)),
            "{who}: {notes:?}"
        );
    }
}

/// A base64 image block for RPC.
fn rpc_image(bytes: &[u8], mime_type: &str) -> Value {
    json!({"type": "image", "data": base64::engine::general_purpose::STANDARD.encode(bytes),
           "mimeType": mime_type})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpc_prompt_steering_and_follow_up_images_are_resized_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    image_model(&env, &server, None);
    let big_photo = rpc_image(&jpeg(&photo(3000, 2000)), "image/jpeg");
    let big_flat = rpc_image(&encode(&flat(2600, 1300), ImageFormat::Png), "image/png");
    let bmp = rpc_image(&encode(&photo(40, 30), ImageFormat::Bmp), "image/bmp");
    let gate = env.work.join("go");
    let mut per_pi = Vec::new();
    for (who, wrapper) in pis() {
        let _ = std::fs::remove_file(&gate);
        server.clear_queue();
        server.clear_requests();
        server.push_all([
            // The tool call runs until the test has queued its messages.
            Script::tool_call(
                "bash",
                json!({"command": "while [ ! -f go ]; do sleep 0.05; done; echo done"}),
            ),
            Script::text("Steered."),
            Script::text("Followed."),
        ]);
        let mut rpc = Rpc::start_program(&env, program(&wrapper), &["--no-session"]);
        rpc.call(
            "p",
            json!({"type": "prompt", "message": "See.", "images": [big_photo.clone()]}),
        );
        rpc.event("tool_execution_start");
        let steered = rpc.call(
            "s",
            json!({"type": "steer", "message": "Also this.", "images": [big_flat.clone()]}),
        );
        assert_eq!(steered["success"], true, "{who}: {steered}");
        let followed = rpc.call(
            "f",
            json!({"type": "follow_up", "message": "And this.", "images": [bmp.clone()]}),
        );
        assert_eq!(followed["success"], true, "{who}: {followed}");
        std::fs::write(&gate, "").unwrap();
        rpc.event("agent_end");
        let state = rpc.call("st", json!({"type": "get_state"}));
        assert_eq!(state["data"]["pendingMessageCount"], 0, "{who}: {state}");
        rpc.finish();
        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{who}");
        let last = &requests[2].body;
        let users: Vec<String> = last["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .filter_map(|m| m["content"].as_array())
            .filter_map(|parts| parts.iter().find_map(|p| p["text"].as_str()))
            .map(str::to_owned)
            .collect();
        per_pi.push((who, users, shapes(&sent_images(last))));
    }
    let expected_users = vec![
        format!("See.\n\n{}", note((3000, 2000), (2000, 1333), "1.50")),
        format!("Also this.\n\n{}", note((2600, 1300), (2000, 1000), "1.30")),
        "And this.\n\n[Image converted from image/bmp to image/png.]".to_owned(),
    ];
    for (who, users, images) in &per_pi {
        assert_eq!(users, &expected_users, "{who}");
        assert_eq!(
            images,
            &[
                ("image/jpeg".to_owned(), 2000, 1333),
                ("image/png".to_owned(), 2000, 1000),
                ("image/png".to_owned(), 40, 30),
            ],
            "{who}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_tool_result_images_are_resized_as_pi_16() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    // The model's own profile holds for what extension tools return.
    let profile = json!({"images": {"resize": {"maxWidth": 1000, "maxHeight": 1000}}});
    image_model(&env, &server, Some(profile));
    let shot = env.work.join("shot.jpg");
    std::fs::write(&shot, jpeg(&photo(3000, 2000))).unwrap();
    let extension = env.dir.path().join("shot.ts");
    std::fs::write(
        &extension,
        format!(
            r#"import {{ readFileSync }} from "node:fs";
export default function (pi) {{
  pi.registerTool({{ name: "shot", label: "Shot", description: "Takes a screenshot.",
    parameters: {{ type: "object", properties: {{}} }},
    async execute() {{
      const data = readFileSync({path}).toString("base64");
      return {{ content: [{{ type: "text", text: "Shot." }}, {{ type: "image", data, mimeType: "image/jpeg" }}] }};
    }} }});
}}"#,
            path = serde_json::to_string(&shot.display().to_string()).unwrap()
        ),
    )
    .unwrap();
    let mut per_pi = Vec::new();
    for (who, wrapper) in pis() {
        server.clear_queue();
        server.clear_requests();
        server.push_all([Script::tool_call("shot", json!({})), Script::text("Seen.")]);
        let mut command = program(&wrapper);
        command.env("PI_EXTENSION_HOST_DIR", &host);
        let output = run(
            &env,
            command,
            &[
                "--no-session",
                "-e",
                extension.to_str().unwrap(),
                "-p",
                "Take one.",
            ],
        );
        assert!(
            output.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let requests = server.requests();
        let body = &requests.last().unwrap().body;
        let texts: Vec<String> = sent_texts(body)
            .into_iter()
            .filter(|t| t.contains("Shot.") || t.contains("[Image:"))
            .collect();
        per_pi.push((who, texts, shapes(&sent_images(body))));
    }
    let expected_note = note((3000, 2000), (1000, 667), "3.00");
    for (who, texts, images) in &per_pi {
        assert!(
            texts.iter().any(|t| t.contains(&expected_note)),
            "{who}: {texts:?}"
        );
        assert_eq!(images, &[("image/jpeg".to_owned(), 1000, 667)], "{who}");
    }
    assert!(per_pi.windows(2).all(|w| w[0].1 == w[1].1), "{per_pi:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_override_merges_input_limits_over_the_catalog_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    // The built-in groq model's profile (2000x2000, 4.5 MiB, quality 80) with a narrower width.
    let models = json!({"providers": {"groq": {"baseUrl": server.openai_base_url(), "apiKey": "groq-key",
        "modelOverrides": {"qwen/qwen3.6-27b": {"inputLimits": {"images": {"resize": {"maxWidth": 500}}}}}}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(env.work.join("photo.jpg"), jpeg(&photo(3000, 2000))).unwrap();
    let runs = print_runs(
        &server,
        &env,
        || vec![Script::text("Seen.")],
        &["--model", "groq/qwen/qwen3.6-27b", "@photo.jpg", "Look."],
    );
    for (who, texts, images) in &runs {
        let prompt = texts.last().unwrap();
        assert!(
            prompt.ends_with(&format!(
                "Look.\n\n{}",
                note((3000, 2000), (500, 333), "6.00")
            )),
            "{who}: {prompt}"
        );
        assert_eq!(
            shapes(images),
            [("image/jpeg".to_owned(), 500, 333)],
            "{who}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_images_keeps_images_from_the_model_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({"images": {"blockImages": true}}));
    image_model(&env, &server, None);
    std::fs::write(
        env.work.join("a.png"),
        encode(&flat(20, 10), ImageFormat::Png),
    )
    .unwrap();
    let scripts = || {
        vec![
            Script::tool_call("read", json!({"path": "a.png"})),
            Script::text("Seen."),
        ]
    };
    let runs = print_runs(&server, &env, scripts, &["@a.png", "Look."]);
    for (who, texts, images) in &runs {
        assert!(images.is_empty(), "{who}");
        let blocked = texts
            .iter()
            .filter(|t| t.contains("Image reading is disabled."))
            .count();
        assert_eq!(blocked, 2, "{who}: {texts:?}");
    }
    // The same texts after the system prompt (whose wording is this build's own).
    let after_system: Vec<&[String]> = runs.iter().map(|r| &r.1[1..]).collect();
    assert!(
        after_system.windows(2).all(|w| w[0] == w[1]),
        "{after_system:?}"
    );
}

/// The session's context estimate after a prompt (with `images`) the model refused.
fn estimate_after_failed_prompt(
    server: &MockServer,
    env: &Env,
    wrapper: &Option<std::path::PathBuf>,
    images: Value,
) -> u64 {
    server.clear_queue();
    server.push(Script::http_error(400));
    let mut rpc = Rpc::start_program(env, program(wrapper), &["--no-session"]);
    rpc.call(
        "p",
        json!({"type": "prompt", "message": "See.", "images": images}),
    );
    rpc.event("agent_end");
    let stats = rpc.call("s", json!({"type": "get_session_stats"}));
    rpc.finish();
    stats["data"]["contextUsage"]["tokens"]
        .as_u64()
        .unwrap_or_else(|| panic!("no estimate: {stats}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_image_counts_in_the_context_estimate_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    image_model(&env, &server, None);
    let small = rpc_image(&encode(&flat(10, 10), ImageFormat::Png), "image/png");
    for (who, wrapper) in pis() {
        // No usage to trust (the request failed): every message is estimated, an image as
        // 4800 characters like a tool result's (pi 0.76).
        let without = estimate_after_failed_prompt(&server, &env, &wrapper, json!([]));
        let with = estimate_after_failed_prompt(&server, &env, &wrapper, json!([small]));
        assert_eq!(with - without, 1200, "{who}: {without} -> {with}");
    }
}
