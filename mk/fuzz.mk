# make fuzz: libFuzzer targets (see docs/security.md)
.PHONY: fuzz
fuzz:
	@echo "fuzz: not yet"
