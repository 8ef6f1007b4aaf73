#!/usr/bin/env bash
# The test command of README.md: on a fresh Debian 12 / Ubuntu machine, as root, installs what
# the tests need (ci/packages.txt, the one list; nothing is reinstalled), then runs the whole
# suite and counts the tests skipped because the kernel lacks a feature. Arguments go to
# `cargo test` (e.g. `ci/test.sh --test cli`). A machine that cannot install (not root, no
# apt-get) gets one message listing every missing tool and the command that installs them,
# before any test runs. .ci/run calls this script for its test step.
#
# Rust comes from the user: through `sudo` (whose secure_path has no rustup cargo) the invoking
# user's toolchain is found first (ci/toolchain.sh), before anything is installed.
# `ci/test.sh --print-cargo` only prints the cargo it would use and exits.
# A step that fails stops the script with that step's exit status; the skip summary is printed
# only when the tests ran.
set -euo pipefail
cd "${0%/*}/.."

. ci/toolchain.sh
find_cargo Cargo.toml || exit 2
if [[ ${1:-} == --print-cargo ]]; then
    echo "cargo: $TOOLCHAIN_CARGO ($TOOLCHAIN_VERSION)"
    echo "RUSTUP_HOME: ${RUSTUP_HOME:-unset (rustup default)}"
    exit 0
fi

list=ci/packages.txt
missing_tools=()
missing_pkgs=()

# Fill missing_tools/missing_pkgs with the entries of the list absent from this machine.
find_missing() {
    missing_tools=()
    missing_pkgs=()
    local tool pkg _rest
    while read -r tool pkg _rest; do
        [[ -z $tool || $tool == \#* ]] && continue
        # pip:NAME entries come from PyPI, installed below once apt's packages are there.
        [[ $pkg == pip:* ]] && continue
        if [[ $tool == /* ]]; then
            compgen -G "$tool" >/dev/null && continue
        else
            command -v "$tool" >/dev/null 2>&1 && continue
        fi
        missing_tools+=("$tool")
        [[ " ${missing_pkgs[*]} " == *" $pkg "* ]] || missing_pkgs+=("$pkg")
    done <"$list"
}

find_missing
if [[ ${#missing_tools[@]} -gt 0 && $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing ${missing_pkgs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing_pkgs[@]}" >/dev/null
    find_missing
fi
if [[ ${#missing_tools[@]} -gt 0 || $(id -u) -ne 0 ]]; then
    {
        echo "ci/test.sh: cannot run the tests on this machine yet."
        if [[ ${#missing_tools[@]} -gt 0 ]]; then
            echo "  missing: ${missing_tools[*]}"
            echo "  install: sudo apt-get install ${missing_pkgs[*]}"
        fi
        if [[ $(id -u) -ne 0 ]]; then
            echo "  the suite runs as root (loop devices, mounts, cgroups): sudo $0 $*"
        fi
        echo "  (the list with the tests that need each tool: $list)"
    } >&2
    exit 2
fi

# Python packages from PyPI (Debian 12's scipy is too old, bench-fio is not packaged):
# crates/experiment/tests/scipy_reference.rs checks every statistic of `fiox compare` against
# scipy >= 1.11; tests/fio_ecosystem.rs runs bench-fio (fio-plot 1.1.21) on fiox. Debian's own
# Python refuses system-wide pip installs unless told (PEP 668: an EXTERNALLY-MANAGED file).
# The suite runs as root: pip's warning about root installs is known and not repeated.
pip_flags=(--root-user-action=ignore)
if python3 -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'; then
    pip_flags+=(--break-system-packages)
fi
pip_install() {
    python3 -m pip install -q "${pip_flags[@]}" "$@" || {
        echo "ci/test.sh: pip could not install $* from PyPI (see its error above);" \
            "scipy_reference and fio_ecosystem need it: run \`python3 -m pip install $*\`" >&2
        exit 2
    }
}
python3 -c 'import scipy, sys; sys.exit(tuple(map(int, scipy.__version__.split(".")[:2])) < (1, 11))' \
    >/dev/null 2>&1 || pip_install -U scipy
while read -r tool pkg _rest; do
    [[ $pkg == pip:* ]] || continue
    command -v "$tool" >/dev/null 2>&1 || pip_install "${pkg#pip:}"
done <"$list"

# Tests record a skip for a missing kernel feature in CARGO_TARGET_TMPDIR (target/tmp).
target=${CARGO_TARGET_DIR:-target}
skips=$target/tmp/fiox-skips.log
mkdir -p "$target/tmp"
: >"$skips"

# Build first: a build that fails stops here with cargo's status, before any summary.
cargo test --workspace --no-run "$@"
rc=0
cargo test --workspace --no-fail-fast "$@" || rc=$?

n=$(wc -l <"$skips")
echo "== $n test(s) skipped because the kernel lacks a feature"
if [[ $n -gt 0 ]]; then
    cut -f1 "$skips" | sort | uniq -c | sed 's/^/  /'
    cut -f1,2 "$skips" | sort | sed 's/^/    /; s/\t/: /'
fi
exit "$rc"
