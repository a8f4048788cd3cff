/**
 * The last line of defence for secrets a package holds (docs/scan-evidence.md, "Secrets"): every text a static
 * analysis returns (the target's name and version, every finding's title, detail, fix and location, the signing
 * facts, the inventory an SBOM is made from) is searched with the same patterns the secret rules use, and each value
 * found is cut to what a finding may show (at most 4 characters and an ellipsis). A token written into versionName,
 * a provider's authority or a file name is then shown as `ghp_…` wherever it would have been quoted.
 */
import { AWS_KEY_ID, AWS_SECRET, PATTERNS, TRIGGER, isPlaceholder, looksLikeAwsSecret } from './patterns';

/** The text with every secret the rules recognise cut to what may be shown. */
export function redactSecrets(text: string): string {
  if (text.length < 20) return text;
  let out = text;
  if (TRIGGER.test(out)) {
    for (const pattern of PATTERNS) {
      let cut = '';
      let from = 0;
      for (const m of pattern.find(out)) {
        if (isPlaceholder(pattern.randomPart(m))) continue;
        cut += out.slice(from, m.index) + pattern.shown(m);
        from = m.index + m[0].length;
      }
      if (from > 0) out = cut + out.slice(from);
    }
    out = out.replace(AWS_KEY_ID, (id) => (isPlaceholder(id.slice(4)) ? id : `${id.slice(0, 4)}…`));
  }
  // An AWS secret key has no prefix: in an output any 40-character run that looks like one is cut (a hex digest
  // or a word never does), since there is no file around it to pair it with its key id.
  return out.replace(AWS_SECRET, (value) => (looksLikeAwsSecret(value) ? '…' : value));
}

/**
 * Texts longer than this are cut before they are searched, so the patterns' work per text is bounded: every output
 * field is clipped far shorter afterwards (a finding's detail at 1,024 characters), and the longest secret shape
 * but a PEM body fits in the margin.
 */
export const REDACTED_TEXT_MAX = 8192;

/** A copy of `value` with redactSecrets applied to every string in it (objects, arrays; Dates and Buffers kept). */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redactSecrets(value.length > REDACTED_TEXT_MAX ? value.slice(0, REDACTED_TEXT_MAX) : value) as T;
  if (Array.isArray(value)) return value.map(redactDeep) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)])) as T;
  }
  return value;
}
