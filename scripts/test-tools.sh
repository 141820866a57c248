#!/usr/bin/env bash
# The Debian packages the tests need, installed once: a no-op (no apt, no network) when all are
# present. `make test` runs it; run it by hand on a machine where make is not root.
#   chromium       tests/web/test_*browser*.py drive it headless through Playwright, which is told
#                  its path: Playwright's own browser download is never used.
#   nginx-light    tests/workers/test_front_nginx.py runs docker-compose.yml's `front` in front of
#                  two bot replicas; nothing is started as a service.
#   docker-compose tests/workers/test_compose.py validates docker-compose.yml with 1.29, offline,
#                  with no Docker engine.
#   redis-server   every test session starts a Redis of its own (tests/support/redis_server.py).
#   faketime       tests/bench/test_soak.py runs one bot replica with its clock skewed (libfaketime).
#   espeak-ng      tests/media/test_spoken_voice.py says replies aloud with it (KINDRED_TTS_BACKEND=espeak)
#                  and decodes what it made.
set -euo pipefail

# package, then the programs any one of which means it is there
wanted=(
    "chromium chromium /usr/bin/chromium"
    "nginx-light nginx /usr/sbin/nginx"
    "docker-compose docker-compose"
    "redis-server redis-server"
    "faketime faketime"
    "espeak-ng espeak-ng"
)

present() {
    local program
    for program in "$@"; do
        if command -v "$program" >/dev/null 2>&1 || [ -x "$program" ]; then
            return 0
        fi
    done
    return 1
}

missing=()
for entry in "${wanted[@]}"; do
    read -r package programs <<<"$entry"
    # shellcheck disable=SC2086  # the programs are words on purpose
    present $programs || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing for the tests: ${missing[*]}" >&2
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
# The package lists may be stale or absent in a fresh container: update only when install fails.
"${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || {
    "${sudo[@]}" apt-get update -qq >/dev/null
    "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
}
