#!/usr/bin/env bash
# Model-checks tests/model/channel_lock.pml (the channel lock, detail/lock.hpp) with Spin, in
# every interleaving, with the lock's release store allowed to land late (see the model):
#   bounded sleeps, the store release (the code):       no assertion fails, no thread stranded
#   unbounded sleeps, the store release:                Spin must find the stranded thread
#   unbounded sleeps, the exchange release:             no thread stranded
# The first is the lock on Linux (a futex with a time limit), the third the lock elsewhere
# (std::atomic::wait or a condition variable, no time limit). The second run proves the model
# can see the lost wake-up the bounded sleep exists for.
# Needs spin and a C compiler (scripts/install-deps.sh installs spin).
set -euo pipefail
model=$(cd "$(dirname "$0")/.." && pwd)/tests/model/channel_lock.pml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# verify <expected errors> <spin -D options...>: runs Spin's exhaustive safety search.
verify() {
    local expected=$1; shift
    rm -f pan pan.*
    spin "$@" -a "$model" >/dev/null
    cc -O2 -DSAFETY -o pan pan.c
    ./pan >out.txt 2>&1 || true
    local errors states
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' out.txt)
    states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' out.txt)
    echo "channel_lock.pml ${*:-(no options)}: $states states, $errors error(s), expected $expected"
    if [[ $errors != "$expected" ]]; then
        cat out.txt
        return 1
    fi
}
verify 0 -DTIMEOUT
verify 1
verify 0 -DEXCHANGE_RELEASE
