// Protects: the revocation list reader (src/attest/key-attestation/revocation.ts) and the built-in snapshot. A file in
// Google's status.json schema is read whole; anything else stops the service with one line, never a list that checks
// fewer keys than the operator meant; a serial is found however Google writes it (hex, or decimal for old 64-bit ones).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { certificateParts } from '../../../src/attest/der';
import { parseRevocationList } from '../../../src/attest/key-attestation';
import { revocationStatus } from '../../../src/attest/key-attestation/revocation';
import { GOOGLE_REVOCATION_SNAPSHOT } from '../../../src/attest/roots/google-revocation';
import { ANDROID_KEY_DIR, androidKeyChain } from '../../fixtures/android-key-corpus';

const FIXTURE = readFileSync(path.join(ANDROID_KEY_DIR, 'status.json'), 'utf8');
const list = (entries: unknown): string => JSON.stringify({ entries });

describe('parseRevocationList', () => {
  it("reads the fixture's status.json (Google's test copy): four REVOKED, one SUSPENDED", () => {
    const parsed = parseRevocationList(FIXTURE);
    expect(parsed.entries.size).toBe(5);
    expect([...parsed.entries.values()].filter((s) => s === 'REVOKED')).toHaveLength(4);
    expect(parsed.entries.get('cc66e9a93713b6e643b26c15879786f7')).toBe('SUSPENDED');
  });

  it('finds the suspended certificate of the fixture by its serial', () => {
    const der = androidKeyChain('google-status-suspended-cert').certs[0];
    expect(revocationStatus(parseRevocationList(FIXTURE), certificateParts(der).serialHex)).toBe('SUSPENDED');
  });

  it('takes every field of the schema, and an empty list', () => {
    const full = { status: 'REVOKED', expires: '2030-01-31', reason: 'SOFTWARE_FLAW', comment: 'c'.repeat(140) };
    expect(parseRevocationList(list({ abc: full })).entries.get('abc')).toBe('REVOKED');
    for (const reason of ['UNSPECIFIED', 'KEY_COMPROMISE', 'CA_COMPROMISE', 'SUPERSEDED', 'SOFTWARE_FLAW']) {
      expect(parseRevocationList(list({ 1: { status: 'SUSPENDED', reason } })).entries.get('1')).toBe('SUSPENDED');
    }
    expect(parseRevocationList(list({})).entries.size).toBe(0);
  });

  it('keys written with leading zeros are found without them; REVOKED wins over SUSPENDED for one serial', () => {
    const parsed = parseRevocationList(list({ '00ab': { status: 'SUSPENDED' }, ab: { status: 'REVOKED' }, '0': { status: 'SUSPENDED' } }));
    expect(parsed.entries.get('ab')).toBe('REVOKED');
    expect(parsed.entries.get('0')).toBe('SUSPENDED');
  });

  it.each([
    ['not JSON', '{"entries":'],
    ['an array', '[]'],
    ['no entries', '{}'],
    ['entries not an object', '{"entries":[]}'],
    ['another top-level field', '{"entries":{},"version":1}'],
    ['an uppercase serial', list({ AB: { status: 'REVOKED' } })],
    ['a serial with 0x', list({ '0xab': { status: 'REVOKED' } })],
    ['an empty serial', list({ '': { status: 'REVOKED' } })],
    ['a serial longer than 20 octets', list({ ['a'.repeat(41)]: { status: 'REVOKED' } })],
    ['an entry that is not an object', list({ ab: 'REVOKED' })],
    ['no status', list({ ab: { reason: 'KEY_COMPROMISE' } })],
    ['an unknown status', list({ ab: { status: 'EXPIRED' } })],
    ['an unknown reason', list({ ab: { status: 'REVOKED', reason: 'LOST' } })],
    ['an unknown field', list({ ab: { status: 'REVOKED', note: 'x' } })],
    ['a date that is not YYYY-MM-DD', list({ ab: { status: 'REVOKED', expires: '31/01/2030' } })],
    ['a comment over 140 characters', list({ ab: { status: 'REVOKED', comment: 'c'.repeat(141) } })],
    ['a file over 5 MB', `{"entries":{}}${' '.repeat(5 * 1024 * 1024)}`],
  ])('refuses %s with one line', (_, text) => {
    expect(() => parseRevocationList(text)).toThrow(/^revocation list: [^\n]+$/);
  });

  it('refuses more than 100,000 entries, and takes 100,000', () => {
    const entries: Record<string, { status: string }> = {};
    for (let i = 1; i <= 100_000; i++) entries[i.toString(16)] = { status: 'REVOKED' };
    expect(parseRevocationList(list(entries)).entries.size).toBe(100_000);
    entries['f'.repeat(40)] = { status: 'REVOKED' };
    expect(() => parseRevocationList(list(entries))).toThrow('revocation list: more than 100000 entries');
  });
});

describe('revocationStatus', () => {
  const parsed = parseRevocationList(list({ '5cb838f1fe157a85': { status: 'SUSPENDED' }, '9408173275444922801': { status: 'REVOKED' } }));

  it('matches the DER serial with or without its leading zero bytes and nibbles, in either case', () => {
    expect(revocationStatus(parsed, '5cb838f1fe157a85')).toBe('SUSPENDED');
    expect(revocationStatus(parsed, '005CB838F1FE157A85')).toBe('SUSPENDED');
    expect(revocationStatus(parsed, '5cb838f1fe157a86')).toBeNull();
  });

  it('matches a serial the list writes in decimal: 9408173275444922801 is 0x82908bbf5437c9b1, DER-padded with a zero byte', () => {
    expect(BigInt('9408173275444922801').toString(16)).toBe('82908bbf5437c9b1');
    expect(revocationStatus(parsed, '0082908bbf5437c9b1')).toBe('REVOKED');
  });
});

describe('the built-in snapshot', () => {
  it("reads, and holds the fixture's real entries without its test entry", () => {
    const snapshot = parseRevocationList(GOOGLE_REVOCATION_SNAPSHOT);
    const fixture = parseRevocationList(FIXTURE);
    expect([...snapshot.entries]).toEqual([...fixture.entries].filter(([serial]) => serial !== 'cc66e9a93713b6e643b26c15879786f7'));
    // 6681152659205225093 is the certificate serial 0x5cb838f1fe157a85, as the snapshot's comment says.
    expect(revocationStatus(snapshot, '5cb838f1fe157a85')).toBe('REVOKED');
  });
});
