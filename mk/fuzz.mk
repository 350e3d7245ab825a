# make fuzz: libFuzzer targets (clang) for the request JSON, the provider
# stream parser (whole against split), the CSV importer, the prompt
# renderer, the conditions of edges, MCP servers' answers (JSON-RPC,
# batches, event streams), AG-UI's RunAgentInput, what MCP and A2A
# clients send to agent_mcp_server and agent_a2a, Open Responses'
# request, and crons' schedules, times and TZif zones, each run FUZZ_SECONDS from its seeds in t/fuzz/<target>/.
# The module's sources are built with the fuzzer, ASan and UBSan beside a
# small shim of nginx's core (t/fuzz/ngx_fuzz_core.c).  See docs/security.md.

FUZZ_SECONDS ?= 60
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_TARGETS := json llm csv prompt expr mcp agui mcpserver a2a \
                responses cron
FUZZ_CC      := clang
FUZZ_FLAGS   := -g -O1 -fno-omit-frame-pointer \
                -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=undefined
# nginx's HTTP headers are read, never linked: a folder's one header may
# include <ngx_http.h> (llm.h and sql.h read the glue's conf types)
FUZZ_INCS    := -I $(NGX_SRC)/src/core -I $(NGX_SRC)/src/event \
                -I $(NGX_SRC)/src/event/modules -I $(NGX_SRC)/src/os/unix \
                -I $(NGX_SRC)/src/http -I $(NGX_SRC)/src/http/modules \
                -I $(NGX_SRC)/src/http/v2 \
                -I $(NGX_BUILD)/objs $(AGENT_INCS) -I t/fuzz
FUZZ_LIBS    := -lyajl -lsqlite3 -lcurl
FUZZ_SRCS_json   := src/util/ngx_http_agent_json.c src/util/ngx_http_agent_json_read.c
FUZZ_SRCS_llm    := src/util/ngx_http_agent_json.c src/util/ngx_http_agent_json_read.c \
                    src/llm/ngx_http_agent_llm_state.c \
                    src/llm/ngx_http_agent_llm_stream.c \
                    src/llm/ngx_http_agent_provider.c \
                    src/llm/ngx_http_agent_provider_openai.c \
                    src/llm/ngx_http_agent_llm_prefix.c \
                    src/util/ngx_http_agent_grow.c \
                    src/llm/ngx_http_agent_provider_anthropic.c \
                    src/llm/ngx_http_agent_provider_gemini.c \
                    src/engine/ngx_http_agent_message.c
FUZZ_SRCS_csv    := src/util/ngx_http_agent_json.c src/util/ngx_http_agent_json_read.c \
                    src/sql/ngx_http_agent_csv.c \
                    src/util/ngx_http_agent_files.c
FUZZ_SRCS_prompt := src/engine/ngx_http_agent_prompt.c
FUZZ_SRCS_mcp    := src/util/ngx_http_agent_json.c src/util/ngx_http_agent_json_read.c \
                    src/tools/mcp/ngx_http_agent_mcp_rpc.c
FUZZ_SRCS_agui   := src/util/ngx_http_agent_json.c src/util/ngx_http_agent_json_read.c \
                    src/proto/agui/ngx_http_agent_agui_input.c \
                    src/util/ngx_http_agent_id.c \
                    src/engine/ngx_http_agent_graph_desc.c
FUZZ_SRCS_mcpserver := src/util/ngx_http_agent_json.c \
                    src/util/ngx_http_agent_json_read.c \
                    src/util/ngx_http_agent_jsonrpc.c \
                    src/proto/mcp/ngx_http_agent_mcpserver_rpc.c \
                    src/util/ngx_http_agent_id.c \
                    src/engine/ngx_http_agent_graph_desc.c
FUZZ_SRCS_a2a    := src/util/ngx_http_agent_json.c \
                    src/util/ngx_http_agent_json_read.c \
                    src/util/ngx_http_agent_jsonrpc.c \
                    src/proto/a2a/ngx_http_agent_a2a_message.c
FUZZ_SRCS_responses := src/util/ngx_http_agent_json.c \
                    src/util/ngx_http_agent_json_read.c \
                    src/proto/responses/ngx_http_agent_responses_input.c \
                    src/tools/ngx_http_agent_tools.c \
                    src/util/ngx_http_agent_id.c
FUZZ_SRCS_cron   := src/util/ngx_http_agent_cron.c src/util/ngx_http_agent_tz.c
FUZZ_SRCS_expr   := src/util/ngx_http_agent_json.c src/util/ngx_http_agent_json_read.c \
                    src/engine/ngx_http_agent_graph.c \
                    src/engine/ngx_http_agent_graph_wait.c \
                    src/engine/ngx_http_agent_graph_parts.c \
                    src/engine/ngx_http_agent_graph_cache.c \
                    src/engine/ngx_http_agent_template.c \
                    src/engine/ngx_http_agent_prompt.c \
                    src/engine/ngx_http_agent_graph_desc.c \
                    src/engine/ngx_http_agent_graph_state.c \
                    src/engine/ngx_http_agent_message.c \
                    src/engine/ngx_http_agent_expr.c src/engine/ngx_http_agent_expr_eval.c

.PHONY: fuzz fuzz-build fuzz-deps

fuzz-deps:
	@command -v $(FUZZ_CC) >/dev/null && \
	    dpkg -s libclang-rt-14-dev >/dev/null 2>&1 || \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	     apt-get install -y -qq clang libclang-rt-14-dev >/dev/null)

$(FUZZ_DIR)/fuzz_%: t/fuzz/fuzz_%.c t/fuzz/ngx_fuzz_core.c \
                    t/fuzz/fuzz_common.h $(AGENT_FILES) \
                    $(NGX_BUILD)/objs/Makefile
	@mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_INCS) -o $@ t/fuzz/fuzz_$*.c \
	    t/fuzz/ngx_fuzz_core.c $(FUZZ_SRCS_$*) $(FUZZ_LIBS)

fuzz-build: deps fuzz-deps $(NGX_BUILD)/objs/Makefile \
            $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_TARGETS))

# each target: its regressions replayed, then FUZZ_SECONDS of fuzzing from
# a copy of its seeds; a crash fails make and leaves its input in build/
fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	    rm -rf $(FUZZ_DIR)/corpus-$$t; \
	    mkdir -p $(FUZZ_DIR)/corpus-$$t $(FUZZ_DIR)/crash-$$t; \
	    cp t/fuzz/$$t/* $(FUZZ_DIR)/corpus-$$t/ 2>/dev/null; \
	    if [ -d t/fuzz/regressions/$$t ]; then \
	        $(FUZZ_DIR)/fuzz_$$t t/fuzz/regressions/$$t/* \
	            >$(FUZZ_DIR)/replay-$$t.log 2>&1 || \
	        { cat $(FUZZ_DIR)/replay-$$t.log; exit 1; }; \
	    fi; \
	    $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
	        -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	        -artifact_prefix=$(FUZZ_DIR)/crash-$$t/ \
	        $(FUZZ_DIR)/corpus-$$t >$(FUZZ_DIR)/fuzz-$$t.log 2>&1; \
	    rc=$$?; \
	    stats=$$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' \
	             $(FUZZ_DIR)/fuzz-$$t.log | tail -1); \
	    echo "fuzz $$t: $$stats"; \
	    if [ $$rc -ne 0 ]; then \
	        tail -40 $(FUZZ_DIR)/fuzz-$$t.log; exit 1; \
	    fi; \
	done
