//! The page's inline style sheet and script.

pub(super) const CSS: &str = r#":root {
  --bg: #15171c;
  --card: #1d2027;
  --card-alt: #232733;
  --text: #d9dee8;
  --muted: #8a92a3;
  --border: #2f3440;
  --accent: #82aaff;
  --user: #22324a;
  --code-bg: #111318;
  --ins-bg: rgba(80, 200, 120, 0.16);
  --ins: #8fe0a0;
  --del-bg: rgba(240, 90, 90, 0.16);
  --del: #f59a9a;
  --error: #f7768e;
  --warn: #e0af68;
  --summary: #2a2640;
  --thinking: #a7aecb;
}
@media (prefers-color-scheme: light) {
  :root {
    --bg: #f4f5f7;
    --card: #ffffff;
    --card-alt: #f0f2f6;
    --text: #1f2430;
    --muted: #667085;
    --border: #d9dde5;
    --accent: #2d5bd7;
    --user: #e6eefc;
    --code-bg: #f2f3f6;
    --ins-bg: rgba(40, 160, 80, 0.14);
    --ins: #17692f;
    --del-bg: rgba(210, 50, 50, 0.12);
    --del: #a01c1c;
    --error: #c0283f;
    --warn: #9a6700;
    --summary: #efeafc;
    --thinking: #505a73;
  }
}
* { box-sizing: border-box; }
body {
  margin: 0;
  background: var(--bg);
  color: var(--text);
  font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif;
}
main { max-width: 980px; margin: 0 auto; padding: 24px 16px 48px; }
code, pre, .diff, .command {
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  font-size: 13px;
}
pre {
  margin: 8px 0;
  padding: 10px 12px;
  background: var(--code-bg);
  border: 1px solid var(--border);
  border-radius: 6px;
  white-space: pre-wrap;
  word-break: break-word;
  overflow-x: auto;
}
.md :not(pre) > code { background: var(--code-bg); padding: 1px 4px; border-radius: 4px; }
.muted { color: var(--muted); }
.session-header, .totals, .msg, .summary {
  background: var(--card);
  border: 1px solid var(--border);
  border-radius: 10px;
  padding: 14px 18px;
  margin: 14px 0;
}
.session-header h1 { margin: 0 0 10px; font-size: 22px; }
.totals h2 { margin: 0 0 10px; font-size: 17px; }
.info { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
.info dt { color: var(--muted); }
.info dd { margin: 0; word-break: break-all; }
.toolbar { margin-top: 12px; display: flex; gap: 8px; flex-wrap: wrap; }
button {
  font: inherit;
  font-size: 13px;
  color: var(--text);
  background: var(--card-alt);
  border: 1px solid var(--border);
  border-radius: 6px;
  padding: 4px 10px;
  cursor: pointer;
}
button:hover { border-color: var(--accent); }
.msg-head { display: flex; gap: 10px; align-items: baseline; margin-bottom: 6px; font-size: 13px; }
.msg-head time, summary time { margin-left: auto; color: var(--muted); font-size: 12px; }
.role { font-weight: 600; color: var(--accent); }
.label { font-size: 12px; padding: 0 6px; border-radius: 8px; background: var(--card-alt); color: var(--warn); }
.msg.user { background: var(--user); }
.md p { margin: 6px 0; }
.md h1, .md h2, .md h3, .md h4, .md h5, .md h6 { margin: 14px 0 6px; line-height: 1.3; }
.md h1 { font-size: 1.35em; }
.md h2 { font-size: 1.2em; }
.md h3 { font-size: 1.08em; }
.md h4, .md h5, .md h6 { font-size: 1em; }
.md > :first-child { margin-top: 0; }
.md > :last-child { margin-bottom: 0; }
.md ul, .md ol { margin: 6px 0; padding-left: 26px; }
.md li { margin: 2px 0; }
.md li > p { margin: 2px 0; }
.md li > input[type="checkbox"] { margin: 0 6px 0 0; vertical-align: middle; }
.md ul:has(> li > input[type="checkbox"]) { list-style: none; padding-left: 8px; }
.md blockquote { margin: 8px 0; padding: 2px 12px; border-left: 3px solid var(--border); color: var(--muted); }
.md table { border-collapse: collapse; margin: 8px 0; display: block; max-width: 100%; overflow-x: auto; }
.md th, .md td { border: 1px solid var(--border); padding: 4px 10px; }
.md th { background: var(--card-alt); font-weight: 600; }
.md hr { border: none; border-top: 1px solid var(--border); margin: 12px 0; }
.md a { color: var(--accent); }
.md del { color: var(--muted); }
.md .md-image::before { content: "image: "; color: var(--muted); }
.md pre.code[data-lang]::before {
  content: attr(data-lang);
  display: block;
  color: var(--muted);
  font-size: 11px;
  margin-bottom: 4px;
}
.image { display: block; max-width: 100%; max-height: 480px; margin: 8px 0; border-radius: 6px; }
details > summary { cursor: pointer; color: var(--muted); }
details.thinking { margin: 8px 0; }
.thinking-body { white-space: pre-wrap; color: var(--thinking); font-style: italic; padding: 6px 0 0 12px; border-left: 2px solid var(--border); }
.tool {
  margin: 10px 0;
  padding: 10px 12px;
  background: var(--card-alt);
  border: 1px solid var(--border);
  border-left: 3px solid var(--accent);
  border-radius: 6px;
}
.tool.error { border-left-color: var(--error); }
.tool-head { font-size: 13px; }
.tool-name { font-weight: 600; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.tool-path { color: var(--muted); font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.command { color: var(--warn); }
.diff { margin: 8px 0; border: 1px solid var(--border); border-radius: 6px; overflow-x: auto; background: var(--code-bg); }
.diff > div { white-space: pre-wrap; word-break: break-word; padding: 0 10px; }
.diff .del { background: var(--del-bg); color: var(--del); }
.diff .ins { background: var(--ins-bg); color: var(--ins); }
.diff .eq { color: var(--muted); }
.tool-result { margin-top: 6px; }
.tool-result.error pre, .bash.error pre.output { border-color: var(--error); color: var(--error); }
.result-label, .error-text { color: var(--error); font-weight: 600; font-size: 13px; }
.warn { color: var(--warn); }
.status { font-size: 13px; }
.fold details[open] + .preview { display: none; }
.fold summary { font-size: 13px; }
.summary.compaction, .summary.branch-summary { background: var(--summary); }
.summary summary .role { margin-right: 6px; }
.meta { color: var(--muted); font-size: 12px; margin: 6px 4px; }
.usage { display: flex; gap: 12px; color: var(--muted); font-size: 12px; margin-top: 8px; }
.usage .model { margin-left: auto; }
.empty { text-align: center; }
body:not(.show-hidden-messages) .hidden-message { display: none; }
.msg.hidden-message { border-style: dashed; }
.help-hint { font-size: 12px; margin: 8px 0 0; }
pre.ansi a { color: var(--accent); }
#sidebar {
  position: fixed;
  top: 0;
  left: 0;
  bottom: 0;
  width: 300px;
  display: flex;
  flex-direction: column;
  background: var(--bg);
  border-right: 1px solid var(--border);
  font-size: 12px;
}
.tree-container { flex: 1; overflow-y: auto; padding: 8px 0; }
.tree-node {
  display: block;
  padding: 2px 8px;
  color: var(--muted);
  text-decoration: none;
  white-space: nowrap;
  overflow: hidden;
  text-overflow: ellipsis;
}
.tree-node:hover, .tree-node.active { background: var(--card-alt); }
.tree-node.in-path { color: var(--text); }
.tree-role-user { font-weight: 600; }
.tree-status { padding: 6px 10px; border-top: 1px solid var(--border); color: var(--muted); }
body { padding-left: 300px; }
.highlight { outline: 2px solid var(--accent); outline-offset: 2px; }
@media (max-width: 900px) {
  #sidebar { display: none; }
  body { padding-left: 0; }
}
"#;

pub(super) const SCRIPT: &str = r##"(function () {
  "use strict";
  function download(button) {
    var node = document.getElementById("pi-session-data");
    if (!node) return;
    var raw = atob(node.textContent.trim());
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    var link = document.createElement("a");
    link.download = button.getAttribute("data-filename") || "session.jsonl";
    link.href = URL.createObjectURL(new Blob([bytes], { type: "application/x-ndjson" }));
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
  }
  function setAll(open) {
    document.querySelectorAll("details").forEach(function (d) { d.open = open; });
  }
  var showHidden = false;
  function setHidden(visible) {
    showHidden = visible;
    document.body.classList.toggle("show-hidden-messages", visible);
    var button = document.querySelector('[data-action="toggle-hidden-messages"]');
    if (button) {
      button.setAttribute("aria-pressed", String(visible));
      button.textContent = visible ? "Hide hidden messages" : "Show hidden messages";
    }
  }
  // Going to a hidden message (link, sidebar) reveals hidden messages first.
  function reveal(id) {
    var target = id ? document.getElementById(id) : null;
    if (target && target.closest(".hidden-message") && !showHidden) setHidden(true);
    return target;
  }
  // The session tree: each entry's element knows its parent; siblings are in file order.
  var entries = {};
  var children = {};
  document.querySelectorAll("#messages > .entry").forEach(function (el) {
    entries[el.getAttribute("data-id")] = el;
    var parent = el.getAttribute("data-parent");
    (children[parent] = children[parent] || []).push(el.getAttribute("data-id"));
  });
  // Shows the branch through `id`, down to its newest leaf; hides every other entry.
  function showBranch(id) {
    var leaf = id;
    while (children[leaf] && children[leaf].length) leaf = children[leaf][children[leaf].length - 1];
    var path = {};
    for (var at = leaf; at && entries[at]; at = entries[at].getAttribute("data-parent")) path[at] = true;
    Object.keys(entries).forEach(function (key) { entries[key].hidden = !path[key]; });
    document.querySelectorAll("#tree-container .tree-node").forEach(function (node) {
      node.classList.toggle("in-path", Boolean(path[node.getAttribute("data-id")]));
    });
  }
  function goTo(id) {
    var target = id ? document.getElementById(id) : null;
    if (!target) return;
    var holder = target.closest(".entry");
    if (holder && holder.hidden) showBranch(holder.getAttribute("data-id"));
    reveal(id);
    target.scrollIntoView({ block: "center" });
    target.classList.add("highlight");
    setTimeout(function () { target.classList.remove("highlight"); }, 2000);
  }
  function fromHash() {
    goTo(decodeURIComponent(location.hash.slice(1)));
  }
  document.querySelectorAll("#tree-container .tree-node").forEach(function (node) {
    node.addEventListener("click", function (event) {
      if (window.getSelection && String(window.getSelection())) return;
      event.preventDefault();
      document.querySelectorAll("#tree-container .tree-node.active").forEach(function (n) { n.classList.remove("active"); });
      node.classList.add("active");
      showBranch(node.getAttribute("data-id"));
      var target = node.getAttribute("data-target");
      if (history.replaceState) history.replaceState(null, "", "#" + encodeURIComponent(target));
      goTo(target);
    });
  });
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-action]") : null;
    if (!button) return;
    var action = button.getAttribute("data-action");
    if (action === "download") download(button);
    else if (action === "expand") setAll(true);
    else if (action === "collapse") setAll(false);
    else if (action === "toggle-hidden-messages") setHidden(!showHidden);
  });
  function editable(node) {
    if (!node) return false;
    if (/^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(node.tagName)) return true;
    return node.isContentEditable || Boolean(node.closest && node.closest('[contenteditable="true"]'));
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || editable(document.activeElement)) return;
    if (event.key.toLowerCase() === "h") {
      event.preventDefault();
      setHidden(!showHidden);
    }
  });
  window.addEventListener("hashchange", fromHash);
  if (location.hash.length > 1) fromHash();
  document.querySelectorAll("time[datetime]").forEach(function (node) {
    var date = new Date(node.getAttribute("datetime"));
    if (!isNaN(date.getTime())) {
      node.title = node.textContent;
      node.textContent = date.toLocaleString();
    }
  });
})();
"##;
