//! The system prompt: our own base text, the active tools with guidelines built from them,
//! appended text, AGENTS.md / CLAUDE.md context files, the skills catalog (with the `read`
//! tool), the date and the working directory.

use std::path::Path;
#[cfg(test)]
use std::path::PathBuf;

/// Today's date in UTC as `YYYY-MM-DD`.
pub fn today() -> String {
    crate::session::time::iso_now()[..10].to_owned()
}

/// One line per built-in tool, for the tools section (and extensions' `toolSnippets`).
pub fn builtin_tool_summary(name: &str) -> Option<&'static str> {
    Some(match name {
        "read" => "Read a file (text or image); long files come in pages",
        "bash" => "Run a shell command in the working directory",
        "edit" => "Replace exact text in a file; several separate replacements per call are fine",
        "write" => "Create a file or replace its whole content",
        "grep" => "Search file contents by pattern (respects .gitignore)",
        "find" => "Find files by glob pattern (respects .gitignore)",
        "ls" => "List a directory",
        "codemode" => "Run a JavaScript script that calls the other tools",
        _ => return None,
    })
}

pub use super::context_files::{ContextFile, load_context_files};

/// What the prompt is built from.
#[derive(Debug, Clone, Default)]
pub struct PromptInputs<'a> {
    /// `--system-prompt` (replaces the base text and the tools section).
    pub custom: Option<&'a str>,
    /// `--append-system-prompt` values (a path to an existing file contributes its text).
    pub append: &'a [String],
    pub tools: &'a [String],
    pub context_files: &'a [ContextFile],
    /// Skills listed for the model (only when the `read` tool is active).
    pub skills: &'a [crate::resources::Skill],
    /// One-line descriptions of extension tools (`promptSnippet`), by tool name; an empty
    /// one leaves the tool out of the list. A built-in named here is overridden: its line
    /// and its guidelines are gone.
    pub tool_snippets: &'a [(String, String)],
    /// Guidelines extension tools add (`promptGuidelines`).
    pub extra_guidelines: &'a [String],
}

/// The built-in tools' guidelines. The advice on exploring files names only the exploring
/// tools that are active (pi 0.77).
fn guidelines(tools: &[String]) -> Vec<String> {
    let has = |name: &str| tools.iter().any(|t| t == name);
    let explorers: Vec<&str> = ["grep", "find", "ls"]
        .into_iter()
        .filter(|name| has(name))
        .collect();
    let mut lines: Vec<String> = Vec::new();
    if has("bash") {
        match explorers.as_slice() {
            [] => lines.push("Use bash for file system work such as ls, rg and find".into()),
            [one] => lines.push(format!(
                "Prefer the {one} tool over bash for exploring files"
            )),
            [first @ .., last] => lines.push(format!(
                "Prefer the {} and {last} tools over bash for exploring files",
                first.join(", ")
            )),
        }
    }
    if has("read") && (has("edit") || has("write")) {
        lines.push("Read a file before you change it".into());
    }
    if has("edit") {
        lines.push(
            "Use edit for targeted changes; each oldText must match the file exactly and only once"
                .into(),
        );
        lines.push("Put several separate changes to one file into a single edit call".into());
    }
    if has("write") {
        lines.push("Use write for new files or complete rewrites".into());
    }
    if has("bash") {
        lines.push(
            "PI_* environment variables name the current model and session, should you need them"
                .into(),
        );
    }
    if has("codemode") {
        lines.push(
            "Put independent tool calls in one codemode script (Promise.allSettled), chain them there, or filter long output there, rather than making many separate calls"
                .into(),
        );
    }
    lines.push("Keep answers short and name the files you touch".into());
    lines
}

