import type { Finding } from '../../model/types';
import type { ManifestModel } from './manifest-model';
import { DANGEROUS_PERMISSIONS, SPECIAL_PERMISSIONS } from './permission-levels';

/** Runtime permissions listed in one finding's detail; the inventory keeps them all. */
const LISTED = 40;

/**
 * Special permissions (one medium finding each, so each can be accepted on its own) and the runtime permissions
 * requested (one low finding listing them: each is a prompt the user sees and a kind of personal data the app
 * reaches, worth reviewing, rarely a flaw by itself).
 */
export function permissionFindings(m: ManifestModel): Finding[] {
  const out: Finding[] = [];
  for (const [permission, how] of specialPermissions(m)) {
    const { why, fix } = SPECIAL_PERMISSIONS.get(permission) as { why: string; fix: string };
    out.push({
      id: 'android.permission-special',
      severity: 'medium',
      title: `Special permission ${short(permission)}`,
      detail: `${permission} (${how}): the app ${why}.`,
      fix,
      location: permission,
    });
  }
  const dangerous = m.requestedPermissions.filter((p) => DANGEROUS_PERMISSIONS.has(p));
  if (dangerous.length > 0) {
    const shown = dangerous.slice(0, LISTED).map(short).join(', ');
    out.push({
      id: 'android.permission-dangerous',
      severity: 'low',
      title: `${dangerous.length} runtime permission${dangerous.length === 1 ? '' : 's'} requested`,
      detail: `${m.packageName || 'The app'} requests ${shown}${dangerous.length > LISTED ? ` and ${dangerous.length - LISTED} more` : ''}: each reaches personal data or a device feature once the user grants it.`,
      fix: 'Remove each permission the app does not need (check merged manifests of libraries: tools:node="remove" drops one a library adds), and request the rest only when the feature is used.',
    });
  }
  return out;
}

/** Special permissions with how the package holds them: requested, or guarding one of its own components. */
function specialPermissions(m: ManifestModel): Map<string, string> {
  const found = new Map<string, string>();
  for (const p of m.requestedPermissions) if (SPECIAL_PERMISSIONS.has(p)) found.set(p, 'requested with <uses-permission>');
  for (const c of m.components) {
    if (c.permission && SPECIAL_PERMISSIONS.has(c.permission) && !found.has(c.permission)) {
      found.set(c.permission, `guards <${c.kind} android:name="${c.name}">`);
    }
  }
  return new Map([...found].sort(([a], [b]) => (a < b ? -1 : 1)));
}

const short = (permission: string) => permission.replace(/^android\.permission\./, '');
