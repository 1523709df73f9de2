//! The markdown and code-highlighting styles of a theme.

use pi_tui::components::markdown::MarkdownTheme;
use pi_tui::highlight::SyntaxTheme;
use pi_tui::style::Style;

use crate::modes::interactive::theme::{Theme, ThemeColor};

/// Markdown element styles from the theme's `md*` keys (and its syntax colors).
pub fn markdown_theme(theme: &Theme) -> MarkdownTheme {
    let attr = Style::plain().with_mode(theme.mode());
    MarkdownTheme {
        heading: theme.fg(ThemeColor::MdHeading),
        link: theme.fg(ThemeColor::MdLink),
        link_url: theme.fg(ThemeColor::MdLinkUrl),
        code: theme.fg(ThemeColor::MdCode),
        code_block: theme.fg(ThemeColor::MdCodeBlock),
        code_block_border: theme.fg(ThemeColor::MdCodeBlockBorder),
        quote: theme.fg(ThemeColor::MdQuote),
        quote_border: theme.fg(ThemeColor::MdQuoteBorder),
        hr: theme.fg(ThemeColor::MdHr),
        list_bullet: theme.fg(ThemeColor::MdListBullet),
        bold: attr.bold(),
        italic: attr.italic(),
        strikethrough: attr.strikethrough(),
        underline: attr.underline(),
        syntax: syntax_theme(theme),
    }
}

/// Code token styles from the theme's `syntax*` keys.
pub fn syntax_theme(theme: &Theme) -> SyntaxTheme {
    SyntaxTheme {
        comment: theme.fg(ThemeColor::SyntaxComment),
        keyword: theme.fg(ThemeColor::SyntaxKeyword),
        function: theme.fg(ThemeColor::SyntaxFunction),
        variable: theme.fg(ThemeColor::SyntaxVariable),
        string: theme.fg(ThemeColor::SyntaxString),
        number: theme.fg(ThemeColor::SyntaxNumber),
        type_: theme.fg(ThemeColor::SyntaxType),
        operator: theme.fg(ThemeColor::SyntaxOperator),
        punctuation: theme.fg(ThemeColor::SyntaxPunctuation),
    }
}
