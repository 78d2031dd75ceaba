#!/usr/bin/env bash
# The Debian packages as an operator meets them, on this machine (CTest label "packaging"):
#  1. cpack builds ciphermq-broker (and ciphermq-admin when its target exists), plus the same
#     with the Debian revision bumped; lintian must report no errors.
#  2. dpkg -i installs them; files, owners, modes, the service account, the conffile and the
#     generated aes_key are checked; systemd-analyze verifies the unit.
#  3. cmq certs (installed) makes the PKI; ciphermq-broker --check-config passes on the installed
#     default config, as the ciphermq user.
#  4. The installed broker runs the way the unit runs it (user ciphermq, the installed config,
#     LimitNOFILE, UMask, NOTIFY_SOCKET) — first on the packaged SQLite default, then on a test
#     PostgreSQL database created with the commands docs/OPERATIONS.md gives — and a message
#     makes a cmq send / cmq listen round trip (installed cmq, end-to-end encrypted, with the
#     certificates from cmq certs); it must report READY=1 and STOPPING=1.
#  5. Reinstalling the same version and upgrading to the bumped one keep the edited config, the
#     aes_key and the data (a message published before is still delivered after).
#  6. remove keeps config and data; purge deletes config, data and logs, not certificates.
#
# Needs root: it installs packages system-wide and creates a system user. It refuses to touch a
# ciphermq-broker installation it did not make itself (see CMQ_PACKAGING_TEST_FORCE below).
#
# usage: test-packages.sh BUILD_DIR SOURCE_DIR EXPECT_ADMIN(0|1)
# env:   CMQ_TEST_POSTGRES  the CTest PostgreSQL fixture directory (its "connection" file)
set -euo pipefail

build=$(readlink -f "${1:?build directory}")
source_dir=$(readlink -f "${2:?source directory}")
expect_admin=${3:?expect admin package: 0 or 1}
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
python=/usr/bin/python3

fail() {
    echo "packaging test: FAIL: $*" >&2
    exit 1
}
step() { echo "== $*"; }

if [ "$(id -u)" != 0 ]; then
    fail "must run as root: it installs, upgrades and purges the Debian packages with dpkg and" \
        "creates the ciphermq system user (CI runs as root; locally: sudo ctest -L packaging)"
fi
for tool in cpack dpkg dpkg-deb dpkg-shlibdeps lintian systemd-analyze runuser psql "$python"; do
    command -v "$tool" >/dev/null || fail "$tool is missing (apt-get install lintian systemd dpkg-dev postgresql-client python3)"
done
# One run per machine at a time: runs from other build trees would fight over dpkg, the
# ciphermq account and /etc/ciphermq.
lock=/run/lock/ciphermq-packaging-test.lock
[ -d /run/lock ] || lock=/tmp/ciphermq-packaging-test.lock
exec 9>"$lock"
flock -w 900 9 || fail "another packaging test run has held $lock for 15 minutes"
[ -f "${CMQ_TEST_POSTGRES:-}/connection" ] || fail "no PostgreSQL fixture: run through ctest (CMQ_TEST_POSTGRES)"

marker=/var/lib/ciphermq/.cmq-packaging-test
installed_state() { dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true; }
if [ -n "$(installed_state ciphermq-broker)" ] && [ "$(installed_state ciphermq-broker)" != not-installed ] \
    && [ ! -e "$marker" ] && [ "${CMQ_PACKAGING_TEST_FORCE:-0}" != 1 ]; then
    fail "ciphermq-broker is installed on this machine and not by this test; it would be purged." \
        "Remove it first, or set CMQ_PACKAGING_TEST_FORCE=1 to let the test replace it."
fi

# Packages, logs and the test PKI, outside the source tree; kept when the test fails. The
# notify socket sits in a world-traversable directory of its own: the unprivileged broker must
# reach it, and may not be allowed into the build tree's parents.
work=$(mktemp -d "${TMPDIR:-/tmp}/cmq-packaging.XXXXXX")
rundir=$(mktemp -d /tmp/cmq-pkgtest.XXXXXX)
chmod 0755 "$rundir"
user_existed=0
getent passwd ciphermq >/dev/null && user_existed=1
broker_pid=""
listener_pid=""
pg_conn=""

