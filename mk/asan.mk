# make test-asan: the suite with AddressSanitizer and UBSan
.PHONY: test-asan
test-asan:
	@echo "test-asan: not yet"
