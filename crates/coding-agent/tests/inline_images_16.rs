//! Inline images, as pi 1.6 draws a `read` of an image file: in the Kitty graphics protocol
//! (a PNG sent with `a=T,f=100`, sized in cells) or the iTerm2 one (`File=inline=1`), forced
//! with `PI_IMAGE_PROTOCOL` (tmux itself has none: pi shows `[Image: [image/png] WxH]`
//! then), and `terminal.showImages: false` turning them back into that line. tmux does
//! not keep the sequences on its screen, so the bytes pi writes are recorded with
//! `pipe-pane`. Ours and pi 1.6.0 (`PI_TS16`) side by side: the same sequences (Kitty's
//! image id is random in both, and is compared as a placeholder).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(20);
const REPLY: &str = "That is a small picture.";
/// Pushes the image's top above a 20-row fullscreen viewport.
const LONG_REPLY: &str = "One.\n\nTwo.\n\nThree.\n\nThat is a small picture.";

/// A 90x36 PNG with a gradient (small enough that neither pi resizes it).
fn picture() -> Vec<u8> {
    let image = image::RgbImage::from_fn(90, 36, |x, y| {
        image::Rgb([(x * 2) as u8, (y * 7) as u8, ((x + y) * 3) as u8])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("encode png");
    out.into_inner()
}

/// One `read` of `shot.png` and a reply (the read's output expanded with Ctrl+O when
/// `expand`): the screen and the bytes pi wrote meanwhile.
fn run(
    server: &MockServer,
    name: &str,
    wrapper: &Option<std::path::PathBuf>,
    vars: &[(&str, &str)],
    settings: serde_json::Value,
    expand: bool,
) -> (String, String) {
    let fullscreen = settings["tuiMode"] == "fullscreen";
    let env = Env::new(server, 128_000, settings.clone());
    // A model that takes images (one that does not sees a placeholder, and pi says so).
    let models_path = env.agent.join("models.json");
    let mut models: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&models_path).unwrap()).unwrap();
    models["providers"]["mock"]["models"][0]["input"] = json!(["text", "image"]);
    std::fs::write(&models_path, models.to_string()).unwrap();
    std::fs::write(env.work.join("shot.png"), picture()).unwrap();
    server.push(Script::tool_call("read", json!({"path": "shot.png"})));
    server.push(Script::text(if fullscreen { LONG_REPLY } else { REPLY }));
    let pi = program_path(wrapper);
    let mut all_vars = vec![("PI_OFFLINE", "1")];
    all_vars.extend_from_slice(vars);
    let tmux = Tmux::start_program(
        &env,
        &pi,
        &all_vars,
        &[],
        100,
        if fullscreen { 20 } else { 40 },
    );
    tmux.wait(&format!("{name}: started"), WAIT, |s| {
        s.contains("mock-model")
    });
    let raw = env.dir.path().join("output.bin");
    tmux.record_output(&raw);
    tmux.type_text("look at the shot");
    tmux.wait(&format!("{name}: typed"), WAIT, |s| {
        s.contains("look at the shot")
    });
    tmux.keys(&["Enter"]);
    let mut screen = tmux.wait(&format!("{name}: answered"), WAIT, |s| {
        s.contains(REPLY) && !s.contains("Working")
    });
    if expand {
        // A collapsed read of an image shows no output: Ctrl+O shows it.
        tmux.keys(&["C-o"]);
        screen = tmux.wait(&format!("{name}: expanded"), WAIT, |s| {
            s.contains("Read image file")
        });
    }
    // The recording catches up with what tmux already shows.
    let mut output = Tmux::recorded_until(&raw, WAIT, |text| text.contains(REPLY));
    if fullscreen {
        // A resize redraws the whole screen: the image is placed again (pi 1.6.0 fixed
        // images disappearing after a full redraw). Nothing else redraws the image's rows
        // once the answer is drawn, so the next placement is the resize's.
        let answered = output.len();
        tmux.resize(100, 22);
        output = Tmux::recorded_until(&raw, WAIT, |text| {
            text.get(answered..)
                .is_some_and(|tail| image_sequences(tail).iter().any(|s| s.contains("r=")))
        });
        // Then one wheel step up: the image moves down the viewport, and the frame drawing
        // it places it again.
        let resized = output.len();
        tmux.raw(b"\x1b[<64;20;5M");
        output = Tmux::recorded_until(&raw, WAIT, |text| {
            text.get(resized..)
                .is_some_and(|tail| image_sequences(tail).iter().any(|s| s.contains("r=")))
        });
        output = format!(
            "{}{RESIZE_MARK}{}{WHEEL_MARK}{}",
            &output[..answered],
            &output[answered..resized],
            &output[resized..]
        );
    }
    drop(tmux);
    (screen, output)
}

/// Where the recording of a fullscreen run has its wheel step.
const WHEEL_MARK: &str = "<wheel>";
/// Where it has its resize.
const RESIZE_MARK: &str = "<resize>";

