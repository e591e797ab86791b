#!/usr/bin/env bash
# Builds the vendored iperf3 (see README.md) into OUT_DIR/iperf3 with the system C compiler
# only: no autotools, no OpenSSL. Rebuilds only when a source file is newer than the binary.
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 OUT_DIR" >&2
    exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$1"
mkdir -p "$out"
bin="$out/iperf3"

if [[ -x "$bin" ]] && [[ -z "$(find "$here/src" "$0" -newer "$bin" -print -quit)" ]]; then
    echo "iperf3 in $out is up to date"
    exit 0
fi

CC="${CC:-cc}"
objdir="$out/obj"
mkdir -p "$objdir"
pids=()
objs=()
for c in "$here"/src/*.c; do
    o="$objdir/$(basename "${c%.c}").o"
    objs+=("$o")
    "$CC" -std=gnu11 -O2 -g -w -pthread -I"$here/src" -c "$c" -o "$o" &
    pids+=($!)
done
for p in "${pids[@]}"; do
    wait "$p"
done
"$CC" -pthread -o "$bin.tmp" "${objs[@]}" -lm
mv "$bin.tmp" "$bin"
"$bin" --version | head -1
