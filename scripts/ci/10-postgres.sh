# Sourced by .ci/run: make sure the machine's PostgreSQL server answers, and
# point the server suites at it. Each test run creates and drops its own
# database under this URL, so runs never share state.
if ! pg_isready -h 127.0.0.1 -p 5432 -q; then
  echo "ci: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  for _ in $(seq 1 60); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 0.5; done
  pg_isready -h 127.0.0.1 -p 5432 || { echo "ci: PostgreSQL did not start" >&2; exit 1; }
fi
export ROUNDTABLE_TEST_DATABASE_URL="${ROUNDTABLE_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
