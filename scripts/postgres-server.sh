#!/usr/bin/env bash
# A throwaway PostgreSQL server for the database store's tests (store/tests/postgres.rs)
# and for trying `little plan --events postgres://…` by hand: Debian's `postgresql`
# package (installed with apt-get when `initdb` is missing), a cluster in a temporary
# folder, listening on 127.0.0.1 on a free port, with password (scram) authentication over
# TCP, TLS with a certificate of its own when openssl is there, and a role `little_test`
# (random password, CREATEDB) owning a database `little_test`.
#
#   scripts/postgres-server.sh start   start it (installing when needed); print its URL
#   scripts/postgres-server.sh stop    stop it and remove its cluster
#   scripts/postgres-server.sh url     print the URL of the running server (exit 1 if none)
#   scripts/postgres-server.sh ca      print the CA certificate's path (exit 1 if no TLS)
#   scripts/postgres-server.sh restart    restart it (every connection cut), same port and data
#   scripts/postgres-server.sh pause SECONDS
#                                      stop it, wait, start it again (an outage, for tests)
#
# Environment (all optional):
#   LITTLE_POSTGRES_STATE  where the URL, the port and the CA are kept (default: target/postgres-server)
#   LITTLE_POSTGRES_PORT   the port (default: a free one)
#
# Only the URL (or the path) goes to stdout; every message goes to stderr, prefixed
# `postgres-server:`. Exit codes: 0 done; 1 the install or the start failed; 2 usage.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
state=${LITTLE_POSTGRES_STATE:-$root/target/postgres-server}

say() { echo "postgres-server: $*" >&2; }
die() { say "$*"; exit 1; }

bindir() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
        echo "$dir"
    elif command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
        dirname "$(command -v initdb)"
    fi
}

install() {
    [ -n "$(bindir)" ] && return 0
    [ "$(id -u)" = 0 ] || die "initdb is missing and installing postgresql needs root"
    say "installing Debian's postgresql (apt-get)"
    local started=$SECONDS
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2 || die "apt-get could not install postgresql"
    say "postgresql installed in $((SECONDS - started)) s"
    [ -n "$(bindir)" ] || die "postgresql was installed but no initdb was found"
}

