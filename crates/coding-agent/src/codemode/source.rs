//! A codemode input: raw JavaScript with an optional `// @options: {…}` first line.

use serde_json::Value;

const PREFIX: &str = "// @options:";
const FIELDS: &str = "`max_output_tokens` and `timeout_ms`";

/// The options of one script.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScriptOptions {
    pub max_output_tokens: Option<u64>,
    pub timeout_ms: Option<u64>,
}

/// A parsed input: the code (the options line taken out, line numbers kept) and options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptSource {
    pub code: String,
    pub options: ScriptOptions,
}

/// Splits `input` into code and options; the error is the text the model gets back.
pub fn parse(input: &str) -> Result<ScriptSource, String> {
    if input.trim().is_empty() {
        return Err(
            "Expected JavaScript source text (non-empty). Provide JS only, optionally \
with a first line `// @options: {\"max_output_tokens\": 1000}`."
                .into(),
        );
    }
    if let Some(line) = input
        .split('\n')
        .skip(1)
        .position(|line| line.trim_start().starts_with(PREFIX))
    {
        return Err(format!(
            "The // @options: line must be the first line of the input; found one on line {}",
            line + 2
        ));
    }
    let first_line = input.split('\n').next().unwrap_or_default();
    let first = first_line
        .strip_suffix('\r')
        .unwrap_or(first_line)
        .trim_start();
    let Some(rest) = first.strip_prefix(PREFIX) else {
        return Ok(ScriptSource {
            code: input.to_owned(),
            options: ScriptOptions::default(),
        });
    };
    // The code keeps the newline that ended the options line, so line numbers stay true.
    let code = input.find('\n').map_or("", |at| &input[at..]);
    if code.trim().is_empty() {
        return Err(
            "The @options line must be followed by JavaScript source on subsequent lines".into(),
        );
    }
    Ok(ScriptSource {
        code: code.to_owned(),
        options: parse_options(rest.trim())?,
    })
}

fn parse_options(text: &str) -> Result<ScriptOptions, String> {
    let not_object = || format!("@options must be a JSON object with supported fields {FIELDS}");
    if text.is_empty() {
        return Err(not_object());
    }
    let value: Value = serde_json::from_str(text).map_err(|error| {
        format!("@options must be valid JSON with supported fields {FIELDS}: {error}")
    })?;
    let Value::Object(fields) = value else {
        return Err(not_object());
    };
    let mut options = ScriptOptions::default();
    for (key, value) in &fields {
        match key.as_str() {
            "max_output_tokens" => {
                options.max_output_tokens = Some(safe_integer(value).ok_or_else(|| {
                    "@options field `max_output_tokens` must be a non-negative safe integer"
                        .to_owned()
                })?);
            }
            "timeout_ms" => {
                options.timeout_ms = Some(
                    safe_integer(value)
                        .filter(|ms| (1..=2_147_483_647).contains(ms))
                        .ok_or_else(|| {
                            "@options field `timeout_ms` must be a positive integer up to 2147483647"
                                .to_owned()
                        })?,
                );
            }
            other => return Err(format!("@options only supports {FIELDS}; got `{other}`")),
        }
    }
    Ok(options)
}

/// A JSON number that is a non-negative integer JavaScript holds exactly.
fn safe_integer(value: &Value) -> Option<u64> {
    const MAX_SAFE: u64 = (1 << 53) - 1;
    if let Some(n) = value.as_u64() {
        return (n <= MAX_SAFE).then_some(n);
    }
    let f = value.as_f64()?;
    (f >= 0.0 && f.fract() == 0.0 && f <= MAX_SAFE as f64).then_some(f as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_options_line_is_read_and_taken_out() {
        let parsed =
            parse("// @options: {\"max_output_tokens\": 20, \"timeout_ms\": 500}\nreturn 1")
                .unwrap();
        assert_eq!(parsed.code, "\nreturn 1");
        assert_eq!(
            parsed.options,
            ScriptOptions {
                max_output_tokens: Some(20),
                timeout_ms: Some(500)
            }
        );
        assert_eq!(parse("return 2").unwrap().code, "return 2");
    }

    #[test]
    fn bad_inputs_get_pi_s_errors() {
        assert!(
            parse("  \n")
                .unwrap_err()
                .starts_with("Expected JavaScript source text")
        );
        assert_eq!(
            parse("x\n  // @options: {}").unwrap_err(),
            "The // @options: line must be the first line of the input; found one on line 2"
        );
        assert_eq!(
            parse("// @options: {\"foo\": 1}\nx").unwrap_err(),
            "@options only supports `max_output_tokens` and `timeout_ms`; got `foo`"
        );
        assert_eq!(
            parse("// @options: {\"timeout_ms\": 0}\nx").unwrap_err(),
            "@options field `timeout_ms` must be a positive integer up to 2147483647"
        );
        assert_eq!(
            parse("// @options: []\nx").unwrap_err(),
            "@options must be a JSON object with supported fields `max_output_tokens` and `timeout_ms`"
        );
        assert_eq!(
            parse("// @options: {\"timeout_ms\": 5}\n  ").unwrap_err(),
            "The @options line must be followed by JavaScript source on subsequent lines"
        );
        assert!(
            parse("// @options: {x\nreturn 1")
                .unwrap_err()
                .starts_with("@options must be valid JSON with supported fields")
        );
    }
}
