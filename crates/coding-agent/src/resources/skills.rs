//! Skills ([Agent Skills](https://agentskills.io)): a `SKILL.md` (or, in pi's own skills
//! directories, any root `.md` file) whose frontmatter names and describes it. The system
//! prompt lists the skills the model may load with the `read` tool; `/skill:name args`
//! puts a skill's instructions into the prompt directly.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::frontmatter::{self, Value};
use super::{
    DiscoveryOptions, IgnoreRules, Kind, ResourceDiagnostic, SourceInfo, SourceScope, canonical,
    is_under, normalize, read_dir_sorted, resolve,
};

/// Longest allowed skill name.
const MAX_NAME_LENGTH: usize = 64;
/// Longest allowed skill description.
const MAX_DESCRIPTION_LENGTH: usize = 1024;

/// A loaded skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The name (`name` in the frontmatter, else the directory's name).
    pub name: String,
    /// What the skill is for (`description`, required).
    pub description: String,
    /// The skill's file.
    pub file_path: PathBuf,
    /// The directory holding the file; the skill's relative paths start here.
    pub base_dir: PathBuf,
    /// Where the skill was found.
    pub source_info: SourceInfo,
    /// `disable-model-invocation: true`: left out of the system prompt, only `/skill:name`.
    pub disable_model_invocation: bool,
}

/// Skills and what went wrong loading them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadSkillsResult {
    /// The skills, in precedence order, one per name.
    pub skills: Vec<Skill>,
    /// Validation warnings, unreadable files, missing paths, then name collisions.
    pub diagnostics: Vec<ResourceDiagnostic>,
}

/// `/skill:name` named a skill whose file could not be read or parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("skill {name} ({path}): {message}")]
pub struct SkillExpansionError {
    /// The skill's name.
    pub name: String,
    /// Its file.
    pub path: PathBuf,
    /// What failed.
    pub message: String,
}

/// Which default location a skill file belongs to, for its fallback source info.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    User,
    Project,
    Path,
}

/// The Agent Skills name rules (pi 1.6.0 no longer asks the name to match its folder).
fn validate_name(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let length = name.encode_utf16().count();
    if length > MAX_NAME_LENGTH {
        errors.push(format!(
            "name exceeds {MAX_NAME_LENGTH} characters ({length})"
        ));
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        errors.push(
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)".into(),
        );
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("name must not start or end with a hyphen".into());
    }
    if name.contains("--") {
        errors.push("name must not contain consecutive hyphens".into());
    }
    errors
}

fn validate_description(description: Option<&str>) -> Vec<String> {
    match description {
        None => vec!["description is required".into()],
        Some(d) if d.trim().is_empty() => vec!["description is required".into()],
        Some(d) if d.encode_utf16().count() > MAX_DESCRIPTION_LENGTH => vec![format!(
            "description exceeds {MAX_DESCRIPTION_LENGTH} characters ({})",
            d.encode_utf16().count()
        )],
        Some(_) => Vec::new(),
    }
}

fn fallback_source_info(file: &Path, base_dir: &Path, origin: Origin) -> SourceInfo {
    let scope = match origin {
        Origin::User => SourceScope::User,
        Origin::Project => SourceScope::Project,
        Origin::Path => SourceScope::Temporary,
    };
    SourceInfo::local(file, "local", scope, Some(base_dir.to_path_buf()))
}

