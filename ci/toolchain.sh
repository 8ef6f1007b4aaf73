# Sourced by ci/test.sh, .ci/run and ci/fresh-debian.sh: finds the Rust toolchain of the user
# who ran the script. `sudo` replaces PATH with the system's secure_path (Debian's has no cargo)
# and resets HOME, while rustup installs cargo in the invoking user's ~/.cargo/bin as a proxy
# that looks for its toolchains in $RUSTUP_HOME (default ~/.rustup of the *current* HOME). So a
# cargo found in another user's home is run with that home's .rustup, and Debian's own cargo
# (too old for this workspace) is passed over for a newer one.

# The workspace's minimum Rust version (`rust-version` in Cargo.toml), as "MAJOR MINOR".
toolchain_min_version() {
    local v
    v=$(sed -n 's/^rust-version *= *"\([0-9]*\)\.\([0-9]*\).*/\1 \2/p' "${1:-Cargo.toml}" | head -n1)
    echo "${v:-1 0}"
}

# The home directory of user $1 (from the password database; empty when unknown).
toolchain_home_of() {
    [[ -n ${1:-} ]] || return 0
    getent passwd "$1" 2>/dev/null | cut -d: -f6
}

# Directories that may hold cargo, best first: PATH's, CARGO_HOME's, the sudo caller's rustup
# home, then this user's. Printed one a line (duplicates are harmless).
toolchain_candidates() {
    local found home
    found=$(command -v cargo 2>/dev/null) && echo "${found%/*}"
    [[ -n ${CARGO_HOME:-} ]] && echo "$CARGO_HOME/bin"
    home=$(toolchain_home_of "${SUDO_USER:-}")
    [[ -n $home ]] && echo "$home/.cargo/bin"
    [[ -n ${HOME:-} ]] && echo "$HOME/.cargo/bin"
    home=$(toolchain_home_of "$(id -un)")
    [[ -n $home ]] && echo "$home/.cargo/bin"
    return 0
}

# find_cargo [CARGO_TOML]: puts a working cargo at least as new as the workspace's rust-version
# first on PATH (and sets RUSTUP_HOME for a rustup proxy of another home). Sets TOOLCHAIN_CARGO,
# TOOLCHAIN_VERSION. On failure prints what it tried on stderr and returns 1.
find_cargo() {
    local want_major want_minor dir rustup version major minor tried=()
    read -r want_major want_minor < <(toolchain_min_version "${1:-Cargo.toml}")
    while read -r dir; do
        [[ -x $dir/cargo && ! -d $dir/cargo ]] || continue
        rustup=${RUSTUP_HOME:-}
        # rustup's layout: HOME/.cargo/bin/cargo is a proxy reading HOME/.rustup.
        if [[ -z $rustup && $dir == */.cargo/bin && -d ${dir%/.cargo/bin}/.rustup ]]; then
            rustup=${dir%/.cargo/bin}/.rustup
        fi
        if ! version=$(RUSTUP_HOME=$rustup "$dir/cargo" --version 2>/dev/null); then
            tried+=("$dir/cargo (does not run)")
            continue
        fi
        [[ $version =~ ^cargo\ ([0-9]+)\.([0-9]+) ]] || {
            tried+=("$dir/cargo (version unreadable: $version)")
            continue
        }
        major=${BASH_REMATCH[1]}
        minor=${BASH_REMATCH[2]}
        if ((major < want_major || (major == want_major && minor < want_minor))); then
            tried+=("$dir/cargo ($version, older than $want_major.$want_minor)")
            continue
        fi
        export PATH="$dir:$PATH"
        [[ -n $rustup ]] && export RUSTUP_HOME=$rustup
        TOOLCHAIN_CARGO=$dir/cargo
        TOOLCHAIN_VERSION=$version
        return 0
    done < <(toolchain_candidates)
    {
        echo "$0: no cargo $want_major.$want_minor or newer found."
        if [[ ${#tried[@]} -gt 0 ]]; then
            printf '  tried: %s\n' "${tried[@]}"
        else
            echo "  tried: PATH, \$CARGO_HOME/bin, ~${SUDO_USER:-}/.cargo/bin, ~/.cargo/bin"
        fi
        echo "  install Rust with rustup (https://rustup.rs) as the user who runs the command"
        echo "  (or as root), then run it again."
    } >&2
    return 1
}
