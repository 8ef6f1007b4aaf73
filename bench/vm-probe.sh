#!/usr/bin/env bash
# The vm testbed's path, by hand (issue 27 item 2; fiox now does this itself: --vm, vm = {...}): boot a Debian
# kernel in QEMU with the host's root filesystem shared read-only over 9p (virtme-ng's approach),
# run one fiox job on a virtio-blk disk backed by a file in /dev/shm, and bring its JSON (with
# the guest's kernel in fiox.env.kernel) back through a second, writable 9p share. KVM is
# probed first (the guest must reach its init within PROBE_S seconds), else TCG (about 30 s to
# boot here, and the numbers measure the emulator). Everything goes away on exit and Ctrl-C.
# Needs root, qemu-system-x86 and linux-image-amd64 (apt-get install -y qemu-system-x86
# linux-image-amd64).
# Usage: bench/vm-probe.sh [KERNEL_RELEASE]   e.g. 6.1.0-56-amd64 (default: newest in /boot)
#   FIOX=path/to/fiox  AIO=threads|native|io_uring  CACHE=none|writeback|...  MEM=1G  CPUS=2
set -euo pipefail
cd "$(dirname "$0")/.."
FIOX="$(realpath "${FIOX:-target/release/fiox}")"
K="${1:-$(ls /boot/vmlinuz-* | sed 's|/boot/vmlinuz-||' | sort -V | tail -1)}"
AIO="${AIO:-io_uring}" CACHE="${CACHE:-none}" MEM="${MEM:-1G}" CPUS="${CPUS:-2}" PROBE_S="${PROBE_S:-20}"
for t in qemu-system-x86_64 busybox cpio modinfo; do
    command -v "$t" >/dev/null || { echo "vm-probe: $t is missing" >&2; exit 1; }
done
[ -e "/boot/vmlinuz-$K" ] && [ -d "/lib/modules/$K" ] || { echo "vm-probe: no kernel $K" >&2; exit 1; }
W="$(mktemp -d /var/tmp/fiox-vm-probe.XXXXXX)"
DISK="$(mktemp /dev/shm/fiox-vm-disk.XXXXXX)"
QPID=""
cleanup() { [ -n "$QPID" ] && kill "$QPID" 2>/dev/null; rm -rf "$W"; rm -f "$DISK"; }
trap cleanup EXIT INT TERM
truncate -s 512m "$DISK"
mkdir -p "$W/root/bin" "$W/root/m" "$W/out"
# busybox and its libraries (the initramfs only loads modules, mounts the 9p root, switches).
cp /usr/bin/busybox "$W/root/bin/"
for lib in $(ldd /usr/bin/busybox | grep -o '/[^ ]*'); do
    mkdir -p "$W/root$(dirname "$lib")"; cp "$lib" "$W/root$lib"
done
# Debian builds virtio and 9p as modules: these, in dependency order (virtio_ring first).
MODS="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci netfs fscache 9pnet 9pnet_virtio 9p"
for m in $MODS; do cp "$(modinfo -k "$K" -n "$m")" "$W/root/m/$m.ko"; done
cat > "$W/root/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mkdir -p /proc /dev /newroot
mount -t proc proc /proc; mount -t devtmpfs dev /dev
for m in $MODS; do insmod /m/\$m.ko 2>/dev/null; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /newroot || poweroff -f
mount -t tmpfs tmp /newroot/tmp; mount -t tmpfs run /newroot/run
mount --move /proc /newroot/proc; mount --move /dev /newroot/dev
exec switch_root /newroot /bin/sh $W/guest.sh
EOF
chmod +x "$W/root/init"
cat > "$W/guest.sh" <<EOF
mount -t sysfs sys /sys
mkdir -p /tmp/out && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /tmp/out
echo booted > /tmp/out/booted
modprobe virtio_blk
cd /tmp && "$FIOX" --name=vblk --filename=/dev/vda --rw=randread --bs=4k --direct=1 \
    --ioengine=io_uring --iodepth=8 --time_based --runtime=3 --size=256m \
    --output-format=json --output=/tmp/out/result.json 2>/tmp/out/stderr
echo "exit \$?" >> /tmp/out/stderr
echo o > /proc/sysrq-trigger
EOF
(cd "$W/root" && find . | cpio -o -H newc 2>/dev/null) > "$W/initrd.cpio"
boot() { # $1: accel, $2: cpu
    qemu-system-x86_64 -machine "q35,accel=$1" -cpu "$2" -m "$MEM" -smp "$CPUS" \
        -kernel "/boot/vmlinuz-$K" -initrd "$W/initrd.cpio" \
        -append "console=ttyS0 panic=-1 quiet" -nographic -no-reboot \
        -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
        -virtfs "local,path=$W/out,mount_tag=out,security_model=none" \
        -drive "file=$DISK,if=virtio,format=raw,cache=$CACHE,aio=$AIO" \
        > "$W/console-$1.log" 2>&1 &
    QPID=$!
}
t0=$(date +%s)
boot kvm host
ACCEL=kvm
for _ in $(seq "$PROBE_S"); do
    [ -e "$W/out/booted" ] && break
    kill -0 "$QPID" 2>/dev/null || break
    sleep 1
done
if [ ! -e "$W/out/booted" ]; then
    kill "$QPID" 2>/dev/null || true; wait "$QPID" 2>/dev/null || true
    echo "vm-probe: KVM did not run the guest ($(tail -c 200 "$W/console-kvm.log" | tr '\n' ' ')); TCG: the numbers measure the emulator" >&2
    ACCEL=tcg; boot tcg max
fi
wait "$QPID" || true; QPID=""
echo "accel=$ACCEL kernel=$K aio=$AIO cache=$CACHE seconds=$(( $(date +%s) - t0 ))"
cat "$W/out/stderr" 2>/dev/null
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('guest kernel', d['fiox']['env']['kernel']['release'], 'randread IOPS %.0f' % d['jobs'][0]['read']['iops'])" "$W/out/result.json"
