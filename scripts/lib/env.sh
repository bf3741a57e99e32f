# Sourced by every script: the project root, the tool cache on PATH, and the toolchain.
#   ROOT   the repository
#   TOOLS  the tool cache ($XCSH_TOOLS_DIR, default ~/.cache/xcsh-session/tools)
# When rustup's stable has no wasm32 std but scripts/wasm-std-fallback built the
# `xcsh-wasm` toolchain, that toolchain is used.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS="${XCSH_TOOLS_DIR:-$HOME/.cache/xcsh-session/tools}"
export PATH="$TOOLS/bin:$TOOLS/node_modules/.bin:$HOME/.cargo/bin:$PATH"
if [ -z "${RUSTUP_TOOLCHAIN:-}" ] && [ -d "$TOOLS/rustc-web" ] \
  && ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  export RUSTUP_TOOLCHAIN=xcsh-wasm
fi
# need TOOL...: fail with a clear message when a tool is missing.
need() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 || { echo "[$(basename "$0")] missing $t: run scripts/setup first" >&2; exit 1; }
  done
}
