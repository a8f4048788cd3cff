#!/usr/bin/env bash
# Builds the apksig oracle (ApksigOracle.java beside this file) against Google's apksig library from Maven Central,
# both cached under .cache/apksig-oracle/. Idempotent: the jar is downloaded once (its SHA-256 checked) and the
# classes are compiled once per version of the source. Prints the Java classpath to run the oracle with.
# Needs javac (17 is enough: apksig's classes are Java 8) and Maven Central.
set -euo pipefail

# 9.5.1 is the newest apksig on Maven Central: it signs and verifies APK Signature Scheme v3.1 (Debian's apksigner,
# 31.0.2, predates v3.1 and can do neither), and has no v3.2 yet, so its verdicts are the ones of the schemes the
# verifier knows. Pinned with its SHA-256 so the oracle cannot change under the tests.
APKSIG_VERSION=9.5.1
APKSIG_SHA256=7ae2e5980c77d853e3513074ee7c822bbdcdcde1668889d17faa7fe8bc8aa821

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="$root/.cache/apksig-oracle"
mkdir -p "$cache"

jar="$cache/apksig-$APKSIG_VERSION.jar"
if [[ ! -f "$jar" ]] || [[ "$(sha256sum "$jar" | cut -d' ' -f1)" != "$APKSIG_SHA256" ]]; then
  url="https://repo1.maven.org/maven2/com/android/tools/build/apksig/$APKSIG_VERSION/apksig-$APKSIG_VERSION.jar"
  curl -sSfL --retry 3 -o "$jar.tmp.$$" "$url"
  got="$(sha256sum "$jar.tmp.$$" | cut -d' ' -f1)"
  if [[ "$got" != "$APKSIG_SHA256" ]]; then
    rm -f "$jar.tmp.$$"
    echo "build.sh: apksig-$APKSIG_VERSION.jar has SHA-256 $got, expected $APKSIG_SHA256" >&2
    exit 1
  fi
  mv -f "$jar.tmp.$$" "$jar"
fi

# Classes per version of the source (and of the jar), so an edit is always compiled and old builds never run.
key="$( (cat "$here/ApksigOracle.java"; echo "$APKSIG_SHA256") | sha256sum | cut -c1-16)"
classes="$cache/classes-$key"
if [[ ! -f "$classes/ApksigOracle.class" ]]; then
  tmp="$classes.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  javac -nowarn -d "$tmp" -cp "$jar" "$here/ApksigOracle.java" >&2
  rm -rf "$classes"
  mv "$tmp" "$classes" 2>/dev/null || rm -rf "$tmp" # a concurrent build may have finished first
  for old in "$cache"/classes-*; do
    [[ "$old" == "$classes" || "$old" == *.tmp.* ]] || rm -rf "$old"
  done
fi

echo "$jar:$classes"