purge_packages() {
    for pkg in ciphermq-admin ciphermq-broker; do
        state=$(installed_state "$pkg")
        if [ -n "$state" ] && [ "$state" != not-installed ]; then
            dpkg --purge "$pkg" >>"$work/dpkg.log" 2>&1 || true
        fi
    done
}

# The broker runs as runuser's child; signal the broker itself (runuser may not pass it on).
broker_child() { pgrep -P "$broker_pid" -x ciphermq-broker || echo "$broker_pid"; }

cleanup() {
    status=$?
    set +e
    if [ -n "$broker_pid" ]; then
        kill -KILL "$(broker_child)" 2>/dev/null
        wait "$broker_pid" 2>/dev/null
    fi
    if [ -n "$listener_pid" ]; then
        kill "$listener_pid" 2>/dev/null
        wait "$listener_pid" 2>/dev/null
    fi
    if [ $status != 0 ] && [ -f "$work/broker.log" ]; then
        echo "--- last broker output ($work/broker.log):" >&2
        tail -n 30 "$work/broker.log" >&2
    fi
    purge_packages
    rm -rf /etc/ciphermq "$rundir"
    if [ $status = 0 ]; then
        rm -rf "$work"
    else
        echo "packaging test: logs and packages kept in $work" >&2
    fi
    if [ -n "$pg_conn" ]; then
        psql "$pg_conn" -q -c "DROP DATABASE IF EXISTS ciphermq_pkgtest WITH (FORCE)" \
            -c "DROP ROLE IF EXISTS ciphermq_pkgtest" >/dev/null 2>&1 || true
    fi
    # The packages keep the account on purge (Debian practice); the test leaves the machine as
    # it found it so that the next run exercises the account's creation again.
    if [ $user_existed = 0 ] && getent passwd ciphermq >/dev/null; then
        deluser --quiet --system ciphermq >/dev/null 2>&1 || true
        delgroup --quiet --system ciphermq >/dev/null 2>&1 || true
    fi
    [ $status = 0 ] && echo "packaging test: PASS"
    exit $status
}
trap cleanup EXIT

# check_stat PATH OWNER:GROUP MODE
check_stat() {
    [ -e "$1" ] || fail "$1 is missing"
    actual=$(stat -c '%U:%G %a' "$1")
    [ "$actual" = "$2 $3" ] || fail "$1 is $actual, expected $2 $3"
}

# ------------------------------------------------------------------------------------------
step "building the packages with cpack"
arch=$(dpkg --print-architecture)
version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
[ -n "$version" ] || fail "no CPACK_PACKAGE_VERSION in $build/CPackConfig.cmake (configure with the top-level CMakeLists.txt)"
(cd "$build" && cpack -G DEB -B "$work/v1") >"$work/cpack-v1.log" 2>&1 9>&- \
    || { tail -n 40 "$work/cpack-v1.log" >&2; fail "cpack failed"; }
(cd "$build" && cpack -G DEB -B "$work/v2" -D CPACK_DEBIAN_PACKAGE_RELEASE=2) >"$work/cpack-v2.log" 2>&1 9>&- \
    || { tail -n 40 "$work/cpack-v2.log" >&2; fail "cpack (bumped revision) failed"; }

broker_deb=$work/v1/ciphermq-broker_${version}-1_${arch}.deb
broker_deb2=$work/v2/ciphermq-broker_${version}-2_${arch}.deb
admin_deb=$work/v1/ciphermq-admin_${version}-1_${arch}.deb
admin_deb2=$work/v2/ciphermq-admin_${version}-2_${arch}.deb
[ -f "$broker_deb" ] || fail "cpack did not produce $broker_deb (got: $(ls "$work/v1"))"
[ -f "$broker_deb2" ] || fail "cpack did not produce $broker_deb2"
debs=("$broker_deb")
debs2=("$broker_deb2")
if [ "$expect_admin" = 1 ]; then
    [ -f "$admin_deb" ] || fail "cpack did not produce $admin_deb"
    [ -f "$admin_deb2" ] || fail "cpack did not produce $admin_deb2"
    debs+=("$admin_deb")
    debs2+=("$admin_deb2")
