//! The AGENTS.md / CLAUDE.md context files a session's prompt carries: the agent dir's,
//! then every ancestor directory's of the cwd (outermost first), as pi 1.6.0 finds them.

use std::path::{Path, PathBuf};

/// The names looked for in each directory, first found wins. pi 0.84: an
/// `AGENTS.override.md` replaces the directory's AGENTS.md or CLAUDE.md.
const NAMES: [&str; 5] = [
    "AGENTS.override.md",
    "AGENTS.md",
    "AGENTS.MD",
    "CLAUDE.md",
    "CLAUDE.MD",
];

/// A context file found for the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    pub path: PathBuf,
    pub content: String,
}

/// The context file of `dir`. Something that is not a file under a context file's name (a
/// folder called `AGENTS.md`) is passed over, as pi 0.82.1 does.
fn context_file_in(dir: &Path) -> Option<ContextFile> {
    NAMES.iter().find_map(|name| {
        let path = dir.join(name);
        if !path.is_file() {
            return None;
        }
        crate::text_file::read_text(&path)
            .ok()
            .map(|content| ContextFile { path, content })
    })
}

/// Where a checkout keeps its git data: the checkout's root and the repository's common git
/// dir (for a linked worktree, the main repository's `.git`).
struct GitPaths {
    repo_dir: PathBuf,
    common_git_dir: PathBuf,
}

/// The git checkout holding `cwd`: the nearest `.git` folder, or a `.git` file pointing
/// (`gitdir: …`) at a linked worktree's git dir whose `commondir` names the shared one.
fn find_git_paths(cwd: &Path) -> Option<GitPaths> {
    for dir in cwd.ancestors() {
        let git = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&git) else {
            continue;
        };
        if meta.is_dir() {
            if !git.join("HEAD").exists() {
                return None;
            }
            return Some(GitPaths {
                repo_dir: dir.to_path_buf(),
                common_git_dir: git,
            });
        }
        let text = std::fs::read_to_string(&git).ok()?;
        let Some(target) = text.trim().strip_prefix("gitdir: ") else {
            continue;
        };
        let git_dir = dir.join(target.trim());
        if !git_dir.join("HEAD").exists() {
            return None;
        }
        let common_git_dir = match std::fs::read_to_string(git_dir.join("commondir")) {
            Ok(common) => git_dir.join(common.trim()),
            Err(_) => git_dir,
        };
        return Some(GitPaths {
            repo_dir: dir.to_path_buf(),
            common_git_dir,
        });
    }
    None
}

/// The real path of `path`, or `path` itself when it cannot be resolved.
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The main repository's context file that a linked worktree nested inside it shadows with
/// its own (pi 0.83): both stand for the same repository, so only the worktree's is read.
/// `None` for an ordinary checkout, a sibling worktree, a bare layout or a submodule.
fn shadowed_context_file(cwd: &Path) -> Option<PathBuf> {
    let git = find_git_paths(cwd)?;
    let common = real(&git.common_git_dir);
    let worktree = real(&git.repo_dir);
    let main_root = common.parent()?.to_path_buf();
    if !worktree.starts_with(&main_root) || worktree == main_root {
        return None;
    }
    if real(&main_root.join(".git")) != common {
        return None;
    }
    let own = context_file_in(&worktree)?;
    Some(main_root.join(own.path.file_name()?))
}

/// AGENTS.md / CLAUDE.md of the agent dir, then of every directory from the filesystem
/// root down to `cwd` (outermost first), leaving out a file seen already and the main
/// repository's file that a nested linked worktree's own file shadows.
pub fn load_context_files(agent_dir: &Path, cwd: &Path) -> Vec<ContextFile> {
    let mut files = Vec::new();
    if let Some(global) = context_file_in(agent_dir) {
        files.push(global);
    }
    let shadowed = shadowed_context_file(cwd);
    let mut ancestors: Vec<ContextFile> = Vec::new();
    for dir in cwd.ancestors() {
        let Some(file) = context_file_in(dir) else {
            continue;
        };
        // The directory's real path, not the file's: a worktree AGENTS.md that links to the
        // main repository's file is still the worktree's own.
        let is_shadowed = shadowed.as_ref().is_some_and(|shadowed| {
            file.path
                .file_name()
                .is_some_and(|name| real(dir).join(name) == *shadowed)
        });
        let seen = files
            .iter()
            .chain(&ancestors)
            .any(|seen: &ContextFile| seen.path == file.path);
        if !is_shadowed && !seen {
            ancestors.push(file);
        }
    }
    ancestors.reverse();
    files.extend(ancestors);
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_files_come_from_the_agent_dir_then_root_to_cwd() {
        let root = tempfile::tempdir().unwrap();
        let agent = root.path().join("agent");
        let project = root.path().join("project");
        let nested = project.join("sub");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::write(agent.join("AGENTS.md"), "global").unwrap();
        std::fs::write(project.join("CLAUDE.md"), "project").unwrap();
        std::fs::write(nested.join("AGENTS.md"), "nested").unwrap();
        let files = load_context_files(&agent, &nested);
        let contents: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(contents, ["global", "project", "nested"]);
    }
}
