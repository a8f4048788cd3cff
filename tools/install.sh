#!/usr/bin/env bash
# Builds the Go servers of the test bed and the embedded default into
# .cache/bin from the Go module proxy. Idempotent: a binary that is already up
# to date is kept, so CI and developers can run this on every start.
set -euo pipefail

VERSITYGW_VERSION=v1.8.0

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/.cache/bin"
mkdir -p "$bin"

go_cmd="$(command -v go || true)"
if [[ -z "$go_cmd" && -x /usr/local/go/bin/go ]]; then
  go_cmd=/usr/local/go/bin/go
fi
if [[ -z "$go_cmd" ]]; then
  echo "install.sh: Go is required (FerretDB and versitygw are built from the Go module proxy)" >&2
  exit 1
fi

# FerretDB: rebuilt when any file of tools/ferretdb (main, go.mod, go.sum, build.sh, patches/) is newer than the
# binary. tools/ferretdb/build.sh applies the _id index fix and the pushdown patches; src/embedded/ferretdb.ts runs
# the same script. ferretdb-reference is the same FerretDB without the patches (FERRETDB_PATCHES=none): the
# differential test (test/integration/ferretdb-pushdown.test.ts) requires both to answer every query alike.
src="$root/tools/ferretdb"
build_ferretdb() { # $1: binary name under .cache/bin, $2: FERRETDB_PATCHES
  local target="$bin/$1"
  if [[ ! -x "$target" ]] || [[ -n "$(find "$src" -type f -newer "$target" -print -quit)" ]]; then
    echo "install.sh: building $1 (a few minutes on a cold Go cache)"
    start=$SECONDS
    # Build beside the target and rename, so a concurrent reader never runs a half-written file.
    FERRETDB_PATCHES="$2" bash "$src/build.sh" "$target.tmp.$$"
    mv -f "$target.tmp.$$" "$target"
    echo "install.sh: $1 built in $((SECONDS - start))s"
  else
    echo "install.sh: $1 up to date"
  fi
}
build_ferretdb ferretdb all
build_ferretdb ferretdb-reference none

# versitygw: kept when the binary there was built from the pinned version.
if "$go_cmd" version -m "$bin/versitygw" 2>/dev/null \
  | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/versity/versitygw[[:space:]]+$VERSITYGW_VERSION[[:space:]]"; then
  echo "install.sh: versitygw $VERSITYGW_VERSION up to date"
else
  echo "install.sh: building versitygw $VERSITYGW_VERSION (a few minutes on a cold Go cache)"
  start=$SECONDS
  # -trimpath and CGO off mirror the FerretDB build: a static binary that does not depend on the build directory.
  CGO_ENABLED=0 GOBIN="$bin" "$go_cmd" install -trimpath \
    "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
  echo "install.sh: versitygw built in $((SECONDS - start))s"
fi

# rcodesign (crate apple-codesign): signs the Mach-O executables and .app bundles of the test IPAs on Linux, and
# its `verify` is the oracle the iOS seal tests compare with. Pinned to 0.29.0, the newest release on crates.io
# when it was added, built --locked with its own lock file and with the Rust 1.95 toolchain of these machines
# (its rust-version is 1.81). Default features off: they only add notarization (AWS SDK, App Store Connect),
# which the tests never use, and would double the build time. The target dir lives under .cache so an
# interrupted or repeated build reuses what was compiled; the binary is kept when it reports the pinned version.
RCODESIGN_VERSION=0.29.0
if [[ -x "$bin/rcodesign" ]] && "$bin/rcodesign" --version 2>/dev/null | grep -q " $RCODESIGN_VERSION\$"; then
  echo "install.sh: rcodesign $RCODESIGN_VERSION up to date"
else
  if ! command -v cargo >/dev/null; then
    echo "install.sh: cargo is required (rcodesign is built from crates.io)" >&2
    exit 1
  fi
  echo "install.sh: building rcodesign $RCODESIGN_VERSION (several minutes on a cold cargo cache)"
  start=$SECONDS
  # --root .cache puts the binary in .cache/bin; cargo install replaces it only once the build succeeded.
  cargo install --locked --quiet --no-default-features --root "$root/.cache" \
    --target-dir "$root/.cache/cargo-target/rcodesign" "apple-codesign@$RCODESIGN_VERSION" --bin rcodesign
  echo "install.sh: rcodesign built in $((SECONDS - start))s"
fi
