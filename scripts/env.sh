# Sourced by the other scripts: puts the installed tools on PATH (cargo
# install's, wherever CARGO_INSTALL_ROOT or CARGO_HOME put them).
export PATH="${LOBBY_TOOLS_DIR:-$HOME/.cache/lobby-tools}/node_modules/.bin:${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin:$HOME/.cargo/bin:$PATH"
# The accessibility checker the end-to-end tests inject (setup.sh test).
export AXE_CORE_JS="${LOBBY_TOOLS_DIR:-$HOME/.cache/lobby-tools}/node_modules/axe-core/axe.min.js"
