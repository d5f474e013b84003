#!/usr/bin/env bash
# Builds the front end's two bundles into dist/ with Trunk (release):
# - the player's: index.html, every page but /admin (dist/);
# - the admin's: admin.html, every page with /admin (dist/admin/, served at
#   /admin), so players never download the admin's test servers and webhooks.
# The second build shares the first's compiled library and dependencies
# (same profile, same features): only its binary is linked and optimized.
# In this order: each Trunk build empties its own dist directory first.
# Extra arguments go to both builds.
set -euo pipefail
cd "$(dirname "$0")/.."
trunk build --release "$@"
trunk build admin.html --release --dist dist/admin --public-url /admin/ "$@"
