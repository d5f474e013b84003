#!/usr/bin/env bash
# Installs the tools for one purpose, skipping what is already there at the
# right version. Safe to run again.
#
#   bash scripts/setup.sh run    # building and running: wasm target, trunk,
#                                # wasm-bindgen, wasm-opt (make run, make release)
#   bash scripts/setup.sh test   # also the checks: rustfmt, clippy, Chromium,
#                                # chromedriver, CJK fonts, nginx, openssl,
#                                # PostgreSQL, Firefox ESR, geckodriver,
#                                # axe-core, cargo-nextest, Schemathesis
#                                # (make test, CI)
#
# System packages come from apt-get (Debian/Ubuntu, as root). Where apt-get
# is missing or the user is not root, it prints what to install and exits
# with status 2 before installing anything.
#
# Each step prints its wall and CPU time, and a table at the end
# (scripts/steps.sh). On a fresh machine the time is in building Trunk,
# wasm-bindgen-cli and geckodriver; apt-get and the smaller installs run
# beside them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/steps.sh
source scripts/env.sh

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=0.2.130   # must equal the wasm-bindgen version in Cargo.lock
BINARYEN_VERSION=132.0.0
AXE_CORE_VERSION=4.14.1        # the accessibility rules tests/tests/a11y.rs runs in Chromium
GECKODRIVER_VERSION=0.37.1     # drives Firefox ESR in tests/tests/e2e/web_push.rs
SCHEMATHESIS_VERSION=4.32.5    # property-based API tests from /api/openapi.json (scripts/schemathesis.sh)
TOOLS_DIR="${LOBBY_TOOLS_DIR:-$HOME/.cache/lobby-tools}"

log() { printf '[setup] %s\n' "$*" >&2; }

purpose="${1:-test}"
case "$purpose" in
  run | test) ;;
  *)
    echo "usage: bash scripts/setup.sh run|test" >&2
    exit 64
    ;;
esac
steps_begin setup

# --- what is missing: system packages first, so nothing is half-installed --
# Each entry: the Debian package, and how to tell it is there.
apt_missing=()
need_apt() { # PACKAGE CHECK-COMMAND...
  local pkg="$1"
  shift
  if ! "$@" >/dev/null 2>&1; then
    apt_missing+=("$pkg")
  fi
}
dpkg_has() { dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed'; }
cjk_font() { dpkg_has fonts-wqy-zenhei || fc-list 2>/dev/null | grep -qi 'wenquanyi zen hei'; }
nginx_present() { command -v nginx || [ -x /usr/sbin/nginx ]; }
pg_present() { compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; }
nginx_brotli() {
  [ -e /usr/lib/nginx/modules/ngx_http_brotli_static_module.so ] \
    || [ -e "${LOBBY_NGINX_BROTLI_MODULE:-/nonexistent}" ]
}

# npm installs wasm-opt (binaryen) for Trunk.
need_apt npm command -v npm
if [ "$purpose" = test ]; then
  need_apt chromium command -v chromium
  need_apt chromium-driver command -v chromedriver
  # CJK glyphs, so names like "轰炸机人" render in the end-to-end screenshots.
  need_apt fonts-wqy-zenhei cjk_font
  # tests/tests/e2e/deploy.rs: nginx in front of two bridges, with TLS.
  need_apt nginx nginx_present
  need_apt libnginx-mod-http-brotli-static nginx_brotli
  need_apt openssl command -v openssl
  # The store's tests and the deploy test start scratch PostgreSQL clusters.
  need_apt postgresql pg_present
  # scripts/schemathesis.sh: the API run in a network namespace with
  # loopback only (`ip link set lo up`).
  need_apt iproute2 command -v ip
  # tests/tests/e2e/web_push.rs: Web Push end to end in a real Firefox.
  need_apt firefox-esr command -v firefox-esr
fi

missing_rust=()
command -v cargo >/dev/null 2>&1 || missing_rust+=(cargo)
command -v rustup >/dev/null 2>&1 || missing_rust+=(rustup)

if [ ${#apt_missing[@]} -gt 0 ] || [ ${#missing_rust[@]} -gt 0 ]; then
  if [ ${#missing_rust[@]} -eq 0 ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    # Downloads and unpacks while the Rust tools below build; waited for
    # before npm, which it may install.
    apt_install() {
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq "$@" >/dev/null
    }
    step_background apt "installing ${apt_missing[*]} from apt" apt_install "${apt_missing[@]}"
  else
    {
      echo "[setup] 'make $purpose' needs tools this script cannot install here"
      if [ ${#missing_rust[@]} -gt 0 ]; then
        echo "[setup]   Rust through rustup (https://rustup.rs): ${missing_rust[*]} missing"
      fi
      if [ ${#apt_missing[@]} -gt 0 ]; then
        if command -v apt-get >/dev/null 2>&1; then
          echo "[setup]   as root: apt-get install ${apt_missing[*]}"
        else
          echo "[setup]   no apt-get: install the equivalents of these Debian packages:"
          for pkg in "${apt_missing[@]}"; do
            case "$pkg" in
              npm) echo "[setup]     npm (Node.js' package manager; it installs wasm-opt)" ;;
              chromium) echo "[setup]     chromium (set CHROMIUM=/path/to/chromium if not /usr/bin/chromium)" ;;
              chromium-driver) echo "[setup]     chromedriver of the same version, on PATH (or CHROMEDRIVER=/path)" ;;
              fonts-wqy-zenhei) echo "[setup]     a CJK font (WenQuanYi Zen Hei), for the screenshots" ;;
              nginx) echo "[setup]     nginx with the ssl, http_v2 and gzip_static modules, on PATH" ;;
              libnginx-mod-http-brotli-static) echo "[setup]     nginx's brotli_static module (ngx_brotli), LOBBY_NGINX_BROTLI_MODULE=/path/to/ngx_http_brotli_static_module.so" ;;
              openssl) echo "[setup]     openssl (the command line tool)" ;;
              iproute2) echo "[setup]     iproute2 (the ip command, for the API tests' network namespace)" ;;
              firefox-esr) echo "[setup]     Firefox ESR (set FIREFOX=/path/to/firefox if not /usr/bin/firefox-esr)" ;;
            esac
          done
        fi
      fi
      echo "[setup] then run it again; the rest (Rust tools) it installs itself"
    } >&2
    exit 2
  fi