else
    echo "   (no ciphermq-admin target in this build: the admin package is not built or checked)"
    [ ! -e "$admin_deb" ] || fail "an admin package was built although the target does not exist"
fi

step "package metadata"
deps=$(dpkg-deb -f "$broker_deb" Depends)
for dep in libqt6core6 libqt6network6 libc6 libstdc++6 adduser libqt6sql6-sqlite libqt6sql6-psql; do
    grep -qw -- "$dep" <<<"$deps" || fail "ciphermq-broker Depends lacks $dep: $deps"
done
[ "$(dpkg-deb -f "$broker_deb" Version)" = "${version}-1" ] || fail "wrong version in $broker_deb"
[ "$(dpkg-deb -f "$broker_deb2" Version)" = "${version}-2" ] || fail "wrong version in $broker_deb2"
mkdir -p "$work/control"
dpkg-deb -e "$broker_deb" "$work/control"
[ "$(cat "$work/control/conffiles")" = /etc/ciphermq/config.toml ] || fail "conffiles: $(cat "$work/control/conffiles")"
for script in postinst prerm postrm; do
    [ "$(stat -c %a "$work/control/$script")" = 755 ] || fail "$script is not mode 0755"
done
dpkg-deb -c "$broker_deb" >"$work/contents.txt"
for path in ./usr/bin/ciphermq-broker ./usr/bin/cmq ./etc/ciphermq/config.toml \
    ./lib/systemd/system/ciphermq-broker.service ./usr/share/doc/ciphermq-broker/copyright \
    ./usr/share/doc/ciphermq-broker/changelog.Debian.gz ./usr/share/doc/ciphermq-broker/OPERATIONS.md; do
    grep -q " $path\$" "$work/contents.txt" || fail "$broker_deb lacks $path"
done
if [ "$expect_admin" = 1 ]; then
    dpkg-deb -c "$admin_deb" >"$work/admin-contents.txt"
    for path in ./usr/bin/ciphermq-admin ./usr/share/applications/ciphermq-admin.desktop \
        ./usr/share/icons/hicolor/scalable/apps/ciphermq.svg ./usr/share/doc/ciphermq-admin/copyright; do
        grep -q " $path\$" "$work/admin-contents.txt" || fail "$admin_deb lacks $path"
    done
    admin_deps=$(dpkg-deb -f "$admin_deb" Depends)
    grep -qw libqt6widgets6 <<<"$admin_deps" || fail "ciphermq-admin Depends lacks libqt6widgets6: $admin_deps"
fi

step "lintian (errors fail the test, warnings are listed)"
# Bookworm's lintian refuses nothing for running as root, but says so; that line is noise.
if ! lintian --fail-on error --tag-display-limit 0 "${debs[@]}" >"$work/lintian.txt" 2>&1; then
    cat "$work/lintian.txt" >&2
    fail "lintian reported errors"
fi
grep -v '^running with root privileges' "$work/lintian.txt" | sed 's/^/   /' || true

# ------------------------------------------------------------------------------------------
step "dpkg -i"
purge_packages
rm -rf /etc/ciphermq /var/lib/ciphermq /var/log/ciphermq
dpkg -i "${debs[@]}" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -i failed"; }
touch "$marker"

