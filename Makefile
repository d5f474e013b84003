# The two front doors (see README): `make run` and `make test`.
.PHONY: run test setup bench

# Installs the tools, builds everything, starts the product.
run:
	bash scripts/run.sh

# Installs the tools, then runs every check and test (what CI runs).
test:
	bash scripts/test.sh

setup:
	bash scripts/setup.sh

bench:
	bash scripts/bench.sh
