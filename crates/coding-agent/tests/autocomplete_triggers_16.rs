//! Extension autocomplete providers declare trigger characters (pi 1.3: "Natural extension
//! autocomplete triggers"): with `triggerCharacters: ["$"]`, typing `$` at a token's start
//! opens the provider's suggestions without Tab, as `@` and `#` do; a character no
//! provider declared opens nothing. Ours and pi 1.6.0 (`PI_TS16`) side by side in tmux.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::MockServer;
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::pis;

/// Offers `$PI_VAR_ONE` and `$PI_VAR_TWO` after `$`; `%` is not declared.
const EXTENSION: &str = r#"
export default function (pi) {
  pi.on("session_start", (_event, ctx) => {
    ctx.ui.addAutocompleteProvider((current) => ({
      triggerCharacters: ["$"],
      async getSuggestions(lines, line, col, options) {
        const before = (lines[line] ?? "").slice(0, col);
        const match = before.match(/(?:^|[ \t])([$%])([A-Z_]*)$/);
        if (!match) return current.getSuggestions(lines, line, col, options);
        return {
          prefix: `${match[1]}${match[2]}`,
          items: [
            { value: `${match[1]}PI_VAR_ONE`, label: `${match[1]}PI_VAR_ONE`, description: "first variable" },
            { value: `${match[1]}PI_VAR_TWO`, label: `${match[1]}PI_VAR_TWO`, description: "second variable" },
          ],
        };
      },
      applyCompletion(lines, line, col, item, prefix) {
        return current.applyCompletion(lines, line, col, item, prefix);
      },
    }));
    ctx.ui.setStatus("vars", "vars-ready");
  });
}
"#;

#[test]
fn declared_trigger_characters_open_extension_suggestions_as_pi_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let host = support::ext_host::host_dir();
    for (name, wrapper) in pis() {
        // 1.6.0 keeps the regular (scrollback) screen with this setting, as ours has.
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let extension = env.work.join("vars.ts");
        std::fs::write(&extension, EXTENSION).unwrap();
        let extension = extension.display().to_string();
        let pi = wrapper
            .as_ref()
            .map_or(env!("CARGO_BIN_EXE_pi").to_owned(), |w| {
                w.display().to_string()
            });
        let host_dir = host.as_ref().map(|h| h.display().to_string());
        let mut vars = vec![("PI_OFFLINE", "1")];
        if wrapper.is_none()
            && let Some(dir) = host_dir.as_deref()
        {
            vars.push(("PI_EXTENSION_HOST_DIR", dir));
        }
        let tmux = Tmux::start_program(&env, &pi, &vars, &["-e", &extension], 120, 30);
        // The provider is in place once the extension's status shows.
        tmux.wait_for("vars-ready");
        // Not declared: `%` opens nothing by itself.
        tmux.type_text("cost %");
        tmux.type_text(" and $");
        let screen = tmux.wait_for("$PI_VAR_TWO");
        assert!(screen.contains("second variable"), "{name}: {screen}");
        assert!(!screen.contains("%PI_VAR_ONE"), "{name}: {screen}");
        tmux.keys(&["Enter"]);
        let screen = tmux.wait_for("and $PI_VAR_ONE");
        assert!(
            screen.contains("cost % and $PI_VAR_ONE"),
            "{name}: {screen}"
        );
        tmux.keys(&["C-c"]);
        tmux.keys(&["C-d"]);
        tmux.wait_exit(Duration::from_secs(20));
    }
}