step "files, owners and modes"
getent passwd ciphermq >/dev/null || fail "postinst created no ciphermq user"
IFS=: read -r _ _ uid _ _ home shell <<<"$(getent passwd ciphermq)" || fail "no ciphermq user"
[ "$uid" -lt 1000 ] || fail "ciphermq is not a system user (uid $uid)"
[ "$home" = /var/lib/ciphermq ] || fail "ciphermq's home is $home"
[ "$shell" = /usr/sbin/nologin ] || fail "ciphermq's shell is $shell"
check_stat /etc/ciphermq root:ciphermq 750
check_stat /etc/ciphermq/certs root:ciphermq 750
check_stat /etc/ciphermq/config.toml root:ciphermq 640
check_stat /var/lib/ciphermq ciphermq:ciphermq 750
check_stat /var/log/ciphermq ciphermq:ciphermq 750
check_stat /usr/bin/ciphermq-broker root:root 755
check_stat /usr/bin/cmq root:root 755
check_stat /lib/systemd/system/ciphermq-broker.service root:root 644
check_stat /usr/share/doc/ciphermq-broker/copyright root:root 644
# Not enabled on first install (it cannot start before it has certificates).
[ ! -e /etc/systemd/system/multi-user.target.wants/ciphermq-broker.service ] \
    || fail "the first install enabled the unit"
dpkg-query -W -f='${Conffiles}\n' ciphermq-broker | grep -q '^ /etc/ciphermq/config.toml ' \
    || fail "config.toml is not registered as a conffile"
if [ "$expect_admin" = 1 ]; then
    check_stat /usr/bin/ciphermq-admin root:root 755
    check_stat /usr/share/applications/ciphermq-admin.desktop root:root 644
    check_stat /usr/share/icons/hicolor/scalable/apps/ciphermq.svg root:root 644
fi

zcat /usr/share/doc/ciphermq-broker/changelog.Debian.gz | head -n 1 | grep -qF "(${version}-1)" \
    || fail "the changelog does not name ${version}-1"

step "generated aes_key"
aes_key=$(sed -n 's/^aes_key = "\(.*\)"$/\1/p' /etc/ciphermq/config.toml)
[ "$aes_key" != "@CIPHERMQ_AES_KEY@" ] || fail "postinst left the aes_key placeholder"
[ "$(printf '%s' "$aes_key" | base64 -d | wc -c)" = 32 ] || fail "aes_key is not base64 of 32 bytes: $aes_key"
# Only the key line differs from the shipped file.
diff <(sed '/^aes_key = /d' "$source_dir/resources/config.toml") \
    <(sed '/^aes_key = /d' /etc/ciphermq/config.toml) >/dev/null || fail "postinst changed more than aes_key"

step "systemd-analyze verify"
# It only warns (exit 0) about unknown or invalid settings, so any line naming the unit fails.
verify_out=$(systemd-analyze verify /lib/systemd/system/ciphermq-broker.service 2>&1) \
    || fail "systemd-analyze verify failed: $verify_out"
if grep -q ciphermq-broker <<<"$verify_out"; then
    fail "systemd-analyze verify: $verify_out"
fi
# shellcheck disable=SC2016 # $MAINPID is literal text in the unit
for setting in Type=notify 'ExecReload=/bin/kill -HUP $MAINPID' Restart=on-failure User=ciphermq \
    NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
    'ReadWritePaths=/var/lib/ciphermq /var/log/ciphermq' CapabilityBoundingSet= \
    SystemCallFilter=@system-service LimitNOFILE=65536; do
    grep -qxF -- "$setting" /lib/systemd/system/ciphermq-broker.service || fail "unit lacks $setting"
done
grep -q '^RestrictAddressFamilies=' /lib/systemd/system/ciphermq-broker.service || fail "unit lacks RestrictAddressFamilies"

# ------------------------------------------------------------------------------------------
step "certificates with the installed cmq certs"
as_broker() { runuser -u ciphermq -- "$@"; }
out=$(as_broker /usr/bin/ciphermq-broker --check-config /etc/ciphermq/config.toml 2>&1) \
    && fail "--check-config passed without certificates"