/// Builds the prompt for a session in `cwd`, laid out as pi 1.6.0 lays it out: a
/// preamble, then one `<name>` … `</name>` section each for the tools, the rules, the
/// appended text (`addendum`), the context files (`project_context`), the skills and the
/// `cwd`, separated by blank lines. The default preamble, tools and rules are our own
/// wording; pi 1.6.0 has no date in the prompt (it would break prompt caching daily).
pub fn build(inputs: &PromptInputs<'_>, cwd: &Path) -> String {
    let mut sections: Vec<(&str, String)> = Vec::new();
    let preamble = match inputs.custom {
        Some(text) => text.to_owned(),
        None => {
            sections.push(("tools", tools_section(inputs)));
            sections.push(("rules", rules_section(inputs)));
            "You are an expert coding assistant working inside pi, a coding agent harness. \
You help the user understand and change their code by reading files, running commands, \
editing code and writing new files."
                .to_owned()
        }
    };
    let appended = appended_texts(inputs.append);
    if !appended.is_empty() {
        sections.push(("addendum", appended.join("\n\n")));
    }
    if !inputs.context_files.is_empty() {
        let mut parts = vec!["Project-specific instructions and guidelines:".to_owned()];
        for file in inputs.context_files {
            parts.push(format!(
                "<project_instructions path=\"{}\">\n{}\n</project_instructions>",
                file.path.display(),
                file.content
            ));
        }
        sections.push(("project_context", parts.join("\n\n")));
    }
    // The catalog needs a tool that can read a skill's file: `read`, else `bash` (pi 1.6).
    let reader = if inputs.tools.iter().any(|t| t == "read") {
        Some(crate::resources::SkillReader::Read)
    } else if inputs.tools.iter().any(|t| t == "bash") {
        Some(crate::resources::SkillReader::Bash)
    } else {
        None
    };
    if let Some(reader) = reader {
        let skills = crate::resources::format_skills_for_prompt(inputs.skills, reader);
        if !skills.trim().is_empty() {
            sections.push(("skills", skills.trim().to_owned()));
        }
    }
    sections.push(("cwd", cwd.display().to_string().replace('\\', "/")));
    let mut prompt = preamble;
    for (name, content) in sections {
        prompt.push_str(&format!("\n\n<{name}>\n{content}\n</{name}>"));
    }
    prompt
}

/// The appended prompt texts: a path to an existing file contributes its text.
/// `SYSTEM.md` or `APPEND_SYSTEM.md` (`name`): the trusted project's `.pi/<name>`, else the
/// agent dir's; the two are not combined (pi 1.6.0).
pub fn discover_prompt_file(
    agent_dir: &Path,
    cwd: &Path,
    name: &str,
    project_trusted: bool,
) -> Option<std::path::PathBuf> {
    let project = cwd.join(".pi").join(name);
    if project_trusted && project.exists() {
        return Some(project);
    }
    let global = agent_dir.join(name);
    global.exists().then_some(global)
}

/// A prompt given as text or as a file's path: the file's text when it can be read.
pub fn resolve_prompt_input(input: &str) -> String {
    crate::text_file::read_text(input).unwrap_or_else(|_| input.to_owned())
}

fn appended_texts(append: &[String]) -> Vec<String> {
    append
        .iter()
        .map(|extra| resolve_prompt_input(extra))
        .collect()
}

/// The `tools` section: one line per listed tool.
fn tools_section(inputs: &PromptInputs<'_>) -> String {
    let listed: Vec<String> = inputs
        .tools
        .iter()
        .filter_map(|t| {
            let snippet = inputs
                .tool_snippets
                .iter()
                .find(|(name, _)| name == t)
                .map(|(_, s)| s.as_str());
            match snippet {
                Some("") => None,
                Some(text) => Some(format!("- {t}: {text}")),
                None => builtin_tool_summary(t).map(|s| format!("- {t}: {s}")),
            }
        })
        .collect();
    let list = if listed.is_empty() {
        "(none)".to_owned()
    } else {
        listed.join("\n")
    };
    format!("{list}\n\nOther tools may be available depending on the project.")
}

