#!/bin/sh
# The chat page's libraries, from the npm registry at pinned versions: their
# browser builds are copied into conf/html/vendor/ and committed, so that
# the page needs no network and no build step.  Run it again after
# changing a version here; SHA256SUMS records what was copied.
#
#   sh conf/html/vendor.sh

set -eu

dir=$(cd "$(dirname "$0")" && pwd)/vendor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# package@version  file in the package  name in vendor/
set -- \
    marked@18.2.1      lib/marked.umd.js          marked.umd.js \
    dompurify@3.4.18   dist/purify.min.js         purify.min.js \
    vega@6.4.0         build/vega.min.js          vega.min.js \
    vega-lite@6.5.0    build/vega-lite.min.js     vega-lite.min.js \
    vega-embed@7.3.0   build/vega-embed.min.js    vega-embed.min.js \
    vega-interpreter@2.3.2 build/vega-interpreter.js vega-interpreter.js

mkdir -p "$dir"
: >"$dir/VERSIONS"

while [ $# -ge 3 ]; do
    spec=$1 file=$2 name=$3
    shift 3
    (cd "$tmp" && npm pack --silent "$spec" >/dev/null)
    tgz=$(ls "$tmp"/*.tgz)
    mkdir "$tmp/x"
    tar xzf "$tgz" -C "$tmp/x"
    cp "$tmp/x/package/$file" "$dir/$name"
    cp "$tmp/x/package/LICENSE"* "$dir/$name.LICENSE" 2>/dev/null || true
    rm -rf "$tmp/x" "$tgz"
    echo "$spec $file" >>"$dir/VERSIONS"
done

# vega-interpreter ships as an ES module that imports vega-util; the page
# loads classic scripts, and vega's own build exports vega-util's functions
# on the global "vega": the import becomes a read of it, the export a
# property of it (vega.expressionInterpreter)
sed -i -e "s/^import { \(.*\) } from 'vega-util';$/const { \1 } = vega;/" \
    -e 's/^export { expression as expressionInterpreter };$/vega.expressionInterpreter = expression;/' \
    -e '/^\/\/# sourceMappingURL=/d' \
    "$dir/vega-interpreter.js"
printf '(function () {\n%s\n})();\n' "$(cat "$dir/vega-interpreter.js")" \
    >"$dir/vega-interpreter.js.tmp"
mv "$dir/vega-interpreter.js.tmp" "$dir/vega-interpreter.js"
grep -q '^vega.expressionInterpreter = expression;$' "$dir/vega-interpreter.js"

(cd "$dir" && sha256sum *.js >SHA256SUMS)
echo "vendored into $dir:"
cat "$dir/VERSIONS"
