#!/usr/bin/env bash
# One database back as its dump has it (backup.sh's file), on the server the PG* environment names (as a
# superuser): restored into a new database first, in one transaction, and only then put in the old one's place,
# which is kept beside it as DATABASE_replaced_<time> (drop it once the service works: dropdb NAME). A dump
# that cannot be restored leaves the database as it was. Stop the database's service first
# (kubectl scale deploy/NAME --replicas=0): its connections are ended.
#   restore.sh DATABASE FILE
set -euo pipefail
database=${1:?usage: restore.sh DATABASE FILE}
file=${2:?usage: restore.sh DATABASE FILE}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
fresh="${database}_restoring_$stamp"
sql() { psql -X -v ON_ERROR_STOP=1 -At -d "${PGDATABASE:-postgres}" "$@"; }

pg_restore --list "$file" >/dev/null
owner=$(sql -v db="$database" <<'SQL'
SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = :'db'
SQL
)
[ -n "$owner" ] || { echo "restore.sh: no database $database" >&2; exit 1; }
sql -v db="$fresh" -v owner="$owner" <<'SQL'
CREATE DATABASE :"db" OWNER :"owner";
SQL
if ! pg_restore --single-transaction --exit-on-error --dbname="$fresh" "$file"; then
  sql -v db="$fresh" <<'SQL'
DROP DATABASE :"db";
SQL
  echo "restore.sh: $file could not be restored; $database is as it was" >&2
  exit 1
fi
sql -v db="$database" -v fresh="$fresh" -v old="${database}_replaced_$stamp" <<'SQL'
SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = :'db' AND pid <> pg_backend_pid();
ALTER DATABASE :"db" RENAME TO :"old";
ALTER DATABASE :"fresh" RENAME TO :"db";
SQL
echo "restore.sh: $database restored from $file; the one it replaced is ${database}_replaced_$stamp"
