// One fuzz target per parser of the static analyser: each feeds untrusted bytes to the parser's entry point
// the way analyzePackage does, and walks what comes back so lazily decoded parts are exercised too.
import { writeFileSync } from 'node:fs';
import { PackageZip } from '../../src/scan/static/package/zip-reader';
import { parseBinaryXml } from '../../src/scan/static/android/binary-xml';
import { parseProtoXml } from '../../src/scan/static/android/proto-xml';
import { resolveFileReference } from '../../src/scan/static/android/resource-table';
import { UnreadablePackageError } from '../../src/scan/static/package/errors';
import { PlistSyntaxError, parseXmlPlist } from '../../src/scan/static/ios/xml-plist';
import { parsePlistDict } from '../../src/scan/static/ios/read-plist';
import { provisionFindings, readProvisioningProfile } from '../../src/scan/static/ios/provision-rules';
import { DerError } from '../../src/scan/static/signing/der';
import { certificateSignatureOid, pkcs7Certificates } from '../../src/scan/static/signing/pkcs7';
import { verifyApk } from '../../src/scan/static/signing/apk-verifier';
import type { XmlElement } from '../../src/scan/static/package/xml-node';
import { buildManifestModel } from '../../src/scan/static/android/manifest-model';
import { SecretCollector } from '../../src/scan/static/secrets/collector';
import { redactSecrets } from '../../src/scan/static/secrets/redact';
import { PosixRegex, RegexSyntaxError } from '../../src/scan/static/ios/posix-regex';
import { MACHO_TARGET } from './macho-target';
import { ELF_TARGET } from './elf-target';
import { DEX_TARGET } from './dex-target';
import { fuzzAppAttest } from './app-attest-target';
import { fuzzKeyAttestation } from './key-attestation-target';
import { fuzzPlayIntegrity } from './play-integrity-target';
import { fuzzOidcClaims } from './oidc-claims-target';
import { CborError, decodeStrictCbor } from '../../src/attest/cbor';

export type Target = {
  /** Runs the parser on one input; resolves with anything, or throws. */
  run(input: Buffer, scratchFile: string): unknown;
};

/** A fixed clock, so profile expiry checks do not depend on the day the fuzzer runs. */
const NOW = new Date('2026-01-15T12:00:00Z');

export const TARGETS: Record<string, Target> = {
  'zip-central-directory': {
    async run(input, scratch) {
      writeFileSync(scratch, input);
      const zip = await PackageZip.open(scratch, () => true);
      try {
        return zip.names().length;
      } finally {
        zip.close();
      }
    },
  },
  'binary-xml': { run: (input) => walk(parseBinaryXml(input)) },
  'resources-arsc': {
    run(input) {
      // The ids aapt gives the first entries of the first types of the app's package (0x7f).
      const found: (string | null)[] = [];
      for (let type = 1; type <= 4; type++) for (let entry = 0; entry < 2; entry++) found.push(resolveFileReference(input, 0x7f000000 | (type << 16) | entry));
      return found;
    },
  },
  'proto-xml': { run: (input) => walk(parseProtoXml(input)) },
  // The manifest as Android installs it: attributes by id, the package by name, the shapes readers disagree on refused.
  'android-manifest': {
    run(input) {
      const m = buildManifestModel(parseBinaryXml(input));
      return [m.packageName, m.minSdk, m.components.length, m.requestedPermissions.length];
    },
  },
  // The secret rules over any text, and the redaction every output passes through: linear whatever the text holds.
  'secret-text': {
    run(input) {
      const text = input.toString('latin1');
      const collector = new SecretCollector();
      collector.scan('fuzz.txt', text, { awsSecretsAnywhere: true });
      return [collector.findings().length, redactSecrets(text).length];
    },
  },
  // A seal rule from CodeResources (first line) matched against a bundle path (the rest), under the steps cap.
  'seal-rule-regex': {
    run(input) {
      const text = input.toString('utf8');
      const cut = text.indexOf('\n');
      return new PosixRegex(cut < 0 ? text : text.slice(0, cut)).test(cut < 0 ? '' : text.slice(cut + 1), { steps: 0 });
    },
  },
  // The whole signature verification of an APK: zip sections, the APK Signing Block and its schemes, the JAR
  // manifest, .SF and PKCS#7 files, entry data. minSdk 1 so that every scheme, the JAR one included, is verified.
  'apk-signatures': {
    async run(input, scratch) {
      writeFileSync(scratch, input);
      const v = await verifyApk(scratch, { minSdk: 1, targetSdk: 1 });
      return [v.verified, v.schemes.length, v.signers.map(certificateSignatureOid), v.failures.length];
    },
  },
  pkcs7: { run: (input) => pkcs7Certificates(input).map(certificateSignatureOid) },
  'xml-plist': { run: (input) => parseXmlPlist(input.toString('utf8')) },
  'binary-plist': { run: (input) => parsePlistDict(input, 'Info.plist') },
  mobileprovision: { run: (input) => provisionFindings(readProvisioningProfile(input, 'embedded.mobileprovision'), NOW) },
  macho: MACHO_TARGET,
  elf: ELF_TARGET,
  dex: DEX_TARGET,
  // Device attestation: each engine returns reasons for any input and never throws (src/attest).
  cbor: { run: (input) => decodeStrictCbor(input) },
  'app-attest': { run: (input) => fuzzAppAttest(input) },
  'key-attestation': { run: (input) => fuzzKeyAttestation(input) },
  'play-integrity': { run: (input) => fuzzPlayIntegrity(input) },
  // A CI token's claims (or a dry-run's, or a rule) judged by every provider's model (src/oidc/providers).
  'oidc-claims': { run: (input) => fuzzOidcClaims(input) },
};

/**
 * Errors a parser may end with on bad input: its own types (a precise refusal) and the analyser's limit error.
 * Anything else (a TypeError, a RangeError from a Buffer read, a stack overflow) is a crash.
 */
export function isExpectedError(err: unknown): boolean {
  if (err instanceof UnreadablePackageError || err instanceof PlistSyntaxError || err instanceof DerError || err instanceof RegexSyntaxError || err instanceof CborError) return true;
  // By name: the limit error's module is the analyser's, and this file must not pin its location.
  return err instanceof Error && (err.name === 'LimitExceededError' || err.name === 'MalformedApkError' || err.name === 'MachoError' || err.name === 'MalformedElfError');
}

function walk(root: XmlElement): number {
  let count = 0;
  const stack = [root];
  for (let el = stack.pop(); el; el = stack.pop()) {
    count += 1 + el.attributes.length;
    stack.push(...el.children);
  }
  return count;
}
