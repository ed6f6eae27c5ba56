#!/usr/bin/env bash
# Runs a command inside Debian's LTS kernels under QEMU (TCG), with the
# host's root file system shared read-only (virtio-9p), and fails unless it
# passes in every one. docs/kernel.md, "Kernels", says what and why.
#
#   scripts/lts-kernels.sh COMMAND [ARGS...]
#
# The kernels: the newest linux-image-6.1.0-NN-amd64-unsigned of bookworm
# (and bookworm-security) and the newest linux-image-6.12.NN+deb12-amd64-
# unsigned of bookworm-backports, chosen at run time with apt-get from a
# private sources list (the system's apt sources are not touched; apt checks
# signatures and hashes against the system's Debian keyring). Downloads,
# each kernel uncompressed and the initramfs built for it (a static busybox
# from busybox-static and the kernel's own 9p modules) are cached in
# $LONGFAT_KERNEL_CACHE (default ~/.cache/longfat/kernels); nothing else is
# left behind (the consoles and the command file live in a temporary
# directory removed at exit, with any QEMU still running).
#
# Each guest mounts the host's / at /host, mounts proc, sys, dev, a tmpfs
# /run (TMPDIR=/run/tmp: the host's /tmp stays visible, where COMMAND may
# live) and bpffs there, chroots into it and runs COMMAND as root with
# LONGFAT_QEMU_GUEST=1 (the guest is its own: COMMAND may change its
# network, e.g. put netem on its loopback); the serial console carries the
# output and exit status back.
#
# Exit: 0 when COMMAND passed in every kernel; 1 when it failed in one;
# 77 when the check cannot run here (no QEMU, no download and nothing
# cached): the reason is printed, the caller reports a skip.
set -euo pipefail

