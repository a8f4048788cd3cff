#!/usr/bin/env bash
# Builds the old-era signers (OldSigners.java beside this file) against the artifacts that did the signing in the
# Android Gradle Plugin 1.5 and 3.1, from Maven Central, all cached under .cache/old-signers/. Idempotent: each jar is
# downloaded once (its SHA-256 checked) and the classes are compiled once per version of the source. Prints the Java
# classpath to run OldSigners with. Needs javac (17 is enough) and Maven Central on first use.
set -euo pipefail

# Pinned with their SHA-256 (each also matched Maven Central's .sha1 when pinned), so the signers cannot change
# under the tests:
#   builder 1.5.0       the Android Gradle Plugin 1.5's builder (November 2015), holding its SignedJarBuilder;
#   bcprov, bcpkix 1.48 the Bouncy Castle that builder's pom names, with which SignedJarBuilder writes its PKCS#7;
#   apksig 3.1.4        the apksig the Android Gradle Plugin 3.1.4's builder depends on (v1 and v2, no v3 yet).
ARTIFACTS=(
  "com/android/tools/build/builder/1.5.0/builder-1.5.0.jar b78d53be1328dbfb66d64c697bc273d11ea905a1449127e6e6687272fe566c0e"
  "org/bouncycastle/bcprov-jdk15on/1.48/bcprov-jdk15on-1.48.jar 804b7e2e3b9ac771dfd3b43de16666ac6008f8600f48f28ddc94e39a114e2288"
  "org/bouncycastle/bcpkix-jdk15on/1.48/bcpkix-jdk15on-1.48.jar 53473336b4e5aad77968a18b16c54d15cdbc43f3e57a1878799edf6941d0ba37"
  "com/android/tools/build/apksig/3.1.4/apksig-3.1.4.jar 59adc336a67965866dadf6c0e1b9752b8f00535f87bf6cf12dbf7a57e7874575"
)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="$root/.cache/old-signers"
mkdir -p "$cache"

jars=()
for artifact in "${ARTIFACTS[@]}"; do
  read -r rel sha256 <<<"$artifact"
  jar="$cache/$(basename "$rel")"
  if [[ ! -f "$jar" ]] || [[ "$(sha256sum "$jar" | cut -d' ' -f1)" != "$sha256" ]]; then
    curl -sSfL --retry 3 -o "$jar.tmp.$$" "https://repo1.maven.org/maven2/$rel"
    got="$(sha256sum "$jar.tmp.$$" | cut -d' ' -f1)"
    if [[ "$got" != "$sha256" ]]; then
      rm -f "$jar.tmp.$$"
      echo "build.sh: $(basename "$rel") has SHA-256 $got, expected $sha256" >&2
      exit 1
    fi
    mv -f "$jar.tmp.$$" "$jar"
  fi
  jars+=("$jar")
done
classpath="$(IFS=:; echo "${jars[*]}")"

# Classes per version of the source (and of the jars), so an edit is always compiled and old builds never run.
key="$( (cat "$here/OldSigners.java"; printf '%s\n' "${ARTIFACTS[@]}") | sha256sum | cut -c1-16)"
classes="$cache/classes-$key"
if [[ ! -f "$classes/OldSigners.class" ]]; then
  tmp="$classes.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  javac -nowarn -d "$tmp" -cp "$classpath" "$here/OldSigners.java" >&2
  rm -rf "$classes"
  mv "$tmp" "$classes" 2>/dev/null || rm -rf "$tmp" # a concurrent build may have finished first
  for old in "$cache"/classes-*; do
    [[ "$old" == "$classes" || "$old" == *.tmp.* ]] || rm -rf "$old"
  done
fi

echo "$classpath:$classes"
