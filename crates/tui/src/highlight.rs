//! Syntax highlighting of code blocks with syntect's bundled grammars.
//!
//! Only the grammars are used: scopes are mapped onto the nine [`SyntaxTheme`] styles
//! here, so colors come from pi's theme rather than from a syntect color theme.

use std::sync::OnceLock;

use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};

use crate::style::Style;

/// Styles for the token classes of highlighted code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyntaxTheme {
    pub comment: Style,
    pub keyword: Style,
    pub function: Style,
    pub variable: Style,
    pub string: Style,
    pub number: Style,
    pub type_: Style,
    pub operator: Style,
    pub punctuation: Style,
}

/// Token classes, in the order their scope prefixes are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Comment,
    String,
    Number,
    Operator,
    Type,
    Function,
    Keyword,
    Variable,
    Punctuation,
}

impl SyntaxTheme {
    fn style(&self, class: Class) -> &Style {
        match class {
            Class::Comment => &self.comment,
            Class::String => &self.string,
            Class::Number => &self.number,
            Class::Operator => &self.operator,
            Class::Type => &self.type_,
            Class::Function => &self.function,
            Class::Keyword => &self.keyword,
            Class::Variable => &self.variable,
            Class::Punctuation => &self.punctuation,
        }
    }
}

/// Scope prefixes and their classes; more specific prefixes come first.
const SCOPE_CLASSES: &[(&str, Class)] = &[
    ("comment", Class::Comment),
    ("string", Class::String),
    ("constant.numeric", Class::Number),
    ("constant.language", Class::Number),
    ("constant.character", Class::String),
    ("keyword.operator", Class::Operator),
    ("storage.type.function", Class::Keyword),
    ("storage.type.class", Class::Keyword),
    ("storage.type.struct", Class::Keyword),
    ("storage.type.enum", Class::Keyword),
    ("storage.type.impl", Class::Keyword),
    ("storage.type.trait", Class::Keyword),
    ("storage.type.interface", Class::Keyword),
    ("storage.type.module", Class::Keyword),
    ("storage.type.namespace", Class::Keyword),
    ("storage.type.union", Class::Keyword),
    ("storage.type", Class::Type),
    ("entity.name.type", Class::Type),
    ("entity.name.class", Class::Type),
    ("entity.name.struct", Class::Type),
    ("entity.name.enum", Class::Type),
    ("entity.name.trait", Class::Type),
    ("entity.name.impl", Class::Type),
    ("entity.name.interface", Class::Type),
    ("entity.other.inherited-class", Class::Type),
    ("support.type", Class::Type),
    ("support.class", Class::Type),
    ("entity.name.function", Class::Function),
    ("support.function", Class::Function),
    ("variable.function", Class::Function),
    ("keyword", Class::Keyword),
    ("storage", Class::Keyword),
    ("variable", Class::Variable),
    ("punctuation", Class::Punctuation),
];

struct Grammar {
    set: SyntaxSet,
    classes: Vec<(Scope, Class)>,
}

fn grammar() -> &'static Grammar {
    static GRAMMAR: OnceLock<Grammar> = OnceLock::new();
    GRAMMAR.get_or_init(|| Grammar {
        set: SyntaxSet::load_defaults_newlines(),
        classes: SCOPE_CLASSES
            .iter()
            .filter_map(|(name, class)| Scope::new(name).ok().map(|s| (s, *class)))
            .collect(),
    })
}

/// Names used in fences that syntect's bundled grammars know under another token.
fn alias(lang: &str) -> &str {
    match lang {
        // No TypeScript grammar is bundled; JavaScript is the closest.
        "ts" | "tsx" | "typescript" | "mts" | "cts" | "jsx" | "mjs" | "cjs" | "javascript"
        | "node" => "js",
        "python" | "py3" | "python3" => "py",
        "rust" => "rs",
        "shell" | "bash" | "zsh" | "sh" | "console" | "shellscript" => "sh",
        "jsonc" | "json5" => "json",
        "yml" => "yaml",
        "c++" | "cpp" | "cxx" | "hpp" => "cpp",
        "csharp" | "c#" => "cs",
        "golang" => "go",
        "ruby" => "rb",
        "markdown" | "md" => "md",
        "htm" | "html" => "html",
        "objc" | "objective-c" => "m",
        "kotlin" | "kt" | "scala" => "scala",
        other => other,
    }
}

fn find_syntax(lang: &str) -> Option<&'static SyntaxReference> {
    let token = lang
        .trim()
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    if token.is_empty() {
        return None;
    }
    let g = grammar();
    let syntax = g.set.find_syntax_by_token(alias(&token))?;
    (syntax.name != "Plain Text").then_some(syntax)
}

/// True when `lang` (a fence info string such as `rust` or `ts`) has a grammar.
pub fn supports_language(lang: &str) -> bool {
    find_syntax(lang).is_some()
}

/// Highlight `code` as `lang`: one styled line per source line (split on `\n`);
/// an unknown or missing language, or any parse error, gives the plain lines.
pub fn highlight_code(code: &str, lang: Option<&str>, theme: &SyntaxTheme) -> Vec<String> {
    let plain = || code.split('\n').map(str::to_string).collect::<Vec<_>>();
    let Some(syntax) = lang.and_then(find_syntax) else {
        return plain();
    };
    highlight_with(code, syntax, theme).unwrap_or_else(plain)
}

