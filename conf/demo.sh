#!/bin/sh
# make demo: nginx with the module on loopback, a demo CSV, and one agent
# answer streamed with curl.  A scripted model stands in for the provider
# unless OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY is set.  "make demo-stop" stops it all.

set -e

top=$(cd "$(dirname "$0")/.." && pwd)
run=$top/build/demo
port=${DEMO_PORT:-8088}
module=$top/build/nginx/objs/ngx_http_agent_module.so

stop() {
    [ -f "$run/nginx.pid" ] && kill "$(cat "$run/nginx.pid")" 2>/dev/null || true
    [ -f "$run/mock.port" ] && kill "$(sed -n 2p "$run/mock.port")" 2>/dev/null || true
    rm -f "$run/nginx.pid" "$run/mock.port"
}

if [ "$1" = stop ]; then
    stop
    echo "demo stopped"
    exit 0
fi

stop
sleep 0.3
rm -rf "$run"
mkdir -p "$run/logs" "$run/tmp"

if [ -n "$OPENAI_API_KEY" ]; then
    model="agent_model gpt provider=openai url=https://api.openai.com/v1/chat/completions model=${OPENAI_MODEL:-gpt-4o-mini} key_env=OPENAI_API_KEY;"
    envline="env OPENAI_API_KEY;"
    echo "model: ${OPENAI_MODEL:-gpt-4o-mini} at api.openai.com"
elif [ -n "$ANTHROPIC_API_KEY" ]; then
    model="agent_model claude provider=anthropic model=${ANTHROPIC_MODEL:-claude-sonnet-4-5} key_env=ANTHROPIC_API_KEY;"
    envline="env ANTHROPIC_API_KEY;"
    echo "model: ${ANTHROPIC_MODEL:-claude-sonnet-4-5} at api.anthropic.com"
elif [ -n "$GEMINI_API_KEY" ]; then
    model="agent_model gemini provider=gemini model=${GEMINI_MODEL:-gemini-2.5-flash} key_env=GEMINI_API_KEY;"
    envline="env GEMINI_API_KEY;"
    echo "model: ${GEMINI_MODEL:-gemini-2.5-flash} at generativelanguage.googleapis.com"
else
    perl "$top/conf/demo/mock.pl" "$run" "$run/mock.port" \
        >"$run/logs/mock.out" 2>&1 </dev/null
    model="agent_model demo provider=openai url=http://127.0.0.1:$(sed -n 1p "$run/mock.port")/v1/chat/completions model=demo-model;"
    envline=""
    echo "model: the scripted demo model (set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY for a real one)"
fi

user=""
[ "$(id -u)" = 0 ] && user="user www-data www-data;"

sed -e "s|%%MODULE%%|$module|" -e "s|%%PORT%%|$port|" \
    -e "s|%%RUN%%|$run|g" -e "s|%%PROMPTS%%|$top/prompts|" \
    -e "s|%%MODEL%%|$model|" -e "s|%%ENV%%|$envline|" \
    -e "s|%%USER%%|$user|" -e "s|%%HTML%%|$top/conf/html|g" \
    "$top/conf/nginx.conf" > "$run/nginx.conf"

nginx -p "$run/" -c "$run/nginx.conf" -e "$run/logs/error.log" \
    >"$run/logs/nginx.out" 2>&1 </dev/null
sleep 0.5

api=http://127.0.0.1:$port/api
echo
echo "== the chat page: http://127.0.0.1:$port/ (open it in a browser)"
echo
echo "== POST $api/sessions/"
sid=$(curl -sf -X POST "$api/sessions/" -H 'Content-Type: application/json' \
      -d '{"title": "demo"}' | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
echo "session $sid"

echo
echo "== POST $api/sessions/$sid/resources?name=employees.csv"
curl -sf -X POST "$api/sessions/$sid/resources?name=employees.csv" \
     -H 'Content-Type: text/csv' --data-binary "@$top/conf/demo/employees.csv"

echo
echo "== POST $api/chat/$sid/message (the event stream)"
curl -sN -X POST "$api/chat/$sid/message" -H 'Content-Type: application/json' \
     -d '{"message": "What is the average salary by department?"}'

echo
echo "== the chat page: http://127.0.0.1:$port/"
echo "== nginx is still running on 127.0.0.1:$port (logs in $run/logs);"
echo "   try: curl -s $api/sessions/$sid/messages"
echo "   stop it with: make demo-stop"
