import { createHash, verify, X509Certificate } from 'node:crypto';
import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';
import type { ApkSections } from './apk-sections';
import { DerError, readOid, readTlv } from './der';
import { digestName, jcaAlgorithm, unsupportedLevels } from './jar-algorithms';
import { attribute, parseManifest, sectionName, type ManifestSection } from './jar-manifest';
import { certificateIssuerAndSerial, parseSignedData, signedAttributeValues, type SignerInfo } from './pkcs7-signed-data';
import { sameName } from './x500-name';
import { digestEntry, jcaHash, JarBudget, readEntry, type CdRecord } from './zip-entries';

export type JarOptions = {
  minSdk: number;
  maxSdk: number;
  /** Scheme ids (2, 3) the platforms in range know: the X-Android-APK-Signed guard checks these. */
  knownSchemeIds: number[];
  /** Scheme ids whose APK Signing Block signatures were found (and verified). */
  foundSchemeIds: number[];
};

/** The JAR verdict: `signers` the leaf certificates of the signers Android uses; `errors` what failed, empty when verified. */
/** `warnings`: what apksig warns of in a JAR signature that verifies (entries under META-INF/ no signature covers). */
export type JarResult = { signers: Buffer[]; errors: string[]; warnings?: string[] };

const MANIFEST = 'META-INF/MANIFEST.MF';
const KITKAT = 19;
const N = 24;
const JB_MR2 = 18;
const MAX_SIGNERS = 10;
const OID_CONTENT_TYPE = '1.2.840.113549.1.9.3';
const OID_MESSAGE_DIGEST = '1.2.840.113549.1.9.4';

type Signer = { name: string; blockName: string; sfName: string; block: CdRecord; sf: CdRecord; sfBytes?: Buffer; leaf?: Buffer; entryNames?: Set<string> };

/**
 * JAR signature verification as apksig's V1SchemeVerifier does it, over [minSdk, maxSdk]: every signature block
 * verifies its .SF, every .SF the manifest (whole, or section by section) and the X-Android-APK-Signed guard, every
 * entry outside META-INF/ is listed in the manifest, signed by the same signers, and its data matches its digest.
 */
export async function verifyJar(s: ApkSections, records: CdRecord[], o: JarOptions): Promise<JarResult> {
  const errors: string[] = [];
  const names = new Set<string>();
  for (const r of records) if (names.has(r.name)) errors.push(`duplicate ZIP entry ${r.name}`); else names.add(r.name);
  if (errors.length) return { signers: [], errors };
  const budget = new JarBudget();
  const manifestEntry = records.find((r) => r.name === MANIFEST);
  if (!manifestEntry) return { signers: [], errors: ['no META-INF/MANIFEST.MF'] };
  const manifestBytes = await readEntry(s, manifestEntry, LIMITS.manifest, budget);
  const manifest = parseManifest(manifestBytes);
  const byName = new Map<string, ManifestSection>();
  manifest.sections.forEach((section, i) => {
    const name = sectionName(section);
    if (name === undefined) errors.push(`MANIFEST.MF section #${i + 1} has no Name`);
    else if (byName.has(name)) errors.push(`MANIFEST.MF has two sections for ${name}`);
    else {
      byName.set(name, section);
      if (!names.has(name)) errors.push(`MANIFEST.MF names ${name}, which is not in the archive`);
    }
  });
  if (errors.length) return { signers: [], errors };

  let signers = findSigners(records);
  if (signers.length === 0) return { signers: [], errors: ['no JAR signature (no .SF file with its signature block)'] };
  if (signers.length > MAX_SIGNERS) return { signers: [], errors: [`${signers.length} JAR signers, over Android's ${MAX_SIGNERS}`] };

  for (const signer of signers) {
    const error = await verifyBlockAgainstSf(s, signer, o, budget);
    if (error) return { signers: [], errors: [`${signer.name}: ${error}`] };
  }
  const remaining: Signer[] = [];
  for (const signer of signers) {
    const outcome = verifySfAgainstManifest(signer, manifestBytes, manifest.main, byName, o);
    if (outcome === 'ignored') continue; // Android ignores such a signer, and so do its errors
    if (outcome.length) return { signers: [], errors: outcome.map((e) => `${signer.sfName}: ${e}`) };
    remaining.push(signer);
  }
  signers = remaining;
  if (signers.length === 0) return { signers: [], errors: ['no usable JAR signer'] };
  const used = await verifyEntries(s, records, byName, signers, o, budget, errors);
  if (errors.length) return { signers: [], errors };
  return { signers: signers.filter((x) => used.has(x)).map((x) => x.leaf!), errors: [], warnings: unprotectedEntries(records, byName) };
}

