//! Discovery of skills and prompt templates from the agent dir, the project, settings entries
//! and command-line paths; collisions; expansion of `/skill:name` and `/template`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use pi_coding_agent::resources::{
    DiagnosticKind, DiscoveryOptions, ResourceSettings, SkillReader, SourceScope,
    expand_prompt_template, expand_skill_command, format_skills_for_prompt, load_prompt_templates,
    load_prompt_templates_with_diagnostics, load_skills,
};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    agent: PathBuf,
    home: PathBuf,
    repo: PathBuf,
    cwd: PathBuf,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nSteps for {name}.\n")
}

impl Fixture {
    /// A home with an agent dir, and a git repository with the cwd two levels down.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        let agent = home.join(".pi/agent");
        let repo = root.join("repo");
        let cwd = repo.join("pkg/app");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        Self {
            _dir: dir,
            root,
            agent,
            home,
            repo,
            cwd,
        }
    }

    fn options(&self) -> DiscoveryOptions {
        DiscoveryOptions {
            home_dir: Some(self.home.clone()),
            ..DiscoveryOptions::new(&self.cwd, &self.agent)
        }
    }
}

fn names<T>(items: &[T], name: impl Fn(&T) -> &str) -> Vec<String> {
    items.iter().map(|i| name(i).to_owned()).collect()
}

#[test]
fn resources_skills_come_from_every_location_in_precedence_order() {
    let f = Fixture::new();
    // User locations.
    write(
        &f.agent.join("skills/shared/SKILL.md"),
        &skill("shared", "User copy."),
    );
    write(
        &f.agent.join("skills/user-only/SKILL.md"),
        &skill("user-only", "User."),
    );
    write(
        &f.home.join(".agents/skills/home-agents/SKILL.md"),
        &skill("home-agents", "Home."),
    );
    // Project locations: .pi/skills, and .agents/skills from the cwd up to the git root.
    write(
        &f.cwd.join(".pi/skills/shared/SKILL.md"),
        &skill("shared", "Project copy."),
    );
    write(
        &f.cwd.join(".agents/skills/near/SKILL.md"),
        &skill("near", "Near."),
    );
    write(
        &f.repo.join(".agents/skills/top/SKILL.md"),
        &skill("top", "Top."),
    );
    // Above the git root nothing is searched.
    write(
        &f.root.join(".agents/skills/outside/SKILL.md"),
        &skill("outside", "Outside."),
    );
    // Command line.
    write(
        &f.root.join("cli/cli-skill/SKILL.md"),
        &skill("cli-skill", "CLI."),
    );

    let mut opts = f.options();
    opts.cli_paths = vec![f.root.join("cli").display().to_string()];
    let result = load_skills(&opts);
    assert_eq!(
        names(&result.skills, |s| &s.name),
        [
            "shared",
            "near",
            "top",
            "user-only",
            "home-agents",
            "cli-skill"
        ]
    );
    let shared = &result.skills[0];
    assert_eq!(shared.description, "Project copy.");
    assert_eq!(shared.source_info.source, "auto");
    assert_eq!(shared.source_info.scope, SourceScope::Project);
    assert_eq!(
        shared.source_info.base_dir.as_deref(),
        Some(f.cwd.join(".pi").as_path())
    );
    assert_eq!(result.skills[3].source_info.scope, SourceScope::User);
    assert_eq!(result.skills[5].source_info.scope, SourceScope::Temporary);

    let collisions: Vec<_> = result
        .diagnostics
        .iter()
        .filter(|d| d.kind == DiagnosticKind::Collision)
        .collect();
    assert_eq!(collisions.len(), 1, "{:?}", result.diagnostics);
    assert_eq!(collisions[0].message, "name \"shared\" collision");
    let c = collisions[0].collision.as_ref().unwrap();
    assert_eq!(c.winner_path, f.cwd.join(".pi/skills/shared/SKILL.md"));
    assert_eq!(c.loser_path, f.agent.join("skills/shared/SKILL.md"));
    assert_eq!(result.diagnostics.len(), 1);

    // --no-skills drops everything but the command-line paths.
    opts.include_defaults = false;
    let result = load_skills(&opts);
    assert_eq!(names(&result.skills, |s| &s.name), ["cli-skill"]);
}