if [ $# -eq 0 ]; then
    echo "usage: scripts/lts-kernels.sh COMMAND [ARGS...]" >&2
    exit 2
fi
skip() {
    echo "lts-kernels: SKIPPED: $*" >&2
    exit 77
}
qemu=${LONGFAT_QEMU:-qemu-system-x86_64}
command -v "$qemu" >/dev/null || skip "$qemu not found (as root: apt-get install --no-install-recommends qemu-system-x86)"
for tool in apt-get apt-cache dpkg-deb tar xz grep od timeout; do
    command -v $tool >/dev/null || skip "$tool not found"
done

cache=${LONGFAT_KERNEL_CACHE:-$HOME/.cache/longfat/kernels}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lts-kernels.XXXXXX")
cleanup() { # a guest still running, and the temporary directory
    local pids
    pids=$(jobs -p)
    [ -z "$pids" ] || kill $pids 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
apt=$cache/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts"
cat >"$apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian-security bookworm-security main
deb http://deb.debian.org/debian bookworm-backports main
EOF
aptopts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "APT::Sandbox::User=$(id -un)")

# The newest package of each series (apt's lists), or the newest cached one
# when the mirror cannot be reached.
series=('^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$')
if apt-get "${aptopts[@]}" -qq update >"$apt/update.log" 2>&1; then
    online=1
else
    online=
    echo "lts-kernels: cannot reach deb.debian.org ($(tail -1 "$apt/update.log")): using the cached kernels" >&2
fi
cd "$cache"
pkgs=()
for re in "${series[@]}" '^busybox-static$'; do
    pkg=
    if [ -n "$online" ]; then
        pkg=$(apt-cache "${aptopts[@]}" pkgnames "$(echo "$re" | sed 's/^\^//; s/\$$//; s/\\//g; s/\[.*//')" |
            grep -E "$re" | sort -V | tail -1 || true)
    fi
    if [ -n "$pkg" ]; then
        if ! ls "$pkg"_*.deb >/dev/null 2>&1; then
            echo "lts-kernels: downloading $pkg" >&2
            apt-get "${aptopts[@]}" -qq download "$pkg" >/dev/null 2>"$apt/download.log" ||
                skip "apt-get download $pkg failed: $(tail -1 "$apt/download.log")"
        fi
    else
        deb=$(ls ./*.deb 2>/dev/null | sed 's|^\./||; s/_.*//' | grep -E "$re" | sort -V | tail -1 || true)
        [ -n "$deb" ] || skip "no package matching $re in the mirror or in $cache"
        pkg=$deb
    fi
    pkgs+=("$pkg")
done
busybox_deb=$(ls busybox-static_*.deb | sort -V | tail -1)
kernels=("${pkgs[0]}" "${pkgs[1]}")

# kernel/<...>.ko[.xz] of every module the guest needs, dependencies first.
modules_in_order() { # $1: extracted tree, $2: release
    local mods=$1/lib/modules/$2 seen=" " out=()
    declare -A path
    while IFS= read -r f; do
        local n=${f##*/}
        n=${n%%.ko*}
        path[${n//-/_}]=$f
    done < <(find "$mods/kernel" -name '*.ko*')
    visit() {
        local n=${1//-/_} f dep
        case $seen in *" $n "*) return ;; esac
        seen="$seen$n "
        f=${path[$n]:-}
        if [ -z "$f" ]; then
            grep -q "/$n.ko" "$mods/modules.builtin" && return
            grep -q "/${1}.ko" "$mods/modules.builtin" && return
            echo "lts-kernels: module $1 is neither in the package nor built in" >&2
            return 1
        fi
        for dep in $( (case $f in *.xz) xz -dc "$f" ;; *) cat "$f" ;; esac) |
            tr '\0' '\n' | sed -n 's/^depends=//p' | tr ',' ' '); do
            visit "$dep"
        done
        out+=("$f")
    }
    # virtio-9p for the host's root; netem for a path with a real RTT.
    for m in virtio_pci 9pnet_virtio 9p sch_netem; do visit $m; done
    printf '%s\n' "${out[@]}"
}

# The kernel as an ELF that QEMU boots directly at its PVH entry
# (XEN_ELFNOTE_PHYS32_ENTRY; Debian's amd64 kernels have CONFIG_PVH): the
# bzImage's own decompressor (xz for 6.1, zstd for 6.12) takes 6-7 s of TCG
# before the kernel starts; on the host it takes a second. Where no
# compressed ELF is found (or zstd is missing), the bzImage as it is. The
# decompressors' status is not read: the bzImage's payload is followed by
# more data (zstd complains), and a truncated ELF fails to boot, visibly.
unpack_kernel() { # $1: vmlinuz, $2: output
    local magic off
    for magic in '\xfd7zXZ\x00:xz -dc --single-stream' '\x28\xb5\x2f\xfd:zstd -dcq'; do
        command -v "$(echo "${magic#*:}" | cut -d' ' -f1)" >/dev/null || continue
        off=$(LC_ALL=C grep -obUaP -m1 "${magic%%:*}" "$1" | head -1 | cut -d: -f1 || true)
        [ -n "$off" ] || continue
        { tail -c +$((off + 1)) "$1" | ${magic#*:} >"$2.tmp" 2>/dev/null; } || true
        if [ "$(head -c 4 "$2.tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
            mv "$2.tmp" "$2"
            return
        fi
    done
    rm -f "$2.tmp"
    cp "$1" "$2"
}

# The kernel and an initramfs for a kernel package, cached per package and
# version of this recipe (bump it when either changes).
recipe=4
prepare() { # $1: package
    local dir=$cache/boot/$recipe/$1
    [ -s "$dir/initrd" ] && [ -s "$dir/kernel" ] && return
    echo "lts-kernels: preparing $1" >&2
    local work=$tmp/prepare
    mkdir -p "$work"
    local deb
    deb=$(ls "$cache/$1"_*.deb | tail -1)
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" --wildcards './boot/vmlinuz-*' \
        './lib/modules/*/modules.builtin' './lib/modules/*/kernel/fs/*' \
        './lib/modules/*/kernel/net/*' './lib/modules/*/kernel/drivers/virtio/*' \
        './lib/modules/*/kernel/lib/*' './lib/modules/*/kernel/crypto/*' 2>/dev/null || true
    local release
    release=$(ls "$work/lib/modules")
    local root=$work/initramfs
    mkdir -p "$root/bin" "$root/mod" "$root/proc" "$root/sys" "$root/dev" "$root/host"
    dpkg-deb --fsys-tarfile "$cache/$busybox_deb" | tar -x -O ./bin/busybox >"$root/bin/busybox"
    chmod 755 "$root/bin/busybox"
    local i=0 f
    while IFS= read -r f; do
        i=$((i + 1))
        case $f in *.xz) xz -dc "$f" ;; *) cat "$f" ;; esac >"$root/mod/$(printf %02d $i)-${f##*/}"
    done < <(modules_in_order "$work" "$release")
    for f in "$root"/mod/*.xz; do [ -e "$f" ] && mv "$f" "${f%.xz}"; done
    cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in /mod/*.ko; do insmod "$m" || echo "longfat-guest: insmod $m failed"; done
if mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /host; then
    mount -t proc proc /host/proc
    mount -t sysfs sysfs /host/sys
    mount -t devtmpfs devtmpfs /host/dev
    mount -t tmpfs tmpfs /host/run
    mount -t bpf bpf /host/sys/fs/bpf
    ip link set lo up
    echo "longfat-guest: Linux $(uname -r)"
    mkdir -p /host/run/tmp
    TMPDIR=/run/tmp LONGFAT_QEMU_GUEST=1 chroot /host /bin/sh "$longfat_run" </dev/null
    echo "longfat-guest-exit: $?"
else
    echo "longfat-guest-exit: cannot mount the host's root"
fi
poweroff -f
EOF
    chmod 755 "$root/init"
    mkdir -p "$dir"
    # uncompressed: nothing for the guest to inflate
    (cd "$root" && find . | ./bin/busybox cpio -o -H newc 2>/dev/null) >"$dir/initrd.tmp"
    unpack_kernel "$(ls "$work"/boot/vmlinuz-*)" "$dir/kernel"
    mv "$dir/initrd.tmp" "$dir/initrd"
    rm -rf "$work"
}

run=$tmp/run.sh
{
    echo "cd $(printf %q "$PWD")"
    printf 'exec'
    printf ' %q' "$@"
    echo
} >"$run"

for k in "${kernels[@]}"; do
    prepare "$k"
done
# TCG: this machine's /dev/kvm cannot run these kernels. One vCPU, one
# guest after the other: TCP-GT's rule reads a delay that varies by more
# than rtt_base / 20 = 2.5 ms as congestion (docs/kernel.md), and a second
# guest's vCPU on CI's two cores adds to the scheduling delays of the
# first. A background job under timeout, which passes the cleanup's TERM
# on to QEMU.
failed=0
for k in "${kernels[@]}"; do
    start_ns=$(date +%s%N)
    timeout 600 "$qemu" -accel tcg -cpu max -smp 1 -m 512 -nodefaults -no-reboot \
        -display none -monitor none -serial stdio \
        -kernel "$cache/boot/$recipe/$k/kernel" -initrd "$cache/boot/$recipe/$k/initrd" \
        -append "console=ttyS0 panic=-1 quiet longfat_run=$run" \
        -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
        </dev/null >"$tmp/console" 2>&1 &
    wait $! || true
    secs=$((($(date +%s%N) - start_ns + 500000000) / 1000000000))
    tr -d '\r' <"$tmp/console"
    status=$(tr -d '\r' <"$tmp/console" | sed -n 's/^longfat-guest-exit: //p' | tail -1)
    if [ "$status" = 0 ]; then
        echo "lts-kernels: $k: passed ($secs s)"
    else
        echo "lts-kernels: $k: FAILED (exit ${status:-none: no exit line in the console above}; $secs s)"
        failed=1
    fi
done
exit $failed
