#!/bin/sh
# The official MCP conformance suite against agent_mcp_server (make
# test-conformance): Node 22 and the suite from npm into build/conformance,
# then t/conformance/mcp.pl starts nginx and compares the suite's results
# with t/conformance/mcp.exceptions.
set -e
cd "$(dirname "$0")/../.."
exec prove t/conformance/mcp.pl
