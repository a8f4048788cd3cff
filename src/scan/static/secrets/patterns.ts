/**
 * The shapes of the secrets looked for, after the formats their issuers document and the patterns of gitleaks and
 * GitHub secret scanning. Each pattern requires the issuer's prefix, the real length and character set, and a
 * boundary on both sides (a longer run of the same characters is some other token, a hash or base64 data), so that
 * the millions of strings of a real app give no match by chance.
 */
export type SecretRuleId =
  | 'package.secret-aws'
  | 'package.secret-google-api-key'
  | 'package.secret-private-key'
  | 'package.secret-stripe'
  | 'package.secret-slack'
  | 'package.secret-github';

export type SecretPattern = {
  id: Exclude<SecretRuleId, 'package.secret-aws'>;
  /** Every match in `text`, in order, without overlap; linear in the text's length. */
  find(text: string): Iterable<RegExpExecArray>;
  /** The characters of a match that must not look like a placeholder (the random part, after the fixed prefix). */
  randomPart(match: RegExpExecArray): string;
  /** What a finding may show: at most 4 characters of the value, then an ellipsis. */
  shown(match: RegExpExecArray): string;
};

const first4 = (m: RegExpExecArray) => `${m[0].slice(0, 4)}…`;

/** The matches of a global regular expression whose every match is bounded in length (the shapes below are). */
function* matchesOf(regex: RegExp, text: string): Generator<RegExpExecArray> {
  const re = new RegExp(regex.source, regex.flags);
  for (let m = re.exec(text); m; m = re.exec(text)) yield m;
}

const PEM_HEADER = /-----BEGIN ((?:[A-Z0-9]+ ){0,3})PRIVATE KEY(?: BLOCK)?-----/g;
const PEM_BODY = /^[A-Za-z0-9+/=\s:,.-]*$/;
/** Body characters of a PEM key (a JSON string's \n, \r, \/ count as one). */
const PEM_MIN = 64;
const PEM_MAX = 65536;

/**
 * PEM private keys, found in linear time. A regular expression from each header to the next END line would scan up
 * to PEM_MAX characters for every header: a megabyte of bare headers took seconds. Here each END line is paired with
 * the nearest header before it only (a body holding another header is that header's key), found by one forward
 * search for END lines shared by every header before it, so each character is looked at a bounded number of times.
 * Yields [whole, kind, body] like the regular expression it replaces, up to the start of the END line.
 */
function* privateKeys(text: string): Generator<RegExpExecArray> {
  const headers = new RegExp(PEM_HEADER.source, 'g');
  let end = -1;
  let header = headers.exec(text);
  while (header) {
    const bodyStart = header.index + header[0].length;
    if (end < bodyStart) end = text.indexOf('-----END ', bodyStart);
    if (end < 0) return;
    const next = headers.exec(text);
    // A later header before the same END line is nearer to it: this one's body would hold that header.
    if (next && next.index < end) {
      header = next;
      continue;
    }
    const body = text.slice(bodyStart, end);
    const units = body.replace(/\\[nr/]/g, 'x');
    if (units.length >= PEM_MIN && units.length <= PEM_MAX && PEM_BODY.test(units)) {
      const m = [text.slice(header.index, end + '-----END '.length), header[1], body] as unknown as RegExpExecArray;
      m.index = header.index;
      m.input = text;
      yield m;
    }
    header = next;
  }
}