grep -q /etc/ciphermq/certs/server.crt <<<"$out" || fail "--check-config without certificates: $out"
ca=$work/ca
clients=$work/clients
/usr/bin/cmq certs init-ca --dir "$ca" --cn "Packaging Test CA" >/dev/null
/usr/bin/cmq certs server --ca-dir "$ca" --dir /etc/ciphermq/certs --cn localhost --san DNS:localhost,IP:127.0.0.1 >/dev/null
cp "$ca/ca.crt" /etc/ciphermq/certs/ca.crt
# What OPERATIONS.md tells the operator to do: the broker's group may read its key.
chgrp ciphermq /etc/ciphermq/certs/server.key
chmod 0640 /etc/ciphermq/certs/server.key
hint=$(/usr/bin/cmq certs client --ca-dir "$ca" --dir "$clients" --cn pkg-sender --role sender)
grep -q 'acl.sender_cns' <<<"$hint" || fail "no ACL hint from cmq certs client: $hint"
for cn in pkg-receiver pkg-archive; do
    /usr/bin/cmq certs client --ca-dir "$ca" --dir "$clients" --cn "$cn" --role receiver >/dev/null
done
cp "$ca/ca.crt" "$clients/ca.crt"
mkdir -p "$work/home"
for cn in pkg-sender pkg-receiver pkg-archive; do
    /usr/bin/cmq keygen --identity "$clients/$cn.identity" >/dev/null
done
check_stat "$ca/ca.key" root:root 600
check_stat "$clients/pkg-sender.key" root:root 600

step "ciphermq-broker --check-config on the installed default"
as_broker /usr/bin/ciphermq-broker --check-config /etc/ciphermq/config.toml \
    || fail "--check-config failed on the installed default config"
/usr/bin/ciphermq-broker --check-config /etc/ciphermq/config.toml >/dev/null

# ------------------------------------------------------------------------------------------
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
notify_log=$work/notify.log
: >"$notify_log"
"$python" "$here/notify-listen.py" "$rundir/notify" "$notify_log" 9>&- &
listener_pid=$!
for _ in $(seq 50); do grep -q LISTENING "$notify_log" && break; sleep 0.1; done

# set_key SECTION KEY VALUE: edits one line of the installed config (the operator's edit).
set_key() {
    sed -i "/^\[$1\]/,/^\[/ s|^$2 = .*|$2 = $3|" /etc/ciphermq/config.toml
    grep -qxF "$2 = $3" /etc/ciphermq/config.toml || fail "could not set $1.$2"
}

# start_broker: as the unit does it — user ciphermq, / as working directory, a clean
# environment with NOTIFY_SOCKET, LimitNOFILE and UMask from the unit — and waits for READY=1.
start_broker() {
    local ready_before
    ready_before=$(grep -c 'READY=1' "$notify_log" || true)
    (
        cd /
        # LimitNOFILE=65536, or this machine's hard limit if lower (containers often cap it).
        hard=$(ulimit -Hn)
        if [ "$hard" = unlimited ] || [ "$hard" -ge 65536 ]; then ulimit -n 65536; else ulimit -n "$hard"; fi
        umask 0027
        exec runuser -u ciphermq -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
            NOTIFY_SOCKET="$rundir/notify" /usr/bin/ciphermq-broker --config /etc/ciphermq/config.toml
    ) >>"$work/broker.log" 2>&1 9>&- &
    broker_pid=$!
    for _ in $(seq 600); do
        [ "$(grep -c 'READY=1' "$notify_log" || true)" -gt "$ready_before" ] && return 0
        kill -0 "$broker_pid" 2>/dev/null || { broker_pid=""; fail "the broker exited during start-up"; }
        sleep 0.1
    done
    fail "no READY=1 from the broker within 60 s"
}

# stop_broker: SIGTERM to the broker process (runuser's child), as systemctl stop sends it.
stop_broker() {
    local status=0
    kill -TERM "$(broker_child)"
    wait "$broker_pid" || status=$?
    broker_pid=""
    [ $status = 0 ] || fail "the broker exited with status $status after SIGTERM"
    tail -n 1 "$notify_log" | grep -q 'STOPPING=1' || fail "no STOPPING=1 from the broker"
}

