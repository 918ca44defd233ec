# Sourced by .ci/run: the board page's browser test drives Debian's chromium
# through playwright-core (which never downloads a browser). Install it when
# missing; refresh the package lists first only if apt cannot find it.
if [ ! -x /usr/bin/chromium ]; then
  echo "ci: installing chromium"
  if ! apt-cache show chromium >/dev/null 2>&1; then
    apt-get update -qq
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
    || { echo "ci: chromium install failed" >&2; exit 1; }
fi
/usr/bin/chromium --version
