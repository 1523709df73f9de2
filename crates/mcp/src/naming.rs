//! Tool and server names as pi 1.6 makes them: `mcp__<server>__<tool>` with every character
//! other than letters, digits and `_` replaced by `_`; names over 64 characters, taken by
//! another tool, or shared by two tools of a server, end in a hash of the server and tool
//! names instead.

const MAX_TOOL_NAME_LENGTH: usize = 64;

/// The pi tool name of a server's tool; `taken` says whether a name is already used.
pub fn tool_name(server: &str, tool: &str, taken: impl Fn(&str) -> bool) -> String {
    let name: String = format!("mcp__{server}__{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.len() <= MAX_TOOL_NAME_LENGTH && !taken(&name) {
        return name;
    }
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        format!("{server}\0{tool}").as_bytes(),
    );
    let hash: String = digest.as_ref()[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    // The name is ASCII, so byte positions are character positions.
    let keep = name.len().min(MAX_TOOL_NAME_LENGTH - hash.len() - 1);
    format!("{}_{hash}", &name[..keep])
}

/// The plain names of a server's tools, one per distinct tool name: two alike collide.
pub fn plain_names(server: &str, tools: &[rmcp::model::Tool]) -> Vec<String> {
    let mut seen: Vec<&str> = Vec::new();
    for tool in tools {
        if !seen.contains(&tool.name.as_ref()) {
            seen.push(tool.name.as_ref());
        }
    }
    seen.iter()
        .map(|tool| tool_name(server, tool, |_| false))
        .collect()
}

/// A server's namespace: servers whose names differ only in `-` and `_` share one.
pub fn namespace(server: &str) -> String {
    format!("mcp__{}", server.replace('-', "_"))
}

/// A name against a pattern where `*` stands for any run of characters.
pub fn matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

/// Whether a tool name is an MCP tool: a server tool or one of the resource tools.
pub fn is_mcp_tool(name: &str) -> bool {
    name.starts_with("mcp__")
        || matches!(
            name,
            "list_mcp_resources" | "list_mcp_resource_templates" | "read_mcp_resource"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_pi() {
        assert_eq!(
            tool_name("everything", "get-sum", |_| false),
            "mcp__everything__get_sum"
        );
        assert_eq!(tool_name("my-srv", "a.b", |_| false), "mcp__my_srv__a_b");
        let long = tool_name("server", &"x".repeat(80), |_| false);
        assert_eq!(long.len(), 64);
        assert!(long.starts_with("mcp__server__xxx"));
        let taken = tool_name("s", "t", |n| n == "mcp__s__t");
        assert!(taken.starts_with("mcp__s__t_") && taken.len() == "mcp__s__t_".len() + 8);
        assert_eq!(namespace("dev-radius"), "mcp__dev_radius");
        assert!(is_mcp_tool("read_mcp_resource") && !is_mcp_tool("read"));
    }
}
