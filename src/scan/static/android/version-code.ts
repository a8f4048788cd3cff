import { androidAttr, type XmlElement, type XmlValue } from '../package/xml-node';

/**
 * The version code Android gives the installed package (PackageInfo.getLongVersionCode()), the one device
 * attestation reports (Play Integrity's appIntegrity.versionCode, key attestation's packageInfos version):
 * composeLongVersionCode(versionCodeMajor, versionCode) = (major << 32) | (versionCode & 0xffffffff), each read as
 * the platform's styleables read them (by resource id, a reference through the resource table). Null when the
 * manifest declares no versionCode (Android would read 0, which names no build), when either attribute is not a
 * typed integer (aapt and aapt2 compile nothing else; the platform would parse a string its own way, octal included),
 * or when the code is past 2^53 and would lose digits as a JavaScript number.
 */
export function longVersionCode(manifest: XmlElement): number | null {
  const code = typedInt(androidAttr(manifest, 'versionCode'));
  const majorAttr = androidAttr(manifest, 'versionCodeMajor');
  const major = majorAttr === undefined ? 0 : typedInt(majorAttr);
  if (code === null || major === null) return null;
  // Both are Java ints: the major word keeps its sign, the low word is taken unsigned.
  const long = (major | 0) * 2 ** 32 + (code >>> 0);
  return Number.isSafeInteger(long) ? long : null;
}

/** A typed integer (decimal or hex), a reference read as the value it resolved to; null for anything else. */
function typedInt(value: XmlValue | undefined): number | null {
  const v = value?.type === 'reference' ? value.resolved : value;
  return v?.type === 'int' ? v.value : null;
}
