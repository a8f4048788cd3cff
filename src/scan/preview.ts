import type { Finding, Platform } from './model/types';

/** What a client declared when registering a build; the preview engine sees nothing else. */
export type PreviewMeta = {
  platform: Platform;
  version: string;
  commit: string | null;
  artifact: { sizeBytes: number; sha256: string } | null;
  keyMode: 'live' | 'test' | 'oidc';
  /** Verified claims of the CI job that registered the build (OIDC access tokens only). */
  provenance?: { sha: string | null; runnerEnvironment: string | null } | null;
};

// SHA-256 of zero bytes: a declared artifact with this hash is an empty file.
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i; // SHA-1 or SHA-256 object names
const ABBREVIATED_SHA = /^[0-9a-f]{4,39}$/i;
// Markers of builds that are not meant to ship; matched as whole words of the version.
const DEBUG_MARKERS = /(?:^|[-.+_])(snapshot|debug|dev|devel|local|wip|dirty|test)(?:$|[-.+_\d])/i;
const PRERELEASE_MARKERS = /(?:^|[-.+_])(alpha|beta|rc|preview|canary|nightly|pre)(?:$|[-.+_\d])/i;
const PLACEHOLDER_VERSION = /^v?0(?:\.0)*$/i;

/** Findings from build metadata alone; pure and deterministic. */
export function previewFindings(meta: PreviewMeta): Finding[] {
  return [...commitFindings(meta), ...provenanceFindings(meta), ...versionFindings(meta), ...artifactFindings(meta), ...credentialFindings(meta)];
}

function provenanceFindings(meta: PreviewMeta): Finding[] {
  const p = meta.provenance;
  if (!p) return [];
  const findings: Finding[] = [];
  const commit = meta.commit?.trim() ?? '';
  // Only a full SHA can be compared; a missing or abbreviated one already has its own finding.
  if (p.sha && FULL_SHA.test(commit) && commit.toLowerCase() !== p.sha.toLowerCase()) {
    findings.push({
      id: 'preview.commit-mismatch',
      severity: 'high',
      title: 'Declared commit differs from the commit the CI job ran on',
      detail: `The build declares commit ${commit}, but the verified OIDC token of the job that registered it says the job ran on ${p.sha}.`,
      fix: 'Declare the commit the job checked out ("commit": "${GITHUB_SHA}"), or build in a job that runs on the commit you release.',
    });
  }
  if (p.runnerEnvironment === 'self-hosted') {
    findings.push({
      id: 'preview.self-hosted-runner',
      severity: 'low',
      title: 'Build registered from a self-hosted runner',
      detail: 'The job that registered this build ran on a self-hosted runner, whose machine and earlier jobs GitHub does not isolate.',
      fix: 'Build release packages on GitHub-hosted runners, or use ephemeral (just-in-time) self-hosted runners and pin the workflow in the trust rule.',
    });
  }
  return findings;
}

function commitFindings(meta: PreviewMeta): Finding[] {
  const commit = meta.commit?.trim() ?? '';
  if (commit === '') {
    return [
      {
        id: 'preview.commit-missing',
        severity: 'medium',
        title: 'Build registered without a source commit',
        detail: `Version ${meta.version} was registered with commit null, so the binary cannot be traced to the source it was built from.`,
        fix: 'Send the full commit SHA when registering the build, e.g. "commit": "${GITHUB_SHA}" (or the output of `git rev-parse HEAD`).',
      },
    ];
  }
  if (FULL_SHA.test(commit)) return [];
  if (ABBREVIATED_SHA.test(commit)) {
    return [
      {
        id: 'preview.commit-abbreviated',
        severity: 'low',
        title: 'Commit is an abbreviated SHA',
        detail: `Commit "${commit}" has ${commit.length} hex digits; abbreviated SHAs can become ambiguous as the repository grows.`,
        fix: 'Send the full 40-hex commit SHA: `git rev-parse HEAD` instead of `git rev-parse --short HEAD`.',
      },
    ];
  }
  return [
    {
      id: 'preview.commit-not-sha',
      severity: 'medium',
      title: 'Commit is a branch or tag name, not a SHA',
      detail: `Commit "${commit}" is not a commit SHA; a branch or tag name moves, so it does not identify the source of this build.`,
      fix: 'Send the full 40-hex commit SHA the build was made from, e.g. "commit": "${GITHUB_SHA}" or `git rev-parse HEAD`.',
    },
  ];
}

