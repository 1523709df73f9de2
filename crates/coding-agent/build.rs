//! Embeds the extension host's JavaScript (`extension-host/`, without `node_modules` and
//! tests) into the `pi` binary, so pi can write it out wherever node should run it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = read.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == "node_modules" || name == "test" || name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            collect(&path, files);
        } else if name.ends_with(".mjs")
            || name.ends_with(".js")
            || name.ends_with(".cjs")
            || name.ends_with(".json")
        {
            println!("cargo:rerun-if-changed={}", path.display());
            files.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("extension-host");
    let mut files = Vec::new();
    collect(&root, &mut files);
    let mut out = String::from(
        "/// The extension host's files: (path relative to its folder, contents).\npub static FILES: &[(&str, &[u8])] = &[\n",
    );
    for file in &files {
        let relative = file
            .strip_prefix(&root)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    ({relative:?}, include_bytes!({:?})),",
            file.display().to_string()
        );
    }
    out.push_str("];\n");
    let target = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("host_files.rs");
    if let Err(e) = std::fs::write(&target, out) {
        println!("cargo:warning=could not write {}: {e}", target.display());
    }
}
