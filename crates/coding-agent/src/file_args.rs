//! `@file` arguments: text files inlined into the first prompt, images attached to it.

use base64::Engine;
use pi_ai::ImageContent;

use crate::tools::path::resolve_read_path;

/// What the `@file` arguments contribute.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FileArgs {
    pub text: String,
    pub images: Vec<ImageContent>,
}

/// Reads each `@path` (relative to `cwd`): text as `<file name="…">\n…\n</file>\n`, images
/// (by content) as attachments with an empty `<file name="…"></file>` reference; empty
/// files are skipped. A missing or unreadable file is an error naming it.
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
        // A BMP would need converting first, which this build does not do.
        if let Some(mime) =
            crate::tools::read::detect_image_mime_type(&bytes).filter(|mime| *mime != "image/bmp")
        {
            out.images.push(ImageContent::new(
                base64::engine::general_purpose::STANDARD.encode(&bytes),
                mime,
            ));
            out.text
                .push_str(&format!("<file name=\"{shown}\"></file>\n"));
        } else {
            let text = String::from_utf8(bytes)
                .map_err(|_| format!("Could not read file {shown}: not UTF-8 text"))?;
            out.text
                .push_str(&format!("<file name=\"{shown}\">\n{text}\n</file>\n"));
        }
    }
    Ok(out)
}
