# Sourced by .ci/run: the board page's browser test drives Debian's chromium
# through playwright-core (which never downloads a browser). Install it when
# missing; refresh the package lists only when apt cannot install from the
# ones it has (unknown package, or stale lists pointing at removed files).
ci_install_chromium() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
}
if [ ! -x /usr/bin/chromium ]; then
  echo "ci: installing chromium"
  if ! ci_install_chromium; then
    apt-get update -qq
    ci_install_chromium || { echo "ci: chromium install failed" >&2; exit 1; }
  fi
fi
dpkg-query -W chromium
