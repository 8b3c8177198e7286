#!/usr/bin/env bash
# docker-compose.yml's `postgres-standby` (profile `standby`): a streaming, synchronous standby of
# `postgres`. On first start it copies the primary (pg_basebackup; -R writes the connection to follow
# it); afterwards it resumes streaming from where it stopped. Promote it
# when the primary is lost:
#   deploy/compose exec -u postgres postgres-standby pg_ctl promote -D /var/lib/postgresql/data
set -Eeuo pipefail
data=${PGDATA:-/var/lib/postgresql/data}
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$data"
  chown -R postgres:postgres "$data"
  chmod 700 "$data"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$data/PG_VERSION" ]; then
  echo "standby: copying the primary (postgres) into $data"
  # PGPASSWORD comes from the environment (never on a command line); -R keeps it in the copy's
  # postgresql.auto.conf, inside this container's own volume. The primary holds every commit until
  # a standby has it (synchronous_standby_names), so it keeps the WAL this one still needs.
  until pg_basebackup -h postgres -U "${POSTGRES_USER:-compass}" -D "$data" -X stream -R -c fast; do
    echo "standby: the primary is not ready for a copy yet; retrying in 2 s"
    rm -rf "${data:?}"/*
    sleep 2
  done
fi
# A standby promoted to primary has no standby of its own: it must not wait for one.
exec postgres -c hba_file=/etc/compass/pg_hba.conf -c synchronous_standby_names= "$@"
