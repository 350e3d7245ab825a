# Build, test and demo for ngx_http_agent_module.

NGX_SRC   ?= /usr/share/nginx/src
BUILD     := build
NGX_BUILD := $(BUILD)/nginx
MODULE    := $(NGX_BUILD)/objs/ngx_http_agent_module.so
PKGS      := nginx nginx-dev libcurl4-openssl-dev libsqlite3-dev \
             libyajl-dev libpcre2-dev zlib1g-dev libssl-dev sqlite3 curl \
             libpq-dev libdbd-sqlite3-perl libdbd-pg-perl tzdata python3
CFLAGS_X  := -Wall -Wextra -Wno-unused-parameter -Werror
# the module's sources, one folder per layer (config lists them the same way)
AGENT_DIRS  := $(sort $(dir $(wildcard src/*/*.c src/*/*/*.c)))
AGENT_FILES := $(wildcard src/*.[ch] src/*/*.[ch] src/*/*/*.[ch])
AGENT_INCS  := -I src $(patsubst %/,-I %,$(AGENT_DIRS))

.PHONY: all deps test test-pg test-stress demo demo-stop bench \
        bench-foundation bench-instructions bench-phases bench-scale \
        bench-semantic clean deb \
        test-deb lint test-conformance

all: deps $(MODULE)

# config lists the sources by folder: a file added or removed configures
# nginx again (the list is rewritten only when it changes; a file of its
# own per make, for two makes at once: make test beside make test-pg)
$(BUILD)/sources: FORCE
	@mkdir -p $(BUILD)
	@n=$@.$$$$; echo $(sort $(wildcard src/*/*.[ch] src/*/*/*.[ch])) > $$n; \
	    cmp -s $$n $@ && rm $$n || mv $$n $@

FORCE:

deps:
	@missing=""; for p in $(PKGS); do \
	    dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	        apt-get install -y -qq $$missing >/dev/null; \
	fi

$(NGX_BUILD)/objs/Makefile: config $(BUILD)/sources | deps
	rm -rf $(NGX_BUILD)
	mkdir -p $(BUILD)
	cp -r $(NGX_SRC) $(NGX_BUILD)
	cd $(NGX_BUILD) && bash -c '. ./conf_flags && ./configure \
	    "$${NGX_CONF_FLAGS[@]}" --with-cc-opt="$(CFLAGS_X)" \
	    --add-dynamic-module=$(CURDIR)' > configure.log

$(MODULE): $(NGX_BUILD)/objs/Makefile $(AGENT_FILES)
	$(MAKE) -s -f objs/Makefile -C $(NGX_BUILD) modules

# the house's rules: layers, circles, file sizes, exports (.ci/style)
lint: all
	.ci/style $(NGX_BUILD)/objs

test: deps all
	prove -r t/

# the protocols' own conformance kits, each a t/conformance/*.sh that
# starts nginx with this build and compares the kit's results with its
# list of exceptions; every one runs, the target fails if one did
test-conformance: deps all
	@rc=0; for s in t/conformance/*.sh; do \
	    echo "$$s"; bash $$s || rc=1; \
	done; exit $$rc

# the suite on a busy host: one busy loop per core while it runs
test-stress: deps all
	t/stress/run prove -r t/

# the same suite with the store on PostgreSQL: a throwaway cluster
test-pg: deps all
	t/pg/run prove -r t/

demo: deps all
	sh conf/demo.sh

demo-stop:
	sh conf/demo.sh stop

clean:
	rm -rf $(BUILD)

# the Debian package (debian/, dh_nginx from nginx-dev), into build/
deb: all
	@for p in debhelper dpkg-dev; do dpkg -s $$p >/dev/null 2>&1 || \
	    missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    $$missing >/dev/null; fi
	dpkg-buildpackage -b -us -uc -d > $(BUILD)/deb.log 2>&1 || \
	    (tail -40 $(BUILD)/deb.log; exit 1)
	mv ../libnginx-mod-http-agent_* ../libnginx-mod-http-agent-dbgsym_* \
	    $(BUILD)/ 2>/dev/null || true
	@ls $(BUILD)/libnginx-mod-http-agent_*.deb
	@dpkg-deb -I $(BUILD)/libnginx-mod-http-agent_*.deb | \
	    grep -E 'Package|Version|Depends'

# installs the package into the stock nginx, one answer, removes it (root)
test-deb:
	sh t/deb/test-deb.sh

bench-foundation: all
	perl t/bench/foundation.pl

# instructions per LangGraph API turn (valgrind): a before/after that a
# busy host does not blur; MODULES="a.so b.so" compares builds; under
# t/pg/run on PostgreSQL, with its statements per turn and their server time
# when the server loads pg_stat_statements (AGENT_PG_OPTIONS=...)
PG_STATEMENTS := -c shared_preload_libraries=pg_stat_statements
bench-instructions: all
	bash t/bench/instructions.sh $(MODULES)

# where a turn's time goes: each phase's median, in us (no valgrind)
bench-phases: all
	BENCH_PHASES=1 bash t/bench/instructions.sh $(MODULES)

# the peer needs Node and npm; better-sqlite3 builds against Node's headers
bench: deps all
	@command -v node >/dev/null && [ -d /usr/include/node ] || \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	     apt-get install -y -qq nodejs npm libnode-dev build-essential \
	     python3 >/dev/null)
	perl t/bench/run.pl
	BENCH_PHASES=1 bash t/bench/instructions.sh
	BENCH_PHASES=1 BENCH_LONG=1 bash t/bench/instructions.sh
	if ls /usr/lib/postgresql/*/bin/initdb > /dev/null 2>&1; then \
	    AGENT_PG_OPTIONS="$(PG_STATEMENTS)" t/pg/run \
	        env BENCH_PHASES=1 bash t/bench/instructions.sh; fi

# semantic search over BENCH_SEMANTIC items (default "10000 100000") of one
# owner, SQLite and PostgreSQL: not in make bench (about 3 minutes)
bench-semantic: deps all
	BENCH_ONLY=semantic BENCH_SERVERS=nginx perl t/bench/run.pl

# memory per open stream: stock nginx's floor, the chat API and the
# LangGraph API's runs/stream at each of BENCH_STREAMS (default 1000 10000)
bench-scale: all
	perl t/bench/scale.pl

# fuzzing and sanitizer builds live in their own fragments
include mk/fuzz.mk
include mk/asan.mk
