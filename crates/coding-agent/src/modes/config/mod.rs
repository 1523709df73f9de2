//! `pi config`: the terminal UI that switches each resource of each installed package on
//! or off, written back as the package's settings filters (the TypeScript pi's resource
//! configuration). Without a terminal it draws the list once and exits.

mod list;

use std::path::PathBuf;

use pi_tui::events::{TermEvent, read_event};
use pi_tui::{CrosstermTerminal, Input, KeyCode, KeyModifiers, Renderer, Style, Terminal};
use pi_tui::{truncate_to_width, visible_width};

use crate::packages::command::Runner;
use crate::packages::manager::PackageManager;
use crate::packages::paths::InstallRoots;
use crate::packages::settings::{ConfiguredPackage, npm_command, read_scope};
use crate::resources::SourceScope;
use list::{ResourceList, Row};

const CONFIG_HELP: &str = "Usage:
  pi config [-l] [--approve|--no-approve]

Open the resource configuration TUI to enable or disable package resources.
Without -l, shows the packages of global and project settings.

Options:
  -l, --local       Show project packages only (.pi/settings.json)
  -a, --approve     Trust project-local files for this command with -l
  -na, --no-approve Ignore project-local files for this command with -l
";

const MAX_VISIBLE: usize = 15;

/// Runs `pi config` when `argv` (without the program name) starts with `config`.
pub fn handle(argv: &[String]) -> Option<i32> {
    let (first, rest) = argv.split_first()?;
    if first != "config" {
        return None;
    }
    let mut local = false;
    let mut approve = None;
    for arg in rest {
        match arg.as_str() {
            "-h" | "--help" => {
                // pi 1.6.0 ends the help with an empty line.
                println!("{CONFIG_HELP}");
                return Some(0);
            }
            "-l" | "--local" => local = true,
            "-a" | "--approve" => approve = Some(true),
            "-na" | "--no-approve" => approve = Some(false),
            other => {
                eprintln!("Unknown option {other} for \"config\".");
                eprintln!("Usage: pi config [-l]");
                return Some(1);
            }
        }
    }
    let roots = InstallRoots {
        cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        agent_dir: crate::config::paths::agent_dir(),
    };
    let (trusted, warnings) =
        crate::trust::for_command(approve, false, &roots.cwd, &roots.agent_dir);
    for warning in warnings {
        eprintln!("Warning: {warning}");
    }
    if local && !trusted {
        eprintln!("Project is not trusted. Use --approve to modify local resource config.");
        return Some(1);
    }
    let manager = PackageManager::new(
        roots.clone(),
        npm_command(&roots, trusted),
        Runner::default(),
    );
    let mut configured: Vec<ConfiguredPackage> = Vec::new();
    if trusted {
        configured.extend(read_scope(&roots, SourceScope::Project));
    }
    if !local {
        configured.extend(read_scope(&roots, SourceScope::User));
    }
    let resolved = crate::packages::resolve::resolve(&manager, configured);
    for warning in &resolved.warnings {
        eprintln!("Warning: {warning}");
    }
    let list = ResourceList::new(&resolved, roots, local.then_some(SourceScope::Project));
    Some(match run(list) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    })
}

/// The screen: borders, the header, the filter line and the visible rows.
fn render(list: &ResourceList, width: usize, notice: Option<&str>) -> Vec<String> {
    let border = Style::default().dim().paint(&"─".repeat(width));
    let title = Style::default().bold().paint("Resource Configuration");
    let hint = Style::default().dim().paint("space toggle · esc close");
    let gap = width
        .saturating_sub(visible_width(&title) + visible_width(&hint))
        .max(1);
    let mut lines = vec![
        String::new(),
        border.clone(),
        String::new(),
        truncate_to_width(
            &format!("{title}{}{hint}", " ".repeat(gap)),
            width,
            "",
            false,
        ),
        Style::default().dim().paint("Type to filter resources"),
        String::new(),
        format!("> {}", list.query),
        String::new(),
    ];
    let items: Vec<&Row> = list.visible.iter().collect();
    if list.items.is_empty() || !items.iter().any(|r| matches!(r, Row::Item(_))) {
        lines.push(Style::default().dim().paint("  No resources found"));
    } else {
        let start = list
            .selected
            .saturating_sub(MAX_VISIBLE / 2)
            .min(items.len().saturating_sub(MAX_VISIBLE));
        let end = (start + MAX_VISIBLE).min(items.len());
        for (at, row) in items.iter().enumerate().take(end).skip(start) {
            let line = match row {
                Row::Group(label) => format!("  {}", Style::default().bold().paint(label)),
                Row::Kind(label) => format!("    {}", Style::default().dim().paint(label)),
                Row::Item(index) => {
                    let item = &list.items[*index];
                    let cursor = if at == list.selected { "> " } else { "  " };
                    let check = if item.enabled { "[x]" } else { "[ ]" };
                    let name = if at == list.selected {
                        Style::default().bold().paint(&item.display)
                    } else {
                        item.display.clone()
                    };
                    format!("{cursor}    {check} {name}")
                }
            };
            lines.push(truncate_to_width(&line, width, "...", false));
        }
        if start > 0 || end < items.len() {
            let count = items.iter().filter(|r| matches!(r, Row::Item(_))).count();
            let current = items[..list.selected]
                .iter()
                .filter(|r| matches!(r, Row::Item(_)))
                .count()
                + 1;
            lines.push(
                Style::default()
                    .dim()
                    .paint(&format!("  ({current}/{count})")),
            );
        }
    }
    if let Some(notice) = notice {
        lines.push(Style::default().dim().paint(notice));
    }
    lines.push(String::new());
    lines.push(border);
    lines
}

fn run(mut list: ResourceList) -> std::io::Result<()> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        for line in render(&list, 80, None) {
            println!("{line}");
        }
        return Ok(());
    }
    let mut terminal = CrosstermTerminal::new();
    terminal.start()?;
    let mut renderer = Renderer::new(terminal);
    let mut notice: Option<String> = None;
    let result = loop {
        let width = renderer.terminal().size().0.max(20);
        if let Err(e) = renderer.render(render(&list, width, notice.as_deref())) {
            break Err(e);
        }
        let event = match read_event() {
            Ok(event) => event,
            Err(e) => break Err(e),
        };
        let TermEvent::Input(Input::Key(key)) = event else {
            continue;
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => break Ok(()),
            KeyCode::Char('c') if ctrl => break Ok(()),
            KeyCode::Up => list.step(-1),
            KeyCode::Down => list.step(1),
            KeyCode::PageUp => (0..MAX_VISIBLE).for_each(|_| list.step(-1)),
            KeyCode::PageDown => (0..MAX_VISIBLE).for_each(|_| list.step(1)),
            KeyCode::Char(' ') | KeyCode::Enter => {
                notice = list.toggle().err().map(|e| format!("Could not save: {e}"));
            }
            KeyCode::Backspace => {
                let mut query = list.query.clone();
                query.pop();
                list.set_query(query);
            }
            KeyCode::Char(c) if !ctrl => {
                let mut query = list.query.clone();
                query.push(c);
                list.set_query(query);
            }
            _ => {}
        }
    };
    let stopped = renderer.stop();
    let _ = renderer.terminal_mut().stop();
    result.and(stopped)
}
