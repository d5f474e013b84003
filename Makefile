# The two front doors (see README.md): `make run` and `make test`.
.PHONY: run test check setup bench release fuzz

# Installs the tools, builds everything, starts the product.
run:
	bash scripts/run.sh

# Installs the tools, then runs every check and test (what CI runs).
test:
	bash scripts/test.sh

# The fast loop while changing code: fmt, clippy, tests without e2e.
check:
	bash scripts/check.sh

# Everything `make test` needs (`bash scripts/setup.sh run` for less).
setup:
	bash scripts/setup.sh test

# One tarball for a server without Rust: master, bridge, the precompressed
# front end, deploy/ and the docs (see docs/deploying.md).
release:
	bash scripts/release.sh

bench:
	bash scripts/bench.sh

# Coverage-guided fuzzing of the parsers (SECURITY.md, "Fuzzing"): every
# target for FUZZ_SECONDS (default 60) each. Not part of `make test`, which
# replays the committed corpora through cargo test.
fuzz:
	bash scripts/fuzz.sh
