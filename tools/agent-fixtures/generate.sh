#!/usr/bin/env bash
# Writes genuine session files of three coding agents, each run offline against server.cjs on
# 127.0.0.1, into a fake home (HOME=$FAKE_HOME, project $FAKE_HOME/demo-project), and the
# server's log of every request beside them. Run by hand, not by CI:
#
#   npm install --prefix /tmp/agents @anthropic-ai/claude-code @openai/codex @mariozechner/pi-coding-agent
#   (cd /tmp/agents/node_modules/@anthropic-ai/claude-code && node install.cjs)
#   AGENTS=/tmp/agents FAKE_HOME=/home/dev tools/agent-fixtures/generate.sh [claude|codex|pi]...
#
# Scenarios (server.cjs): a tool loop with two parallel calls, the same session continued, a
# failure the agent retries, an answer cut at the token limit, a failure no retry mends.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
AGENTS="${AGENTS:?the folder the agents were installed into}"
FAKE_HOME="${FAKE_HOME:-/home/dev}"
project="$FAKE_HOME/demo-project"
mkdir -p "$project"
[ -f "$project/README.md" ] || printf '# Demo project\n\nA tiny project the agents look at.\n' > "$project/README.md"
[ -f "$project/main.py" ] || printf 'print("hello")\n' > "$project/main.py"

serve() { # $1: log file; sets PORT and SERVER_PID
  FAKE_LOG="$1" FAKE_PROJECT="$project" node "$here/server.cjs" > "$1.port" &
  SERVER_PID=$!
  for _ in $(seq 50); do [ -s "$1.port" ] && break; sleep 0.1; done
  PORT="$(cat "$1.port")"; rm -f "$1.port"
}

clean_env() { env -i PATH="$PATH" HOME="$FAKE_HOME" TERM=dumb LANG=C.UTF-8 USER=dev SHELL=/bin/bash "$@"; }

run_claude() {
  serve "$FAKE_HOME/claude-server-log.jsonl"
  local claude="$AGENTS/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
  local e=(ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_API_KEY=sk-ant-fake-key CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1)
  cd "$project"
  clean_env "${e[@]}" "$claude" -p --model claude-sonnet-4-5 "SCENARIO tools: what is in this project? Look at the files." || true
  clean_env "${e[@]}" "$claude" -p --continue --model claude-sonnet-4-5 "Thanks. Anything else to add?" || true
  clean_env "${e[@]}" "$claude" -p --model claude-sonnet-4-5 "SCENARIO retry: say hello." || true
  clean_env "${e[@]}" "$claude" -p --model claude-sonnet-4-5 "SCENARIO cut: explain the project at length." || true
  clean_env "${e[@]}" "$claude" -p --model claude-sonnet-4-5 "SCENARIO fail: summarise everything." || true
  kill "$SERVER_PID"
}

run_codex() {
  serve "$FAKE_HOME/codex-server-log.jsonl"
  mkdir -p "$FAKE_HOME/.codex"
  cat > "$FAKE_HOME/.codex/config.toml" <<EOF
model = "gpt-5-codex"
model_provider = "fake"
[model_providers.fake]
name = "Fake"
base_url = "http://127.0.0.1:$PORT/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
request_max_retries = 3
stream_max_retries = 1
EOF
  local codex=(node "$AGENTS/node_modules/@openai/codex/bin/codex.js")
  local e=(FAKE_API_KEY=sk-fake-key)
  cd "$project"
  clean_env "${e[@]}" "${codex[@]}" exec --skip-git-repo-check -s danger-full-access "SCENARIO tools: what is in this project? Look at the files." < /dev/null || true
  clean_env "${e[@]}" "${codex[@]}" exec --skip-git-repo-check -s danger-full-access resume --last "Thanks. Anything else to add?" < /dev/null || true
  clean_env "${e[@]}" "${codex[@]}" exec --skip-git-repo-check -s danger-full-access "SCENARIO retry: say hello." < /dev/null || true
  clean_env "${e[@]}" "${codex[@]}" exec --skip-git-repo-check -s danger-full-access "SCENARIO cut: explain the project at length." < /dev/null || true
  clean_env "${e[@]}" "${codex[@]}" exec --skip-git-repo-check -s danger-full-access "SCENARIO fail: summarise everything." < /dev/null || true
  kill "$SERVER_PID"
}

run_pi() {
  serve "$FAKE_HOME/pi-server-log.jsonl"
  mkdir -p "$FAKE_HOME/.pi/agent"
  cat > "$FAKE_HOME/.pi/agent/models.json" <<EOF
{ "providers": { "fake": { "baseUrl": "http://127.0.0.1:$PORT/v1", "api": "openai-completions", "apiKey": "sk-fake-key",
  "compat": { "supportsDeveloperRole": false, "supportsReasoningEffort": false },
  "models": [ { "id": "fake-coder", "name": "Fake Coder", "contextWindow": 128000, "maxTokens": 4096 } ] } } }
EOF
  local pi=(node "$AGENTS/node_modules/@mariozechner/pi-coding-agent/dist/cli.js")
  cd "$project"
  clean_env "${pi[@]}" -p --provider fake --model fake-coder "SCENARIO tools: what is in this project? Look at the files." < /dev/null || true
  clean_env "${pi[@]}" -p -c --provider fake --model fake-coder "Thanks. Anything else to add?" < /dev/null || true
  clean_env "${pi[@]}" -p --provider fake --model fake-coder "SCENARIO retry: say hello." < /dev/null || true
  clean_env "${pi[@]}" -p --provider fake --model fake-coder "SCENARIO cut: explain the project at length." < /dev/null || true
  clean_env "${pi[@]}" -p --provider fake --model fake-coder "SCENARIO fail: summarise everything." < /dev/null || true
  kill "$SERVER_PID"
}

for agent in "${@:-claude codex pi}"; do for a in $agent; do "run_$a"; done; done
