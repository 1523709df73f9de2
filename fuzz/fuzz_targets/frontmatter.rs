//! Frontmatter of prompt templates and skills (the YAML subset), and the template argument
//! parsing and substitution that run on the body. Properties: nothing panics, and CRLF line
//! ends parse exactly as LF ones.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_coding_agent::resources::frontmatter::{parse, strip};
use pi_coding_agent::resources::prompt_templates::{parse_command_args, substitute_args};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = parse(text);
    assert_eq!(
        strip(text).ok(),
        parsed.as_ref().ok().map(|p| p.body.clone())
    );
    if !text.contains('\r') {
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(parse(&crlf), parsed, "CRLF parsed differently");
    }
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let args = parse_command_args(first);
    let _ = substitute_args(rest, &args);
});
