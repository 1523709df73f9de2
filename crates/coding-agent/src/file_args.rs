//! `@file` arguments: text files inlined into the first prompt, images attached to it.

use pi_ai::ImageContent;

use crate::images::ImagePolicy;

use crate::tools::path::resolve_read_path;

/// What the `@file` arguments contribute.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FileArgs {
    pub text: String,
    pub images: Vec<ImageContent>,
}

/// Reads each `@path` (relative to `cwd`): text as `<file name="…">\n…\n</file>\n`, images
/// (by content) as attachments with a `<file name="…"></file>` reference holding any
/// conversion note (BMP becomes PNG); empty files are skipped. A missing or unreadable file is an error naming it.
pub fn process(paths: &[String], cwd: &std::path::Path) -> Result<FileArgs, String> {
    let mut out = FileArgs::default();
    for arg in paths {
        let path = resolve_read_path(arg, cwd);
        let shown = path.display();
        let bytes = std::fs::read(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("File not found: {shown}"),
            _ => format!("Could not read file {shown}: {e}"),
        })?;
        if bytes.is_empty() {
            continue;
        }
        if let Some(mime) = crate::tools::read::detect_image_mime_type(&bytes) {
            // As pi 1.6.0's CLI: converted here (BMP to PNG), resized with the prompt.
            let policy = ImagePolicy {
                auto_resize: false,
                ..ImagePolicy::default()
            };
            match crate::images::process_image(&bytes, mime, &policy) {
                Ok(processed) => {
                    out.images
                        .push(ImageContent::new(processed.data, processed.mime_type));
                    let hints = processed.hints.join("\n");
                    out.text
                        .push_str(&format!("<file name=\"{shown}\">{hints}</file>\n"));
                }
                Err(message) => out
                    .text
                    .push_str(&format!("<file name=\"{shown}\">{message}</file>\n")),
            }
        } else {
            let text = String::from_utf8(bytes)
                .map_err(|_| format!("Could not read file {shown}: not UTF-8 text"))?;
            out.text
                .push_str(&format!("<file name=\"{shown}\">\n{text}\n</file>\n"));
        }
    }
    Ok(out)
}
