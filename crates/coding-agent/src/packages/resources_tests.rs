//! Fixtures and expectations checked against the TypeScript pi 0.73.1
//! (`DefaultPackageManager.collectPackageResources` / `collectManifestFiles` on the same
//! folders).

use super::*;

fn write(base: &Path, rel: &str, content: &str) {
    let path = base.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn touch(base: &Path, rels: &[&str]) {
    for rel in rels {
        write(base, rel, "");
    }
}

/// The fixture packages (`conv`, `man`, `globs`, `partial`, `empty`, `falsy`, `weird`,
/// `rootext`) under `base`.
fn fixtures(base: &Path) {
    touch(
        base,
        &[
            "conv/extensions/a.ts",
            "conv/extensions/b.js",
            "conv/extensions/notes.md",
            "conv/extensions/sub/index.ts",
            "conv/extensions/sub/other.ts",
            "conv/extensions/pkgd/main.ts",
            "conv/extensions/pkgd/index.ts",
            "conv/extensions/jsonly/index.js",
            "conv/extensions/plain/x.ts",
            "conv/extensions/.hidden.ts",
            "conv/extensions/node_modules/n/index.ts",
            "conv/extensions/ignored.ts",
            "conv/skills/top.md",
            "conv/skills/s1/SKILL.md",
            "conv/skills/s1/nested/SKILL.md",
            "conv/skills/group/s2/SKILL.md",
            "conv/skills/group/readme.md",
            "conv/skills/group/Z/SKILL.md",
            "conv/skills/.hid/SKILL.md",
            "conv/skills/node_modules/x/SKILL.md",
            "conv/skills/drafts/d/SKILL.md",
            "conv/prompts/p.md",
            "conv/prompts/sub/q.md",
            "conv/prompts/x.txt",
            "conv/prompts/B.md",
            "conv/prompts/sub/secret.md",
            "conv/prompts/.dot/z.md",
            "conv/prompts/node_modules/m.md",
            "conv/themes/dark.json",
            "conv/themes/nested/light.json",
            "conv/themes/t.md",
        ],
    );
    write(
        base,
        "conv/extensions/pkgd/package.json",
        r#"{"pi":{"extensions":["./main.ts","./missing.ts"]}}"#,
    );
    write(base, "conv/extensions/.gitignore", "ignored.ts\n");
    write(base, "conv/skills/.gitignore", "drafts/\n");
    write(base, "conv/prompts/sub/.gitignore", "secret.md");

    write(
        base,
        "man/package.json",
        r#"{"name":"m","pi":{
            "extensions":["./src/main.ts","ext","!ext/skip.ts","./src/main.ts"],
            "skills":["skills-dir","./lone/SKILL.md"],
            "prompts":["prompts/*.md","!prompts/b.md"],
            "themes":["themes/**/*.json","!**/light.json","+themes/sub/light.json"]}}"#,
    );
    touch(
        base,
        &[
            "man/src/main.ts",
            "man/ext/one.ts",
            "man/ext/skip.ts",
            "man/ext/two.js",
            "man/ext/deep/index.ts",
            "man/extensions/conv.ts",
            "man/skills-dir/one/SKILL.md",
            "man/skills-dir/two/SKILL.md",
            "man/skills-dir/flat.md",
            "man/lone/SKILL.md",
            "man/prompts/a.md",
            "man/prompts/b.md",
            "man/prompts/c.md",
            "man/prompts/sub/d.md",
            "man/prompts/.e.md",
            "man/themes/z.json",
            "man/themes/a.json",
            "man/themes/sub/light.json",
            "man/themes/sub/m.json",
            "man/themes/.x/h.json",
        ],
    );

    write(
        base,
        "globs/package.json",
        r#"{"pi":{"extensions":["pkgs/*"],"skills":["sk/**/SKILL.md"],
            "prompts":["{b,a}/*.md"],"themes":["**/*.json"]}}"#,
    );
    write(
        base,
        "globs/pkgs/a/package.json",
        r#"{"pi":{"extensions":["lib/x.js"]}}"#,
    );
    touch(
        base,
        &[
            "globs/pkgs/z.ts",
            "globs/pkgs/m/index.ts",
            "globs/pkgs/a/lib/x.js",
            "globs/pkgs/readme.md",
            "globs/pkgs/.h/index.ts",
            "globs/sk/b/SKILL.md",
            "globs/sk/a/SKILL.md",
            "globs/sk/a/inner/SKILL.md",
            "globs/sk/.x/SKILL.md",
            "globs/a/1.md",
            "globs/a/2.md",
            "globs/b/1.md",
            "globs/t/b.json",
            "globs/t/a.json",
            "globs/t/d/c.json",
            "globs/node_modules/n/p.json",
        ],
    );

    write(
        base,
        "partial/package.json",
        r#"{"pi":{"extensions":["main.ts"],"skills":[]}}"#,
    );
    touch(
        base,
        &[
            "partial/main.ts",
            "partial/extensions/conv.ts",
            "partial/skills/s/SKILL.md",
            "partial/prompts/p.md",
            "partial/themes/t.json",
        ],
    );

    write(base, "empty/package.json", r#"{"name":"e"}"#);
    touch(base, &["empty/src/index.ts"]);
    write(base, "falsy/package.json", r#"{"pi":false}"#);
    touch(base, &["falsy/prompts/p.md"]);
    write(base, "weird/package.json", r#"{"pi":"yes"}"#);
    touch(base, &["weird/prompts/p.md"]);

    write(
        base,
        "rootext/extensions/package.json",
        r#"{"pi":{"extensions":["lib/a.ts","lib/b.ts"]}}"#,
    );
    touch(
        base,
        &[
            "rootext/extensions/lib/b.ts",
            "rootext/extensions/lib/a.ts",
            "rootext/extensions/c.ts",
        ],
    );
}

/// The fixtures in a fresh temporary folder (kept alive by the returned guard).
fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    fixtures(&base);
    (dir, base)
}

/// `"+ rel"` / `"- rel"` for each file of `kind`, relative to `base`.
fn listed(contents: &PackageContents, kind: ResourceType, base: &Path) -> Vec<String> {
    contents
        .of(kind)
        .iter()
        .map(|f| {
            let rel = f.path.strip_prefix(base).unwrap().to_string_lossy();
            format!("{} {rel}", if f.enabled { '+' } else { '-' })
        })
        .collect()
}

fn all_rel(base: &Path, package: &str, kind: ResourceType) -> Vec<String> {
    all_files(&base.join(package), kind)
        .iter()
        .map(|p| p.strip_prefix(base).unwrap().to_string_lossy().into_owned())
        .collect()
}

fn filter(json: serde_json::Value) -> PackageFilter {
    PackageFilter::from_entry(json.as_object().unwrap())
}

use ResourceType::{Extensions, Prompts, Skills, Themes};

#[test]
fn convention_folders_only() {
    let (_guard, base) = setup();
    let c = collect(&base.join("conv"), None);
    assert!(c.is_package);
    assert_eq!(
        listed(&c, Extensions, &base),
        [
            // notes.md, plain/ (no index), .hidden.ts, node_modules and ignored.ts are left out;
            // pkgd's manifest wins over its index.ts and drops the missing file.
            "+ conv/extensions/a.ts",
            "+ conv/extensions/b.js",
            "+ conv/extensions/jsonly/index.js",
            "+ conv/extensions/pkgd/main.ts",
            "+ conv/extensions/sub/index.ts",
        ]
    );
    assert_eq!(
        listed(&c, Skills, &base),
        [
            // A folder with SKILL.md is one skill (s1/nested is not searched); only top-level
            // .md files count; .hid, node_modules and the ignored drafts/ are skipped.
            "+ conv/skills/group/Z/SKILL.md",
            "+ conv/skills/group/s2/SKILL.md",
            "+ conv/skills/s1/SKILL.md",
            "+ conv/skills/top.md",
        ]
    );
    assert_eq!(
        listed(&c, Prompts, &base),
        [
            "+ conv/prompts/B.md",
            "+ conv/prompts/p.md",
            "+ conv/prompts/sub/q.md",
        ]
    );
    assert_eq!(
        listed(&c, Themes, &base),
        ["+ conv/themes/dark.json", "+ conv/themes/nested/light.json"]
    );
    for kind in ResourceType::ALL {
        let expected: Vec<String> = listed(&c, kind, &base)
            .iter()
            .map(|s| s[2..].to_owned())
            .collect();
        assert_eq!(all_rel(&base, "conv", kind), expected, "{}", kind.key());
    }
}

#[test]
fn filter_patterns_and_empty_list_on_convention_folders() {
    let (_guard, base) = setup();
    let f = filter(serde_json::json!({
        "extensions": ["!**/b.js", "+extensions/b.js"],
        "skills": ["s1", "group/*"],
        "prompts": [],
        "themes": ["-themes/dark.json"],
    }));
    let c = collect(&base.join("conv"), Some(&f));
    assert!(c.is_package);
    assert!(c.extensions.iter().all(|f| f.enabled));
    assert_eq!(c.extensions.len(), 5);
    assert_eq!(
        listed(&c, Skills, &base),
        [
            // `group/*` is matched against the relative path `skills/group/Z`, so it misses.
            "- conv/skills/group/Z/SKILL.md",
            "- conv/skills/group/s2/SKILL.md",
            "+ conv/skills/s1/SKILL.md",
            "- conv/skills/top.md",
        ]
    );
    assert_eq!(
        listed(&c, Prompts, &base),
        [
            "- conv/prompts/B.md",
            "- conv/prompts/p.md",
            "- conv/prompts/sub/q.md",
        ]
    );
    assert_eq!(
        listed(&c, Themes, &base),
        ["- conv/themes/dark.json", "+ conv/themes/nested/light.json"]
    );
}

#[test]
fn manifest_paths_folders_globs_and_exclusions() {
    let (_guard, base) = setup();
    let c = collect(&base.join("man"), None);
    assert!(c.is_package);
    // The convention folder extensions/ is not used once a manifest exists; excluded files
    // are not listed at all; a path listed twice appears once.
    assert_eq!(
        listed(&c, Extensions, &base),
        [
            "+ man/src/main.ts",
            "+ man/ext/deep/index.ts",
            "+ man/ext/one.ts",
            "+ man/ext/two.js",
        ]
    );
    assert_eq!(
        listed(&c, Skills, &base),
        [
            "+ man/skills-dir/flat.md",
            "+ man/skills-dir/one/SKILL.md",
            "+ man/skills-dir/two/SKILL.md",
            "+ man/lone/SKILL.md",
        ]
    );
    // glob's order: reverse name order within a folder; .e.md is a dot name.
    assert_eq!(
        listed(&c, Prompts, &base),
        ["+ man/prompts/c.md", "+ man/prompts/a.md"]
    );
    assert_eq!(
        listed(&c, Themes, &base),
        [
            "+ man/themes/z.json",
            "+ man/themes/a.json",
            "+ man/themes/sub/m.json",
            "+ man/themes/sub/light.json",
        ]
    );
    // `+path` brings a file back after the others, as the JS Set keeps it.
    assert_eq!(
        all_rel(&base, "man", Themes),
        [
            "man/themes/z.json",
            "man/themes/a.json",
            "man/themes/sub/m.json",
            "man/themes/sub/light.json",
        ]
    );
}

#[test]
fn user_filter_layers_on_the_manifest() {
    let (_guard, base) = setup();
    let f = filter(serde_json::json!({
        "extensions": ["ext/*", "!**/two.js", "+src/main.ts"],
        "skills": ["!one", "+skills-dir/one/SKILL.md", "-lone"],
        "prompts": ["./prompts/c.md", "+prompts/a.md", 7],
        "themes": ["*.json", "-themes/z.json"],
    }));
    assert_eq!(f.prompts.as_ref().map(Vec::len), Some(2));
    let c = collect(&base.join("man"), Some(&f));
    assert_eq!(
        listed(&c, Extensions, &base),
        [
            "+ man/src/main.ts",
            "- man/ext/deep/index.ts",
            "+ man/ext/one.ts",
            "- man/ext/two.js",
        ]
    );
    assert_eq!(
        listed(&c, Skills, &base),
        [
            "+ man/skills-dir/flat.md",
            "+ man/skills-dir/one/SKILL.md",
            "+ man/skills-dir/two/SKILL.md",
            "- man/lone/SKILL.md",
        ]
    );
    // A plain filter entry is matched as a glob, and `./` is not stripped for that.
    assert_eq!(
        listed(&c, Prompts, &base),
        ["- man/prompts/c.md", "+ man/prompts/a.md"]
    );
    assert_eq!(
        listed(&c, Themes, &base),
        [
            "- man/themes/z.json",
            "+ man/themes/a.json",
            "+ man/themes/sub/m.json",
            "+ man/themes/sub/light.json",
        ]
    );

    let only_skills = filter(serde_json::json!({"skills": ["-skills-dir/two"]}));
    let c = collect(&base.join("man"), Some(&only_skills));
    assert_eq!(c.extensions.len(), 4);
    assert!(c.extensions.iter().all(|f| f.enabled));
    assert_eq!(
        listed(&c, Skills, &base),
        [
            "+ man/skills-dir/flat.md",
            "+ man/skills-dir/one/SKILL.md",
            "- man/skills-dir/two/SKILL.md",
            "+ man/lone/SKILL.md",
        ]
    );
}

#[test]
fn manifest_globs_cover_folders_braces_and_dot_names() {
    let (_guard, base) = setup();
    let c = collect(&base.join("globs"), None);
    // `pkgs/*` matches files of any kind and folders, each folder searched for extensions.
    assert_eq!(
        listed(&c, Extensions, &base),
        [
            "+ globs/pkgs/z.ts",
            "+ globs/pkgs/readme.md",
            "+ globs/pkgs/m/index.ts",
            "+ globs/pkgs/a/lib/x.js",
        ]
    );
    assert_eq!(
        listed(&c, Skills, &base),
        [
            "+ globs/sk/b/SKILL.md",
            "+ globs/sk/a/SKILL.md",
            "+ globs/sk/a/inner/SKILL.md",
        ]
    );
    // Brace alternatives keep their order.
    assert_eq!(
        listed(&c, Prompts, &base),
        ["+ globs/b/1.md", "+ globs/a/2.md", "+ globs/a/1.md"]
    );
    // Globs do not skip node_modules nor honour ignore files.
    assert_eq!(
        listed(&c, Themes, &base),
        [
            "+ globs/package.json",
            "+ globs/t/b.json",
            "+ globs/t/a.json",
            "+ globs/t/d/c.json",
            "+ globs/pkgs/a/package.json",
            "+ globs/node_modules/n/p.json",
        ]
    );
    let f = filter(serde_json::json!({"themes": ["t/**"]}));
    let c = collect(&base.join("globs"), Some(&f));
    assert_eq!(
        listed(&c, Themes, &base),
        [
            "- globs/package.json",
            "+ globs/t/b.json",
            "+ globs/t/a.json",
            "+ globs/t/d/c.json",
            "- globs/pkgs/a/package.json",
            "- globs/node_modules/n/p.json",
        ]
    );
}

#[test]
fn types_a_manifest_leaves_out() {
    let (_guard, base) = setup();
    // Without a filter a manifest is all there is.
    let c = collect(&base.join("partial"), None);
    assert_eq!(listed(&c, Extensions, &base), ["+ partial/main.ts"]);
    assert!(c.skills.is_empty() && c.prompts.is_empty() && c.themes.is_empty());
    // The filter's own types fall back to the convention folder when the manifest list is
    // missing or empty; the others use the manifest list if there is one (even `[]`).
    assert_eq!(
        all_rel(&base, "partial", Skills),
        ["partial/skills/s/SKILL.md"]
    );
    let f = filter(serde_json::json!({"extensions": ["conv.ts"]}));
    let c = collect(&base.join("partial"), Some(&f));
    assert_eq!(listed(&c, Extensions, &base), ["- partial/main.ts"]);
    assert!(c.skills.is_empty());
    assert_eq!(listed(&c, Prompts, &base), ["+ partial/prompts/p.md"]);
    assert_eq!(listed(&c, Themes, &base), ["+ partial/themes/t.json"]);
    let f = filter(serde_json::json!({"skills": ["s"]}));
    let c = collect(&base.join("partial"), Some(&f));
    assert_eq!(listed(&c, Skills, &base), ["+ partial/skills/s/SKILL.md"]);
}

#[test]
fn extension_folders_with_their_own_entries() {
    let (_guard, base) = setup();
    // The convention folder itself holds a package.json listing the extensions.
    let c = collect(&base.join("rootext"), None);
    assert_eq!(
        listed(&c, Extensions, &base),
        [
            "+ rootext/extensions/lib/a.ts",
            "+ rootext/extensions/lib/b.ts"
        ]
    );
}

#[test]
fn folders_that_are_not_packages() {
    let (_guard, base) = setup();
    let c = collect(&base.join("empty"), None);
    assert_eq!(c, PackageContents::default());
    assert!(!c.is_package);
    assert!(!collect(&base.join("missing"), None).is_package);
    // A filter makes any folder a package, with nothing in it here.
    let c = collect(&base.join("empty"), Some(&PackageFilter::default()));
    assert!(c.is_package && c.extensions.is_empty());
    // A `pi` that is not an object is no manifest (pi 1.6.0): the convention folders count.
    let c = collect(&base.join("falsy"), None);
    assert_eq!(listed(&c, Prompts, &base), ["+ falsy/prompts/p.md"]);
    let c = collect(&base.join("weird"), None);
    assert_eq!(listed(&c, Prompts, &base), ["+ weird/prompts/p.md"]);
    assert_eq!(all_rel(&base, "weird", Prompts), ["weird/prompts/p.md"]);
    let f = filter(serde_json::json!({"prompts": ["p.md"]}));
    let c = collect(&base.join("weird"), Some(&f));
    assert_eq!(listed(&c, Prompts, &base), ["+ weird/prompts/p.md"]);
}

#[test]
fn relative_roots_are_made_absolute() {
    let (_guard, base) = setup();
    let c = collect(&base.join("conv/../man/."), None);
    assert_eq!(c.extensions[0].path, base.join("man/src/main.ts"));
}

#[test]
fn filter_entries_and_keys() {
    let f = filter(serde_json::json!({
        "source": "npm:x", "extensions": [], "skills": ["a", 1, null], "prompts": "p.md",
    }));
    assert_eq!(f.get(Extensions), Some(&Vec::new()));
    assert_eq!(f.get(Skills), Some(&vec!["a".to_owned()]));
    assert_eq!(f.get(Prompts), None);
    assert_eq!(f.get(Themes), None);
    let keys: Vec<&str> = ResourceType::ALL.iter().map(|k| k.key()).collect();
    assert_eq!(keys, ["extensions", "skills", "prompts", "themes"]);
}

#[test]
fn braces_expand_in_order() {
    assert_eq!(expand_braces("{b,a}/*.md"), ["b/*.md", "a/*.md"]);
    assert_eq!(
        expand_braces("x{1,{2,3}}y{p,q}"),
        ["x1yp", "x1yq", "x2yp", "x2yq", "x3yp", "x3yq"]
    );
    assert_eq!(expand_braces("{a}/{b,c"), ["{a}/{b,c"]);
    assert_eq!(expand_braces("{a}{b,c}"), ["{a}b", "{a}c"]);
}

#[test]
fn glob_segments_like_minimatch() {
    let kinds = |p: &str| -> Vec<String> {
        parse_glob(p)
            .iter()
            .map(|s| match s {
                Segment::Literal(l) => l.clone(),
                Segment::Magic(..) => "<magic>".to_owned(),
                Segment::Globstar => "**".to_owned(),
            })
            .collect()
    };
    assert_eq!(kinds("./ext/*.ts"), [".", "ext", "<magic>"]);
    assert_eq!(kinds("a/./b/../c//*"), ["a", "c", "<magic>"]);
    assert_eq!(kinds("**/**/x*"), ["**", "<magic>"]);
    assert_eq!(kinds("x/*/"), ["x", "<magic>", ""]);
    assert_eq!(kinds("/abs/*"), ["/", "abs", "<magic>"]);
    assert_eq!(kinds("*/../x*"), ["<magic>"]);
}

#[test]
fn globs_reach_outside_and_through_symlinks_like_glob() {
    let (_guard, base) = setup();
    let root = base.join("globs");
    let names = |found: Vec<PathBuf>| -> Vec<String> {
        found
            .iter()
            .map(|p| {
                p.strip_prefix(&base)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    };
    assert_eq!(
        names(glob("../man/prompts/?.md", &root)),
        ["man/prompts/c.md", "man/prompts/b.md", "man/prompts/a.md"]
    );
    let abs = format!("{}/t/*", root.display());
    assert_eq!(
        names(glob(&abs, &root)),
        ["globs/t/d", "globs/t/b.json", "globs/t/a.json"]
    );
    assert_eq!(names(glob("pkgs/.*", &root)), ["globs/pkgs/.h"]);
    assert_eq!(names(glob("t/*/", &root)), ["globs/t/d"]);
    // A leading ** does not walk into symlinked folders; a later one follows one.
    std::os::unix::fs::symlink(base.join("man/ext"), root.join("t/link")).unwrap();
    assert_eq!(names(glob("**/one.ts", &root)), Vec::<String>::new());
    assert_eq!(names(glob("t/**/one.ts", &root)), ["globs/t/link/one.ts"]);
    assert_eq!(
        names(glob("t/**", &root)),
        [
            "globs/t",
            "globs/t/link",
            "globs/t/d",
            "globs/t/b.json",
            "globs/t/a.json",
            "globs/t/d/c.json"
        ]
    );
}