/// Loads one skill file as pi 1.6.0 does: a `SKILL.md` gets a warning for every rule it
/// breaks; another `.md` file (a README beside the skills) is a skill only when its
/// frontmatter describes one, and is passed over silently otherwise.
fn load_skill_file(path: &Path, origin: Origin) -> (Option<Skill>, Vec<ResourceDiagnostic>) {
    let mut diagnostics = Vec::new();
    let declared = path.file_name().is_some_and(|n| n == "SKILL.md");
    let content = match crate::text_file::read_text(path) {
        Ok(c) => c,
        Err(e) => {
            diagnostics.push(ResourceDiagnostic::warning(e.to_string(), path));
            return (None, diagnostics);
        }
    };
    let parsed = match frontmatter::parse(&content) {
        Ok(p) => p,
        Err(e) => {
            if declared {
                diagnostics.push(ResourceDiagnostic::warning(e.to_string(), path));
            }
            return (None, diagnostics);
        }
    };
    let fm = parsed.frontmatter;
    let description = match fm.get("description") {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let described = description.as_deref().is_some_and(|d| !d.trim().is_empty());
    if !declared && !described {
        return (None, diagnostics);
    }
    let skill_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let parent_dir_name = skill_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for error in validate_description(description.as_deref()) {
        diagnostics.push(ResourceDiagnostic::warning(error, path));
    }
    let name = match fm.get("name") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => parent_dir_name,
    };
    for error in validate_name(&name) {
        diagnostics.push(ResourceDiagnostic::warning(error, path));
    }
    let Some(description) = description.filter(|d| !d.trim().is_empty()) else {
        return (None, diagnostics);
    };
    let skill = Skill {
        name,
        description,
        file_path: path.to_path_buf(),
        base_dir: skill_dir.clone(),
        source_info: fallback_source_info(path, &skill_dir, origin),
        disable_model_invocation: fm.get_bool("disable-model-invocation") == Some(true),
    };
    (Some(skill), diagnostics)
}

/// Loads the skills under a directory given as a path: a directory holding `SKILL.md` is one
/// skill; the root's other `.md` files are skills too; subdirectories are searched.
fn load_skills_from_dir(dir: &Path, origin: Origin) -> LoadSkillsResult {
    let mut result = LoadSkillsResult::default();
    let mut rules = IgnoreRules::new(dir);
    load_skills_from_dir_in(dir, origin, true, &mut rules, &mut result);
    result
}

fn load_skills_from_dir_in(
    dir: &Path,
    origin: Origin,
    include_root_files: bool,
    rules: &mut IgnoreRules,
    result: &mut LoadSkillsResult,
) {
    if !dir.exists() {
        return;
    }
    rules.add_dir(dir);
    let Some(entries) = read_dir_sorted(dir) else {
        return;
    };
    if let Some(entry) = entries
        .iter()
        .find(|e| e.name == "SKILL.md" && e.is_file && !rules.ignores(&e.path, false))
    {
        let (skill, diagnostics) = load_skill_file(&entry.path, origin);
        result.skills.extend(skill);
        result.diagnostics.extend(diagnostics);
        return;
    }
    for entry in &entries {
        if entry.name.starts_with('.') || entry.name == "node_modules" {
            continue;
        }
        if rules.ignores(&entry.path, entry.is_dir) {
            continue;
        }
        if entry.is_dir {
            load_skills_from_dir_in(&entry.path, origin, false, rules, result);
            continue;
        }
        if !entry.is_file || !include_root_files || !entry.name.ends_with(".md") {
            continue;
        }
        let (skill, diagnostics) = load_skill_file(&entry.path, origin);
        result.skills.extend(skill);
        result.diagnostics.extend(diagnostics);
    }
}

/// Loads the skills of every configured location (see the [module docs](super)): the
/// first skill of a name wins, later ones are reported as collisions, and a file reached
/// twice (through a symlink) is loaded once.
pub fn load_skills(options: &DiscoveryOptions) -> LoadSkillsResult {
    let resolved = resolve(options, Kind::Skills);
    let user_dir = normalize(&options.agent_dir.join("skills"));
    let project_dir = options.project_base().join("skills");

    let mut skills: Vec<Skill> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut real_paths: HashSet<PathBuf> = HashSet::new();
    let mut diagnostics = Vec::new();
    let mut collisions = Vec::new();

    let mut add = |result: LoadSkillsResult| {
        diagnostics.extend(result.diagnostics);
        for mut skill in result.skills {
            let real = canonical(&skill.file_path);
            if real_paths.contains(&real) {
                continue;
            }
            if let Some(&winner) = by_name.get(&skill.name) {
                collisions.push(ResourceDiagnostic::collision(
                    "skill",
                    &skill.name,
                    &skill.name,
                    &skills[winner].file_path,
                    &skill.file_path,
                ));
                continue;
            }
            if let Some(meta) = resolved.meta.get(&skill.file_path) {
                skill.source_info = meta.source_info(&skill.file_path);
            }
            by_name.insert(skill.name.clone(), skills.len());
            real_paths.insert(real);
            skills.push(skill);
        }
    };

    for path in &resolved.paths {
        let origin = if is_under(path, &user_dir) {
            Origin::User
        } else if is_under(path, &project_dir) {
            Origin::Project
        } else {
            Origin::Path
        };
        let Ok(meta) = std::fs::metadata(path) else {
            add(LoadSkillsResult {
                skills: Vec::new(),
                diagnostics: vec![ResourceDiagnostic::warning(
                    "skill path does not exist",
                    path,
                )],
            });
            continue;
        };
        if meta.is_dir() {
            add(load_skills_from_dir(path, origin));
        } else if meta.is_file() && path.to_string_lossy().ends_with(".md") {
            let (skill, diagnostics) = load_skill_file(path, origin);
            add(LoadSkillsResult {
                skills: skill.into_iter().collect(),
                diagnostics,
            });
        } else {
            add(LoadSkillsResult {
                skills: Vec::new(),
                diagnostics: vec![ResourceDiagnostic::warning(
                    "skill path is not a markdown file",
                    path,
                )],
            });
        }
    }
    diagnostics.extend(collisions);
    LoadSkillsResult {
        skills,
        diagnostics,
    }
}

fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The skills catalog for the system prompt (starting with a blank line), listing the skills
/// the model may load itself; empty when there are none.
/// The tool the model loads a skill's file with, which the catalog's instructions name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillReader {
    Read,
    Bash,
}

pub fn format_skills_for_prompt(skills: &[Skill], reader: SkillReader) -> String {
    let visible: Vec<&Skill> = skills
        .iter()
        .filter(|s| !s.disable_model_invocation)
        .collect();
    if visible.is_empty() {
        return String::new();
    }
    let how = match reader {
        SkillReader::Read => "with the read tool",
        SkillReader::Bash => "with bash (print it, e.g. with cat)",
    };
    let mut lines = vec![
        format!(
            "\n\nSkills are task-specific instruction sets. When the task at hand fits a skill's \
description below, load that skill's file {how} before you start, and follow it."
        ),
        "Relative paths inside a skill file start from the directory containing that file; \
turn them into absolute paths before using them in tool calls."
            .to_owned(),
        String::new(),
        "<available_skills>".to_owned(),
    ];
    for skill in visible {
        lines.push("  <skill>".to_owned());
        lines.push(format!("    <name>{}</name>", escape_xml(&skill.name)));
        lines.push(format!(
            "    <description>{}</description>",
            escape_xml(&skill.description)
        ));
        lines.push(format!(
            "    <location>{}</location>",
            escape_xml(&skill.file_path.to_string_lossy())
        ));
        lines.push("  </skill>".to_owned());
    }
    lines.push("</available_skills>".to_owned());
    lines.join("\n")
}