/**
 * Entries under META-INF/ that no JAR signature covers (apksig's JAR_SIG_UNPROTECTED_ZIP_ENTRY): not the manifest,
 * not a signature file, not listed in the manifest. Anyone can change them without breaking the signature, so code
 * or configuration read from there is not what was signed.
 */
function unprotectedEntries(records: CdRecord[], byName: Map<string, ManifestSection>): string[] {
  return records
    .filter((r) => r.name.startsWith('META-INF/') && r.name !== MANIFEST && !byName.has(r.name) && !isSignatureFile(r.name))
    .map((r) => r.name);
}

/** A JAR signature file directly under META-INF/ (.SF, .RSA, .DSA, .EC, SIG-*), which signatures never list. */
function isSignatureFile(name: string): boolean {
  const base = name.slice('META-INF/'.length);
  return !base.includes('/') && (/\.(SF|RSA|DSA|EC)$/i.test(base) || base.startsWith('SIG-'));
}

function findSigners(records: CdRecord[]): Signer[] {
  const sfs = new Map<string, CdRecord>();
  const blocks: CdRecord[] = [];
  for (const r of records) {
    if (!r.name.startsWith('META-INF/') || r.name === MANIFEST) continue;
    if (r.name.endsWith('.SF')) sfs.set(r.name, r);
    else if (r.name.endsWith('.RSA') || r.name.endsWith('.DSA') || r.name.endsWith('.EC')) blocks.push(r);
  }
  if (blocks.length > LIMITS.signatureFiles) {
    throw new LimitExceededError('signatureFiles', `the package has ${blocks.length} v1 signature files, over the ${LIMITS.signatureFiles}-file limit`);
  }
  return blocks.flatMap((block) => {
    const sfName = `${block.name.slice(0, block.name.lastIndexOf('.'))}.SF`;
    const sf = sfs.get(sfName);
    return sf ? [{ name: block.name.slice('META-INF/'.length), blockName: block.name, sfName, block, sf }] : [];
  });
}

/** Null when one SignerInfo of the block verifies the .SF (before Android 7.0 only the first is tried); else why not. */
async function verifyBlockAgainstSf(s: ApkSections, signer: Signer, o: JarOptions, budget: JarBudget): Promise<string | null> {
  const blockBytes = await readEntry(s, signer.block, LIMITS.signatureFile, budget);
  signer.sfBytes = await readEntry(s, signer.sf, LIMITS.manifest, budget);
  let data;
  try {
    data = parseSignedData(blockBytes);
  } catch (err) {
    if (err instanceof DerError) return `${signer.blockName} is not a PKCS#7 SignedData (${err.message})`;
    throw err;
  }
  if (data.signerInfos.length === 0) return `${signer.blockName} has no SignerInfo`;
  const tried = o.minSdk < N ? data.signerInfos.slice(0, 1) : data.signerInfos;
  for (const info of tried) {
    const outcome = verifySignerInfo(info, data.certificates, data.contentType, signer.sfBytes, o);
    if (typeof outcome === 'string') return outcome;
    if (outcome) {
      signer.leaf = outcome;
      return null;
    }
  }
  return `the signature in ${signer.blockName} does not verify ${signer.sfName}`;
}

