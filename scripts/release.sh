#!/usr/bin/env bash
# `make release`: one tarball with everything a server needs and no Rust
# toolchain: the `master` and `bridge` release binaries, the front end built
# by Trunk with its .br/.gz twins, deploy/ (nginx, systemd) and the docs.
# Install it as docs/deploying.md says.
#
#   bash scripts/release.sh        # -> target/lobby-VERSION-ARCH-linux.tar.gz
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh run
source scripts/env.sh
target="${CARGO_TARGET_DIR:-target}"

cargo fetch --locked
bash scripts/page.sh
cargo build --release --locked -p master -p bridge --bins
"$target/release/precompress" dist >/dev/null

version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)"
name="lobby-$version-$(uname -m)-linux"
stage="$target/release-stage"
rm -rf "$stage"
mkdir -p "$stage/lobby/bin"
install -m 0755 "$target/release/master" "$target/release/bridge" "$stage/lobby/bin/"
cp -R dist "$stage/lobby/dist"
cp -R deploy "$stage/lobby/deploy"
cp README.md SECURITY.md "$stage/lobby/"
cp -R docs "$stage/lobby/docs"
mkdir -p "$stage/lobby/bridge" && cp bridge/README.md "$stage/lobby/bridge/"
# Readable by the services' unprivileged users; owned by root once unpacked.
chmod -R u=rwX,go=rX "$stage/lobby"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$target/$name.tar.gz" lobby
rm -rf "$stage"
echo "$target/$name.tar.gz"