#[test]
fn resources_settings_entries_add_paths_and_patterns_switch_skills_off() {
    let f = Fixture::new();
    write(
        &f.agent.join("skills/keep/SKILL.md"),
        &skill("keep", "Keep."),
    );
    write(
        &f.agent.join("skills/drop/SKILL.md"),
        &skill("drop", "Drop."),
    );
    write(
        &f.home.join("claude/skills/claude-one/SKILL.md"),
        &skill("claude-one", "C."),
    );
    write(
        &f.cwd.join("vendor/skills/vendored/SKILL.md"),
        &skill("vendored", "V."),
    );
    write(&f.cwd.join(".pi/skills/p/SKILL.md"), &skill("p", "P."));

    let mut opts = f.options();
    // User entries resolve against the agent dir (and `~`), project ones against `.pi`.
    opts.user_entries = vec!["~/claude/skills".into(), "!drop".into()];
    opts.project_entries = vec!["../vendor/skills".into(), "-skills/p".into()];
    let result = load_skills(&opts);
    assert_eq!(
        names(&result.skills, |s| &s.name),
        ["vendored", "claude-one", "keep"]
    );
    let vendored = &result.skills[0];
    assert_eq!(vendored.source_info.source, "local");
    assert_eq!(vendored.source_info.scope, SourceScope::Project);

    // The same entries read from the settings files.
    write(
        &f.agent.join("settings.json"),
        r#"{"skills": ["~/claude/skills", "!drop"], "enableSkillCommands": false}"#,
    );
    write(
        &f.cwd.join(".pi/settings.json"),
        r#"{"skills": ["../vendor/skills", "-skills/p"]}"#,
    );
    let settings = ResourceSettings::load(
        &f.agent.join("settings.json"),
        &f.cwd.join(".pi/settings.json"),
    );
    assert_eq!(settings.user_skills, opts.user_entries);
    assert_eq!(settings.project_skills, opts.project_entries);
    assert!(!settings.enable_skill_commands);
}

#[test]
fn resources_a_symlinked_skill_loads_once_and_hidden_skills_stay_out_of_the_catalog() {
    let f = Fixture::new();
    write(
        &f.agent.join("skills/manual/SKILL.md"),
        "---\nname: manual\ndescription: >\n  Only on request,\n  never automatically.\ndisable-model-invocation: true\n---\nManual steps.",
    );
    write(
        &f.agent.join("skills/auto/SKILL.md"),
        &skill("auto", "Automatic."),
    );
    std::fs::create_dir_all(f.cwd.join("links")).unwrap();
    std::os::unix::fs::symlink(f.agent.join("skills/auto"), f.cwd.join("links/auto")).unwrap();
    let mut opts = f.options();
    opts.cli_paths = vec!["links".into()];
    let result = load_skills(&opts);
    assert_eq!(names(&result.skills, |s| &s.name), ["auto", "manual"]);
    assert!(result.diagnostics.is_empty(), "{:?}", result.diagnostics);
    assert_eq!(
        result.skills[1].description,
        "Only on request, never automatically.\n"
    );

    let catalog = format_skills_for_prompt(&result.skills, SkillReader::Read);
    assert!(catalog.contains("<name>auto</name>"));
    assert!(!catalog.contains("<name>manual</name>"));

    // A hidden skill can still be invoked explicitly.
    let expanded = expand_skill_command("/skill:manual do it now", &result.skills).unwrap();
    let file = f.agent.join("skills/manual/SKILL.md");
    assert!(expanded.starts_with(&format!(
        "<skill name=\"manual\" location=\"{}\">\n",
        file.display()
    )));
    assert!(expanded.ends_with("\n\nManual steps.\n</skill>\n\ndo it now"));
}

#[test]
fn resources_invalid_skills_are_reported() {
    let f = Fixture::new();
    write(
        &f.agent.join("skills/Bad_Name/SKILL.md"),
        "---\ndescription: Has one.\n---\n",
    );
    write(
        &f.agent.join("skills/nodesc/SKILL.md"),
        "---\nname: nodesc\n---\n",
    );
    let result = load_skills(&f.options());
    assert_eq!(names(&result.skills, |s| &s.name), ["Bad_Name"]);
    let messages: Vec<&str> = result
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)",
            "description is required"
        ]
    );
    assert!(
        result
            .diagnostics
            .iter()
            .all(|d| d.kind == DiagnosticKind::Warning)
    );
}

