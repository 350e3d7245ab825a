#!/bin/sh
# make test-deb: the package installed into the machine's stock nginx the
# Debian way (apt-get install ./...deb), nginx started on its example site
# with the scripted model, one streamed answer, then the package purged and
# checked gone.  Root only; any failure exits non-zero.

set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
deb=$(ls "$top"/build/libnginx-mod-http-agent_*_*.deb | head -1)
run=$(mktemp -d /tmp/agent-deb-XXXXXX)
port=${TEST_DEB_PORT:-18089}
pkg=libnginx-mod-http-agent
enabled=/etc/nginx/modules-enabled/50-mod-http-agent.conf
so=/usr/lib/nginx/modules/ngx_http_agent_module.so

fail() { echo "test-deb: FAIL: $*" >&2; exit 1; }

cleanup() {
    [ -f "$run/nginx.pid" ] && kill "$(cat "$run/nginx.pid")" 2>/dev/null
    [ -f "$run/mock.port" ] && kill "$(sed -n 2p "$run/mock.port")" 2>/dev/null
    rm -rf "$run"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || fail "run as root (it installs a package)"
[ -f "$deb" ] || fail "no package in build/: make deb"

echo "test-deb: apt-get install $deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >"$run/apt.log" 2>&1 \
    || { cat "$run/apt.log"; fail "apt-get install"; }

[ -f "$so" ] || fail "$so missing"
[ -L "$enabled" ] || fail "$enabled is not a link"
grep -q "load_module modules/ngx_http_agent_module.so;" "$enabled" \
    || fail "$enabled does not load the module"
[ -f /usr/share/nginx-agent/examples/agent-site.conf ] || fail "no example site"
[ -f /usr/share/nginx-agent/prompts/react_system.md ] || fail "no prompts"
[ -x /usr/share/nginx-agent/agent-sqlite-to-pg ] \
    || fail "no agent-sqlite-to-pg"
echo "test-deb: installed, enabled by $enabled"

# the scripted model, and the example site pointed at it and at a temp dir
perl "$top/conf/demo/mock.pl" "$run" "$run/mock.port" >"$run/mock.out" 2>&1
mock=$(sed -n 1p "$run/mock.port")
mkdir -p "$run/logs"    # data/: made by the master for the workers

sed -e "s|/var/lib/nginx-agent|$run/data|" \
    -e "s|listen 127.0.0.1:8080;|listen 127.0.0.1:$port;|" \
    -e "s|url=https://api.openai.com/v1/chat/completions model=gpt-4o-mini|url=http://127.0.0.1:$mock/v1/chat/completions model=demo|" \
    -e "s|^    key_env=OPENAI_API_KEY;|    ;|" \
    /usr/share/nginx-agent/examples/agent-site.conf >"$run/agent-site.conf"

# the stock binary, the Debian way of loading modules, the example site
cat >"$run/nginx.conf" <<CONF
user www-data;
worker_processes 2;
pid $run/nginx.pid;
error_log $run/logs/error.log info;
include /etc/nginx/modules-enabled/*.conf;
events { worker_connections 256; }
http {
    include /etc/nginx/mime.types;
    access_log $run/logs/access.log;
    include $run/agent-site.conf;
}
CONF
chmod 755 "$run"

/usr/sbin/nginx -t -c "$run/nginx.conf" >"$run/t.log" 2>&1 \
    || { cat "$run/t.log"; fail "nginx -t"; }
/usr/sbin/nginx -c "$run/nginx.conf" || fail "nginx did not start"
sleep 0.5

curl -sf "http://127.0.0.1:$port/" | grep -q '<title>nginx agent</title>' \
    || fail "the chat page is not served"
curl -sf "http://127.0.0.1:$port/vendor/vega.min.js" >/dev/null \
    || fail "the page's libraries are not served"
curl -sfI "http://127.0.0.1:$port/" | grep -qi \
    "^content-security-policy: default-src 'self'; img-src 'self' data:" \
    || fail "the page is served without its Content-Security-Policy"

api=http://127.0.0.1:$port/api
sid=$(curl -sf -X POST "$api/sessions/" -H 'Content-Type: application/json' \
      -d '{"title":"deb"}' | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
[ -n "$sid" ] || { cat "$run/logs/error.log"; fail "no session"; }
curl -sf -X POST "$api/sessions/$sid/resources?name=employees.csv" \
     -H 'Content-Type: text/csv' \
     --data-binary @/usr/share/nginx-agent/examples/employees.csv >/dev/null \
     || fail "CSV upload"
curl -sfN -X POST "$api/chat/$sid/message" -H 'Content-Type: application/json' \
     -d '{"message":"What is the average salary by department?"}' \
     >"$run/stream.txt" || fail "the turn"
grep -q '"type":"chunk"' "$run/stream.txt" || fail "no chunk streamed"
grep -q '"type":"end"' "$run/stream.txt" \
    || { cat "$run/stream.txt"; fail "no end event"; }
echo "test-deb: a streamed answer: $(grep -o '"full_response":"[^"]*"' "$run/stream.txt" | head -c 120)"

/usr/sbin/nginx -c "$run/nginx.conf" -s quit
for i in 1 2 3 4 5 6 7 8 9 10; do
    [ -f "$run/nginx.pid" ] || break
    sleep 0.3
done

echo "test-deb: apt-get purge $pkg"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "$pkg" >"$run/apt.log" 2>&1 \
    || { cat "$run/apt.log"; fail "apt-get purge"; }
[ ! -e "$so" ] || fail "$so left behind"
[ ! -e "$enabled" ] && [ ! -L "$enabled" ] || fail "$enabled left behind"
[ ! -e /usr/share/nginx-agent ] || fail "/usr/share/nginx-agent left behind"
dpkg -s "$pkg" >/dev/null 2>&1 && fail "$pkg still installed"
echo "test-deb: removed cleanly"