/** The signing certificate when `info` verifies the .SF; null when it does not; a string when Android would refuse it. */
function verifySignerInfo(info: SignerInfo, certs: Buffer[], contentType: string, sf: Buffer, o: JarOptions): Buffer | null | string {
  const gaps = unsupportedLevels(info.digestOid, info.signatureOid, o.minSdk, o.maxSdk);
  if (gaps) return `digest ${info.digestOid} with signature ${info.signatureOid} is not supported on API levels ${gaps}`;
  const cert = certs.find((c) => matches(c, info));
  if (!cert) return 'the signing certificate named by the SignerInfo is not in the signature block';
  const alg = jcaAlgorithm(info.digestOid, info.signatureOid)!;
  let signed: Buffer = sf;
  if (info.signedAttrs) {
    if (o.minSdk < KITKAT) return `signed attributes are not verified safely below API level ${KITKAT}`;
    let attrs: Map<string, Buffer[]>;
    try {
      attrs = signedAttributeValues(info.signedAttrs);
    } catch {
      return 'malformed signed attributes';
    }
    const type = attrs.get(OID_CONTENT_TYPE);
    if (!type || type.length !== 1) return 'no content type in signed attributes';
    if (readOid(type[0], readTlv(type[0], 0)) !== contentType) return null;
    const digest = attrs.get(OID_MESSAGE_DIGEST);
    if (!digest || digest.length !== 1) return 'no message digest in signed attributes';
    const expected = digest[0].subarray(readTlv(digest[0], 0).body);
    const hash = digestName(info.digestOid);
    if (!hash || !createHash(hash).update(sf).digest().equals(expected)) return null;
    // Android verifies over the attributes as encoded, with the [0] tag turned into SET, and so does apksig.
    signed = Buffer.concat([Buffer.from([0x31]), info.signedAttrs.subarray(1)]);
  }
  let key;
  try {
    key = new X509Certificate(cert).publicKey;
  } catch {
    return 'the signing certificate cannot be parsed';
  }
  if (key.asymmetricKeyType !== alg.key && !(alg.key === 'rsa' && key.asymmetricKeyType === 'rsa-pss')) return 'the signing key does not fit the signature algorithm';
  try {
    return verify(alg.hash, signed, { key, dsaEncoding: 'der' }, info.signature) ? cert : null;
  } catch {
    return null;
  }
}

function matches(cert: Buffer, info: SignerInfo): boolean {
  if (!info.issuer || !info.serial) return false;
  try {
    const c = certificateIssuerAndSerial(cert);
    // Names as apksig compares them (canonical X.500), serials as integers.
    return stripZeros(c.serial).equals(stripZeros(info.serial)) && sameName(c.issuer, info.issuer);
  } catch {
    return false;
  }
}

function stripZeros(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return b.subarray(i);
}

/** Errors of one .SF against the manifest; 'ignored' when Android disregards the signer (no Signature-Version, a bad section). */
function verifySfAgainstManifest(signer: Signer, manifestBytes: Buffer, main: ManifestSection | null, byName: Map<string, ManifestSection>, o: JarOptions): string[] | 'ignored' {
  const sf = parseManifest(signer.sfBytes!);
  if (!sf.main || attribute(sf.main, 'Signature-Version') === undefined) return 'ignored';
  const errors: string[] = [];
  if (o.maxSdk >= N) {
    const guard = attribute(sf.main, 'X-Android-APK-Signed');
    for (const id of (guard ?? '').split(',').map((t) => Number.parseInt(t.trim(), 10))) {
      if (o.knownSchemeIds.includes(id) && !o.foundSchemeIds.includes(id)) errors.push(`X-Android-APK-Signed names APK Signature Scheme v${id}, but the APK has no such signature (stripped)`);
    }
    if (errors.length) return errors;
  }
  const createdBySigntool = (attribute(sf.main, 'Created-By') ?? '').includes('signtool');
  const wholeDigests = digestsToVerify(sf.main, createdBySigntool ? '-Digest' : '-Digest-Manifest', o);
  const manifestVerified = wholeDigests.length > 0 && wholeDigests.every((d) => jcaHash(d.alg).update(manifestBytes).digest().equals(d.digest));
  if (!createdBySigntool && main) {
    for (const d of digestsToVerify(sf.main, '-Digest-Manifest-Main-Attributes', o)) {
      if (!jcaHash(d.alg).update(manifestBytes.subarray(main.start, main.start + main.size)).digest().equals(d.digest)) errors.push(`${d.alg} digest of the manifest's main attributes does not match`);
    }
  }
  if (errors.length) return errors;
  const names = new Set<string>();
  for (const section of sf.sections) {
    const name = sectionName(section);
    if (name === undefined || names.has(name)) return 'ignored';
    names.add(name);
    if (manifestVerified) continue;
    const m = byName.get(name);
    if (!m) return 'ignored';
    const expected = digestsToVerify(section, '-Digest', o);
    if (expected.length === 0) errors.push(`no digest of ${name}'s manifest section`);
    let size = m.size;
    if (createdBySigntool && manifestBytes[m.start + size - 1] === 0x0a && manifestBytes[m.start + size - 2] === 0x0a) size--;
    for (const d of expected) {
      if (!jcaHash(d.alg).update(manifestBytes.subarray(m.start, m.start + size)).digest().equals(d.digest)) errors.push(`${d.alg} digest of ${name}'s manifest section does not match`);
    }
  }
  signer.entryNames = names;
  return errors;
}

