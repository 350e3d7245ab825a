#!/bin/sh
# The A2A TCK against the module built from this tree (issue 50): nginx
# and a scripted model from t/lib, the kit's mandatory tests and its
# JSON-RPC/REST equivalence tests, its failures compared with
# t/conformance/a2a-tck.exceptions (a2a-tck.pl).
# The kit is ../shared/a2a-tck or $A2A_TCK; its Python packages are
# Debian's (.ci/run installs them). Run by `make test-conformance`.
cd "$(dirname "$0")/../.." || exit 1
exec prove t/conformance/a2a-tck.pl
