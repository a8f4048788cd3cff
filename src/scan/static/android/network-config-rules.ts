import type { Finding } from '../../model/types';
import { asBool, asString, childrenNamed, plainAttr, type XmlElement } from '../package/xml-node';

/** Findings from a parsed res/xml network security config; `source` names the file for details. */
export function networkConfigFindings(root: XmlElement, source: string, debuggable: boolean): Finding[] {
  const out: Finding[] = [];
  const base = childrenNamed(root, 'base-config')[0];
  if (base && asBool(plainAttr(base, 'cleartextTrafficPermitted')) === true) {
    out.push({
      id: 'android.nsc-cleartext',
      severity: 'high',
      title: 'Network security config permits cleartext traffic for all hosts',
      detail: `${source}: <base-config cleartextTrafficPermitted="true"> allows plain http:// to every host.`,
      fix: 'Set cleartextTrafficPermitted="false" on <base-config> (or remove the attribute on targetSdk 28+); if a legacy host needs http, add <domain-config cleartextTrafficPermitted="true"><domain>that.host</domain></domain-config> for it alone.',
    });
  }
  for (const dc of domainConfigs(root)) {
    const domains = childrenNamed(dc, 'domain').map(describeDomain);
    if (asBool(plainAttr(dc, 'cleartextTrafficPermitted')) === true) {
      out.push({
        id: 'android.nsc-cleartext-domain',
        severity: 'medium',
        title: 'Network security config permits cleartext traffic to specific domains',
        detail: `${source}: <domain-config cleartextTrafficPermitted="true"> for ${domains.join(', ') || '(no domain)'}.`,
        fix: `Serve ${domains[0] ?? 'these hosts'} over HTTPS and delete cleartextTrafficPermitted="true" from that <domain-config>.`,
        // The domains, not the file: resource shrinking may rename res/xml files from one build to the next.
        location: domains.join(','),
      });
    }
  }
  for (const { anchors, scope } of trustAnchors(root)) {
    for (const cert of childrenNamed(anchors, 'certificates')) {
      const src = asString(plainAttr(cert, 'src'));
      if (src === 'user') {
        out.push({
          id: 'android.nsc-user-certificates',
          severity: 'high',
          title: 'Network security config trusts user-installed CAs',
          detail: `${source}: <certificates src="user"/> in the trust anchors of ${scope}: any CA the user (or malware, or an MDM) adds to the device can intercept the app's TLS traffic.`,
          fix: 'Remove <certificates src="user"/> from the production trust anchors; to inspect traffic during development put it inside <debug-overrides><trust-anchors>…</trust-anchors></debug-overrides>.',
          location: scope,
        });
      }
      if (asBool(plainAttr(cert, 'overridePins')) === true) {
        out.push({
          id: 'android.nsc-override-pins',
          severity: 'medium',
          title: 'Trust anchors bypass certificate pinning',
          detail: `${source}: <certificates src="${src ?? '?'}" overridePins="true"/> in ${scope}: certificates from this source are accepted even where a <pin-set> would reject them.`,
          fix: 'Remove overridePins="true" from the production trust anchors.',
          location: `${scope} ${src ?? '?'}`,
        });
      }
    }
  }
  const overrides = childrenNamed(root, 'debug-overrides')[0];
  if (overrides) {
    const trustsUser = childrenNamed(overrides, 'trust-anchors').some((a) => childrenNamed(a, 'certificates').some((c) => asString(plainAttr(c, 'src')) === 'user'));
    out.push({
      id: 'android.nsc-debug-overrides',
      // debug-overrides only apply to a debuggable build; in one they are live.
      severity: debuggable ? 'high' : 'low',
      title: debuggable ? 'Debug overrides of the network security config are active' : 'Network security config ships debug overrides',
      detail: `${source}: <debug-overrides>${trustsUser ? ' trusting user-installed CAs' : ''} ${debuggable ? 'applies because the application is debuggable' : 'applies only when android:debuggable="true"; it is inert in this build but ships in the package'}.`,
      fix: 'Keep <debug-overrides> in a debug-only resource (src/debug/res/xml/network_security_config.xml) so release builds do not contain it, and never ship a debuggable build.',
    });
  }
  return out;
}

/** domain-config elements at any depth (they nest). */
function domainConfigs(el: XmlElement): XmlElement[] {
  return el.children.flatMap((c) => (c.name === 'domain-config' ? [c, ...domainConfigs(c)] : []));
}

function trustAnchors(root: XmlElement): Array<{ anchors: XmlElement; scope: string }> {
  const out: Array<{ anchors: XmlElement; scope: string }> = [];
  for (const base of childrenNamed(root, 'base-config')) {
    for (const anchors of childrenNamed(base, 'trust-anchors')) out.push({ anchors, scope: '<base-config> (all hosts)' });
  }
  for (const dc of domainConfigs(root)) {
    const names = childrenNamed(dc, 'domain').map(describeDomain).join(', ');
    for (const anchors of childrenNamed(dc, 'trust-anchors')) out.push({ anchors, scope: `<domain-config> for ${names || '(no domain)'}` });
  }
  return out;
}

function describeDomain(d: XmlElement): string {
  const sub = asBool(plainAttr(d, 'includeSubdomains')) === true;
  return `${d.text.trim()}${sub ? ' (and subdomains)' : ''}`;
}
