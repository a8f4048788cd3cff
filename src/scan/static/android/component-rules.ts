import type { Finding, Severity } from '../../model/types';
import { androidAttr, asString } from '../package/xml-node';
import type { Component, ManifestModel } from './manifest-model';

// android:launchMode values (R.attr.launchMode).
const LAUNCH_MODES = ['standard', 'singleTop', 'singleTask', 'singleInstance', 'singleInstancePerTask'];
const SINGLE_TASK = 2;
const SINGLE_INSTANCE = 3;
/** StrandHogg-style task hijacking was closed by the platform in Android 11 (API 30). */
const TASK_HIJACK_FIXED_SDK = 30;

/** Exported components reachable by any app, and activities exposed to task hijacking. */
export function componentFindings(m: ManifestModel): Finding[] {
  return [...m.components.flatMap((c) => exportedFindings(m, c)), ...m.components.flatMap((c) => taskFindings(m, c))];
}

/** How the platform decides exported for a component, with the reason for the finding detail. */
export function exportedState(m: ManifestModel, c: Component): { exported: boolean; why: string } {
  if (c.exportedAttr !== undefined) return { exported: c.exportedAttr, why: c.exportedText ?? `android:exported="${c.exportedAttr}"` };
  if (c.kind === 'provider' && (m.minSdk <= 16 || m.targetSdk <= 16)) {
    return { exported: true, why: 'android:exported is absent and providers default to exported when minSdk or targetSdk is 16 or lower' };
  }
  // From targetSdk 31 a component with an intent filter must declare exported, or the package fails to install.
  if (c.intentFilters.length > 0 && m.targetSdk < 31) {
    return { exported: true, why: `android:exported is absent and the component has an <intent-filter>, which exports it when targetSdk < 31 (here ${m.targetSdk})` };
  }
  return { exported: false, why: 'not exported' };
}

function exportedFindings(m: ManifestModel, c: Component): Finding[] {
  const state = exportedState(m, c);
  if (!state.exported || isLauncher(c)) return [];
  const permissions = [c.permission, c.readPermission, c.writePermission].filter((p): p is string => !!p);
  const tag = `<${c.kind} android:name="${c.name}">`;
  if (permissions.length === 0 || (c.kind === 'provider' && !c.permission && !(c.readPermission && c.writePermission))) {
    const open = c.kind === 'provider' && permissions.length > 0 ? ` (only ${c.readPermission ? 'reads' : 'writes'} are protected)` : '';
    return [
      {
        id: `android.exported-${c.kind === 'activity-alias' ? 'activity' : c.kind}`,
        severity: exportedSeverity(c),
        title: `Exported ${c.kind} without a permission`,
        detail: `${tag} is exported (${state.why}) and declares no android:permission${open}, so any installed app can ${verb(c)}.${browsableNote(c)}`,
        fix: `If only this app uses it, set android:exported="false" on ${tag}. If other apps of yours need it, add android:permission="${m.packageName || 'com.example'}.permission.${shortName(c.name).toUpperCase()}" and declare <permission android:name="…" android:protectionLevel="signature"/>.`,
        location: c.name,
      },
    ];
  }
  const weak = permissions.filter((p) => {
    const level = m.definedPermissions.get(p);
    return level === 'normal' || level === 'dangerous';
  });
  if (weak.length === 0) return [];
  const level = m.definedPermissions.get(weak[0]);
  return [
    {
      id: 'android.exported-weak-permission',
      severity: 'medium',
      title: `Exported ${c.kind} guarded by a ${level} permission`,
      detail: `${tag} is exported and requires ${weak.join(', ')}, which this package defines with android:protectionLevel="${level}"; any app can request it in its own manifest and is granted it${level === 'dangerous' ? ' after one user prompt' : ' at install'}.`,
      fix: `Declare ${weak[0]} with android:protectionLevel="signature" so only apps signed with your key hold it, or set android:exported="false" on ${tag}.`,
      location: c.name,
    },
  ];
}

function taskFindings(m: ManifestModel, c: Component): Finding[] {
  if (c.kind !== 'activity') return [];
  const out: Finding[] = [];
  const appAffinity = m.application ? asString(androidAttr(m.application, 'taskAffinity')) : undefined;
  const affinity = c.taskAffinity ?? appAffinity ?? m.packageName;
  const tag = `<activity android:name="${c.name}">`;
  if (c.taskAffinity && c.taskAffinity !== m.packageName && exportedState(m, c).exported) {
    out.push({
      id: 'android.task-affinity',
      severity: 'medium',
      title: 'Exported activity sets a custom taskAffinity',
      detail: `${tag} is exported and has android:taskAffinity="${c.taskAffinity}": another app can declare the same affinity, have its activities placed in that task and read the Intents (and their extras) that start ${shortName(c.name)}.`,
      fix: `Remove android:taskAffinity from ${tag}, or set it to "" so the activity never shares a task with another app.`,
      location: c.name,
    });
  }
  const mode = c.launchMode;
  if ((mode === SINGLE_TASK || mode === SINGLE_INSTANCE) && affinity !== '' && m.minSdk < TASK_HIJACK_FIXED_SDK) {
    out.push({
      id: 'android.task-hijacking',
      severity: 'medium',
      title: 'Activity exposed to task hijacking (StrandHogg)',
      detail: `${tag} has android:launchMode="${LAUNCH_MODES[mode]}" with task affinity "${affinity}" and minSdkVersion ${m.minSdk} (< 30): on Android 10 and older a malicious app that claims this affinity can slot a look-alike activity into the task (StrandHogg), e.g. to phish credentials.`,
      fix: `Add android:taskAffinity="" to ${tag} (or to <application> for every activity), keep launchMode="standard" where singleTask is not needed, or raise minSdk to 30.`,
      location: c.name,
    });
  }
  return out;
}

function isLauncher(c: Component): boolean {
  return (c.kind === 'activity' || c.kind === 'activity-alias') && c.intentFilters.some((f) =>
    f.actions.includes('android.intent.action.MAIN') &&
    (f.categories.includes('android.intent.category.LAUNCHER') || f.categories.includes('android.intent.category.LEANBACK_LAUNCHER')));
}

function isOnlyBrowsable(c: Component): boolean {
  return c.intentFilters.length > 0 && c.intentFilters.every((f) => f.categories.includes('android.intent.category.BROWSABLE'));
}

function exportedSeverity(c: Component): Severity {
  if (c.kind === 'provider') return 'high';
  // A deep-link activity is meant to be public; the risk left is how it handles its Uri.
  if ((c.kind === 'activity' || c.kind === 'activity-alias') && isOnlyBrowsable(c)) return 'low';
  return 'medium';
}

function verb(c: Component): string {
  switch (c.kind) {
    case 'activity':
    case 'activity-alias': return 'start it with crafted Intent extras';
    case 'service': return 'start or bind to it and call its API';
    case 'receiver': return 'send it forged broadcasts';
    case 'provider': return `query and modify its data${c.authorities ? ` through content://${c.authorities.split(';')[0]}` : ''}`;
  }
}

function browsableNote(c: Component): string {
  if (!isOnlyBrowsable(c)) return '';
  const links = c.intentFilters.flatMap((f) => f.schemes.map((s) => `${s}://${f.hosts[0] ?? ''}`));
  return ` It is a deep-link target${links.length ? ` (${[...new Set(links)].join(', ')})` : ''} reachable from any web page, so treat its Uri as untrusted input.`;
}

function shortName(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1) || name;
}