#[test]
fn resources_prompt_templates_from_agent_dir_project_settings_and_cli() {
    let f = Fixture::new();
    write(
        &f.agent.join("prompts/review.md"),
        "---\ndescription: User review\n---\nUser review of $1",
    );
    write(&f.agent.join("prompts/fix.md"), "Fix $@ now");
    write(
        &f.agent.join("prompts/nested/deep.md"),
        "Not found: prompts dirs are flat",
    );
    write(
        &f.cwd.join(".pi/prompts/review.md"),
        "---\ndescription: Project review\n---\nProject review of $1",
    );
    write(&f.cwd.join(".pi/prompts/.hidden.md"), "hidden");
    write(&f.cwd.join(".pi/prompts/notes.txt"), "not a template");
    // Settings directories are searched recursively.
    write(&f.root.join("shared-prompts/a/one.md"), "One ${@:2}");
    write(&f.root.join("cli.md"), "From the command line");

    let mut opts = f.options();
    opts.user_entries = vec![f.root.join("shared-prompts").display().to_string()];
    opts.cli_paths = vec![
        f.root.join("cli.md").display().to_string(),
        "missing-dir".into(),
    ];
    let result = load_prompt_templates_with_diagnostics(&opts);
    assert_eq!(
        names(&result.templates, |t| &t.name),
        ["review", "one", "fix", "cli"]
    );
    let review = &result.templates[0];
    assert_eq!(review.description, "Project review");
    assert_eq!(review.source_info.scope, SourceScope::Project);
    assert_eq!(result.templates[2].description, "Fix $@ now");

    let kinds: Vec<(DiagnosticKind, &str)> = result
        .diagnostics
        .iter()
        .map(|d| (d.kind, d.message.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            (DiagnosticKind::Collision, "name \"/review\" collision"),
            (DiagnosticKind::Error, "Prompt template path does not exist"),
        ]
    );
    assert_eq!(
        result.diagnostics[1].path.as_deref(),
        Some(f.cwd.join("missing-dir").as_path())
    );

    let templates = &result.templates;
    assert_eq!(
        expand_prompt_template("/review \"PR 12\"", templates),
        "Project review of PR 12"
    );
    assert_eq!(expand_prompt_template("/one a b c", templates), "One b c");
    assert_eq!(
        expand_prompt_template("/fix the bug", templates),
        "Fix the bug now"
    );
    assert_eq!(
        expand_prompt_template("/nothing here", templates),
        "/nothing here"
    );

    // --no-prompt-templates keeps the command-line templates only.
    opts.include_defaults = false;
    assert_eq!(names(&load_prompt_templates(&opts), |t| &t.name), ["cli"]);
}

#[test]
fn resources_skill_commands_expand_before_prompt_templates() {
    let f = Fixture::new();
    write(
        &f.agent.join("skills/deploy/SKILL.md"),
        &skill("deploy", "Deploys."),
    );
    write(&f.agent.join("prompts/skill:deploy.md"), "never used");
    let skills = load_skills(&f.options()).skills;
    let templates = load_prompt_templates(&f.options());
    let text = expand_skill_command("/skill:deploy prod", &skills).unwrap();
    let text = expand_prompt_template(&text, &templates);
    assert!(text.starts_with("<skill name=\"deploy\""));
    assert!(text.contains("Steps for deploy."));
    assert!(text.ends_with("</skill>\n\nprod"));
}

#[test]
fn resources_cli_flags_parse() {
    let args = pi_coding_agent::cli::parse(
        [
            "pi",
            "--skill",
            "a",
            "--skill",
            "b",
            "--prompt-template",
            "p.md",
            "-ns",
            "-np",
            "--models",
            "sonnet:high,haiku",
            "hi",
        ]
        .map(String::from),
    )
    .unwrap();
    assert_eq!(args.skill, ["a", "b"]);
    assert_eq!(args.prompt_template, ["p.md"]);
    assert!(args.no_skills && args.no_prompt_templates);
    assert_eq!(args.models.as_deref(), Some("sonnet:high,haiku"));
    assert_eq!(args.messages, ["hi"]);
    let help = pi_coding_agent::cli::help_text("");
    assert!(help.contains("--skill <path>") && help.contains("--no-prompt-templates, -np"));
}