export const PATTERNS: readonly SecretPattern[] = [
  {
    // Google API keys: "AIza" and 35 characters of [0-9A-Za-z_-] (39 in all).
    id: 'package.secret-google-api-key',
    find: (text) => matchesOf(/(?<![0-9A-Za-z_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g, text),
    randomPart: (m) => m[0].slice(4),
    shown: first4,
  },
  {
    // PEM private keys (PKCS#1 RSA, SEC1 EC, PKCS#8 plain or encrypted, OpenSSH, DSA, PGP) with a body of at least
    // 64 base64 characters; a JSON string holds its newlines as \n (a service-account file's "private_key").
    id: 'package.secret-private-key',
    find: privateKeys,
    randomPart: (m) => m[2].replace(/\\[nr/]|[\s:,.-]/g, ''),
    // The armour names the kind of key, nothing of the key itself; no character of the body is shown.
    shown: (m) => `${m[1] ? m[1].trim() + ' ' : ''}PRIVATE KEY`,
  },
  {
    // Stripe secret and restricted live-mode keys; test-mode keys (sk_test_) move no money and publishable keys
    // (pk_live_) are made to ship in apps.
    id: 'package.secret-stripe',
    find: (text) => matchesOf(/(?<![0-9A-Za-z_])(?:sk|rk)_live_[0-9A-Za-z]{24,247}(?![0-9A-Za-z])/g, text),
    randomPart: (m) => m[0].slice(8),
    shown: first4,
  },
  {
    // Slack tokens: bot (xoxb-), user (xoxp-), app and workspace (xoxa-), refresh (xoxr-), legacy (xoxs-); each a
    // numeric team or version id and one to four dash-separated groups, the last at least 16 characters.
    id: 'package.secret-slack',
    find: (text) => matchesOf(/(?<![0-9A-Za-z_-])xox[bpars]-[0-9]{1,13}-(?:[0-9A-Za-z]{1,64}-){0,3}[0-9A-Za-z]{16,64}(?![0-9A-Za-z-])/g, text),
    randomPart: (m) => m[0].slice(m[0].lastIndexOf('-') + 1),
    shown: first4,
  },
  {
    // Slack incoming webhooks: https://hooks.slack.com/services/T<team>/B<bot>/<24-character secret>. The value
    // shown is the path after /services/ (the URL's start says nothing).
    id: 'package.secret-slack',
    find: (text) => matchesOf(/hooks\.slack\.com\/services\/(T[A-Z0-9]{6,12}\/B[A-Z0-9]{6,12}\/[A-Za-z0-9]{20,32})(?![A-Za-z0-9])/g, text),
    randomPart: (m) => m[1].slice(m[1].lastIndexOf('/') + 1),
    shown: (m) => `hooks.slack.com/services/${m[1].slice(0, 4)}…`,
  },
  {
    // GitHub personal (ghp_), OAuth (gho_), user-to-server (ghu_), server-to-server (ghs_) and refresh (ghr_)
    // tokens: the prefix and 36 base62 characters; fine-grained personal tokens: github_pat_ and 82 characters.
    id: 'package.secret-github',
    find: (text) => matchesOf(/(?<![0-9A-Za-z_])(?:gh[pousr]_[0-9A-Za-z]{36}|github_pat_[0-9A-Za-z_]{82})(?![0-9A-Za-z_])/g, text),
    randomPart: (m) => m[0].slice(m[0].startsWith('github_pat_') ? 11 : 4),
    shown: first4,
  },
];

/** AWS access key ids: AKIA (long-term) or ASIA (temporary) and 16 base32 characters. */
export const AWS_KEY_ID = /(?<![0-9A-Za-z])(?:AKIA|ASIA)[A-Z2-7]{16}(?![0-9A-Za-z])/g;
/** AWS secret access keys: 40 base64 characters, alone (no longer base64 run around them). */
export const AWS_SECRET = /(?<![0-9A-Za-z/+])[0-9A-Za-z/+]{40}(?![0-9A-Za-z/+=])/g;

/**
 * Anything a secret's prefix can start: a text none of these occur in holds no secret but an AWS secret key, which
 * has no prefix and only counts next to a key id (which AKIA/ASIA find).
 */
export const TRIGGER = /AKIA|ASIA|AIza|PRIVATE KEY|_live_|xox[bpars]-|hooks\.slack\.com|gh[pousr]_|github_pat_/;

const PLACEHOLDER_WORDS = /example|xxxx|placeholder|dummy|sample|your|insert|changeme|redacted|abcdefgh|12345678|0{8}/i;

/** Documentation values, masked values and template holes: not secrets. */
export function isPlaceholder(randomPart: string): boolean {
  if (randomPart.length === 0) return true;
  if (PLACEHOLDER_WORDS.test(randomPart)) return true;
  return /^(.)\1*$/.test(randomPart);
}

/**
 * A 40-character AWS secret access key is random base64: upper and lower case letters and digits, and an entropy
 * (bits per character of its own distribution) over 4: 100,000 random 40-character base64 strings measure 4.21 to
 * 5.22, Java package paths of that length 3.7 to 4.1. The entropy only sorts out words: what keeps this rule quiet
 * is that a secret key counts only in a file that also holds an access key id.
 */
export function looksLikeAwsSecret(value: string): boolean {
  if (!/[A-Z]/.test(value) || !/[a-z]/.test(value) || !/[0-9]/.test(value) || isPlaceholder(value)) return false;
  return entropy(value) >= 4;
}

function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / s.length) * Math.log2(n / s.length);
  return bits;
}
