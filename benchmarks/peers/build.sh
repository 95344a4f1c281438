#!/usr/bin/env bash
# Builds the ecosystem benchmark's non-C++ peers offline (benchmarks/README.md, "Non-C++
# peers"): rust/ with Debian's cargo and Debian's crate registry, go/ with Debian's Go and the
# standard library only. benchmarks/run.sh calls it; it can also run alone.
#
# usage: benchmarks/peers/build.sh [OUT_DIR]      (default build/bench-peers)
#   OUT_DIR/bin/rust_peers, OUT_DIR/bin/go_peers   the binaries (Google Benchmark's flags)
#   OUT_DIR/versions.txt                           toolchain and crate versions, for the report
# A missing toolchain or crate is not an error: that binary is not built, a "skipping" line says
# why, and run.sh leaves its rows out. A compile error is an error (exit status 1).
# env CARGO, RUSTC, GO pick other toolchains (default: Debian's in /usr/bin, then PATH's).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/bench-peers}
mkdir -p "$out/bin"
out=$(cd "$out" && pwd)
# A binary left from an earlier build must not run if its toolchain is gone now.
rm -f "$out/bin/rust_peers" "$out/bin/go_peers" "$out/versions.txt"

# Debian's tools first: they are what scripts/install-deps.sh --bench-peers installs and what
# Debian's crate registry is built for; a rustup toolchain earlier on PATH is not.
# tool NAME OVERRIDE: the path of the tool to use, or nothing when there is none.
tool() {
    local name=$1 override=$2
    if [[ -n $override ]]; then command -v "$override" || true
    elif [[ -x /usr/bin/$name ]]; then echo "/usr/bin/$name"
    else command -v "$name" || true
    fi
}

build_rust() {
    local cargo rustc registry=/usr/share/cargo/registry crate missing=()
    cargo=$(tool cargo "${CARGO:-}") rustc=$(tool rustc "${RUSTC:-}")
    if [[ -z $cargo || -z $rustc ]]; then
        echo "skipping the Rust peers (async_channel, flume): no cargo/rustc" \
             "(scripts/install-deps.sh --bench-peers installs Debian's)" >&2
        return 0
    fi
    # The version ranges of rust/Cargo.toml, as the registry's directory names.
    for crate in tokio-1. async-channel-1. flume-0.10. libc-0.2.; do
        compgen -G "$registry/$crate*" >/dev/null || missing+=("${crate%-*}")
    done
    if ((${#missing[@]})); then
        echo "skipping the Rust peers (async_channel, flume): crates ${missing[*]} not in" \
             "$registry (scripts/install-deps.sh --bench-peers installs them)" >&2
        return 0
    fi
    # Source replacement: crates.io is replaced by Debian's registry, a "directory" source, and
    # cargo never goes online. The config lives in a CARGO_HOME of our own, so the user's
    # ~/.cargo is neither read nor written.
    mkdir -p "$out/cargo-home"
    cat >"$out/cargo-home/config.toml" <<EOF
[source.crates-io]
replace-with = "debian-registry"

[source.debian-registry]
directory = "$registry"

[net]
offline = true
EOF
    echo "building the Rust peers with $("$cargo" --version) / $("$rustc" --version)" >&2
    CARGO_HOME=$out/cargo-home RUSTC=$rustc "$cargo" build --release --offline -j2 --quiet \
        --manifest-path benchmarks/peers/rust/Cargo.toml --target-dir "$out/rust-target"
    cp "$out/rust-target/release/rust_peers" "$out/bin/rust_peers"
    {
        echo "rustc $("$rustc" --version | cut -d' ' -f2)"
        # What cargo resolved (Cargo.lock), for the crates the benchmark names.
        awk -F'"' '/^name = /{n=$2}
                   /^version = /{if (n ~ /^(tokio|async-channel|flume)$/) print n, $2}' \
            benchmarks/peers/rust/Cargo.lock
    } >>"$out/versions.txt"
}

build_go() {
    local go
    go=$(tool go "${GO:-}")
    if [[ -z $go ]]; then
        echo "skipping the Go peer (go_chan): no go (scripts/install-deps.sh --bench-peers" \
             "installs Debian's golang-go)" >&2
        return 0
    fi
    echo "building the Go peer with $("$go" version)" >&2
    # No network and no module downloads (the module has no dependencies), the local toolchain
    # only (Go >= 1.21 would otherwise fetch the one go.mod asks for), caches under OUT_DIR.
    (cd benchmarks/peers/go &&
        GOCACHE=$out/go-cache GOPATH=$out/gopath GOMODCACHE=$out/gopath/pkg/mod GOPROXY=off \
        GOTOOLCHAIN=local GOFLAGS='' GOWORK=off GO111MODULE=on CGO_ENABLED=0 \
        "$go" build -trimpath -o "$out/bin/go_peers" .)
    echo "go $("$go" env GOVERSION | sed 's/^go//')" >>"$out/versions.txt"
}

build_rust
build_go
