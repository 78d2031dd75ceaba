#!/usr/bin/env bash
# Generates the test PKI into OUTDIR (see README.md beside this script for what each file is
# for). Run by CTest as the fixture_certs test before every test that needs certificates, so:
#  - it does nothing when OUTDIR/.complete is newer than this script (ctest runs it every time);
#  - it builds into a temporary directory and renames it into place, so an interrupted run
#    never leaves a half-filled OUTDIR behind;
#  - concurrent runs on the same OUTDIR take a lock and the loser finds the work done.
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi

script=$(readlink -f "${BASH_SOURCE[0]}")
out=$(readlink -m "$1")
parent=$(dirname "$out")

up_to_date() { [[ -f $out/.complete && $out/.complete -nt $script ]]; }

up_to_date && exit 0

mkdir -p "$parent"
exec 9>"$out.lock"
flock 9
# Another run may have finished while we waited for the lock.
up_to_date && exit 0

work=$(mktemp -d "$out.tmp.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

# Keep the host's openssl.cnf (and its default extensions) out of the result.
export OPENSSL_CONF=/dev/null
# openssl.cnf names the CA directory through this variable; "issue" overrides it per CA.
export CMQ_CA_DIR=.ca
umask 022

cat >openssl.cnf <<'EOF'
# Used both by "openssl req" and by "openssl ca"; the CA's working directory comes from the
# environment so the same file drives the test CA and the unrelated "other" CA.
[ ca ]
default_ca = test_ca

[ test_ca ]
dir = $ENV::CMQ_CA_DIR
database = $dir/index.txt
new_certs_dir = $dir/newcerts
serial = $dir/serial
crlnumber = $dir/crlnumber
certificate = $dir/ca.crt
private_key = $dir/ca.key
default_md = sha256
default_days = 1825
default_crl_days = 3650
policy = policy_any
# Several certificates share a CN on purpose (e.g. publisher-svc-1 under two CAs).
unique_subject = no
copy_extensions = none

[ policy_any ]
commonName = optional
organizationName = optional

[ req ]
distinguished_name = req_dn
prompt = no
[ req_dn ]
CN = unused

[ ca_ext ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[ server_rsa_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[ server_ec_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[ client_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[ crl_ext ]
authorityKeyIdentifier = keyid
EOF

# quiet COMMAND...: openssl ca and genpkey chatter on stderr; show it only when they fail.
quiet() {
    local log
    if ! log=$("$@" 2>&1); then
        printf '%s\n' "$log" >&2
        echo "gen.sh: failed: $*" >&2
        return 1
    fi
}

ec_key() { quiet openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }

# make_ca NAME CN: a self-signed EC P-256 root NAME.crt/NAME.key with its "openssl ca" state
# in .NAME/ (index and serial, needed to revoke and to issue a CRL).
make_ca() {
    local name=$1 cn=$2 dir=".$1"
    mkdir -p "$dir/newcerts"
    : >"$dir/index.txt"
    # Random serials, so certificates from two generations are never confused with each other.
    # (An even number of hex digits: "openssl ca" rejects anything else.)
    echo "10$(openssl rand -hex 7)" >"$dir/serial"
    echo 1000 >"$dir/crlnumber"
    ec_key "$name.key"
    openssl req -config openssl.cnf -new -x509 -key "$name.key" -subj "/CN=$cn" -days 3650 \
        -sha256 -extensions ca_ext -out "$name.crt"
    ln -s "../$name.crt" "$dir/ca.crt"
    ln -s "../$name.key" "$dir/ca.key"
}

# issue CA NAME SUBJECT EXTENSIONS [openssl ca options...]: signs NAME.csr (made from
# NAME.key) with CA into NAME.crt.
issue() {
    local ca=$1 name=$2 subject=$3 ext=$4
    shift 4
    openssl req -config openssl.cnf -new -key "$name.key" -subj "$subject" -out "$name.csr"
    CMQ_CA_DIR=".$ca" quiet openssl ca -config openssl.cnf -batch -notext -preserveDN \
        -extensions "$ext" -in "$name.csr" -out "$name.crt" "$@"
    rm -f "$name.csr"
}

client() {
    local cn=$1
    shift
    ec_key "$cn.key"
    issue ca "$cn" "/CN=$cn" client_ext "$@"
}

make_ca ca "CipherMQ Test CA"
make_ca other-ca "CipherMQ Unrelated Test CA"

# Server, RSA: PKCS#8 as generated, plus the same key in the PKCS#1 form the original broker
# refused.
quiet openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out server.key
openssl pkey -in server.key -traditional -out server-pkcs1.key
issue ca server "/CN=localhost" server_rsa_ext -days 1825

# Server, EC: SEC1 ("BEGIN EC PRIVATE KEY") as the main form, PKCS#8 as the alternative.
ec_key server-ec-pkcs8.key
openssl pkey -in server-ec-pkcs8.key -traditional -out server-ec.key
issue ca server-ec "/CN=localhost" server_ec_ext -days 1825

for cn in publisher-svc-1 worker-svc-1 receiver_1 receiver_2 sender_1 ops-admin ops-admin-2 \
    stranger both-svc svc-a svc-b svc-c receiver; do
    client "$cn" -days 1825
done

# Valid, but not for long: expiry warnings (the console's banner warns 30 days ahead).
client expiring-soon -days 10

# Negative cases.
ec_key expired.key
issue ca expired "/CN=expired-client" client_ext \
    -startdate 20200101000000Z -enddate 20200102000000Z
ec_key notyet.key
issue ca notyet "/CN=notyet-client" client_ext \
    -startdate "$(date -u -d '+1 year' +%Y%m%d%H%M%SZ)" \
    -enddate "$(date -u -d '+2 years' +%Y%m%d%H%M%SZ)"
ec_key nocn.key
issue ca nocn "/O=CipherMQ Tests" client_ext -days 1825
ec_key wrongca-client.key
issue other-ca wrongca-client "/CN=publisher-svc-1" client_ext -days 1825
# Two CNs in one subject: which one is "the" identity depends on the reader, so it is refused.
ec_key twocn.key
issue ca twocn "/CN=receiver_2/CN=receiver_1" client_ext -days 1825
# A CRL from before the revocation below, for tests that revoke at run time (reload).
quiet openssl ca -config openssl.cnf -batch -gencrl -crlexts crl_ext -out ca-empty.crl
client revoked-client -days 1825
mv revoked-client.crt revoked.crt
mv revoked-client.key revoked.key
quiet openssl ca -config openssl.cnf -batch -revoke revoked.crt -crl_reason keyCompromise
quiet openssl ca -config openssl.cnf -batch -gencrl -crlexts crl_ext -out ca.crl

# Key forms the loader must refuse with a clear message: PKCS#8 and legacy PEM encryption.
openssl pkey -in server.key -aes256 -passout pass:ciphermq -out encrypted.key
openssl pkey -in server.key -traditional -aes256 -passout pass:ciphermq -out encrypted-pkcs1.key

rm -rf .ca .other-ca openssl.cnf
chmod 0600 ./*.key
chmod 0755 .
touch .complete

# Swap the finished directory in. A stale OUTDIR is moved aside first because rename(2) does
# not replace a non-empty directory.
if [[ -e $out ]]; then
    old=$(mktemp -d "$out.old.XXXXXX")
    mv -T "$out" "$old/dir"
    rm -rf "$old"
fi
mv -T "$work" "$out"
trap - EXIT
