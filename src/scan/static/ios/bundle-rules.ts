import type { Finding } from '../../model/types';
import { boolAt, isDict, stringAt, type PlistDict } from './read-plist';

/** MinimumOSVersion below this: iOS releases that no longer get security updates (medium). */
export const IOS_MIN_OS_FLOOR = 15;
/** MinimumOSVersion below this: releases with long-public, unpatched kernel and WebKit exploits (high). */
export const IOS_MIN_OS_HIGH = 12;
const AUTH_LIKE = /(auth|login|callback|redirect|sso|^com\.googleusercontent\.apps\.|^msauth)/i;

/** Deployment target, URL schemes and document sharing of an Info.plist. */
export function bundleFindings(info: PlistDict): Finding[] {
  return [...minimumOsFindings(info), ...urlSchemeFindings(info), ...fileSharingFindings(info)];
}

function minimumOsFindings(info: PlistDict): Finding[] {
  const declared = stringAt(info, 'MinimumOSVersion');
  const major = declared ? Number.parseInt(declared, 10) : NaN;
  if (!declared || Number.isNaN(major) || major >= IOS_MIN_OS_FLOOR) return [];
  return [
    {
      id: 'ios.minimum-os',
      severity: major < IOS_MIN_OS_HIGH ? 'high' : 'medium',
      title: 'Deployment target allows outdated iOS versions',
      detail: `MinimumOSVersion is ${declared}: the app runs on iOS versions that Apple no longer patches, where public exploits for WebKit and the kernel work.`,
      fix: `Raise the deployment target to iOS ${IOS_MIN_OS_FLOOR} or later (Xcode › Build Settings › iOS Deployment Target, IPHONEOS_DEPLOYMENT_TARGET = ${IOS_MIN_OS_FLOOR}.0).`,
    },
  ];
}

function urlSchemeFindings(info: PlistDict): Finding[] {
  const types = Array.isArray(info.CFBundleURLTypes) ? info.CFBundleURLTypes : [];
  const schemes = types.flatMap((t) => (isDict(t) && Array.isArray(t.CFBundleURLSchemes) ? t.CFBundleURLSchemes : []))
    .filter((s): s is string => typeof s === 'string');
  if (schemes.length === 0) return [];
  const authLike = schemes.filter((s) => AUTH_LIKE.test(s));
  return [
    {
      id: 'ios.custom-url-scheme',
      // A hijacked login callback hands the authorization code to the other app.
      severity: authLike.length ? 'medium' : 'low',
      title: 'Custom URL schemes can be claimed by other apps',
      detail: `CFBundleURLTypes registers ${schemes.map((s) => `${s}://`).join(', ')}; iOS does not arbitrate duplicate schemes, so another installed app can register the same scheme and receive these links${authLike.length ? `, including what looks like a login callback (${authLike.join(', ')})` : ''}.`,
      fix: `Use universal links (an applinks: entry in com.apple.developer.associated-domains plus apple-app-site-association on your domain) for deep links${authLike.length ? ', use ASWebAuthenticationSession with PKCE for sign-in callbacks' : ''}, and validate every parameter received through a custom scheme.`,
    },
  ];
}

function fileSharingFindings(info: PlistDict): Finding[] {
  if (boolAt(info, 'UIFileSharingEnabled') !== true) return [];
  return [
    {
      id: 'ios.file-sharing',
      severity: 'low',
      title: 'Documents folder is shared with the Files app and Finder',
      detail: `UIFileSharingEnabled = true${boolAt(info, 'LSSupportsOpeningDocumentsInPlace') === true ? ' and LSSupportsOpeningDocumentsInPlace = true' : ''}: everything the app writes to Documents/ can be read and replaced from a connected computer or the Files app.`,
      fix: 'Set UIFileSharingEnabled to false, or keep only user documents in Documents/ and move databases, tokens and caches to Library/Application Support.',
    },
  ];
}
