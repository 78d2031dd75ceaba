#!/usr/bin/env bash
# The fresh-machine check: the README's two quick-start commands on a brand-new Debian 12 root
# filesystem, as a newcomer would run them. A green run on a machine that has collected
# packages over time can hide a missing install step; this cannot.
#
#   scripts/fresh-check.sh [--user] [--tests REGEX] [--also COMMAND] [--keep]
#
# 1. base     a minimal Debian 12 root (`mmdebstrap --variant=apt bookworm`), cached as a
#             tarball in $CMQ_FRESH_CACHE (default /var/cache/ciphermq-fresh) for a week
# 2. root     the tarball unpacked into a new directory, /etc/hosts as every machine has it
# 3. clone    the current commit (HEAD of this repository; uncommitted changes are not in it)
# 4. run-dev  ./scripts/run-dev.sh until the broker prints its ready line; then the README's
#             `openssl s_client` example must answer `Queue declared`
# 5. test     ./scripts/test.sh to CTest's summary (only the tests matching REGEX with --tests)
# 6. also     with --also COMMAND: that shell command in the clone in the same root afterwards,
#             as root (CI runs the sanitizer build there, on the packages the quick start installed)
#
# --user runs both commands as a new unprivileged user with passwordless sudo (installed first,
# as that user's administrator would have), instead of root. --keep leaves the root behind.
# Everything runs in a private mount and PID namespace: nothing it starts outlives it.
# Needs root on the host (chroot, mounts). Exits non-zero naming the step that failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

as_user=""
tests=""
also=""
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
    --user) as_user=newcomer ;;
    --tests) tests=${2:?--tests needs a regular expression}; shift ;;
    --also) also=${2:?--also needs a command}; shift ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fresh-check.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

step_name=""
started=$SECONDS
step() {
    step_name=$1
    printf '\n== fresh-check [%4ds] %s\n' "$((SECONDS - started))" "$step_name"
}
fail() {
    echo "fresh-check: FAILED at step '$step_name': $*" >&2
    step_name="" # said once
    exit 1
}
trap 'rc=$?; [ $rc -ne 0 ] && [ -n "$step_name" ] && echo "fresh-check: FAILED at step '"'"'$step_name'"'"' (exit $rc)" >&2' EXIT

[ "$(id -u)" = 0 ] || { echo "fresh-check.sh: run as root (it uses chroot and mounts)" >&2; exit 1; }

step "host tools"
bash "$here/ensure-packages.sh" mmdebstrap zstd git util-linux
command -v unshare >/dev/null || fail "unshare is missing"

step "base (mmdebstrap --variant=apt bookworm)"
cache=${CMQ_FRESH_CACHE:-/var/cache/ciphermq-fresh}
base="$cache/bookworm-apt.tar.zst"
mkdir -p "$cache"
if [ -s "$base" ] && [ -z "$(find "$base" -mtime +7)" ]; then
    echo "using the cached base $base (made $(date -r "$base" '+%F %T'))"
else
    # mmdebstrap's default mirror list for a stable release: main, updates and security.
    mmdebstrap --quiet --variant=apt bookworm "$base.tmp.tar.zst" </dev/null \
        || fail "mmdebstrap could not make the base root filesystem"
    mv -f "$base.tmp.tar.zst" "$base"
fi

step "root"
work=$(mktemp -d "${CMQ_FRESH_WORK:-/var/tmp}/cmq-fresh.XXXXXX")
root="$work/root"
cleanup() {
    if [ "$keep" = 1 ]; then
        echo "fresh-check: the root is kept in $root"
    else
        rm -rf --one-file-system "$work"
    fi
}
trap 'rc=$?; cleanup; [ $rc -ne 0 ] && [ -n "$step_name" ] && echo "fresh-check: FAILED at step '"'"'$step_name'"'"' (exit $rc)" >&2; exit $rc' EXIT
mkdir -p "$root"
tar -C "$root" --zstd -xpf "$base" || fail "could not unpack $base"
# Every installed machine has these; a bare root filesystem does not (containers add them).
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' > "$root/etc/hosts"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

step "clone $(git -C "$repo" rev-parse --short HEAD)"
commit=$(git -C "$repo" rev-parse HEAD)
src=/home/ciphermq
[ -n "$as_user" ] && src=/home/$as_user/ciphermq
git clone -q --no-hardlinks "$repo" "$root$src" || fail "git clone failed"
git -C "$root$src" checkout -q --detach "$commit"
[ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ] \
    && echo "note: uncommitted changes in $repo are not part of this check"

