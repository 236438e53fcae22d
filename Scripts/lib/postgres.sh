# A throwaway PostgreSQL server for the tests: installed if missing, a cluster in a temporary directory, owned by an
# unprivileged user (PostgreSQL refuses to run as root), listening on 127.0.0.1 on a free port only; stopped and
# removed on exit, whether the tests passed, failed or were interrupted. Sourced after setup.sh.
#
#   ferry_postgres_start    exports FERRY_TEST_PG_URL (postgres://ferry@127.0.0.1:PORT/ferry_test), unless it is set
#                           already (a developer's own server), and registers the stop on exit. The tests' server runs
#                           with fsync off; FERRY_PG_DURABLE=1 (the benchmarks) keeps PostgreSQL's durable defaults.

# The directory of PostgreSQL's server programs (initdb, pg_ctl, postgres).
ferry_postgres_bin() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && { echo "$dir"; return 0; }
    done
    command -v initdb >/dev/null && command -v pg_ctl >/dev/null && { dirname "$(command -v initdb)"; return 0; }
    return 1
}

# The user the server runs as: the caller when unprivileged, else `postgres` (created by Debian's package), else a
# `ferry-pg` system user made for it.
ferry_postgres_user() {
    if [ "$(id -u)" -ne 0 ]; then id -un; return 0; fi
    if id postgres >/dev/null 2>&1; then echo postgres; return 0; fi
    id ferry-pg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin ferry-pg
    echo ferry-pg
}

# Runs a command as the server's user.
ferry_postgres_as() {
    local user="$1"; shift
    if [ "$(id -un)" = "$user" ]; then "$@"; return; fi
    if command -v runuser >/dev/null; then runuser -u "$user" -- "$@"; else su -s /bin/sh "$user" -c "$(printf '%q ' "$@")"; fi
}

ferry_postgres_stop() {
    [ -n "${ferry_pg_dir:-}" ] || return 0
    if [ -f "$ferry_pg_dir/data/postmaster.pid" ]; then
        ferry_postgres_as "$ferry_pg_user" "$ferry_pg_bin/pg_ctl" -D "$ferry_pg_dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$ferry_pg_dir"
    ferry_pg_dir=""
}

ferry_postgres_start() {
    if [ -n "${FERRY_TEST_PG_URL:-}" ]; then
        echo "==> PostgreSQL: the tests use FERRY_TEST_PG_URL (your server)" >&2
        return 0
    fi
    ferry_pg_bin="$(ferry_postgres_bin)" || { ferry_apt postgresql; ferry_pg_bin="$(ferry_postgres_bin)"; } \
        || { echo "error: PostgreSQL's server programs are not installed (apt-get install postgresql)" >&2; exit 1; }
    ferry_pg_user="$(ferry_postgres_user)"
    ferry_pg_dir="$(mktemp -d "${TMPDIR:-/tmp}/ferry-pg.XXXXXX")"
    trap ferry_postgres_stop EXIT
    trap 'ferry_postgres_stop; exit 130' INT
    trap 'ferry_postgres_stop; exit 143' TERM
    chmod 755 "$ferry_pg_dir"
    [ "$(id -u)" -ne 0 ] || chown "$ferry_pg_user" "$ferry_pg_dir"
    local port
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
    echo "==> PostgreSQL: a cluster in $ferry_pg_dir on 127.0.0.1:$port, as $ferry_pg_user" >&2
    ferry_postgres_as "$ferry_pg_user" "$ferry_pg_bin/initdb" -D "$ferry_pg_dir/data" -U ferry --auth=trust --encoding=UTF8 \
        --locale=C.UTF-8 >"$ferry_pg_dir/initdb.log" 2>&1 \
        || { cat "$ferry_pg_dir/initdb.log" >&2; echo "error: initdb failed" >&2; exit 1; }
    # The tests' own role connects without a password; ferry_cert with a client certificate alone; any other role needs
    # a password (the tests check refused credentials).
    ferry_postgres_as "$ferry_pg_user" sh -c "printf '%s\n' 'local all all trust' 'host all ferry 127.0.0.1/32 trust' \
        'hostssl all ferry_cert 127.0.0.1/32 cert' 'host all all 127.0.0.1/32 scram-sha-256' > '$ferry_pg_dir/data/pg_hba.conf'"
    # TLS with a certificate made here for 127.0.0.1, whose file the tests take as the root (FERRY_TEST_PG_CA).
    local ssl=""
    command -v openssl >/dev/null || ferry_apt openssl
    if command -v openssl >/dev/null; then
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
            -keyout "$ferry_pg_dir/data/server.key" -out "$ferry_pg_dir/data/server.crt" >/dev/null 2>&1 \
            && chmod 600 "$ferry_pg_dir/data/server.key" \
            && { [ "$(id -u)" -ne 0 ] || chown "$ferry_pg_user" "$ferry_pg_dir/data/server.key" "$ferry_pg_dir/data/server.crt"; } \
            && cp "$ferry_pg_dir/data/server.crt" "$ferry_pg_dir/ca.crt" && chmod 644 "$ferry_pg_dir/ca.crt" \
            && ssl="-c ssl=on -c ssl_ca_file=server.crt" && export FERRY_TEST_PG_CA="$ferry_pg_dir/ca.crt"
        # A client certificate for the role ferry_cert, signed with the server's (FERRY_TEST_PG_CLIENT_CERT and _KEY).
        if [ -n "$ssl" ] && openssl req -new -newkey rsa:2048 -nodes -subj "/CN=ferry_cert" -keyout "$ferry_pg_dir/client.key" \
                -out "$ferry_pg_dir/client.csr" >/dev/null 2>&1 \
            && openssl x509 -req -in "$ferry_pg_dir/client.csr" -CA "$ferry_pg_dir/data/server.crt" -CAkey "$ferry_pg_dir/data/server.key" \
                -CAcreateserial -CAserial "$ferry_pg_dir/ca.srl" -days 2 -out "$ferry_pg_dir/client.crt" >/dev/null 2>&1; then
            chmod 600 "$ferry_pg_dir/client.key"
            export FERRY_TEST_PG_CLIENT_CERT="$ferry_pg_dir/client.crt" FERRY_TEST_PG_CLIENT_KEY="$ferry_pg_dir/client.key"
        fi
    fi
    local durability="-c fsync=off"
    [ "${FERRY_PG_DURABLE:-0}" = 1 ] && durability=""
    ferry_postgres_as "$ferry_pg_user" "$ferry_pg_bin/pg_ctl" -D "$ferry_pg_dir/data" -l "$ferry_pg_dir/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $ferry_pg_dir $durability -c max_connections=200 $ssl" start >/dev/null \
        || { cat "$ferry_pg_dir/server.log" >&2; echo "error: the PostgreSQL server did not start" >&2; exit 1; }
    ferry_postgres_as "$ferry_pg_user" "$ferry_pg_bin/createdb" -h 127.0.0.1 -p "$port" -U ferry ferry_test \
        || { echo "error: could not create the test database" >&2; exit 1; }
    export FERRY_TEST_PG_URL="postgres://ferry@127.0.0.1:$port/ferry_test"
    export FERRY_TEST_PG_BIN="$ferry_pg_bin"
}
