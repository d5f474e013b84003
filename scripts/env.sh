# Sourced by the other scripts: puts the installed tools on PATH.
export PATH="${LOBBY_TOOLS_DIR:-$HOME/.cache/lobby-tools}/node_modules/.bin:$HOME/.cargo/bin:$PATH"
