// Protects: what signing continuity compares and keeps (src/services/signing-continuity.ts). Only a verified signature
// with a signer identifies a package; Android identifies by its whole signer set (digests case-folded, order aside),
// iOS by its team when the analyser proved it through Apple's chain (it then gives the leaf's key), else by its leaf
// certificate, so a team id alone never identifies; continuity findings are added without ever cutting a critical
// one when a scan already holds the most findings it keeps.
import { observedSigner, operatorSigner, withFindings } from '../../src/services/signing-continuity';
import type { AndroidSigning, Finding, IosSigning } from '../../src/scan/model/types';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const android = (shas: string[], verified = true): AndroidSigning => ({
  verified, schemes: verified ? ['v2'] : [], lineage: [],
  signers: shas.map((sha256) => ({ sha256, subject: 'CN=x', notAfter: '2050-01-01T00:00:00Z', keyAlgorithm: 'RSA', keyBits: 2048 })),
});
const K = 'c'.repeat(64);
const ios = (teamId: string | null, leaf = A, verified = true, keySha256: string | null = K): IosSigning => ({ verified, teamId, keySha256, signers: [{ sha256: leaf, subject: 'CN=x', notAfter: '2050-01-01T00:00:00Z' }] });
const f = (id: string, severity: Finding['severity']): Finding => ({ id, severity, title: id, detail: id, fix: id });

it('identifies only a verified signature that names a signer', () => {
  expect(observedSigner(null)).toBeNull();
  expect(observedSigner(android([A], false))).toBeNull();
  expect(observedSigner(android([]))).toBeNull();
  expect(observedSigner(ios('ABCDE12345', A, false))).toBeNull();
});

it('identifies an Android package by its signer set, an iOS bundle by its team or else its leaf', () => {
  expect(observedSigner(android([A.toUpperCase()]))).toEqual({ identity: A, sha256: A, teamId: null });
  expect(observedSigner(android([B, A]))!.identity).toBe(observedSigner(android([A, B]))!.identity);
  expect(observedSigner(android([B, A]))!.identity).not.toBe(observedSigner(android([B]))!.identity);
  expect(observedSigner(ios('ABCDE12345', A))).toEqual({ identity: 'team:ABCDE12345', sha256: A, teamId: 'ABCDE12345', keySha256: K });
  expect(observedSigner(ios('ABCDE12345', B))!.identity).toBe('team:ABCDE12345');
  expect(observedSigner(ios(null, B))).toEqual({ identity: `leaf:${B}`, sha256: B, teamId: null });
  // A team id without the key Apple's chain gives (a scan stored before the chain was checked) is only a claim.
  const { keySha256: _key, ...stored } = ios('ABCDE12345', B);
  expect(observedSigner(stored)).toEqual({ identity: `leaf:${B}`, sha256: B, teamId: null });
  expect(observedSigner(ios('ABCDE12345', B, true, null))).toEqual({ identity: `leaf:${B}`, sha256: B, teamId: null });
  // An operator's record compares like a scan's.
  expect(operatorSigner({ sha256: A.toUpperCase(), teamId: null }).identity).toBe(observedSigner(android([A]))!.identity);
  expect(operatorSigner({ sha256: null, teamId: 'ABCDE12345' }).identity).toBe(observedSigner(ios('ABCDE12345', B))!.identity);
});

it('adds findings, dropping the least severe others when over the cap, never the critical one added', () => {
  expect(withFindings([f('x', 'low')], [], 3)).toEqual([f('x', 'low')]);
  expect(withFindings([f('x', 'low')], [f('c', 'critical')], 3)).toEqual([f('x', 'low'), f('c', 'critical')]);
  const full = [f('h', 'high'), f('l1', 'low'), f('m', 'medium'), f('l2', 'low')];
  expect(withFindings(full, [f('c', 'critical')], 4).map((x) => x.id)).toEqual(['h', 'l1', 'm', 'c']);
  expect(withFindings(full, [f('r', 'low')], 4).map((x) => x.id)).toEqual(['h', 'l1', 'm', 'r']);
});
