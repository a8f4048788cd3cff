// Protects: reading an operator's PEM roots (ATTEST_APPLE_ROOTS, ATTEST_GOOGLE_ROOTS): every CERTIFICATE block is
// read, text between blocks is allowed, and anything that would leave the service trusting less than the operator
// meant (a damaged block, another kind of object, no certificate, too many) stops it with a one-line message.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadPemCertificates } from '../../../src/attest/roots/pem';

const ROOT = readFileSync(path.join(__dirname, '../../fixtures/attestation/apple-app-attest/apple-app-attestation-root-ca.pem'), 'utf8');
const BODY = ROOT.replace(/-----[A-Z ]+-----/g, '').replace(/\s/g, '');
const block = (body: string, kind = 'CERTIFICATE') => `-----BEGIN ${kind}-----\n${body.match(/.{1,64}/g)!.join('\n')}\n-----END ${kind}-----\n`;

it('reads every certificate, with comments around them and CRLF line ends', () => {
  const [one] = loadPemCertificates(ROOT);
  expect(one).toBeInstanceOf(X509Certificate);
  expect(one.subject).toContain('Apple App Attestation Root CA');
  const bundle = `# Apple\r\n${ROOT.replace(/\n/g, '\r\n')}Bag Attributes: none\n${ROOT}`;
  expect(loadPemCertificates(bundle).map((c) => c.fingerprint256)).toEqual([one.fingerprint256, one.fingerprint256]);
});

it.each([
  ['an empty file', '', 'PEM roots: no certificate'],
  ['text only', 'no roots here\n', 'PEM roots: no certificate'],
  ['a body that is not strict base64', block(BODY).replace('MIIC', 'MI$C'), 'PEM roots: a block is not a complete CERTIFICATE block'],
  ['a body with a character Node would skip', block(`${BODY.slice(0, 40)}-${BODY.slice(41)}`), 'PEM roots: a block is not a complete CERTIFICATE block'],
  ['a body with padding inside', block(`${BODY.slice(0, 40)}==${BODY.slice(42)}`), 'PEM roots: certificate 1 is not base64'],
  ['a body that is not a certificate', block(Buffer.from('30030201 01'.replace(/ /g, ''), 'hex').toString('base64')), 'PEM roots: certificate 1 does not parse (not an X.509 certificate)'],
  ['a certificate with a byte after it', block(Buffer.concat([Buffer.from(BODY, 'base64'), Buffer.from([0])]).toString('base64')), 'PEM roots: certificate 1 does not parse (trailing bytes)'],
  ['a block without its END line', `${ROOT}-----BEGIN CERTIFICATE-----\n${BODY}\n`, 'PEM roots: a block is not a complete CERTIFICATE block'],
  ['a private key', `${ROOT}${block(BODY, 'PRIVATE KEY')}`, 'PEM roots: a block is not a complete CERTIFICATE block'],
  ['17 certificates', ROOT.repeat(17), 'PEM roots: more than 16 certificates'],
])('refuses %s', (_name, text, message) => {
  expect(() => loadPemCertificates(text)).toThrow(new Error(message));
});

it('reads 16 certificates, the most it takes', () => {
  expect(loadPemCertificates(ROOT.repeat(16))).toHaveLength(16);
});
