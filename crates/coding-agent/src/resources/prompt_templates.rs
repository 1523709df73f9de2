//! Prompt templates: Markdown files whose name (without `.md`) becomes a `/name` command.
//! `/name args` is replaced by the file's body with `$1`, `$@`, `$ARGUMENTS`, `${@:N}` and
//! `${@:N:L}` filled in from the arguments.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::frontmatter::{self, Value};
use super::{
    DiscoveryOptions, Kind, ResourceDiagnostic, SourceInfo, SourceScope, is_local_path, is_under,
    normalize, read_dir_sorted, resolve, resolve_from,
};

/// A loaded prompt template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    /// The command name: the file name without `.md`.
    pub name: String,
    /// `description` from the frontmatter, else the body's first non-empty line (at most 60
    /// characters, then `...`).
    pub description: String,
    /// `argument-hint` from the frontmatter, shown before the description in completions.
    pub argument_hint: Option<String>,
    /// The body (after the frontmatter, trimmed).
    pub content: String,
    /// Where the template was found.
    pub source_info: SourceInfo,
    /// The template's file.
    pub file_path: PathBuf,
}

/// Prompt templates and what went wrong loading them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadPromptTemplatesResult {
    /// The templates, in precedence order, one per name.
    pub templates: Vec<PromptTemplate>,
    /// Name collisions and missing command-line paths.
    pub diagnostics: Vec<ResourceDiagnostic>,
}

pub use super::template_args::{parse_command_args, substitute_args};

/// Expands `/name args` when `name` is a template; any other text comes back unchanged.
pub fn expand_prompt_template(text: &str, templates: &[PromptTemplate]) -> String {
    let Some(rest) = text.strip_prefix('/') else {
        return text.to_owned();
    };
    // pi 1.6.0: the name runs to the first whitespace of any kind, the arguments start
    // after the whitespace that follows it.
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim_start()),
        None => (rest, ""),
    };
    match templates.iter().find(|t| t.name == name) {
        Some(template) => substitute_args(&template.content, &parse_command_args(args)),
        None => text.to_owned(),
    }
}

fn scalar_text(value: Option<&Value>) -> Option<String> {
    match value {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.clone()),
        Some(Value::Bool(true)) => Some("true".into()),
        _ => None,
    }
}

/// Loads one template; `Err` with a warning when the file can't be read or its frontmatter
/// is invalid (pi 0.87.0 reports it instead of skipping the file silently).
fn load_template_file(
    path: &Path,
    source_info: SourceInfo,
) -> Result<PromptTemplate, Box<ResourceDiagnostic>> {
    let warn = |message: String| Box::new(ResourceDiagnostic::warning(message, path));
    let content = crate::text_file::read_text(path).map_err(|e| warn(e.to_string()))?;
    let parsed = frontmatter::parse(&content).map_err(|e| warn(e.to_string()))?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let name = file_name
        .strip_suffix(".md")
        .unwrap_or(&file_name)
        .to_owned();
    let description = scalar_text(parsed.frontmatter.get("description")).unwrap_or_else(|| {
        parsed
            .body
            .split('\n')
            .find(|line| !line.trim().is_empty())
            .map(|line| {
                let mut d: String = line.chars().take(60).collect();
                if line.chars().count() > 60 {
                    d.push_str("...");
                }
                d
            })
            .unwrap_or_default()
    });
    Ok(PromptTemplate {
        name,
        description,
        argument_hint: scalar_text(parsed.frontmatter.get("argument-hint")),
        content: parsed.body,
        source_info,
        file_path: path.to_path_buf(),
    })
}

/// The `.md` files directly in a directory given as a path (no recursion).
fn load_templates_from_dir(
    dir: &Path,
    info: &dyn Fn(&Path) -> SourceInfo,
) -> Vec<Result<PromptTemplate, Box<ResourceDiagnostic>>> {
    read_dir_sorted(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.is_file && e.name.ends_with(".md"))
        .map(|e| load_template_file(&e.path, info(&e.path)))
        .collect()
}

