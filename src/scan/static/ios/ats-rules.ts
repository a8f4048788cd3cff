import type { Finding } from '../../model/types';
import { boolAt, dictAt, isDict, stringAt, type PlistDict } from './read-plist';

const WEAK_TLS = new Set(['TLSv1.0', 'TLSv1.1']);
// On iOS 10+, NSAllowsArbitraryLoads is ignored when any of these keys is present.
const NARROWING_KEYS = ['NSAllowsArbitraryLoadsForMedia', 'NSAllowsArbitraryLoadsInWebContent', 'NSAllowsLocalNetworking'];

/** App Transport Security settings of an Info.plist. */
export function atsFindings(info: PlistDict): Finding[] {
  const ats = dictAt(info, 'NSAppTransportSecurity');
  if (!ats) return [];
  return [...globalFindings(ats), ...domainFindings(ats)];
}

function globalFindings(ats: PlistDict): Finding[] {
  const out: Finding[] = [];
  if (boolAt(ats, 'NSAllowsArbitraryLoads') === true) {
    const narrowing = NARROWING_KEYS.filter((k) => ats[k] !== undefined);
    out.push({
      id: 'ios.ats-arbitrary-loads',
      severity: narrowing.length ? 'medium' : 'high',
      title: 'App Transport Security is disabled',
      detail: narrowing.length
        ? `NSAppTransportSecurity › NSAllowsArbitraryLoads = true. Because ${narrowing.join(', ')} is also set, iOS 10+ ignores it, but on iOS 9 the app may load any http:// URL and accept weak TLS.`
        : 'NSAppTransportSecurity › NSAllowsArbitraryLoads = true: every connection the app makes may use plain http:// or weak TLS, and App Store review asks for a justification.',
      fix: 'Delete NSAllowsArbitraryLoads from Info.plist (or set it to false) and add an NSExceptionDomains entry only for the host that still needs HTTP.',
    });
  }
  if (boolAt(ats, 'NSAllowsArbitraryLoadsInWebContent') === true) {
    out.push({
      id: 'ios.ats-arbitrary-loads-web',
      severity: 'medium',
      title: 'App Transport Security is disabled for web views',
      detail: 'NSAppTransportSecurity › NSAllowsArbitraryLoadsInWebContent = true: pages in WKWebView may load over http:// and be modified in transit.',
      fix: 'Remove NSAllowsArbitraryLoadsInWebContent and load web content over https://; for a few legacy sites use per-domain NSExceptionDomains.',
    });
  }
  if (boolAt(ats, 'NSAllowsArbitraryLoadsForMedia') === true) {
    out.push({
      id: 'ios.ats-arbitrary-loads-media',
      severity: 'low',
      title: 'App Transport Security is disabled for media',
      detail: 'NSAppTransportSecurity › NSAllowsArbitraryLoadsForMedia = true: AVFoundation media may stream over http://.',
      fix: 'Serve media over https:// and remove NSAllowsArbitraryLoadsForMedia; media that is already encrypted (e.g. FairPlay) can stay exempt per domain.',
    });
  }
  return out;
}

function domainFindings(ats: PlistDict): Finding[] {
  const domains = dictAt(ats, 'NSExceptionDomains');
  if (!domains) return [];
  const out: Finding[] = [];
  for (const [domain, settings] of Object.entries(domains)) {
    if (!isDict(settings)) continue;
    const scope = boolAt(settings, 'NSIncludesSubdomains') === true ? `${domain} and its subdomains` : domain;
    const insecureKey = ['NSExceptionAllowsInsecureHTTPLoads', 'NSTemporaryExceptionAllowsInsecureHTTPLoads', 'NSThirdPartyExceptionAllowsInsecureHTTPLoads']
      .find((k) => boolAt(settings, k) === true);
    if (insecureKey) {
      out.push({
        id: 'ios.ats-insecure-http-domain',
        severity: 'medium',
        title: `Plain HTTP allowed for ${domain}`,
        detail: `NSExceptionDomains › ${domain} › ${insecureKey} = true: connections to ${scope} may use http://, readable and modifiable on the network.`,
        fix: `Enable HTTPS on ${domain} and delete ${insecureKey} from its NSExceptionDomains entry${scope !== domain ? ' (and drop NSIncludesSubdomains if only one host needs an exception)' : ''}.`,
        location: domain,
      });
    }
    const tlsKey = ['NSExceptionMinimumTLSVersion', 'NSTemporaryExceptionMinimumTLSVersion', 'NSThirdPartyExceptionMinimumTLSVersion']
      .find((k) => WEAK_TLS.has(stringAt(settings, k) ?? ''));
    if (tlsKey) {
      out.push({
        id: 'ios.ats-weak-tls-domain',
        severity: 'medium',
        title: `TLS below 1.2 allowed for ${domain}`,
        detail: `NSExceptionDomains › ${domain} › ${tlsKey} = ${stringAt(settings, tlsKey)}: connections to ${scope} accept ${stringAt(settings, tlsKey)}, which is deprecated (RFC 8996) and open to downgrade attacks.`,
        fix: `Enable TLS 1.2 or 1.3 on ${domain} and remove ${tlsKey} (ATS then requires TLSv1.2).`,
        location: domain,
      });
    }
    const fsKey = ['NSExceptionRequiresForwardSecrecy', 'NSTemporaryExceptionRequiresForwardSecrecy', 'NSThirdPartyExceptionRequiresForwardSecrecy']
      .find((k) => boolAt(settings, k) === false);
    if (fsKey) {
      out.push({
        id: 'ios.ats-no-forward-secrecy',
        severity: 'low',
        title: `Forward secrecy not required for ${domain}`,
        detail: `NSExceptionDomains › ${domain} › ${fsKey} = false: ${scope} may negotiate cipher suites without forward secrecy, so a later key compromise exposes recorded traffic.`,
        fix: `Enable ECDHE cipher suites on ${domain} and remove ${fsKey}.`,
        location: domain,
      });
    }
  }
  return out;
}