function versionFindings(meta: PreviewMeta): Finding[] {
  const version = meta.version.trim();
  const productionKey = meta.keyMode !== 'test';
  const debug = DEBUG_MARKERS.exec(version);
  if (debug) {
    return [
      {
        id: 'preview.version-debug',
        // A debug build registered with a production credential is likely about to ship by mistake.
        severity: productionKey ? 'high' : 'low',
        title: 'Version looks like a debug or snapshot build',
        detail: `Version "${version}" contains the marker "${debug[1]}" and was registered with a ${keyLabel(meta.keyMode)}.`,
        fix: `Register release builds with their release version (e.g. "1.4.2"); build with the release variant (\`./gradlew assembleRelease\` / Xcode Release configuration) and drop the "${debug[1]}" suffix.`,
      },
    ];
  }
  if (PLACEHOLDER_VERSION.test(version)) {
    return [
      {
        id: 'preview.version-placeholder',
        severity: productionKey ? 'medium' : 'low',
        title: 'Version is a placeholder',
        detail: `Version "${version}" is the default placeholder, so builds cannot be told apart.`,
        fix: meta.platform === 'android'
          ? 'Set versionName (and increase versionCode) in build.gradle for every release, and register that versionName.'
          : 'Set CFBundleShortVersionString (and increase CFBundleVersion) for every release, and register that version.',
      },
    ];
  }
  const pre = PRERELEASE_MARKERS.exec(version);
  if (pre && meta.keyMode === 'live') {
    return [
      {
        id: 'preview.version-prerelease',
        severity: 'low',
        title: 'Pre-release version registered with a live key',
        detail: `Version "${version}" is marked "${pre[1]}" but was registered with a live API key.`,
        fix: 'Register pre-release builds with a test key (`shieldgate key create --test`), or publish the final version number for release builds.',
      },
    ];
  }
  return [];
}

function artifactFindings(meta: PreviewMeta): Finding[] {
  if (meta.artifact === null) {
    return [
      {
        id: 'preview.artifact-undeclared',
        severity: 'medium',
        title: 'No artifact declared: integrity cannot be checked',
        detail: `Version ${meta.version} was registered without "artifact", so no size or SHA-256 binds the registered build to a file and no static scan can run.`,
        fix: 'Declare the package when registering: "artifact": { "sizeBytes": <stat -c %s app.apk>, "sha256": "<sha256sum app.apk>" }, then PUT the file to the returned uploadUrl.',
      },
    ];
  }
  if (meta.artifact.sha256.toLowerCase() === EMPTY_SHA256) {
    return [
      {
        id: 'preview.artifact-empty-hash',
        severity: 'high',
        title: 'Declared SHA-256 is the hash of an empty file',
        detail: `sha256 ${EMPTY_SHA256} is the digest of zero bytes; the CI step most likely hashed a path that did not exist yet.`,
        fix: 'Hash the package after it is built: run `sha256sum` on the final signed .apk/.aab/.ipa and declare that digest and its size.',
      },
    ];
  }
  return [];
}

function credentialFindings(meta: PreviewMeta): Finding[] {
  if (meta.keyMode === 'test') {
    return [
      {
        id: 'preview.test-key',
        severity: 'medium',
        title: 'Build registered with a test key',
        detail: `Version ${meta.version} was registered with a svc_test_ key; builds registered this way are not production records.`,
        fix: 'Register release builds from CI through the keyless OIDC exchange (POST /v1/auth/oidc) or with a live key; keep test keys for local experiments.',
      },
    ];
  }
  if (meta.keyMode === 'live') {
    return [
      {
        id: 'preview.long-lived-key',
        severity: 'low',
        title: 'Build registered with a long-lived API key',
        detail: 'The build was registered with a svc_live_ key, a secret that must be stored in CI and stays valid until revoked.',
        fix: 'Add a trust rule for the CI workflow (POST /v1/apps/{id}/oidc-rules) and exchange the job\'s OIDC token for a 10-minute access token instead of storing the key.',
      },
    ];
  }
  return [];
}

function keyLabel(mode: PreviewMeta['keyMode']): string {
  return mode === 'live' ? 'live API key' : mode === 'test' ? 'test API key' : 'CI OIDC access token';
}