# Runs a command inside the root: private mount and PID namespaces, so every mount and every
# process it leaves behind (a broker, a PostgreSQL) goes away with it.
in_root() {
    unshare --mount --pid --fork --kill-child --propagation private bash -c '
        set -e
        root=$1; shift
        mount -t proc proc "$root/proc"
        mount --rbind /dev "$root/dev"
        mount --rbind /sys "$root/sys"
        mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
        mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
        mkdir -p "$root/run"
        mount -t tmpfs -o mode=755 tmpfs "$root/run"
        exec chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            LANG=C.UTF-8 ${CI:+CI=$CI} "$@"' in_root "$root" "$@"
}

if [ -n "$as_user" ]; then
    step "user $as_user with sudo"
    in_root bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends sudo passwd >/dev/null \
        && useradd --create-home --shell /bin/bash $as_user 2>/dev/null; \
        echo '$as_user ALL=(ALL) NOPASSWD: ALL' > /etc/sudoers.d/$as_user && chmod 440 /etc/sudoers.d/$as_user \
        && chown -R $as_user: $src" || fail "could not set up the user"
    run_as=(runuser -u "$as_user" -- env HOME=/home/$as_user USER=$as_user)
else
    run_as=()
fi

step "run-dev (README command 1: ./scripts/run-dev.sh until the broker is ready)"
if (exec 3<>/dev/tcp/127.0.0.1/5671) 2>/dev/null; then
    fail "port 5671 is already in use on this machine; stop what listens there first"
fi
# The broker runs until the checks below are done; the PID namespace ends it afterwards.
in_root "${run_as[@]}" bash -c "cd $src && : > /var/tmp/run-dev.log && { ./scripts/run-dev.sh > /var/tmp/run-dev.log 2>&1 & } && pid=\$!
    deadline=\$((SECONDS + ${CMQ_FRESH_RUNDEV_TIMEOUT:-3600}))
    until grep -q 'ready on 127.0.0.1:5671' /var/tmp/run-dev.log; do
        if ! kill -0 \$pid 2>/dev/null; then echo 'run-dev.sh exited before the broker was ready'; exit 1; fi
        if [ \$SECONDS -ge \$deadline ]; then echo 'no ready line before the deadline'; exit 1; fi
        sleep 1
    done
    grep 'ready on' /var/tmp/run-dev.log
    # The README's example, retried until a deadline: the first handshake on a loaded machine
    # may take a while.
    answer=''; give_up=\$((SECONDS + 90))
    while [ \"\$answer\" != 'Queue declared' ] && [ \$SECONDS -lt \$give_up ]; do
        answer=\$(printf 'declare_queue receiver_1_queue\n' | timeout 20 openssl s_client -quiet -connect 127.0.0.1:5671 \
            -cert .dev/certs/receiver_1.crt -key .dev/certs/receiver_1.key -CAfile .dev/certs/ca.crt 2>/var/tmp/s_client.err | head -n 1)
    done
    echo \"s_client: declare_queue receiver_1_queue -> \$answer\"
    [ \"\$answer\" = 'Queue declared' ] || { echo 'the README example did not answer Queue declared; s_client said:'; cat /var/tmp/s_client.err; exit 1; }
    kill -INT \$pid; wait \$pid || true
    tail -n 3 /var/tmp/run-dev.log" || {
    tail -n 60 "$root/var/tmp/run-dev.log" 2>/dev/null || true
    fail "the first quick-start command did not bring the broker up"
}

[ "${CMQ_FRESH_STOP_AFTER:-}" = run-dev ] && { step "done (CMQ_FRESH_STOP_AFTER=run-dev)"; exit 0; }

step "test (README command 2: ./scripts/test.sh${tests:+ -R $tests})"
ctest_args=()
[ -n "$tests" ] && ctest_args=(-R "$tests")
in_root "${run_as[@]}" bash -c "cd $src && ./scripts/test.sh \"\$@\"" test "${ctest_args[@]}" \
    || fail "the second quick-start command failed (its output is above)"

if [ -n "$also" ]; then
    step "also: $also"
    in_root bash -c "cd $src && $also" || fail "'$also' failed (its output is above)"
fi

step "done"
echo "fresh-check: both quick-start commands passed on a new Debian 12 root in $((SECONDS - started)) s"
