#!/bin/bash
# Renames test files by a map and rewrites every reference to them.
#
# Usage: t/rename.sh [MAP]   (MAP defaults to t/RENAMES)
#
# MAP has two columns, "old new" (file names under t/, e.g.
# "55-mcp.t mcp_client.t"); blank lines and lines from "#" are skipped.
# Each t/OLD that exists is moved with git mv (a missing one is skipped,
# so the map can be applied again, or to a tree that lacks some files).
# Then, in every text file git knows but the vendored scripts and the
# map itself, these forms of each pair are rewritten:
#   t/55-mcp.t, 55-mcp.t      -> t/mcp_client.t, mcp_client.t
#   t/55, t/55's, (t/55)      -> t/mcp_client.t, t/mcp_client.t's, ...
# The bare "t/NN" form is taken only when no digit, "-" or ".x" follows
# (so "t/55-mcp.t" and "t/550" are not it); review `git diff` after.

set -euo pipefail

map=$(realpath "${1:-$(git rev-parse --show-toplevel)/t/RENAMES}")
cd "$(git rev-parse --show-toplevel)"
[ -f "$map" ] || { echo "rename.sh: no map $map" >&2; exit 1; }

# the map (and t/RENAMES, the record of old names) is not rewritten
skip=()
case $map in
"$PWD"/*) skip=(":!${map#"$PWD"/}") ;;
esac

pairs=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$map")

while read -r old new; do
    [ -n "$new" ] || { echo "rename.sh: no new name for $old" >&2; exit 1; }
    if [ -e "t/$old" ]; then
        if [ -e "t/$new" ]; then
            echo "rename.sh: t/$new exists, t/$old not moved" >&2
            exit 1
        fi
        git mv "t/$old" "t/$new"
    fi
done <<< "$pairs"

# the map reaches perl through the environment: one "old new" a line
export RENAME_PAIRS="$pairs"

{ git grep -lIz -E '(^|[^0-9A-Za-z_-])(t/)?[0-9]{2,3}(-[a-z0-9-]+\.t|\b)' \
      -- . ':!conf/html/vendor' ':!t/rename.sh' ':!t/RENAMES' "${skip[@]}" \
  || [ $? -eq 1 ]; } \
| xargs -0 -r perl -i -pe '
    BEGIN {
        for (split /\n/, $ENV{RENAME_PAIRS}) {
            my ($old, $new) = split " ";
            my ($num) = $old =~ /^(\d+)-/ or next;
            (my $stem = $old) =~ s/\.t$//;
            push @R, [qr/(?<![0-9A-Za-z_-])\Q$stem\E\.t\b/, $new],
                     [qr{(?<![0-9A-Za-z_/-])t/$num(?![0-9-]|\.\w)}, "t/$new"];
        }
    }
    for my $r (@R) { s/$r->[0]/$r->[1]/g }
'
