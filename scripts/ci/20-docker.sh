# Sourced by .ci/run after 10-postgres.sh: make sure a Docker engine in Swarm
# mode answers on a private socket, build the runner image, and point the
# container suites at it. Reuses a daemon already answering on the socket;
# stops the daemon on exit only if this script started it.
#
# Exports DOCKER_HOST and ROUNDTABLE_RUNNER_IMAGE.
# Overridable: ROUNDTABLE_DOCKER_SOCKET, ROUNDTABLE_DOCKER_STATE.

rt_docker_socket="${ROUNDTABLE_DOCKER_SOCKET:-/run/roundtable/docker.sock}"
rt_docker_state="${ROUNDTABLE_DOCKER_STATE:-/var/lib/roundtable-docker}"
rt_docker_exec_root="/run/roundtable/docker-exec"
rt_docker_pidfile="/run/roundtable/docker.pid"
export DOCKER_HOST="unix://$rt_docker_socket"
export ROUNDTABLE_RUNNER_IMAGE="${ROUNDTABLE_RUNNER_IMAGE:-roundtable-runner:latest}"

rt_docker_fail() {
  echo "ci: docker: $*" >&2
  [ -f /run/roundtable/dockerd.log ] && tail -n 30 /run/roundtable/dockerd.log >&2
  exit 1
}

rt_docker_answers() { timeout 5 docker version >/dev/null 2>&1; }

if ! command -v dockerd >/dev/null 2>&1 || ! { [ -x /bin/busybox ] || [ -x /usr/bin/busybox ]; }; then
  echo "ci: installing docker.io and busybox-static"
  apt-get update -qq || rt_docker_fail "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io busybox-static >/dev/null \
    || rt_docker_fail "apt-get install failed"
fi

if rt_docker_answers; then
  echo "ci: docker: reusing the engine on $rt_docker_socket"
else
  echo "ci: docker: starting dockerd on $rt_docker_socket"
  mkdir -p "$(dirname "$rt_docker_socket")" "$rt_docker_state" "$rt_docker_exec_root"
  # A stale pidfile from a killed run makes dockerd refuse to start.
  if [ -f "$rt_docker_pidfile" ] && ! kill -0 "$(cat "$rt_docker_pidfile")" 2>/dev/null; then
    rm -f "$rt_docker_pidfile"
  fi
  dockerd --host "unix://$rt_docker_socket" \
    --data-root "$rt_docker_state" --exec-root "$rt_docker_exec_root" \
    --pidfile "$rt_docker_pidfile" --iptables=false --bridge=none \
    >/run/roundtable/dockerd.log 2>&1 &
  rt_dockerd_pid=$!

  rt_docker_stop() {
    [ -n "${rt_dockerd_pid:-}" ] || return 0
    echo "ci: docker: stopping dockerd ($rt_dockerd_pid)"
    kill "$rt_dockerd_pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$rt_dockerd_pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$rt_dockerd_pid" 2>/dev/null || true
    rt_dockerd_pid=""
  }
  # .ci/run sources this file: chain onto any EXIT trap already installed
  # (trap -p prints it quoted for re-use) instead of replacing it.
  rt_prev_exit_trap="$(trap -p EXIT)"
  if [ -n "$rt_prev_exit_trap" ]; then
    eval "set -- $rt_prev_exit_trap"
    trap "rt_docker_stop; $3" EXIT
  else
    trap rt_docker_stop EXIT
  fi

  rt_deadline=$((SECONDS + 60))
  until rt_docker_answers; do
    kill -0 "$rt_dockerd_pid" 2>/dev/null || rt_docker_fail "dockerd exited during start-up"
    [ "$SECONDS" -lt "$rt_deadline" ] || rt_docker_fail "dockerd did not answer within 60 s"
    sleep 0.5
  done
fi

if [ "$(docker info --format '{{.Swarm.LocalNodeState}}' 2>/dev/null)" != "active" ]; then
  echo "ci: docker: swarm init"
  docker swarm init --advertise-addr 127.0.0.1 >/dev/null || rt_docker_fail "swarm init failed"
fi
rt_deadline=$((SECONDS + 60))
until [ "$(docker info --format '{{.Swarm.ControlAvailable}}' 2>/dev/null)" = "true" ]; do
  [ "$SECONDS" -lt "$rt_deadline" ] || rt_docker_fail "swarm manager not ready within 60 s"
  sleep 0.5
done

scripts/runner-image.sh "$ROUNDTABLE_RUNNER_IMAGE" || rt_docker_fail "could not build the runner image"
