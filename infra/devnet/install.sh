#!/usr/bin/env bash
# Install the local development chain nodes used by tests and `make run`.
#
#   infra/devnet/install.sh [litecoin] [bitcoin] [anvil] [solc]   (no args = all)
#
# Idempotent: a component that is already installed (and runs) is skipped in
# well under a second.  Everything except the litecoind apt package goes under
# infra/devnet/.nodes/ (override with KERNODECK_DEVNET_NODES).
#
#   litecoin  Debian 12 package `litecoind` (system-wide apt install)
#   bitcoin   Bitcoin Knots from Debian sid, fetched with a PRIVATE apt
#             configuration (the system's apt stays on bookworm), unpacked
#             with dpkg-deb and run through sid's own dynamic loader
#   anvil     npm package @foundry-rs/anvil (ships a native linux binary)
#   solc      npm package solc (solcjs)
#
# Environment:
#   KERNODECK_DEVNET_NODES   install folder (default: infra/devnet/.nodes)
#   KERNODECK_DEBIAN_MIRROR  Debian mirror URI for sid (default: the one the
#                            system's own apt sources use for its release)
#   KERNODECK_DEVNET_FORCE=1 reinstall even if already installed
#   ANVIL_NPM_VERSION, SOLC_NPM_VERSION  npm versions to install
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NODES="${KERNODECK_DEVNET_NODES:-$HERE/.nodes}"
BIN="$NODES/bin"
FORCE="${KERNODECK_DEVNET_FORCE:-0}"
ANVIL_NPM_VERSION="${ANVIL_NPM_VERSION:-1.7.1}"
SOLC_NPM_VERSION="${SOLC_NPM_VERSION:-0.8.37}"
export DEBIAN_FRONTEND=noninteractive

FAILED=()
SUMMARY_FILE="$(mktemp)"
trap 'rm -f "$SUMMARY_FILE"' EXIT

summary() { printf '%s\n' "$*" >>"$SUMMARY_FILE"; }
log() { printf '[install] %s\n' "$*" >&2; }

now_ms() { date +%s%3N; }
elapsed() { # start_ms -> "1.23s"
    local d=$(( $(now_ms) - $1 ))
    printf '%d.%02ds' $((d / 1000)) $(((d % 1000) / 10))
}

source "$HERE/../lib/apt.sh"  # apt_get: in turn with the other installers, waiting for dpkg's lock

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else log "need root for: $*"; return 1
    fi
}

root_apt_get() {  # the machine's apt-get as root, through apt_get when this script is root
    if [ "$(id -u)" -eq 0 ]; then apt_get "$@"; else as_root apt-get "$@"; fi
}

free_port() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
    else
        echo $((20000 + RANDOM % 30000))
    fi
}

# ---------------------------------------------------------------- litecoin --
install_litecoin() {
    local t0; t0=$(now_ms)
    local state="already installed"
    if [ "$FORCE" = 1 ] || [ "$(dpkg-query -W -f='${Status}' litecoind 2>/dev/null)" != "install ok installed" ] \
            || [ ! -x /usr/lib/litecoin/litecoind ]; then
        if ! apt-cache show litecoind >/dev/null 2>&1; then
            log "litecoind not in the apt lists: apt-get update"
            root_apt_get update -qq
        fi
        log "apt-get install litecoind"
        mkdir -p "$NODES/logs"
        if ! root_apt_get install -y -q --no-install-recommends litecoind >"$NODES/logs/apt-litecoind.log" 2>&1; then
            tail -n 30 "$NODES/logs/apt-litecoind.log" >&2
            log "apt-get install litecoind failed (log: $NODES/logs/apt-litecoind.log)"
            return 1
        fi
        state="installed"
    fi
    # The package's /usr/bin/litecoind is a shell wrapper that writes
    # ~/.litecoin; link the real daemon instead.
    mkdir -p "$BIN"
    ln -sfn /usr/lib/litecoin/litecoind "$BIN/litecoind"
    ln -sfn /usr/bin/litecoin-cli "$BIN/litecoin-cli"
    local ver
    ver=$("$BIN/litecoind" -version 2>/dev/null | sed -n 1p) || { log "litecoind does not run"; return 1; }
    summary "litecoin: ok   $ver ($state in $(elapsed "$t0")); binaries: litecoind, litecoin-cli"
}

