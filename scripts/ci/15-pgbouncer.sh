# Sourced by .ci/run after 10-postgres.sh: PgBouncer's binary for the suites
# that run the store and whole nodes behind a transaction pooler (each starts
# a private one on a free port: test/support/privatePgbouncer.ts). Nothing is
# started here; the package's own service is left alone.
#
# Exports ROUNDTABLE_PGBOUNCER.
if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ]; then
  echo "ci: installing pgbouncer"
  apt-get update -qq || { echo "ci: pgbouncer: apt-get update failed" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null \
    || { echo "ci: pgbouncer: apt-get install failed" >&2; exit 1; }
fi
if command -v pgbouncer >/dev/null 2>&1; then
  export ROUNDTABLE_PGBOUNCER="$(command -v pgbouncer)"
else
  export ROUNDTABLE_PGBOUNCER=/usr/sbin/pgbouncer
fi
"$ROUNDTABLE_PGBOUNCER" --version | head -n 1
