# make test-asan: the module built with AddressSanitizer and UBSan, loaded
# into Debian's nginx with the sanitizers' runtimes preloaded, and the
# whole suite run against it.  Any report fails the test file that caused
# it (t/lib/AgentTest.pm reads the reports' folder).  See docs/testing.md.

ASAN_BUILD  := $(BUILD)/asan
ASAN_MODULE := $(ASAN_BUILD)/objs/ngx_http_agent_module.so
ASAN_LOGS   := $(CURDIR)/$(BUILD)/asan-logs
ASAN_FLAGS  := -fsanitize=address,undefined -fno-omit-frame-pointer -g -O1
ASAN_LIBS    = $(shell gcc -print-file-name=libasan.so) \
               $(shell gcc -print-file-name=libubsan.so)

.PHONY: test-asan

$(ASAN_BUILD)/objs/Makefile: config $(BUILD)/sources | deps
	rm -rf $(ASAN_BUILD)
	mkdir -p $(BUILD)
	cp -r $(NGX_SRC) $(ASAN_BUILD)
	cd $(ASAN_BUILD) && bash -c '. ./conf_flags && ./configure \
	    "$${NGX_CONF_FLAGS[@]}" \
	    --with-cc-opt="$(CFLAGS_X) $(ASAN_FLAGS)" \
	    --with-ld-opt="-fsanitize=address,undefined" \
	    --add-dynamic-module=$(CURDIR)' > configure.log

$(ASAN_MODULE): $(ASAN_BUILD)/objs/Makefile $(AGENT_FILES)
	$(MAKE) -s -f objs/Makefile -C $(ASAN_BUILD) modules

test-asan: deps $(ASAN_MODULE)
	rm -rf $(ASAN_LOGS)
	mkdir -p $(ASAN_LOGS)
	chmod 1777 $(ASAN_LOGS)
	AGENT_MODULE=$(CURDIR)/$(ASAN_MODULE) \
	AGENT_PRELOAD="$(ASAN_LIBS)" \
	AGENT_SANITIZER_LOGS=$(ASAN_LOGS) \
	AGENT_LOAD_SECONDS=20 \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:log_path=$(ASAN_LOGS)/asan:allocator_may_return_null=1 \
	UBSAN_OPTIONS=print_stacktrace=1:log_path=$(ASAN_LOGS)/ubsan \
	    prove -r t/