/// The placement controls (columns, rows, source rectangle) of each Kitty command in
/// `output` that places an image, in order.
fn placements(output: &str) -> Vec<String> {
    image_sequences(output)
        .iter()
        .filter(|s| s.contains("r="))
        .map(|s| {
            let body = &s[3..];
            let controls = &body[..body.find([';', '\x1b']).unwrap_or(body.len())];
            controls
                .split(',')
                .filter(|c| ["c=", "r=", "y=", "h="].iter().any(|k| c.starts_with(k)))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

/// Every image sequence in `output` (Kitty commands, iTerm2 files), Kitty ids replaced by
/// `i=ID`.
fn image_sequences(output: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = output;
    while let Some(start) = [rest.find("\x1b_G"), rest.find("\x1b]1337;File=")]
        .into_iter()
        .flatten()
        .min()
    {
        let tail = &rest[start..];
        let (end, len) = if tail.starts_with("\x1b_G") {
            (tail.find("\x1b\\").expect("a whole Kitty command"), 2)
        } else {
            (tail.find('\x07').expect("a whole iTerm2 file"), 1)
        };
        let sequence = &tail[..end + len];
        let controls_end = sequence.find(';').unwrap_or(sequence.len());
        let controls: Vec<String> = sequence[..controls_end]
            .split(',')
            .map(|c| {
                if c.starts_with("i=") {
                    "i=ID".to_owned()
                } else {
                    c.to_owned()
                }
            })
            .collect();
        found.push(format!(
            "{}{}",
            controls.join(","),
            &sequence[controls_end..]
        ));
        rest = &tail[end + len..];
    }
    found
}

#[test]
fn a_read_image_is_drawn_inline_as_16_draws_it() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut seen: Vec<(&str, Vec<String>, Vec<String>)> = Vec::new();
    for (name, wrapper) in pis() {
        let regular = json!({"tuiMode": "regular"});
        let (_, kitty) = run(
            &server,
            name,
            &wrapper,
            &[("PI_IMAGE_PROTOCOL", "kitty")],
            regular.clone(),
            false,
        );
        let kitty = image_sequences(&kitty);
        assert!(
            kitty
                .iter()
                .any(|s| s.starts_with("\x1b_Ga=T,f=100,q=2,C=1,c=")),
            "{name}: a Kitty image was sent: {kitty:?}"
        );
        let (_, iterm) = run(
            &server,
            name,
            &wrapper,
            &[("PI_IMAGE_PROTOCOL", "iterm2")],
            regular.clone(),
            false,
        );
        let iterm = image_sequences(&iterm);
        assert!(
            iterm
                .iter()
                .any(|s| s.starts_with("\x1b]1337;File=inline=1;size=")),
            "{name}: an iTerm2 image was sent: {iterm:?}"
        );

        // No protocol (tmux), and images turned off: the text line instead.
        let (screen, output) = run(&server, name, &wrapper, &[], regular.clone(), true);
        assert!(
            screen.contains("[Image: [image/png] 90x36]"),
            "{name}: {screen}"
        );
        assert!(image_sequences(&output).is_empty(), "{name}");
        let (screen, output) = run(
            &server,
            name,
            &wrapper,
            &[("PI_IMAGE_PROTOCOL", "kitty")],
            json!({"tuiMode": "regular", "terminal": {"showImages": false}}),
            true,
        );
        assert!(
            screen.contains("[Image: [image/png] 90x36]"),
            "{name}: {screen}"
        );
        assert!(image_sequences(&output).is_empty(), "{name}");
        seen.push((name, kitty, iterm));
    }
    if let [(_, ours_kitty, ours_iterm), (_, ts_kitty, ts_iterm)] = &seen[..] {
        assert_eq!(ours_kitty, ts_kitty, "the Kitty sequences");
        assert_eq!(ours_iterm, ts_iterm, "the iTerm2 sequences");
    }
}

#[test]
fn fullscreen_crops_an_image_at_the_viewport_edges_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        let (_, output) = run(
            &server,
            name,
            &wrapper,
            &[("PI_IMAGE_PROTOCOL", "kitty")],
            json!({"tuiMode": "fullscreen"}),
            false,
        );
        let (answered, rest) = output.split_once(RESIZE_MARK).expect("the resize");
        let (resized, wheeled) = rest.split_once(WHEEL_MARK).expect("the wheel step");
        // The last placement before the resize is the image as the answer left it (its
        // top above the viewport: cropped from a `y` offset); the first after the resize
        // and after the wheel step, where they moved it.
        let before = placements(answered).last().cloned().expect("a placement");
        let redrawn = placements(resized)
            .first()
            .cloned()
            .expect("a placement after the resize");
        let after = placements(wheeled)
            .first()
            .cloned()
            .expect("a placement after the wheel");
        assert!(
            before.contains("y="),
            "{name}: the image's top is cut: {before}"
        );
        assert_ne!(redrawn, after, "{name}: the wheel moved the image");
        assert!(
            wheeled.contains("\x1b_Ga=d,d=a,q=2\x1b\\") && wheeled.contains("\x1b_Ga=p,q=2,"),
            "{name}: the moved image is placed again, not sent again"
        );
        seen.push((name, before, redrawn, after));
    }
    if let [ours, ts] = &seen[..] {
        assert_eq!(ours.1, ts.1, "the image as the answer leaves it");
        assert_eq!(ours.2, ts.2, "the image after a resize");
        assert_eq!(ours.3, ts.3, "the image one wheel step up");
    }
}
