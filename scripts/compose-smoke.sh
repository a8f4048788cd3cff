#!/usr/bin/env bash
# Builds the image, starts compose.yaml and walks a newcomer's first steps against it: /healthz, an app and a key
# made by the operator CLI inside the container, /v1/whoami with that key, and an APK (built by aapt and signed by
# apksigner, test/fixtures/build-packages.ts) uploaded by the built shieldgate-ci, waiting for its static scan.
# Without a Docker engine it says so and succeeds: nothing here can be checked without one.
#   bash scripts/compose-smoke.sh            (SMOKE_PORT: the host port to publish, default 18080)
set -euo pipefail

if ! command -v docker >/dev/null 2>&1 || ! docker info >/dev/null 2>&1; then
  echo "compose smoke skipped: no docker engine"
  exit 0
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
port="${SMOKE_PORT:-18080}"
project="shieldgate-smoke-$$"
work="$(mktemp -d)"
export SHIELDGATE_PORT="$port" PUBLIC_BASE_URL="http://127.0.0.1:$port"
KEY_ENCRYPTION_KEY="$(openssl rand -base64 32)"
export KEY_ENCRYPTION_KEY
compose=(docker compose -p "$project" -f compose.yaml)

cleanup() {
  local code=$?
  if [[ $code -ne 0 ]]; then "${compose[@]}" logs --no-color --tail 80 shieldgate >&2 || true; fi
  "${compose[@]}" down --volumes --remove-orphans >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$code"
}
trap cleanup EXIT

step() { echo "compose smoke: $*"; }
json() { node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const v=JSON.parse(s)$1;if(v===undefined||v===null)process.exit(1);console.log(v)})"; }

step "building the image and starting the stack (waits for every health check)"
start=$SECONDS
"${compose[@]}" up --build --detach --wait --wait-timeout 180
step "healthy in $((SECONDS - start))s"

step "GET /healthz"
curl -fsS "http://127.0.0.1:$port/healthz" | json '.status' | grep -qx ok

step "an app and a key through the operator CLI in the container"
cli() { "${compose[@]}" exec -T shieldgate node bin/shieldgate.js "$@"; }
app_id="$(cli app create --name "Compose smoke" --plan startup | json '.id')"
key="$(cli key create --app "$app_id" --scopes builds:write,builds:read,scans:read | json '.key')"

step "GET /v1/whoami with the key (${key:0:4}...)"
curl -fsS -H "Authorization: Bearer $key" "http://127.0.0.1:$port/v1/whoami" | json '.appId' | grep -qx "$app_id"

step "building a signed APK with aapt and apksigner"
apk="$(npx tsx -e "
  const f = require('./test/fixtures/build-packages');
  f.buildApk({ manifest: f.androidManifest({ minSdk: 24, targetSdk: 34 }), sign: 'release' })
    .then(async (p) => { require('node:fs').copyFileSync(p, '$work/app.apk'); await f.cleanupFixtures(); console.log('$work/app.apk'); });
")"

step "uploading it with shieldgate-ci and waiting for its scan"
[[ -f client/dist/cli.js ]] || npm run build:client >/dev/null
result="$(SHIELDGATE_URL="http://127.0.0.1:$port" SHIELDGATE_API_KEY="$key" \
  node client/bin/shieldgate-ci.js upload --app "$app_id" --file "$apk" --platform android --version 1.0.0 --wait --timeout 300 --json)"
grade="$(echo "$result" | json '.grade')"
step "scan $(echo "$result" | json '.scanId') finished with grade $grade"
step "passed"
