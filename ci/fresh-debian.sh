#!/usr/bin/env bash
# README's two commands on a fresh Debian 12, as a new user runs them: builds a Debian 12 root
# (debootstrap --variant=minbase bookworm) with README's prerequisites only (gcc, libc6-dev, git,
# sudo, curl, ca-certificates, and Rust from rustup for root, where its installer puts it),
# clones this repository's HEAD into /root/fiox, and runs, as root in a login shell there,
#   cargo run --release -- quick
#   sudo ci/test.sh
# exactly as README writes them, then prints each one's wall time and exit status (logs in the
# root's /root/logs/); the script's exit status is the number of them that failed. Takes about 40 minutes of both cores of a 2-core machine, and ~12 GB.
#
#   ci/fresh-debian.sh [--smoke] [--dir=DIR] [--remove]
#     --smoke    build the root and check the toolchain only: `cargo --version` in a login
#                shell and `sudo ci/test.sh --print-cargo` (the discovery the README's test
#                command does under sudo's secure_path), instead of the two commands.
#     --dir=DIR  where the root goes (default /var/tmp/fiox-fresh-debian-DATE); an existing
#                root there is reused (its debootstrap and prerequisites are not redone).
#     --remove   remove the root at the end (after checking nothing is mounted under it).
#
# Runs as root on a Debian/Ubuntu host. /proc, /sys and /dev are bound into the root (/dev/shm
# gets a tmpfs of its own) and unmounted on exit, error or signal. Where rustup.rs cannot be
# reached (a machine that only reaches package registries), the host's default rustup toolchain
# and ~/.cargo/bin are copied to /root/.rustup and /root/.cargo of the root, where rustup's
# installer would put them, and the output says so; the crates still come from crates.io.
set -euo pipefail
cd "${0%/*}/.."
repo=$PWD

smoke=0
remove=0
dir=/var/tmp/fiox-fresh-debian-$(date -u +%Y%m%d)
for a in "$@"; do
    case $a in
        --smoke) smoke=1 ;;
        --remove) remove=1 ;;
        --dir=*) dir=${a#--dir=} ;;
        -h | --help)
            sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "ci/fresh-debian.sh: unknown argument $a (see --help)" >&2
            exit 2
            ;;
    esac