fn highlight_with(
    code: &str,
    syntax: &SyntaxReference,
    theme: &SyntaxTheme,
) -> Option<Vec<String>> {
    let g = grammar();
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut out = Vec::new();
    for line in code.split('\n') {
        // The "newlines" grammars expect each line to end with its newline.
        let with_nl = format!("{line}\n");
        let ops = state.parse_line(&with_nl, &g.set).ok()?;
        let mut spans: Vec<(Option<Class>, &str)> = Vec::new();
        let mut pos = 0;
        for (at, op) in ops {
            let at = at.min(line.len());
            if at > pos {
                spans.push((
                    span_class(line.get(pos..at)?, &stack, g),
                    line.get(pos..at)?,
                ));
                pos = at;
            }
            stack.apply(&op).ok()?;
        }
        if pos < line.len() {
            spans.push((span_class(line.get(pos..)?, &stack, g), line.get(pos..)?));
        }
        out.push(paint_spans(&spans, theme));
    }
    Some(out)
}

/// Paint spans, joining neighbours of the same class into one styled run.
fn paint_spans(spans: &[(Option<Class>, &str)], theme: &SyntaxTheme) -> String {
    let mut styled = String::new();
    let mut i = 0;
    while i < spans.len() {
        let class = spans[i].0;
        let mut text = String::new();
        while i < spans.len() && spans[i].0 == class {
            text.push_str(spans[i].1);
            i += 1;
        }
        match class {
            Some(class) => styled.push_str(&theme.style(class).paint(&text)),
            None => styled.push_str(&text),
        }
    }
    styled
}

/// Declaration words some grammars scope as `storage.type` next to real types.
const DECLARATION_WORDS: &[&str] = &[
    "let",
    "const",
    "var",
    "static",
    "mut",
    "fn",
    "type",
    "struct",
    "enum",
    "impl",
    "trait",
    "mod",
    "use",
    "def",
    "class",
    "function",
    "interface",
    "namespace",
    "typedef",
    "union",
];

fn span_class(text: &str, stack: &ScopeStack, g: &Grammar) -> Option<Class> {
    if text.trim().is_empty() {
        // Whitespace takes no color, except inside comments and strings.
        return classify(stack, g).filter(|c| matches!(c, Class::Comment | Class::String));
    }
    match classify(stack, g) {
        Some(Class::Type) if DECLARATION_WORDS.contains(&text.trim()) => Some(Class::Keyword),
        other => other,
    }
}

/// The class of the innermost classified scope; comments and strings win over
/// anything nested in them (their quotes and escapes keep the string color).
fn classify(stack: &ScopeStack, g: &Grammar) -> Option<Class> {
    let scopes = stack.as_slice();
    let class_of = |scope: Scope| {
        g.classes
            .iter()
            .find(|(prefix, _)| prefix.is_prefix_of(scope))
            .map(|(_, c)| *c)
    };
    let mut innermost = None;
    for scope in scopes.iter().rev() {
        if let Some(class) = class_of(*scope) {
            if innermost.is_none() {
                innermost = Some(class);
            }
            if matches!(class, Class::Comment | Class::String) {
                return Some(class);
            }
        }
    }
    innermost
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::Color;

    fn theme() -> SyntaxTheme {
        SyntaxTheme {
            comment: Style::fg(Color::Ansi256(1)),
            keyword: Style::fg(Color::Ansi256(2)),
            function: Style::fg(Color::Ansi256(3)),
            variable: Style::fg(Color::Ansi256(4)),
            string: Style::fg(Color::Ansi256(5)),
            number: Style::fg(Color::Ansi256(6)),
            type_: Style::fg(Color::Ansi256(7)),
            operator: Style::fg(Color::Ansi256(8)),
            punctuation: Style::fg(Color::Ansi256(9)),
        }
    }

    #[test]
    fn highlights_known_languages_line_by_line() {
        let lines = highlight_code(
            "fn main() {\n    // hi\n    let x = \"s\";\n}",
            Some("rust"),
            &theme(),
        );
        assert_eq!(lines.len(), 4);
        assert!(lines[0].contains("\x1b[38;5;2mfn"), "{:?}", lines[0]);
        assert!(lines[1].contains("\x1b[38;5;1m// hi"), "{:?}", lines[1]);
        assert!(lines[2].contains("\x1b[38;5;5m"), "{:?}", lines[2]);
        for lang in [
            "ts", "js", "py", "sh", "bash", "json", "rs", "go", "c", "yaml",
        ] {
            assert!(supports_language(lang), "{lang}");
        }
    }

    #[test]
    fn unknown_languages_stay_plain() {
        let code = "a <- b\n\n  c";
        let lines = highlight_code(code, Some("nosuchlang"), &theme());
        assert_eq!(lines, vec!["a <- b", "", "  c"]);
        assert_eq!(highlight_code(code, None, &theme()), lines);
        assert!(!supports_language(""));
        assert!(!supports_language("txt"));
    }

    #[test]
    fn never_panics_on_odd_input() {
        for code in [
            "",
            "\"unterminated",
            "/* open",
            "é\u{301}日本\t\r\n\u{0}",
            "\\",
        ] {
            for lang in ["rust", "js", "py", "sh", "json", "html"] {
                let lines = highlight_code(code, Some(lang), &theme());
                assert_eq!(lines.len(), code.split('\n').count());
            }
        }
    }
}
