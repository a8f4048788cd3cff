#!/usr/bin/env bash
# Builds this module into the file named by $1, with fixes applied to FerretDB's SQLite backend.
#
# FerretDB 1.24 writes its _id column as `_ferretdb_sjson->'$._id'` in queries, while the unique index it creates on
# _id is on `_ferretdb_sjson->"_id"`. SQLite uses an expression index only for the same expression, so every point
# read, update and delete by _id scans the collection (0.4 s median at 200,000 documents). The fix changes the line
# defining IDColumn to the index's expression.
#
# Then the patches in patches/, in order (each starts with a comment saying what it does and why): the handler
# passes the sort and limit as hints (01), the SQLite backend pushes filters down as a pre-filter on the indexes'
# expressions (02), and the sort with its limit where the field's values allow (03); resources are tracked in
# debug builds only (04) and stored scalars decoded without a json.Decoder each (05). They are applied with
# `patch --fuzz=0` after a dry run: a patch that no longer applies exactly stops the build.
#
# All of it is applied to a vendored copy in a temporary directory: FerretDB's code is never committed here.
# Used by tools/install.sh and src/embedded/ferretdb.ts alike. FERRETDB_PATCHES=none builds without the patches
# (the differential test's reference); FERRETDB_PATCHES="01 02" applies only those.
set -euo pipefail

out="$(realpath -m "$1")" # absolute: the build runs in a temporary directory
src="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
go_cmd="$(command -v go || true)"
if [[ -z "$go_cmd" && -x /usr/local/go/bin/go ]]; then
  go_cmd=/usr/local/go/bin/go
fi
if [[ -z "$go_cmd" ]]; then
  echo "ferretdb build: Go is required (install Go 1.22+, or set MONGODB_URI)" >&2
  exit 1
fi
if ! command -v patch >/dev/null; then
  echo "ferretdb build: the patch command is required" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/ferretdb-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp "$src"/go.mod "$src"/go.sum "$src"/*.go "$work"/
cd "$work"
"$go_cmd" mod vendor

ferretdb=vendor/github.com/FerretDB/FerretDB
metadata=$ferretdb/internal/backends/sqlite/metadata/metadata.go
# shellcheck disable=SC2016 # the backticks are Go's raw string, not a command substitution
sed -i 's|^\tIDColumn = DefaultColumn + "->'"'"'\$\._id'"'"'"$|\tIDColumn = DefaultColumn + `->"_id"`|' "$metadata"
if ! grep -q '^	IDColumn = DefaultColumn + `->"_id"`$' "$metadata"; then
  echo "ferretdb build: the IDColumn line of $metadata was not found; the fix no longer applies to this FerretDB version" >&2
  exit 1
fi

selected="${FERRETDB_PATCHES:-all}"
for p in "$src"/patches/*.patch; do
  name="$(basename "$p")"
  if [[ "$selected" != all && " $selected " != *" ${name%%-*} "* ]]; then
    continue
  fi
  if ! out_dry="$(patch -p1 -d "$ferretdb" --forward --fuzz=0 --no-backup-if-mismatch --dry-run < "$p" 2>&1)"; then
    echo "ferretdb build: patch $name no longer applies to this FerretDB version:" >&2
    echo "$out_dry" >&2
    exit 1
  fi
  patch -p1 -d "$ferretdb" --forward --fuzz=0 --no-backup-if-mismatch --quiet < "$p"
done

CGO_ENABLED=0 "$go_cmd" build -mod=vendor -trimpath -buildvcs=false -o "$out" .