done
[[ $(id -u) -eq 0 ]] || {
    echo "ci/fresh-debian.sh: needs root (debootstrap, chroot, mounts): sudo $0 $*" >&2
    exit 2
}
[[ $dir == /* && $dir != / ]] || {
    echo "ci/fresh-debian.sh: --dir needs an absolute path other than /" >&2
    exit 2
}

say() { echo "== $*"; }

# The host's toolchain, copied in when rustup.rs is unreachable.
. ci/toolchain.sh
find_cargo Cargo.toml || exit 2

# Mounts made by this script, unmounted in reverse order on any exit.
mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -R "${mounted[i]}" 2>/dev/null || umount -R -l "${mounted[i]}" || true
    done
    mounted=()
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
trap 'cleanup; exit 129' HUP

bind_system() {
    local m
    for m in proc sys dev; do
        mkdir -p "$dir/$m"
        mountpoint -q "$dir/$m" && continue
        case $m in
            proc) mount -t proc proc "$dir/proc" ;;
            # rslave: unmounting inside never reaches the host's /sys and /dev.
            *) mount --rbind "/$m" "$dir/$m" && mount --make-rslave "$dir/$m" ;;
        esac
        mounted+=("$dir/$m")
    done
    # A /dev/shm of its own: the tests write there, and the host's is shared.
    mount -t tmpfs -o mode=1777,nosuid,nodev fiox-fresh-shm "$dir/dev/shm"
    mounted+=("$dir/dev/shm")
}

# Run a command in the root as root in a login shell with a fresh environment (as on a new
# machine's console: ~/.profile sources ~/.cargo/env, as rustup's installer arranges).
in_root() {
    chroot "$dir" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/bash -lc "$1"
}

make_root() {
    local mirror=http://deb.debian.org/debian
    command -v debootstrap >/dev/null || {
        say "installing debootstrap on the host"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    }
    if [[ -x $dir/usr/bin/apt-get ]]; then
        say "reusing the Debian 12 root in $dir"
        return
    fi
    say "debootstrap --variant=minbase bookworm $dir $mirror"
    local t0=$SECONDS
    debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1 || {
        tail -n 20 "$dir.debootstrap.log" >&2
        exit 1
    }
    say "debootstrap took $((SECONDS - t0)) s"
    # bookworm, its updates and its security fixes, as a Debian 12 install's sources.
    cat >"$dir/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
}

# What a real machine has and a bare chroot lacks: a name for itself, `localhost` (Debian's
# installer writes both into /etc/hosts; debootstrap writes neither, and fio's net examples hang
# connecting to an unresolved localhost), DNS, and this host's extra CA certificates (an
# intercepting proxy's, where there is one; without them crates.io fails with "self-signed
# certificate in certificate chain").
machine_files() {
    cp /etc/resolv.conf "$dir/etc/resolv.conf"
    hostname >"$dir/etc/hostname"
    grep -qw localhost "$dir/etc/hosts" 2>/dev/null ||
        printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
            >>"$dir/etc/hosts"
    grep -q "$(hostname)" "$dir/etc/hosts" 2>/dev/null ||
        echo "127.0.1.1 $(hostname)" >>"$dir/etc/hosts"
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        mkdir -p "$dir/usr/local/share/ca-certificates"
        cp /usr/local/share/ca-certificates/*.crt "$dir/usr/local/share/ca-certificates/"
        say "the host's local CA certificates copied in (a proxy's):" \
            "$(cd /usr/local/share/ca-certificates && echo *.crt)"
    fi
}

prerequisites() {
    say "README's prerequisites: gcc libc6-dev git sudo curl ca-certificates"
    local t0=$SECONDS
    in_root 'export DEBIAN_FRONTEND=noninteractive; apt-get update -qq &&
        apt-get install -y -qq gcc libc6-dev git sudo curl ca-certificates >/dev/null &&
        update-ca-certificates >/dev/null'
    say "prerequisites took $((SECONDS - t0)) s"
}

# Rust for root as rustup's installer sets it up: ~/.rustup, ~/.cargo/bin, ~/.cargo/env sourced
# by ~/.profile and ~/.bashrc.
rust() {
    if in_root 'command -v cargo >/dev/null'; then
        say "Rust already in the root: $(in_root 'cargo --version')"
        return
    fi
    if in_root 'curl -sSf --max-time 20 -o /tmp/rustup-init.sh https://sh.rustup.rs' 2>/dev/null; then
        say "rustup from https://sh.rustup.rs"
        in_root 'sh /tmp/rustup-init.sh -y --profile default && rm /tmp/rustup-init.sh'
        return
    fi
    local rustup_home=${RUSTUP_HOME:-$HOME/.rustup} cargo_bin=${TOOLCHAIN_CARGO%/cargo}
    local default
    default=$(sed -n 's/^default_toolchain *= *"\(.*\)"/\1/p' "$rustup_home/settings.toml")
    [[ -n $default && -d $rustup_home/toolchains/$default ]] || {
        echo "ci/fresh-debian.sh: rustup.rs is unreachable and the host has no rustup default" \
            "toolchain in $rustup_home to copy" >&2
        exit 1
    }
    say "rustup.rs is unreachable from here: copying the host's rustup toolchain $default" \
        "($rustup_home) and $cargo_bin into the root's /root/.rustup and /root/.cargo/bin," \
        "where rustup's installer puts them (crates still come from crates.io)"
    mkdir -p "$dir/root/.rustup/toolchains" "$dir/root/.cargo"
    cp -a "$rustup_home/toolchains/$default" "$dir/root/.rustup/toolchains/"
    printf 'version = "12"\ndefault_toolchain = "%s"\nprofile = "default"\n\n[overrides]\n' \
        "$default" >"$dir/root/.rustup/settings.toml"
    cp -a "$cargo_bin" "$dir/root/.cargo/bin"
    # ~/.cargo/env as rustup writes it, and the lines its installer adds to the profiles.
    cat >"$dir/root/.cargo/env" <<'EOF'
#!/bin/sh
# rustup shell setup
case ":${PATH}:" in
    *:"$HOME/.cargo/bin":*) ;;
    *) export PATH="$HOME/.cargo/bin:$PATH" ;;
esac
EOF
    local f
    for f in .profile .bashrc; do
        echo '. "$HOME/.cargo/env"' >>"$dir/root/$f"
    done
}

clone() {
    say "git clone of $repo ($(git -C "$repo" rev-parse --short HEAD)) into the root's /root/fiox"
    rm -rf "$dir/root/fiox"
    git clone -q --no-local "$repo" "$dir/root/fiox"
    git -C "$dir/root/fiox" checkout -q "$(git -C "$repo" rev-parse HEAD)"
}

# Run README command $2 in the root's clone, logging to /root/logs/$1.log; prints its time and
# exit status and records them in $results.
results=()
failed=0
readme_command() {
    local name=$1 cmd=$2 t0 rc=0
    say "$cmd (log: $dir/root/logs/$name.log)"
    t0=$SECONDS
    in_root "mkdir -p ~/logs && cd ~/fiox && $cmd >~/logs/$name.log 2>&1" || rc=$?
    results+=("$(printf '%-32s exit %3d  %5d s' "$cmd" "$rc" "$((SECONDS - t0))")")
    echo "   exit $rc after $((SECONDS - t0)) s"
    [[ $rc -eq 0 ]] || failed=$((failed + 1))
    [[ $rc -eq 0 ]] || tail -n 15 "$dir/root/logs/$name.log" | sed 's/^/   | /'
}

make_root
machine_files
bind_system
prerequisites
rust
clone

if [[ $smoke -eq 1 ]]; then
    say "smoke: the toolchain in a login shell, and README's test command's discovery"
    in_root 'cargo --version && rustc --version'
    in_root 'cd ~/fiox && sudo ci/test.sh --print-cargo'
    say "smoke passed (the two README commands were not run)"
else
    readme_command cmd1-quick 'cargo run --release -- quick'
    readme_command cmd2-test 'sudo ci/test.sh'
    say "results (Debian 12 minbase in $dir, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs):"
    printf '   %s\n' "${results[@]}"
fi

cleanup
if [[ $remove -eq 1 ]]; then
    if findmnt -rno TARGET | grep -q "^$dir/"; then
        echo "ci/fresh-debian.sh: something is still mounted under $dir; not removing it" >&2
        exit 1
    fi
    rm -rf --one-file-system "$dir" "$dir.debootstrap.log"
    say "removed $dir"
fi
# The number of README commands that failed.
exit "$failed"
