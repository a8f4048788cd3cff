#!/usr/bin/env bash
# Builds this module into the file named by $1, with one fix applied to FerretDB's SQLite backend.
#
# FerretDB 1.24 writes its _id column as `_ferretdb_sjson->'$._id'` in queries, while the unique index it creates on
# _id is on `_ferretdb_sjson->"_id"`. SQLite uses an expression index only for the same expression, so every point
# read, update and delete by _id scans the collection (0.4 s median at 200,000 documents). The fix changes the line
# defining IDColumn to the index's expression. It is applied to a vendored copy in a temporary directory: FerretDB's
# code is never committed here. Used by tools/install.sh and src/embedded/ferretdb.ts alike.
set -euo pipefail

out="$1"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
go_cmd="$(command -v go || true)"
if [[ -z "$go_cmd" && -x /usr/local/go/bin/go ]]; then
  go_cmd=/usr/local/go/bin/go
fi
if [[ -z "$go_cmd" ]]; then
  echo "ferretdb build: Go is required (install Go 1.22+, or set MONGODB_URI)" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/ferretdb-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp "$src"/go.mod "$src"/go.sum "$src"/*.go "$work"/
cd "$work"
"$go_cmd" mod vendor

metadata=vendor/github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata/metadata.go
# shellcheck disable=SC2016 # the backticks are Go's raw string, not a command substitution
sed -i 's|^\tIDColumn = DefaultColumn + "->'"'"'\$\._id'"'"'"$|\tIDColumn = DefaultColumn + `->"_id"`|' "$metadata"
if ! grep -q '^	IDColumn = DefaultColumn + `->"_id"`$' "$metadata"; then
  echo "ferretdb build: the IDColumn line of $metadata was not found; the fix no longer applies to this FerretDB version" >&2
  exit 1
fi

CGO_ENABLED=0 "$go_cmd" build -mod=vendor -trimpath -buildvcs=false -o "$out" .
