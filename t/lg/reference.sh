#!/bin/sh
# LangGraph's own Agent Server (langgraphjs dev, @langchain/langgraph-cli
# and -api from npm, installed in build/lgapi) serving t/lg/graph.mjs, on
# 127.0.0.1 only, with nothing that reaches the network, in the foreground:
# the caller forks this script and ends it with SIGTERM (or SIGINT); the
# server's process group and its temporary project directory go with it.
#
#   t/lg/reference.sh PORT MOCK_URL LOGFILE
#
# MOCK_URL: the OpenAI-compatible provider, e.g. http://127.0.0.1:9000/v1.
# LOGFILE: the server's stdout and stderr (appended).
#
# What would leave the machine otherwise, and what stops it:
#   - the CLI's usage analytics (a POST to a supabase.co host on every
#     command, @langchain/langgraph-cli dist/cli/utils/analytics.mjs):
#     LANGGRAPH_CLI_NO_ANALYTICS=1
#   - LangSmith tracing of runs (langsmith, only with an API key and a
#     tracing flag): no LANGSMITH_/LANGCHAIN_ API key or endpoint, every
#     tracing flag "false"
#   - the Studio URL derived through the langsmith client: --studio-url
#   - opening a browser on the Studio: --no-browser, BROWSER=none
#   - a Cloudflare tunnel (downloads cloudflared): only with --tunnel, unused
#   - proxies: none, NO_PROXY for loopback
# The dev server keeps its state in .langgraph_api/ of the project
# directory: a fresh copy of t/lg each start, so every start is empty.

set -eu

if [ $# -ne 3 ]; then
    echo "usage: $0 PORT MOCK_URL LOGFILE" >&2
    exit 2
fi
port=$1
mock_url=$2
log=$3

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lgapi=$root/build/lgapi
cli=$lgapi/node_modules/.bin/langgraphjs

if [ ! -x "$cli" ] || [ ! -d "$lgapi/node_modules/@langchain/openai" ]; then
    echo "$0: $lgapi has no langgraphjs or @langchain/openai; install with:" >&2
    echo "  npm install --prefix $lgapi @langchain/langgraph-cli@1.5.1" \
         "@langchain/langgraph-api@2.0.0 @langchain/langgraph@1.7.3" \
         "@langchain/core@1.4.0 @langchain/openai@1.5.8 --legacy-peer-deps" >&2
    exit 1
fi

# inside build/lgapi, so that graph.mjs finds its packages there
work=$(mktemp -d "$lgapi/ref.XXXXXX")
cp "$here/graph.mjs" "$here/langgraph.json" "$work/"

pid=
cleanup() {
    trap - EXIT INT TERM HUP
    if [ -n "$pid" ]; then
        kill -TERM "-$pid" 2>/dev/null || true
        i=0
        while kill -0 "-$pid" 2>/dev/null && [ $i -lt 50 ]; do
            sleep 0.1; i=$((i + 1))
        done
        kill -KILL "-$pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap 'cleanup; exit 143' TERM
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 129' HUP
trap cleanup EXIT

for v in LANGSMITH_API_KEY LANGCHAIN_API_KEY LANGSMITH_ENDPOINT \
         LANGCHAIN_ENDPOINT LANGSMITH_RUNS_ENDPOINTS LANGSMITH_OTEL_ENABLED \
         LANGSMITH_PROJECT LANGCHAIN_PROJECT OPENAI_API_KEY OPENAI_BASE_URL \
         HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy \
         LANGGRAPH_CONFIG
do
    unset "$v"
done

export MOCK_OPENAI_URL="$mock_url" MOCK_URL="$mock_url"
export LANGGRAPH_CLI_NO_ANALYTICS=1
export LANGSMITH_TRACING=false LANGSMITH_TRACING_V2=false
export LANGCHAIN_TRACING=false LANGCHAIN_TRACING_V2=false
export LANGCHAIN_CALLBACKS_BACKGROUND=false
export DO_NOT_TRACK=1 BROWSER=none NO_UPDATE_NOTIFIER=1
export npm_config_update_notifier=false
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
export NO_COLOR=1

cd "$work"
# its own process group, so that the server's children (tsx, the API
# worker) end with it
setsid "$cli" dev --host 127.0.0.1 --port "$port" --no-browser \
    --no-reload --studio-url "http://127.0.0.1:$port" \
    >>"$log" 2>&1 </dev/null &
pid=$!
wait "$pid" || true
