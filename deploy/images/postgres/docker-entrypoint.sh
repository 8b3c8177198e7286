#!/usr/bin/env bash
# The official postgres image's start-up contract, for the stand-in image (see the Dockerfile).
set -Eeuo pipefail

if [ "${1:-}" != postgres ]; then exec "$@"; fi

# As root: own the data folder, then run everything below as the postgres user.
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA"
  chown -R postgres:postgres "$PGDATA"
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "docker-entrypoint: the database is uninitialised and POSTGRES_PASSWORD is not set" >&2
    exit 1
  fi
  initdb --username="$user" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  {
    echo "listen_addresses = '*'"
    echo "unix_socket_directories = '/var/run/postgresql'"
  } >>"$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"

  # A private start on the socket only, to make the database and run the init scripts.
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ "$db" != postgres ]; then
    # psql interpolates :"db" (quoted as an identifier) only in what it reads, not in -c.
    psql -v ON_ERROR_STOP=1 --username "$user" --dbname postgres --set db="$db" >/dev/null <<<'CREATE DATABASE :"db"'
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh) echo "docker-entrypoint: running $f"; . "$f" ;;
      *.sql) echo "docker-entrypoint: running $f"; psql -v ON_ERROR_STOP=1 --username "$user" --dbname "$db" -f "$f" ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "docker-entrypoint: database $db initialised for $user"
fi

exec postgres "${@:2}"