fi

# --- Rust tools (cargo install, npm) ----------------------------------------
# Built once per machine and never measured, so built for a short build, not
# for speed. Each tool's own [profile.release] asks for the opposite (Trunk's
# has lto = "fat" and codegen-units = 1), and the environment overrides it
# (cargo's config wins over a manifest's profile): no link-time optimisation
# at all ("off"; false would still run thin LTO within each crate), many
# codegen units, no debug info, and no optimisation (opt-level 0): what the
# tools do here takes them moments either way. Trunk runs cargo,
# wasm-bindgen and wasm-opt, and hashes and copies a few files; geckodriver
# relays WebDriver commands; wasm-bindgen-cli rewrites each .wasm the builds
# make (the largest, a component test's 17 MB, in 2.7 CPU s instead of 0.9
# at opt-level 1, while its own build takes 86 CPU s instead of 183). Each
# builds in a temporary directory of its own, never the project's target
# dir, so they build at once. docs/performance.md ("A fresh machine") has
# each tool's CPU seconds with these settings and with the tools' own.
export CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
  CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_DEBUG=0 \
  CARGO_PROFILE_RELEASE_INCREMENTAL=false
unset CARGO_TARGET_DIR

step "rustup: the wasm32 target, and for tests rustfmt and clippy"
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
if [ "$purpose" = test ]; then
  for comp in rustfmt clippy; do
    if ! rustup component list --installed | grep -q "^$comp"; then
      rustup component add "$comp"
    fi
  done
fi

# Both without their default TLS features (rustls, and ring's C build):
# Trunk.toml says `offline`, so Trunk downloads nothing, and the test runner
# speaks plain HTTP to a local chromedriver. Trunk's update check goes too.
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  # Without --locked: its lockfile pins a crate the registry here lacks.
  step_background wasm-bindgen "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (cargo install, unoptimized)" \
    cargo install wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION" --force --no-default-features
fi

# Drives Firefox for the Web Push test (from the crate registry, like trunk).
if [ "$purpose" = test ] && [ "$(geckodriver --version 2>/dev/null | head -n 1 | cut -d' ' -f2)" != "$GECKODRIVER_VERSION" ]; then
  step_background geckodriver "installing geckodriver $GECKODRIVER_VERSION (cargo install, unoptimized)" \
    cargo install geckodriver --version "=$GECKODRIVER_VERSION" --locked
fi

if [ "$(trunk --version 2>/dev/null || true)" != "trunk $TRUNK_VERSION" ]; then
  step "installing trunk $TRUNK_VERSION (cargo install, unoptimized; the longest step on a fresh machine)"
  cargo install trunk --version "=$TRUNK_VERSION" --locked --no-default-features
fi

# Runs the tests (scripts/test.sh, .config/nextest.toml); machines made for
# Rust often have it already.
if [ "$purpose" = test ] && ! cargo nextest --version >/dev/null 2>&1; then
  step "installing cargo-nextest (cargo install)"
  cargo install cargo-nextest --locked
fi

if [ -n "${_steps_job_pids[apt]:-}" ]; then
  step_wait apt
fi
step "npm: wasm-opt, and for tests axe-core"
if [ ! -x "$TOOLS_DIR/node_modules/.bin/wasm-opt" ] \
  || ! "$TOOLS_DIR/node_modules/.bin/wasm-opt" --version | grep -q "version ${BINARYEN_VERSION%%.*}"; then
  log "installing wasm-opt from npm binaryen@$BINARYEN_VERSION"
  mkdir -p "$TOOLS_DIR"
  npm install --silent --prefix "$TOOLS_DIR" "binaryen@$BINARYEN_VERSION"
fi
if [ "$purpose" = test ]; then
  axe_installed() {
    node -p 'require(process.argv[1]).version' "$TOOLS_DIR/node_modules/axe-core/package.json" 2>/dev/null
  }
  if [ "$(axe_installed || true)" != "$AXE_CORE_VERSION" ]; then
    log "installing axe-core $AXE_CORE_VERSION from npm (accessibility checks)"
    mkdir -p "$TOOLS_DIR"
    npm install --silent --save-exact --prefix "$TOOLS_DIR" "axe-core@$AXE_CORE_VERSION"
  fi
fi
# Schemathesis reads the bridge's OpenAPI document and tests the API as an
# integrator's tools would (scripts/schemathesis.sh): PyPI, in a venv of
# its own under the tools directory.
if [ "$purpose" = test ]; then
  step "pip: schemathesis $SCHEMATHESIS_VERSION (a venv in the tools directory)"
  venv="$TOOLS_DIR/schemathesis"
  if [ "$("$venv/bin/st" --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -n 1)" != "$SCHEMATHESIS_VERSION" ]; then
    log "installing schemathesis $SCHEMATHESIS_VERSION into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
  fi
fi
for job in wasm-bindgen geckodriver; do
  if [ -n "${_steps_job_pids[$job]:-}" ]; then
    step_wait "$job"
  fi
done
step "checking the tools' versions"
trunk --version
wasm-bindgen --version
log "tools for '$purpose' ready (wasm-opt in $TOOLS_DIR/node_modules/.bin)"