free_port() {
    local port
    for _ in $(seq 1 200); do
        port=$((20000 + RANDOM % 30000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    die "no free port found"
}

# Runs a command as the cluster's owner: `postgres` when this is root (the server refuses
# to run as root), else this user.
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
    if url=$(cat "$state/url" 2>/dev/null) && [ -f "$state/cluster" ] &&
        as_owner "$(bindir)/pg_ctl" -D "$(cat "$state/cluster")/data" status >/dev/null 2>&1; then
        say "already running"
        echo "$url"
        return 0
    fi
    # A cluster left by a server that is no longer running (a machine restarted).
    if cluster=$(cat "$state/cluster" 2>/dev/null); then
        case $cluster in /tmp/little-postgres.*) rm -rf "$cluster" ;; esac
    fi
    install
    local bin cluster port password superpw started=$SECONDS
    bin=$(bindir)
    mkdir -p "$state"
    # A folder the cluster's owner can reach (the work tree's parents may not let it in).
    cluster=$(mktemp -d /tmp/little-postgres.XXXXXX)
    chmod 700 "$cluster"
    [ "$(id -u)" = 0 ] && chown postgres: "$cluster"
    echo "$cluster" >"$state/cluster"
    password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
    superpw=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
    echo "$superpw" >"$cluster/.pw"
    [ "$(id -u)" = 0 ] && chown postgres: "$cluster/.pw"
    as_owner "$bin/initdb" -D "$cluster/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
        --pwfile "$cluster/.pw" >"$state/initdb.log" 2>&1 || { cat "$state/initdb.log" >&2; die "initdb failed"; }
    rm -f "$cluster/.pw"
    local tls=()
    rm -f "$state/ca.crt"
    if command -v openssl >/dev/null; then
        # A CA of its own and a server certificate it signed for localhost and 127.0.0.1,
        # so that `verify-full` can be tested with `sslrootcert` naming the CA.
        local d="$cluster/data"
        if openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj "/CN=little test CA" \
            -keyout "$cluster/ca.key" -out "$state/ca.crt" >/dev/null 2>&1 &&
            openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
                -keyout "$d/server.key" -out "$cluster/server.csr" >/dev/null 2>&1 &&
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' >"$cluster/ext" &&
            openssl x509 -req -in "$cluster/server.csr" -CA "$state/ca.crt" -CAkey "$cluster/ca.key" -CAcreateserial \
                -days 7 -extfile "$cluster/ext" -out "$d/server.crt" >/dev/null 2>&1; then
            chmod 600 "$d/server.key"
            [ "$(id -u)" = 0 ] && chown postgres: "$d/server.key" "$d/server.crt"
            tls=(-c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key)
        else
            rm -f "$state/ca.crt"
            say "openssl could not make a certificate; the server runs without TLS"
        fi
    else
        say "no openssl; the server runs without TLS"
    fi
    port=${LITTLE_POSTGRES_PORT:-$(free_port)}
    echo "-p $port -k $cluster -c listen_addresses=127.0.0.1 -c max_connections=300 ${tls[*]}" >"$state/options"
    as_owner "$bin/pg_ctl" -D "$cluster/data" -l "$cluster/server.log" -w -t 60 -o "$(cat "$state/options")" start >&2 ||
        { cat "$cluster/server.log" >&2 2>/dev/null || true; die "the server did not start"; }
    as_owner "$bin/psql" -h "$cluster" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -q >&2 <<SQL ||
CREATE ROLE little_test LOGIN CREATEDB PASSWORD '$password';
CREATE DATABASE little_test OWNER little_test;
SQL
        die "could not create the role little_test"
    url="postgres://little_test:$password@127.0.0.1:$port/little_test"
    echo "$url" >"$state/url"
    chmod 600 "$state/url"
    say "up on 127.0.0.1:$port in $((SECONDS - started)) s${tls:+, with TLS}"
    echo "$url"
}

stop() {
    local cluster
    cluster=$(cat "$state/cluster" 2>/dev/null) || { say "not running"; return 0; }
    if [ -d "$cluster/data" ]; then
        as_owner "$(bindir)/pg_ctl" -D "$cluster/data" -m fast -w stop >&2 || true
    fi
    case $cluster in /tmp/little-postgres.*) rm -rf "$cluster" ;; esac
    rm -f "$state/cluster" "$state/url" "$state/ca.crt"
    say "stopped"
}

# Stops the running server and starts it again after SECONDS, with the same options.
pause() {
    local cluster seconds=${1:?pause needs a number of seconds}
    cluster=$(cat "$state/cluster" 2>/dev/null) || die "not running"
    as_owner "$(bindir)/pg_ctl" -D "$cluster/data" -m fast -w stop >&2 || die "could not stop the server"
    sleep "$seconds"
    as_owner "$(bindir)/pg_ctl" -D "$cluster/data" -l "$cluster/server.log" -w -t 60 -o "$(cat "$state/options")" \
        start >&2 || die "the server did not start again"
    say "down for $seconds s, up again"
}

case ${1:-} in
    start) start ;;
    restart)
        cluster=$(cat "$state/cluster" 2>/dev/null) || die "not running"
        as_owner "$(bindir)/pg_ctl" -D "$cluster/data" -l "$cluster/server.log" -m fast -w restart >&2 || die "the server did not restart"
        ;;
    pause) pause "${2:-}" ;;
    stop) stop ;;
    url) cat "$state/url" 2>/dev/null || exit 1 ;;
    ca) [ -f "$state/ca.crt" ] && echo "$state/ca.crt" || exit 1 ;;
    *)
        echo "usage: $0 start|stop|url|ca|restart|pause SECONDS" >&2
        exit 2
        ;;
esac
