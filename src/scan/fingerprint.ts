import { createHash } from 'node:crypto';
import type { Finding } from './model/types';

/**
 * A finding's fingerprint: lowercase hex SHA-256 of `<rule id>\n<location>\n<package>`. The location is what the
 * finding is about when its rule can fire more than once per scan (a component, domain, library path, file,
 * permission or key; empty for rules that fire once), and the package is the scanned package's name (Android
 * package, iOS bundle id; a preview's app and platform). Nothing volatile goes in (versions, dates, counts, SDK
 * levels, the detail text), so the same problem in the next build of the package has the same fingerprint, and two
 * instances of one rule have two.
 */
export function fingerprintOf(finding: Pick<Finding, 'id' | 'location'>, pkg: string): string {
  return createHash('sha256').update(`${finding.id}\n${finding.location ?? ''}\n${pkg}`).digest('hex');
}

/** The package part of a preview finding's fingerprint: previews read no package, so the app and platform declared. */
export function previewPackage(appId: string, platform: string): string {
  return `preview:${appId}:${platform}`;
}