type NamedDigest = { alg: string; digest: Buffer };
const MODERN_DIGESTS = ['SHA-512', 'SHA-384', 'SHA-256', 'SHA-1'];
const CANONICAL: Record<string, string> = { MD5: 'MD5', SHA: 'SHA-1', SHA1: 'SHA-1', 'SHA-1': 'SHA-1', 'SHA-256': 'SHA-256', 'SHA-384': 'SHA-384', 'SHA-512': 'SHA-512' };
const DIGEST_MIN_SDK: Record<string, number> = { MD5: 0, 'SHA-1': 0, 'SHA-256': 0, 'SHA-384': 9, 'SHA-512': 9 };

/** The digests Android checks in a section (apksig's getDigestsToVerify): the legacy pick below 18, the strongest from 18 on. */
function digestsToVerify(section: ManifestSection, suffix: string, o: JarOptions): NamedDigest[] {
  const out: NamedDigest[] = [];
  if (o.minSdk < JB_MR2) {
    for (const token of (attribute(section, 'Digest-Algorithms') ?? 'SHA SHA1').split(/\s+/).filter(Boolean)) {
      const value = attribute(section, token + suffix);
      if (value === undefined) continue;
      const alg = CANONICAL[token.toUpperCase()];
      if (!alg || DIGEST_MIN_SDK[alg] > o.minSdk) continue;
      out.push({ alg, digest: Buffer.from(value, 'base64') });
      break;
    }
    if (out.length === 0) return out;
  }
  if (o.maxSdk >= JB_MR2) {
    for (const alg of MODERN_DIGESTS) {
      const value = attribute(section, (alg === 'SHA-1' ? 'SHA1' : alg) + suffix);
      if (value === undefined) continue;
      const digest = Buffer.from(value, 'base64');
      const have = out.find((d) => d.alg === alg);
      if (!have || !have.digest.equals(digest)) out.push({ alg, digest });
      break;
    }
  }
  return out;
}

/** Checks every entry outside META-INF/ (sorted by offset, read once); returns the signers that sign them. */
async function verifyEntries(s: ApkSections, records: CdRecord[], byName: Map<string, ManifestSection>, signers: Signer[], o: JarOptions, budget: JarBudget, errors: string[]): Promise<Set<Signer>> {
  let first: Signer[] | null = null;
  for (const r of [...records].sort((a, b) => a.localHeaderOffset - b.localHeaderOffset)) {
    if (r.name.startsWith('META-INF/')) continue;
    const section = byName.get(r.name);
    if (!section) {
      errors.push(`${r.name} is not listed in MANIFEST.MF (an entry added after signing)`);
      continue;
    }
    const entrySigners = signers.filter((x) => x.entryNames!.has(r.name));
    if (entrySigners.length === 0) {
      errors.push(`${r.name} is not signed by any signer`);
      continue;
    }
    if (!first) first = entrySigners;
    else if (entrySigners.length !== first.length || entrySigners.some((x, i) => x !== first![i])) {
      errors.push(`${r.name} is signed by other signers than the other entries`);
      continue;
    }
    const expected = digestsToVerify(section, '-Digest', o);
    if (expected.length === 0) {
      errors.push(`${r.name} has no digest in MANIFEST.MF`);
      continue;
    }
    const hashes = expected.map((d) => jcaHash(d.alg));
    await digestEntry(s, r, hashes, budget);
    expected.forEach((d, i) => {
      if (!hashes[i].digest().equals(d.digest)) errors.push(`${d.alg} digest of ${r.name} does not match MANIFEST.MF (the entry was changed after signing)`);
    });
    if (errors.length >= 8) break; // enough to name the failure; the verdict is already known
  }
  if (!first) errors.push('no signed entries');
  return new Set(first ?? []);
}