# cmq_as CN COMMAND ARGS...: the installed cmq as a client operator runs it, with the
# certificates from cmq certs and an X25519 identity of its own (nothing from root's home).
cmq_as() {
    local cn=$1 command=$2
    shift 2
    env -i PATH=/usr/bin:/bin HOME="$work/home" /usr/bin/cmq "$command" \
        --broker "127.0.0.1:$port" --cert "$clients/$cn.crt" --key "$clients/$cn.key" \
        --ca "$clients/ca.crt" --identity "$clients/$cn.identity" "$@"
}
# listen_setup CN: one short cmq listen declares the receiver's queue and binding (cmq listen's
# conventions: <cn>_queue, key <cn>_key) and registers its public key.
listen_setup() {
    cmq_as "$1" listen --timeout 2 >/dev/null || fail "cmq listen (set-up) as $1 failed"
}
# send_message TO TEXT
send_message() {
    cmq_as pkg-sender send --to "$1" --timeout 30 "$2" >/dev/null || fail "cmq send '$2' to $1 failed"
}
# expect_message CN TEXT: the next message for CN is TEXT.
expect_message() {
    local got
    got=$(cmq_as "$1" listen --count 1 --timeout 30) || fail "cmq listen as $1 did not receive '$2'"
    [ "$got" = "$2" ] || fail "cmq listen as $1 printed '$got', expected '$2'"
}

# Round trips go to pkg-receiver; the messages kept across the upgrades go to pkg-archive.
step "installed broker on the packaged SQLite default, as the unit runs it"
set_key server address "\"127.0.0.1:$port\""
set_key acl sender_cns '["pkg-sender"]'
set_key acl receiver_cns '["pkg-receiver", "pkg-archive"]'
start_broker
grep -q "READY=1;STATUS=Ready on 127.0.0.1:$port" "$notify_log" || fail "READY without the status line"
listen_setup pkg-receiver
listen_setup pkg-archive
send_message pkg-receiver "hello over sqlite"
expect_message pkg-receiver "hello over sqlite"
send_message pkg-archive "kept in sqlite" # stays queued across the upgrades
stop_broker
check_stat /var/lib/ciphermq/ciphermq.db ciphermq:ciphermq 640
ls /var/log/ciphermq/*.log >/dev/null 2>&1 || fail "the broker wrote no log file in /var/log/ciphermq"
for log in /var/log/ciphermq/*.log; do
    [ "$(stat -c %U "$log")" = ciphermq ] || fail "$log is not owned by ciphermq"
done

step "installed broker on PostgreSQL (role and database as docs/OPERATIONS.md creates them)"
read -r pg_host pg_port <<<"$(sed -n 's/.*host=\([^ ]*\) port=\([0-9]*\).*/\1 \2/p' "$CMQ_TEST_POSTGRES/connection")"
pg_conn="host=$pg_host port=$pg_port user=postgres dbname=postgres"
export PGOPTIONS=--client-min-messages=warning # no NOTICEs from "IF EXISTS"
pg_password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
psql "$pg_conn" -q -v ON_ERROR_STOP=1 \
    -c "DROP DATABASE IF EXISTS ciphermq_pkgtest WITH (FORCE)" -c "DROP ROLE IF EXISTS ciphermq_pkgtest" \
    -c "CREATE ROLE ciphermq_pkgtest LOGIN PASSWORD '$pg_password'" \
    -c "CREATE DATABASE ciphermq_pkgtest OWNER ciphermq_pkgtest ENCODING 'UTF8'" >/dev/null
