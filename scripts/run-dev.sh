#!/usr/bin/env bash
# Quick start, part one: install what is missing, build, create development certificates and a
# development config on first run, and start the broker in the foreground on 127.0.0.1:5671
# with the embedded SQLite storage. Everything it makes lives in .dev/ (git-ignored).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/ensure-packages.sh $(grep -v '^#' scripts/packages-build.txt)

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target ciphermq-broker -j"$(nproc)"

dev="$root/.dev"
mkdir -p "$dev"
if [ ! -f "$dev/certs/ca.crt" ]; then
    echo "Creating development certificates in .dev/certs (CA, server, one client per role)"
    bash tests/certs/gen.sh "$dev/certs" >/dev/null
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