# ----------------------------------------------------------------- bitcoin --
APT_DIR="$NODES/apt"
BTC_DIR="$NODES/bitcoin"

debian_mirror() {
    # The URI the system's own apt sources use for its release suite
    # (e.g. "bookworm"), from deb822 *.sources or one-line *.list files.
    if [ -n "${KERNODECK_DEBIAN_MIRROR:-}" ]; then echo "$KERNODECK_DEBIAN_MIRROR"; return; fi
    local codename
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [ -n "$codename" ] || codename=bookworm
    local f uri=""
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        uri=$(awk -v cn="$codename" '
            function flush() {
                if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " cn " ") && enabled != "no" && uris != "" && !found) {
                    split(uris, u, " "); print u[1]; found = 1
                }
                types = ""; suites = ""; uris = ""; enabled = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            { key = tolower($1); sub(/:$/, "", key); val = $0; sub(/^[^:]*:[ \t]*/, "", val) }
            key == "types" { types = val } key == "suites" { suites = val }
            key == "uris" { uris = val } key == "enabled" { enabled = tolower(val) }
            END { flush() }' "$f")
        [ -n "$uri" ] && break
    done
    if [ -z "$uri" ]; then
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [ -f "$f" ] || continue
            uri=$(awk -v cn="$codename" '
                $1 == "deb" {
                    i = 2
                    if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                    if ($(i + 1) == cn) { print $i; exit }
                }' "$f")
            [ -n "$uri" ] && break
        done
    fi
    [ -n "$uri" ] || { log "cannot find the Debian mirror in /etc/apt; set KERNODECK_DEBIAN_MIRROR"; return 1; }
    echo "${uri%/}"
}

sid_apt() { # run apt-get/apt-cache with the private sid configuration
    local tool=$1; shift
    local opts=(
        -o "Dir::Etc::sourcelist=$APT_DIR/sources.list"
        -o "Dir::Etc::sourceparts=$APT_DIR/sources.list.d"
        -o "Dir::Etc::preferences=$APT_DIR/preferences"
        -o "Dir::Etc::preferencesparts=$APT_DIR/preferences.d"
        -o "Dir::State=$APT_DIR/state"
        -o "Dir::State::status=$APT_DIR/state/status"
        -o "Dir::Cache=$APT_DIR/cache"
        -o "Dir::Cache::pkgcache=$APT_DIR/cache/pkgcache.bin"
        -o "Dir::Cache::srcpkgcache=$APT_DIR/cache/srcpkgcache.bin"
        -o "APT::Architecture=amd64"
        -o "APT::Architectures::=amd64"
        -o "Acquire::Languages=none"
        -o "Debug::NoLocking=1"
    )
    [ "$(id -u)" -eq 0 ] && opts+=(-o "APT::Sandbox::User=root")
    "$tool" "${opts[@]}" "$@"
}

# Follow Depends/Pre-Depends of $1 in sid, keeping only the shared-library
# packages (lib*, zlib1g, gcc-N-base); prints the package names.
sid_closure() {
    local -A seen=()
    local level=("$@") out=() next p d
    while [ ${#level[@]} -gt 0 ]; do
        next=()
        for p in "${level[@]}"; do
            [ -n "${seen[$p]:-}" ] && continue
            seen[$p]=1; out+=("$p"); next+=("$p")
        done
        [ ${#next[@]} -gt 0 ] || break
        level=()
        for d in $(sid_apt apt-cache show --no-all-versions "${next[@]}" \
                | sed -n 's/^\(Pre-\)\{0,1\}Depends: //p' | tr ',' '\n' \
                | sed 's/|.*//; s/(.*)//; s/:any//; s/[[:space:]]//g'); do
            [[ $d =~ ^(lib|zlib1g|gcc-[0-9]+-base) ]] && level+=("$d")
        done
    done
    printf '%s\n' "${out[@]}"
}

bitcoin_verify() { # start bitcoind in regtest, ask getblockchaininfo, stop
    local tmp port out="" i
    tmp=$(mktemp -d)
    port=$(free_port)
    "$BIN/bitcoind" -regtest -datadir="$tmp" -rpcport="$port" -rpcbind=127.0.0.1 -rpcallowip=127.0.0.1 \
        -rpcuser=verify -rpcpassword=verify -listen=0 -dnsseed=0 -printtoconsole=0 >/dev/null 2>&1 &
    local pid=$!
    for i in $(seq 1 150); do
        if out=$("$BIN/bitcoin-cli" -regtest -datadir="$tmp" -rpcport="$port" -rpcuser=verify -rpcpassword=verify \
                getblockchaininfo 2>/dev/null); then break; fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    "$BIN/bitcoin-cli" -regtest -datadir="$tmp" -rpcport="$port" -rpcuser=verify -rpcpassword=verify stop >/dev/null 2>&1 || true
    wait "$pid" 2>/dev/null || true
    if ! grep -q '"chain": "regtest"' <<<"$out"; then
        log "bitcoind did not answer getblockchaininfo in regtest; debug.log:"
        tail -n 20 "$tmp/regtest/debug.log" >&2 2>/dev/null || true
        rm -rf "$tmp"; return 1
    fi
    rm -rf "$tmp"
}

write_bitcoin_wrappers() { # $1 = loader path relative to root
    local loader=$1 tool
    mkdir -p "$BIN"
    for tool in bitcoind bitcoin-cli bitcoin-tx bitcoin-wallet bitcoin-util; do
        [ -x "$BTC_DIR/root/usr/bin/$tool" ] || continue
        rm -f "$BIN/$tool"
        cat >"$BIN/$tool" <<EOF
#!/bin/sh
# Generated by infra/devnet/install.sh: Debian sid's $tool run through sid's own loader.
root="\$(CDPATH= cd -- "\$(dirname -- "\$0")/../bitcoin/root" && pwd)"
exec "\$root/$loader" --library-path "\$root/usr/lib/x86_64-linux-gnu:\$root/lib/x86_64-linux-gnu" "\$root/usr/bin/$tool" "\$@"
EOF
        chmod 755 "$BIN/$tool"
    done
}

sid_summary() {
    echo "sid: $(head -n1 "$BTC_DIR/INSTALLED") + $(($(wc -l <"$BTC_DIR/INSTALLED") - 1)) runtime libraries (list: ${BTC_DIR#"$HERE/"}/INSTALLED)"
}

install_bitcoin() {
    local t0; t0=$(now_ms)
    if [ "$FORCE" != 1 ] && [ -s "$BTC_DIR/INSTALLED" ] && [ -x "$BIN/bitcoind" ] \
            && "$BIN/bitcoind" -version >/dev/null 2>&1; then
        summary "bitcoin:  ok   $("$BIN/bitcoind" -version | sed -n 1p) (already installed in $(elapsed "$t0")); $(sid_summary)"
        return 0
    fi
    for tool in apt-get apt-cache dpkg-deb; do
        command -v "$tool" >/dev/null || { log "$tool not found (a Debian machine is required)"; return 1; }
    done
    local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    [ -f "$keyring" ] || { log "$keyring missing: apt-get install debian-archive-keyring"; return 1; }
    local mirror; mirror=$(debian_mirror) || return 1
    log "sid from $mirror (private apt config in $APT_DIR)"

    mkdir -p "$APT_DIR/sources.list.d" "$APT_DIR/preferences.d" "$APT_DIR/state/lists/partial" \
        "$APT_DIR/cache/archives/partial"
    : >"$APT_DIR/preferences"
    : >"$APT_DIR/state/status"
    echo "deb [signed-by=$keyring] $mirror sid main" >"$APT_DIR/sources.list"
    if ! sid_apt apt-get update -qq >&2; then
        log "apt-get update of sid failed (if the signature check failed, sid is signed with a key newer"
        log "than this machine's $keyring: update the debian-archive-keyring package)"
        return 1
    fi

    local pkg=""
    for cand in bitcoin-knots bitcoind; do
        if sid_apt apt-cache show --no-all-versions "$cand" >/dev/null 2>&1; then
            pkg=$cand; break
        fi
    done
    [ -n "$pkg" ] || { log "no bitcoin-knots (or bitcoind) package in sid"; return 1; }
    [ "$pkg" = bitcoin-knots ] || log "WARNING: bitcoin-knots not in sid; using '$pkg' instead"

    local pkgs; mapfile -t pkgs < <(sid_closure "$pkg")
    log "downloading from sid: ${pkgs[*]}"
    rm -f "$BTC_DIR/INSTALLED"
    local debs="$APT_DIR/debs"
    rm -rf "$debs"; mkdir -p "$debs"
    (cd "$debs" && sid_apt apt-get download -qq "${pkgs[@]}" >&2) || { log "apt-get download from sid failed"; return 1; }

    local root_new="$BTC_DIR/root.new"
    rm -rf "$root_new"; mkdir -p "$root_new"
    local deb
    for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$root_new"; done
    local loader=""
    for l in usr/lib64/ld-linux-x86-64.so.2 lib64/ld-linux-x86-64.so.2 usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2; do
        if [ -e "$root_new/$l" ]; then loader=$l; break; fi
    done
    [ -n "$loader" ] || { log "sid's libc6 has no ld-linux-x86-64.so.2"; return 1; }
    [ -x "$root_new/usr/bin/bitcoind" ] || { log "$pkg has no usr/bin/bitcoind"; return 1; }
    # Only what the binaries need: drop docs, man pages, init scripts.
    rm -rf "$root_new/usr/share/doc" "$root_new/usr/share/man" "$root_new/usr/share/lintian" \
        "$root_new/etc" "$root_new/usr/lib/systemd" "$root_new/usr/lib/tmpfiles.d" "$root_new/usr/lib/sysusers.d"
    rm -rf "$BTC_DIR/root"; mv "$root_new" "$BTC_DIR/root"
    rm -rf "$debs"
    write_bitcoin_wrappers "$loader"

    local missing
    missing=$("$BTC_DIR/root/$loader" --library-path "$BTC_DIR/root/usr/lib/x86_64-linux-gnu" --list \
        "$BTC_DIR/root/usr/bin/bitcoind" 2>&1 | grep 'not found' || true)
    [ -z "$missing" ] || { log "bitcoind has unresolved libraries: $missing"; return 1; }
    "$BIN/bitcoind" -version >/dev/null || { log "bitcoind does not run through sid's loader"; return 1; }
    bitcoin_verify || return 1
    sid_apt apt-cache show --no-all-versions "${pkgs[@]}" \
        | awk '/^Package:/ {p = $2} /^Version:/ {print p "=" $2}' >"$BTC_DIR/INSTALLED.new"
    mv "$BTC_DIR/INSTALLED.new" "$BTC_DIR/INSTALLED"
    # sid's package lists (~120 MB) are only needed to install: drop them.
    rm -rf "$APT_DIR/state/lists" "$APT_DIR/cache"
    summary "bitcoin:  ok   $("$BIN/bitcoind" -version | sed -n 1p) (installed in $(elapsed "$t0"), regtest getblockchaininfo ok); $(sid_summary)"
}

# ------------------------------------------------------------- anvil, solc --
NPM_DIR="$NODES/npm"

ensure_npm() {
    if ! command -v npm >/dev/null 2>&1; then
        log "npm not found: apt-get install nodejs npm"
        apt-cache show npm >/dev/null 2>&1 || as_root apt-get update -qq
        as_root apt-get install -y -qq --no-install-recommends nodejs npm >&2
    fi
}

npm_installed_version() { # package -> version or ""
    local pj="$NPM_DIR/node_modules/$1/package.json"
    [ -f "$pj" ] || return 0
    sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$pj" | sed -n 1p
}

npm_install() { # pkg version
    mkdir -p "$NPM_DIR"
    [ -f "$NPM_DIR/package.json" ] || echo '{"name": "kernodeck-devnet-nodes", "private": true}' >"$NPM_DIR/package.json"
    # --ignore-scripts: @foundry-rs/anvil's postinstall would only download the
    # binary when the per-platform optional package is missing.
    npm install --prefix "$NPM_DIR" --no-audit --no-fund --ignore-scripts --loglevel=error \
        --save-exact "$1@$2" >&2
}

install_anvil() {
    local t0; t0=$(now_ms)
    local state="already installed"
    local platpkg="@foundry-rs/anvil-linux-amd64"
    case "$(uname -m)" in aarch64|arm64) platpkg="@foundry-rs/anvil-linux-arm64" ;; esac
    if [ "$FORCE" = 1 ] || [ "$(npm_installed_version @foundry-rs/anvil)" != "$ANVIL_NPM_VERSION" ] \
            || [ ! -x "$NPM_DIR/node_modules/$platpkg/bin/anvil" ]; then
        ensure_npm
        npm_install @foundry-rs/anvil "$ANVIL_NPM_VERSION"
        state="installed"
    fi
    local native="$NPM_DIR/node_modules/$platpkg/bin/anvil"
    if [ ! -x "$native" ]; then
        log "$platpkg (the native anvil binary) was not installed by npm; the package would download it at install time"
        return 1
    fi
    mkdir -p "$BIN"
    ln -sfn "../npm/node_modules/$platpkg/bin/anvil" "$BIN/anvil"
    local ver; ver=$("$BIN/anvil" --version 2>/dev/null | sed -n 1p) || { log "anvil does not run"; return 1; }
    summary "anvil:    ok   $ver (npm @foundry-rs/anvil@$ANVIL_NPM_VERSION, native $platpkg; $state in $(elapsed "$t0"))"
}

install_solc() {
    local t0; t0=$(now_ms)
    local state="already installed"
    if [ "$FORCE" = 1 ] || [ "$(npm_installed_version solc)" != "$SOLC_NPM_VERSION" ] \
            || [ ! -e "$NPM_DIR/node_modules/.bin/solcjs" ]; then
        ensure_npm
        npm_install solc "$SOLC_NPM_VERSION"
        state="installed"
    fi
    mkdir -p "$BIN"
    ln -sfn ../npm/node_modules/.bin/solcjs "$BIN/solcjs"
    local ver; ver=$("$BIN/solcjs" --version 2>/dev/null | sed -n 1p) || { log "solcjs does not run"; return 1; }
    summary "solc:     ok   solcjs $ver (npm solc@$SOLC_NPM_VERSION; $state in $(elapsed "$t0"))"
}

# -------------------------------------------------------------------- main --
components=("$@")
[ ${#components[@]} -gt 0 ] || components=(litecoin bitcoin anvil solc)
for c in "${components[@]}"; do
    case "$c" in litecoin|bitcoin|anvil|solc) ;; *)
        echo "usage: $0 [litecoin] [bitcoin] [anvil] [solc]" >&2; exit 2 ;;
    esac
done
mkdir -p "$NODES"
if command -v flock >/dev/null 2>&1; then  # one install at a time per folder
    exec 9>"$NODES/.install.lock"
    flock 9
fi
for c in "${components[@]}"; do
    # Each component in a subshell under set -e: any failing step fails it.
    # (not in an `if`: bash would ignore set -e inside the subshell there)
    set +e; ( set -e; "install_$c" ); rc=$?; set -e
    if [ "$rc" -ne 0 ]; then
        FAILED+=("$c")
        summary "$(printf '%-9s FAILED (see the messages above)' "$c:")"
    fi
done
cat "$SUMMARY_FILE"
if [ ${#FAILED[@]} -gt 0 ]; then
    echo "install.sh: failed: ${FAILED[*]}" >&2
    exit 1
fi