set_key database driver '"postgresql"'
set_key database host "\"$pg_host\""
set_key database port "$pg_port"
set_key database user '"ciphermq_pkgtest"'
set_key database password "\"$pg_password\""
set_key database dbname '"ciphermq_pkgtest"'
as_broker /usr/bin/ciphermq-broker --check-config /etc/ciphermq/config.toml >/dev/null
start_broker
listen_setup pkg-receiver
listen_setup pkg-archive
send_message pkg-receiver "hello over postgresql"
expect_message pkg-receiver "hello over postgresql"
send_message pkg-archive "kept in postgresql" # stays queued across the upgrades
stop_broker
tables=$(psql "host=$pg_host port=$pg_port user=postgres dbname=ciphermq_pkgtest" -Atc \
    "SELECT count(*) FROM pg_tables WHERE tableowner = 'ciphermq_pkgtest'")
[ "$tables" -gt 0 ] || fail "the migrations created no tables owned by ciphermq_pkgtest"

# ------------------------------------------------------------------------------------------
config_sum=$(sha256sum </etc/ciphermq/config.toml)
db_sum=$(sha256sum </var/lib/ciphermq/ciphermq.db)
# check_kept WHEN: the edited config, its permissions and the data survived.
check_kept() {
    [ "$(sha256sum </etc/ciphermq/config.toml)" = "$config_sum" ] || fail "$1 changed the edited config"
    [ "$(sha256sum </var/lib/ciphermq/ciphermq.db)" = "$db_sum" ] || fail "$1 changed the SQLite data"
    [ -e "$marker" ] || fail "$1 lost files in /var/lib/ciphermq"
    check_stat /etc/ciphermq/config.toml root:ciphermq 640
    check_stat /var/lib/ciphermq ciphermq:ciphermq 750
    check_stat /etc/ciphermq/certs/server.key root:ciphermq 640
}

step "reinstalling the same version"
dpkg -i "${debs[@]}" >>"$work/dpkg.log" 2>&1 || { tail -n 30 "$work/dpkg.log" >&2; fail "reinstall failed"; }
check_kept "reinstalling"

step "upgrading to ${version}-2"
dpkg -i "${debs2[@]}" >>"$work/dpkg.log" 2>&1 || { tail -n 30 "$work/dpkg.log" >&2; fail "upgrade failed"; }
[ "$(dpkg-query -W -f='${Version}' ciphermq-broker)" = "${version}-2" ] || fail "the upgrade did not install ${version}-2"
check_kept "upgrading"
zcat /usr/share/doc/ciphermq-broker/changelog.Debian.gz | head -n 1 | grep -qF "(${version}-2)" \
    || fail "the upgraded changelog does not name ${version}-2"
start_broker
expect_message pkg-archive "kept in postgresql"
stop_broker

step "remove keeps configuration and data"
dpkg --remove ciphermq-broker >>"$work/dpkg.log" 2>&1 || fail "dpkg --remove failed"
[ ! -e /usr/bin/ciphermq-broker ] || fail "remove left the binary"
[ "$(installed_state ciphermq-broker)" = config-files ] || fail "state after remove: $(installed_state ciphermq-broker)"
check_kept "removing"

step "reinstalling after remove keeps the aes_key"
dpkg -i "$broker_deb2" >>"$work/dpkg.log" 2>&1 || fail "reinstall after remove failed"
check_kept "reinstalling after remove"
set_key database driver '"sqlite"'
start_broker
expect_message pkg-archive "kept in sqlite"
stop_broker

step "purge removes configuration, data and logs, not certificates"
purge_packages
for pkg in ciphermq-broker ciphermq-admin; do
    state=$(installed_state "$pkg")
    [ -z "$state" ] || [ "$state" = not-installed ] || fail "$pkg is still $state after purge"
done
for gone in /etc/ciphermq/config.toml /var/lib/ciphermq /var/log/ciphermq \
    /lib/systemd/system/ciphermq-broker.service /etc/systemd/system/ciphermq-broker.service; do
    [ ! -e "$gone" ] || fail "purge left $gone"
done
[ -f /etc/ciphermq/certs/server.key ] || fail "purge deleted the administrator's certificates"
getent passwd ciphermq >/dev/null || fail "purge deleted the ciphermq account (Debian keeps it)"