/// The `rules` section: the built-in tools' guidelines, then the extensions'.
fn rules_section(inputs: &PromptInputs<'_>) -> String {
    let builtin: Vec<String> = inputs
        .tools
        .iter()
        .filter(|t| !inputs.tool_snippets.iter().any(|(name, _)| name == *t))
        .cloned()
        .collect();
    let mut lines: Vec<String> = guidelines(&builtin)
        .iter()
        .map(|g| format!("- {g}"))
        .collect();
    for extra in inputs.extra_guidelines {
        let line = format!("- {}", extra.trim());
        if !extra.trim().is_empty() && !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines.join("\n")
}

/// What a session rebuilds its system prompt from when its tools change (an extension
/// calls `setActiveTools`, or registers a tool with a prompt snippet).
#[derive(Debug, Clone, Default)]
pub struct PromptRecipe {
    pub custom: Option<String>,
    pub append: Vec<String>,
    pub context_files: Vec<ContextFile>,
}

impl PromptRecipe {
    /// The recipe of a run: `--system-prompt` / `--append-system-prompt`, else SYSTEM.md /
    /// APPEND_SYSTEM.md (see [`discover_prompt_file`]); `place` is the agent dir, the cwd
    /// and whether the project is trusted.
    pub fn discover(
        system_prompt: Option<&str>,
        append: &[String],
        place: (&Path, &Path, bool),
        context_files: Vec<ContextFile>,
    ) -> Self {
        let (agent_dir, cwd, trusted) = place;
        let file = |name: &str| {
            discover_prompt_file(agent_dir, cwd, name, trusted)
                .map(|path| path.display().to_string())
        };
        Self {
            custom: system_prompt
                .map(str::to_owned)
                .or_else(|| file("SYSTEM.md"))
                .map(|input| resolve_prompt_input(&input)),
            append: if append.is_empty() {
                file("APPEND_SYSTEM.md").into_iter().collect()
            } else {
                append.to_vec()
            },
            context_files,
        }
    }

    /// The appended texts joined by blank lines (`appendSystemPrompt`).
    pub fn appended_text(&self) -> String {
        appended_texts(&self.append).join("\n\n")
    }

    /// The prompt for these active tools, skills and extension additions.
    pub fn build(
        &self,
        tools: &[String],
        skills: &[crate::resources::Skill],
        tool_snippets: &[(String, String)],
        extra_guidelines: &[String],
        cwd: &Path,
    ) -> String {
        build(
            &PromptInputs {
                custom: self.custom.as_deref(),
                append: &self.append,
                tools,
                context_files: &self.context_files,
                skills,
                tool_snippets,
                extra_guidelines,
            },
            cwd,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_is_laid_out_in_sections_ending_with_the_cwd() {
        let tools = ["read".to_owned(), "bash".to_owned()];
        let p = build(
            &PromptInputs {
                tools: &tools,
                ..Default::default()
            },
            Path::new("/tmp/work"),
        );
        assert!(p.contains("\n\n<tools>\n- read: "));
        assert!(p.contains("\n\n<rules>\n- Use bash for file system work"));
        assert!(!p.contains("- edit: "));
        assert!(p.ends_with("\n\n<cwd>\n/tmp/work\n</cwd>"));
        assert!(!p.contains("Current date"));
        assert_eq!(today().len(), 10);
        // As pi 1.6.0 lays out a custom prompt with appended text (tests/request_parity_16.rs
        // compares the whole request).
        let custom = build(
            &PromptInputs {
                custom: Some("Custom."),
                append: &["More.".into(), "Most.".into()],
                ..Default::default()
            },
            Path::new("/x"),
        );
        assert_eq!(
            custom,
            "Custom.\n\n<addendum>\nMore.\n\nMost.\n</addendum>\n\n<cwd>\n/x\n</cwd>"
        );
    }

    #[test]
    fn skills_catalog_follows_context_files_with_a_tool_that_reads_them() {
        use crate::resources::{Skill, SourceInfo, SourceScope};
        let skills = [Skill {
            name: "pdf".into(),
            description: "PDF work".into(),
            file_path: PathBuf::from("/s/pdf/SKILL.md"),
            base_dir: PathBuf::from("/s/pdf"),
            source_info: SourceInfo::local(Path::new("/s"), "auto", SourceScope::User, None),
            disable_model_invocation: false,
        }];
        let context = [ContextFile {
            path: PathBuf::from("/p/AGENTS.md"),
            content: "ctx".into(),
        }];
        let with_read = ["read".to_owned()];
        for custom in [None, Some("Custom.")] {
            let p = build(
                &PromptInputs {
                    custom,
                    tools: &with_read,
                    context_files: &context,
                    skills: &skills,
                    ..Default::default()
                },
                Path::new("/p"),
            );
            let ctx = p
                .find("<project_context>\nProject-specific instructions and guidelines:\n\n<project_instructions path=\"/p/AGENTS.md\">\nctx\n</project_instructions>\n</project_context>")
                .unwrap();
            let catalog = p.find("<skills>\n").unwrap();
            let cwd = p
                .find("</available_skills>\n</skills>\n\n<cwd>\n/p\n</cwd>")
                .unwrap();
            assert!(ctx < catalog && catalog < cwd);
        }
        // With bash alone the catalog stays and says to print the file (pi 1.6).
        let bash_only = build(
            &PromptInputs {
                tools: &["bash".to_owned()],
                skills: &skills,
                ..Default::default()
            },
            Path::new("/p"),
        );
        assert!(bash_only.contains("<available_skills>"));
        assert!(bash_only.contains("with bash (print it, e.g. with cat)"));
        let without = build(
            &PromptInputs {
                tools: &["grep".to_owned()],
                skills: &skills,
                ..Default::default()
            },
            Path::new("/p"),
        );
        assert!(!without.contains("<available_skills>"));
    }
}
