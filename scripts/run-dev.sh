#!/usr/bin/env bash
# Quick start, part one: install what is missing, build, create development certificates and a
# development config on first run, and start the broker in the foreground on 127.0.0.1:5671
# with the embedded SQLite storage. Everything it makes lives in .dev/ (git-ignored).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# Runs as whoever starts it; only the package installation uses sudo (ensure-packages.sh).
for made in build .dev; do
    if [ -e "$made" ] && [ ! -w "$made" ]; then
        echo "run-dev.sh: $root/$made is not writable by $(id -un) (left by a run as root?);" \
            "fix with: sudo chown -R $(id -un): $root/$made" >&2
        exit 1
    fi
done

bash scripts/ensure-packages.sh $(grep -v '^#' scripts/packages-build.txt)

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target ciphermq-broker cmq -j"$(nproc)"

dev="$root/.dev"
mkdir -p "$dev"
if [ ! -f "$dev/certs/ca.crt" ]; then
    echo "Creating development certificates in .dev/certs (CA, server, every CN the dev ACL lists)"
    # Built aside and renamed into place, so an interrupted run never leaves half a PKI.
    rm -rf "$dev/certs"
    work=$(mktemp -d "$dev/certs.tmp.XXXXXX")
    cmq=build/cli/cmq
    "$cmq" certs init-ca --dir "$work" --cn "CipherMQ Development CA" >/dev/null
    "$cmq" certs server --dir "$work" --cn localhost --san DNS:localhost,IP:127.0.0.1,IP:::1 >/dev/null
    for cn in $(grep -E '^(sender_cns|receiver_cns|admin_cns|allowed_cns) = ' resources/dev-config.toml.in \
        | grep -o '"[^"]*"' | tr -d '"' | sort -u); do
        "$cmq" certs client --dir "$work" --cn "$cn" >/dev/null
    done
    mv -T "$work" "$dev/certs"
fi
if [ ! -f "$dev/config.toml" ]; then
    key=$(openssl rand -base64 32)
    sed -e "s|@DEV@|$dev|g" -e "s|@AES_KEY@|$key|" resources/dev-config.toml.in > "$dev/config.toml"
    chmod 600 "$dev/config.toml"
    echo "Wrote .dev/config.toml"
fi
cat <<INFO

Development identities (in .dev/certs): sender "sender_1", receiver "receiver_1",
admin "ops-admin"; CA .dev/certs/ca.crt. Stop the broker with Ctrl-C.

INFO
exec "$root/build/broker/ciphermq-broker" --config "$dev/config.toml"
