#!/usr/bin/env bash
# A logical backup of every database of the PostgreSQL server that the PG* environment names (PGHOST, PGUSER,
# PGPASSWORD...): one pg_dump file (custom format) per database under DIR/<UTC time>/, each read back by
# pg_restore --list before the folder is kept. Folders older than BACKUP_KEEP_DAYS days are removed.
# BACKUP_DATABASES (names, space-separated) narrows it to those.
#   backup.sh DIR          (the CronJob postgres-dumps runs it nightly; infra/k8s/README.md: Back up and restore)
set -euo pipefail
dir=${1:?usage: backup.sh DIR}
keep_days=${BACKUP_KEEP_DAYS:-14}
stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
work="$dir/.partial-$stamp"
mkdir -p "$work"
databases=${BACKUP_DATABASES:-$(psql -X -At -d "${PGDATABASE:-postgres}" \
  -c "SELECT datname FROM pg_database WHERE NOT datistemplate AND datname <> 'postgres' ORDER BY datname")}
for database in $databases; do
  pg_dump --format=custom --file="$work/$database.dump" "$database"
  pg_restore --list "$work/$database.dump" >/dev/null  # a dump pg_restore cannot read is no backup
done
mv "$work" "$dir/$stamp"
echo "backup.sh: $(echo "$databases" | wc -w) databases in $dir/$stamp"
find "$dir" -mindepth 1 -maxdepth 1 -type d -name '20*' -mtime "+$keep_days" -exec rm -rf {} +
find "$dir" -mindepth 1 -maxdepth 1 -type d -name '.partial-*' -mmin +1440 -exec rm -rf {} +