/// Loads the prompt templates of every configured location (see the [module docs](super)),
/// keeping the first template of each name, with diagnostics for the rest.
pub fn load_prompt_templates_with_diagnostics(
    options: &DiscoveryOptions,
) -> LoadPromptTemplatesResult {
    let resolved = resolve(options, Kind::Prompts);
    let user_dir = normalize(&options.agent_dir.join("prompts"));
    let project_dir = options.project_base().join("prompts");
    let fallback = |path: &Path| -> SourceInfo {
        if is_under(path, &user_dir) {
            SourceInfo::local(path, "local", SourceScope::User, Some(user_dir.clone()))
        } else if is_under(path, &project_dir) {
            SourceInfo::local(
                path,
                "local",
                SourceScope::Project,
                Some(project_dir.clone()),
            )
        } else {
            let base = if path.is_dir() {
                path.to_path_buf()
            } else {
                path.parent().map(Path::to_path_buf).unwrap_or_default()
            };
            SourceInfo::local(path, "local", SourceScope::Temporary, Some(base))
        }
    };
    let info = |path: &Path| -> SourceInfo {
        resolved
            .meta
            .get(path)
            .map(|m| m.source_info(path))
            .unwrap_or_else(|| fallback(path))
    };

    let mut all = Vec::new();
    for path in &resolved.paths {
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        if meta.is_dir() {
            all.extend(load_templates_from_dir(path, &info));
        } else if meta.is_file() && path.to_string_lossy().ends_with(".md") {
            all.push(load_template_file(path, info(path)));
        }
    }

    let mut templates: Vec<PromptTemplate> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut diagnostics = Vec::new();
    for template in all {
        let template = match template {
            Ok(template) => template,
            Err(diagnostic) => {
                diagnostics.push(*diagnostic);
                continue;
            }
        };
        if let Some(&winner) = by_name.get(&template.name) {
            diagnostics.push(ResourceDiagnostic::collision(
                "prompt",
                &format!("/{}", template.name),
                &template.name,
                &templates[winner].file_path,
                &template.file_path,
            ));
            continue;
        }
        by_name.insert(template.name.clone(), templates.len());
        templates.push(template);
    }

    let home = options.home();
    for raw in &options.cli_paths {
        let path = resolve_from(raw, &options.cwd, &home);
        if is_local_path(raw)
            && !path.exists()
            && !diagnostics
                .iter()
                .any(|d: &ResourceDiagnostic| d.path.as_deref() == Some(path.as_path()))
        {
            diagnostics.push(ResourceDiagnostic::error(
                "Prompt template path does not exist",
                &path,
            ));
        }
    }
    LoadPromptTemplatesResult {
        templates,
        diagnostics,
    }
}

/// Loads the prompt templates of every configured location, one per name (the first found).
pub fn load_prompt_templates(options: &DiscoveryOptions) -> Vec<PromptTemplate> {
    load_prompt_templates_with_diagnostics(options).templates
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion_matches_the_first_word_only() {
        let t = PromptTemplate {
            name: "component".into(),
            description: String::new(),
            argument_hint: None,
            content: "Create $1 with $@".into(),
            source_info: SourceInfo::local(Path::new("/x"), "local", SourceScope::User, None),
            file_path: PathBuf::from("/x/component.md"),
        };
        let list = [t];
        assert_eq!(
            expand_prompt_template("/component Button \"click handler\"", &list),
            "Create Button with Button click handler"
        );
        assert_eq!(expand_prompt_template("/component", &list), "Create  with ");
        assert_eq!(expand_prompt_template("/other a", &list), "/other a");
        assert_eq!(expand_prompt_template("component a", &list), "component a");
        assert_eq!(
            expand_prompt_template("/component\tx", &list),
            "Create x with x"
        );
        assert_eq!(
            expand_prompt_template("/component\n  multi\nline", &list),
            "Create multi with multi line"
        );
    }

    #[test]
    fn template_files() {
        let dir = tempfile::tempdir().unwrap();
        let info = SourceInfo::local(dir.path(), "local", SourceScope::User, None);
        let a = dir.path().join("review.md");
        std::fs::write(
            &a,
            "---\ndescription: Review changes\nargument-hint: \"<pr>\"\n---\nBody $1\n",
        )
        .unwrap();
        let t = load_template_file(&a, info.clone()).unwrap();
        assert_eq!(t.name, "review");
        assert_eq!(t.description, "Review changes");
        assert_eq!(t.argument_hint.as_deref(), Some("<pr>"));
        assert_eq!(t.content, "Body $1");

        let b = dir.path().join("long.md");
        let line = "x".repeat(70);
        std::fs::write(&b, format!("\n\n{line}\nmore")).unwrap();
        let t = load_template_file(&b, info.clone()).unwrap();
        assert_eq!(t.description, format!("{}...", "x".repeat(60)));
        assert!(t.argument_hint.is_none());

        let c = dir.path().join("bad.md");
        std::fs::write(&c, "---\ndescription: \"open\n---\nbody").unwrap();
        let warning = load_template_file(&c, info).unwrap_err();
        assert_eq!(warning.kind, crate::resources::DiagnosticKind::Warning);
        assert_eq!(warning.path.as_deref(), Some(c.as_path()));
    }
}