/// Expands `/skill:name args` into the skill's instructions in a `<skill>` block, followed
/// by the arguments; any other text (or an unknown skill) comes back unchanged.
pub fn expand_skill_command(text: &str, skills: &[Skill]) -> Result<String, SkillExpansionError> {
    let Some(rest) = text.strip_prefix("/skill:") else {
        return Ok(text.to_owned());
    };
    let (name, args) = match rest.find(' ') {
        Some(i) => (&rest[..i], rest[i + 1..].trim()),
        None => (rest, ""),
    };
    let Some(skill) = skills.iter().find(|s| s.name == name) else {
        return Ok(text.to_owned());
    };
    let fail = |message: String| SkillExpansionError {
        name: skill.name.clone(),
        path: skill.file_path.clone(),
        message,
    };
    let content = crate::text_file::read_text(&skill.file_path).map_err(|e| fail(e.to_string()))?;
    let body = frontmatter::strip(&content).map_err(|e| fail(e.to_string()))?;
    let block = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
        skill.name,
        skill.file_path.display(),
        skill.base_dir.display(),
        body.trim()
    );
    Ok(if args.is_empty() {
        block
    } else {
        format!("{block}\n\n{args}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn options(root: &Path) -> DiscoveryOptions {
        let cwd = root.join("project");
        std::fs::create_dir_all(&cwd).unwrap();
        DiscoveryOptions {
            home_dir: Some(root.join("home")),
            ..DiscoveryOptions::new(cwd, root.join("agent"))
        }
    }

    #[test]
    fn names_are_validated_like_the_spec() {
        assert!(validate_name("pdf-tools").is_empty());
        let errors = validate_name("-Bad--Name-");
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert_eq!(
            validate_name(&"a".repeat(65)),
            ["name exceeds 64 characters (65)"]
        );
        assert_eq!(validate_description(None), ["description is required"]);
        assert_eq!(
            validate_description(Some("  ")),
            ["description is required"]
        );
        assert_eq!(
            validate_description(Some(&"d".repeat(1025))),
            ["description exceeds 1024 characters (1025)"]
        );
    }

    #[test]
    fn a_skill_loads_with_warnings_but_not_without_description() {
        let root = tempfile::tempdir().unwrap();
        let good = root.path().join("Other/SKILL.md");
        write(
            &good,
            "---\nname: my-skill\ndescription: Helps.\ndisable-model-invocation: true\n---\nBody",
        );
        let (skill, diags) = load_skill_file(&good, Origin::Path);
        let skill = skill.unwrap();
        assert_eq!(skill.name, "my-skill");
        assert!(skill.disable_model_invocation);
        assert_eq!(skill.base_dir, root.path().join("Other"));
        assert_eq!(skill.source_info.scope, SourceScope::Temporary);
        // A name other than its folder's is fine (pi 1.6.0).
        assert!(diags.is_empty(), "{diags:?}");

        let bad = root.path().join("nodesc/SKILL.md");
        write(&bad, "---\nname: nodesc\n---\n");
        let (skill, diags) = load_skill_file(&bad, Origin::Path);
        assert!(skill.is_none());
        assert_eq!(diags[0].message, "description is required");

        let broken = root.path().join("broken/SKILL.md");
        write(&broken, "---\ndescription: Use when: things\n---\n");
        let (skill, diags) = load_skill_file(&broken, Origin::Path);
        assert!(skill.is_none());
        assert_eq!(diags.len(), 1);
    }

    #[test]
    fn other_markdown_beside_skills_is_passed_over_silently() {
        let root = tempfile::tempdir().unwrap();
        for (file, text) in [
            ("README.md", "# Skills\nNo frontmatter here.\n"),
            ("AGENTS.md", "---\ntitle: not a skill\n---\nNotes\n"),
            ("broken.md", "---\ndescription: [unclosed\n---\n"),
        ] {
            let path = root.path().join(file);
            write(&path, text);
            let (skill, diags) = load_skill_file(&path, Origin::User);
            assert!(skill.is_none(), "{file}");
            assert!(diags.is_empty(), "{file}: {diags:?}");
        }
        let described = root.path().join("helper.md");
        write(&described, "---\ndescription: A root skill.\n---\nBody\n");
        let (skill, _) = load_skill_file(&described, Origin::User);
        assert_eq!(skill.unwrap().description, "A root skill.");
    }

    #[test]
    fn discovery_rules_per_directory_kind() {
        let root = tempfile::tempdir().unwrap();
        let opts = options(root.path());
        let agent_skills = root.path().join("agent/skills");
        write(
            &agent_skills.join("root-file.md"),
            "---\ndescription: Root file.\n---\n",
        );
        write(
            &agent_skills.join("a/SKILL.md"),
            "---\nname: a\ndescription: A.\n---\n",
        );
        // Below a SKILL.md nothing more is searched.
        write(
            &agent_skills.join("a/inner/SKILL.md"),
            "---\nname: inner\ndescription: I.\n---\n",
        );
        write(
            &agent_skills.join("group/b/SKILL.md"),
            "---\nname: b\ndescription: B.\n---\n",
        );
        write(
            &agent_skills.join("node_modules/c/SKILL.md"),
            "---\nname: c\ndescription: C.\n---\n",
        );
        write(
            &agent_skills.join(".hidden/d/SKILL.md"),
            "---\nname: d\ndescription: D.\n---\n",
        );
        write(
            &agent_skills.join("ignored/e/SKILL.md"),
            "---\nname: e\ndescription: E.\n---\n",
        );
        write(&agent_skills.join(".gitignore"), "ignored/\n");
        // In ~/.agents/skills a root .md file is not a skill.
        let home_skills = root.path().join("home/.agents/skills");
        write(
            &home_skills.join("loose.md"),
            "---\ndescription: Loose.\n---\n",
        );
        write(
            &home_skills.join("h/SKILL.md"),
            "---\nname: h\ndescription: H.\n---\n",
        );

        let result = load_skills(&opts);
        let names: Vec<&str> = result.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "skills", "h"]);
        let root_file = &result.skills[2];
        assert_eq!(root_file.source_info.source, "auto");
        assert_eq!(root_file.source_info.scope, SourceScope::User);
        assert!(result.diagnostics.is_empty(), "{:?}", result.diagnostics);
    }

    #[test]
    fn no_skills_keeps_cli_paths_and_reports_missing_ones() {
        let root = tempfile::tempdir().unwrap();
        let mut opts = options(root.path());
        write(
            &root.path().join("agent/skills/a/SKILL.md"),
            "---\nname: a\ndescription: A.\n---\n",
        );
        write(
            &root.path().join("extra/x/SKILL.md"),
            "---\nname: x\ndescription: X.\n---\n",
        );
        write(&root.path().join("extra/notes.txt"), "not markdown");
        opts.include_defaults = false;
        opts.cli_paths = vec![
            "../extra".into(),
            "../missing".into(),
            "../extra/notes.txt".into(),
        ];
        let result = load_skills(&opts);
        let names: Vec<&str> = result.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["x"]);
        assert_eq!(result.skills[0].source_info.scope, SourceScope::Temporary);
        let messages: Vec<&str> = result
            .diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(
            messages,
            [
                "skill path does not exist",
                "skill path is not a markdown file"
            ]
        );
    }

    #[test]
    fn catalog_escapes_and_hides_disabled_skills() {
        let skill = |name: &str, hidden: bool| Skill {
            name: name.into(),
            description: "Use <this> & \"that\"".into(),
            file_path: PathBuf::from(format!("/s/{name}/SKILL.md")),
            base_dir: PathBuf::from(format!("/s/{name}")),
            source_info: SourceInfo::local(Path::new("/s"), "local", SourceScope::User, None),
            disable_model_invocation: hidden,
        };
        assert_eq!(
            format_skills_for_prompt(&[skill("h", true)], SkillReader::Read),
            ""
        );
        let text =
            format_skills_for_prompt(&[skill("a", false), skill("h", true)], SkillReader::Read);
        assert!(text.starts_with("\n\n"));
        assert!(text.ends_with(
            "<available_skills>\n  <skill>\n    <name>a</name>\n    <description>Use &lt;this&gt; &amp; &quot;that&quot;</description>\n    <location>/s/a/SKILL.md</location>\n  </skill>\n</available_skills>"
        ));
        assert!(!text.contains("<name>h</name>"));
    }

    #[test]
    fn skill_command_expands_with_args() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("pdf/SKILL.md");
        write(
            &file,
            "---\nname: pdf\ndescription: PDFs.\n---\n\n# PDF\nRun ./x.sh\n\n",
        );
        let skills = vec![Skill {
            name: "pdf".into(),
            description: "PDFs.".into(),
            file_path: file.clone(),
            base_dir: root.path().join("pdf"),
            source_info: SourceInfo::local(&file, "local", SourceScope::User, None),
            disable_model_invocation: false,
        }];
        let expected_block = format!(
            "<skill name=\"pdf\" location=\"{}\">\nReferences are relative to {}.\n\n# PDF\nRun ./x.sh\n</skill>",
            file.display(),
            root.path().join("pdf").display()
        );
        assert_eq!(
            expand_skill_command("/skill:pdf", &skills).unwrap(),
            expected_block
        );
        assert_eq!(
            expand_skill_command("/skill:pdf  extract  page 1 \n", &skills).unwrap(),
            format!("{expected_block}\n\nextract  page 1")
        );
        assert_eq!(
            expand_skill_command("/skill:nope x", &skills).unwrap(),
            "/skill:nope x"
        );
        assert_eq!(expand_skill_command("hello", &skills).unwrap(), "hello");
        std::fs::remove_file(&file).unwrap();
        let err = expand_skill_command("/skill:pdf", &skills).unwrap_err();
        assert_eq!(err.name, "pdf");
    }
}
