import { SignJWT, exportJWK, generateKeyPair, importJWK, jwtVerify, decodeProtectedHeader, type JWK, type JWTPayload, type CryptoKey } from 'jose';
import type { SigningKeysRepo, SigningKeyDoc } from '../data/signing-keys-repo';
import type { Clock } from '../core/clock';
import { randomAlnum } from '../core/ids';
import { ConfigError } from '../core/config';
import { openJwk, sealJwk } from './key-sealing';

/** The header's `typ`: a token of one type never verifies as another. `verdict`: attestation verdict tokens, signed by their own key set. */
export type TokenType = 'access' | 'upload' | 'verdict';

/** How long the public keys signatureHolds checks against are kept; a revocation never waits on it (verify reads the status). */
const PUBLIC_KEYS_MAX_AGE_MS = 60_000;
/** How often at most an unknown kid reads them again: a key made by a rotation is found within a second. */
const PUBLIC_KEYS_MIN_AGE_MS = 1_000;

/** What a verified service token says. */
export interface VerifiedServiceToken {
  kid: string;
  claims: JWTPayload & Record<string, unknown>;
}

/**
 * The service's own signing keys (ES256), stored in MongoDB so every instance signs and verifies alike.
 * Access tokens and upload tokens are signed here. Revoking a key is effective on the next verification: the key's
 * status is read from the database on every verification, never cached.
 * With a key-encryption key (KEY_ENCRYPTION_KEY), private keys are stored sealed (key-sealing.ts): a copy of
 * the database alone cannot mint access tokens or upload URLs.
 */
export class SigningKeys {
  private readonly keyCache = new Map<string, CryptoKey | Uint8Array>(); // imported key material only, never the status

  constructor(
    private readonly repo: SigningKeysRepo,
    private readonly clock: Clock,
    private readonly issuer: string,
    private readonly kek: Buffer | null = null,
    /**
     * Names the set in key ids and messages: `sk` the service's tokens, `ak` attestation verdicts. `activeKeyCacheMs`:
     * how long this instance keeps signing with the active key it read (0: it reads it for every signature).
     */
    private readonly set: { kidPrefix: string; rotateCommand: string; activeKeyCacheMs?: number } = { kidPrefix: 'sk', rotateCommand: 'signing-key rotate' },
  ) {}

  /**
   * Checked when the service starts: the active key must open with the configured key-encryption key, so a wrong or missing one
   * stops the process with one line instead of failing every signature. Returns a warning for an active key stored
   * in the clear while a key-encryption key is set (a rotation seals the next one).
   */
  async checkActiveKey(): Promise<string | null> {
    const active = await this.repo.findActive();
    if (!active) return null;
    if (active.sealedPrivateJwk) {
      if (!this.kek) throw new ConfigError(`signing key ${active._id} is sealed: set KEY_ENCRYPTION_KEY to the key it was sealed with`);
      try {
        openJwk(active.sealedPrivateJwk, this.kek, active._id);
      } catch {
        throw new ConfigError(`KEY_ENCRYPTION_KEY does not open signing key ${active._id}: set the key it was sealed with`);
      }
      return null;
    }
    return this.kek ? `signing key ${active._id} is stored in the clear; run \`shieldgate ${this.set.rotateCommand}\` to seal a new one` : null;
  }

  /** Creates a new active key; the previous ones keep verifying (retired) unless revoked. */
  async rotate(opts: { revokePrevious: boolean }): Promise<{ kid: string; revoked: number }> {
    const kid = await this.insertActiveKey();
    await this.repo.retireAllExcept(kid);
    const revoked = opts.revokePrevious ? await this.repo.revokeAllExcept(kid, this.clock.now()) : 0;
    this.cachedActive = null;
    return { kid, revoked };
  }

  private async insertActiveKey(): Promise<string> {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = `${this.set.kidPrefix}_${randomAlnum(16)}`;
    const privateJwk = await exportJWK(privateKey);
    await this.repo.insert({
      _id: kid,
      alg: 'ES256',
      ...(this.kek ? { sealedPrivateJwk: sealJwk(privateJwk, this.kek, kid) } : { privateJwk }),
      publicJwk: await exportJWK(publicKey),
      status: 'active',
      createdAt: this.clock.now(),
      revokedAt: null,
    });
    return kid;
  }

  private firstKey: Promise<string> | null = null;
  /** The active key as last read, when the set caches it (activeKeyCacheMs): read again once `until` passes. */
  private cachedActive: { doc: SigningKeyDoc; until: number } | null = null;

  /**
   * The key that signs. A set that caches it (the verdict keys: a signature on every device verification) reads it at
   * most once per activeKeyCacheMs, so a rotation by the CLI reaches a running instance within that time; until then
   * it signs with the previous key, which still verifies (retired) unless the rotation revoked it.
   */
  private async signingKey(): Promise<SigningKeyDoc> {
    const cacheMs = this.set.activeKeyCacheMs ?? 0;
    // Real time, not the service clock: this only paces reads, nothing expires by it.
    const now = performance.now();
    if (cacheMs > 0 && this.cachedActive && this.cachedActive.until > now) return this.cachedActive.doc;
    const doc = await this.activeKey();
    if (cacheMs > 0) this.cachedActive = { doc, until: now + cacheMs };
    return doc;
  }

  /**
   * The newest active key. On a database without one, the first key is inserted WITHOUT retiring others: when
   * several requests (or instances) start at once, each retiring all but its own would leave no active key at all.
   * Two first keys both stay active, which is harmless (verification is by kid) until the next rotation retires them.
   */
  private async activeKey(): Promise<SigningKeyDoc> {
    // Twice at most: a first key this instance made long ago may have been retired by hand since, with none after it.
    for (let round = 0; round < 2; round++) {
      const active = await this.repo.findActive();
      if (active) return active;
      // One first key per instance, ever: the promise is kept once it succeeds, because a caller whose read found no
      // key just before the insert landed may only get here after it resolved (and would otherwise make a second one).
      const pending = (this.firstKey ??= this.insertActiveKey().catch((error: unknown) => {
        this.firstKey = null;
        throw error;
      }));
      await pending;
      const created = await this.repo.findActive();
      if (created) return created;
      // Every key retired since (by hand): the one this instance made is spent; the next round makes another.
      if (this.firstKey === pending) this.firstKey = null;
    }
    throw new Error('no active signing key after creating one');
  }

  private async importKey(doc: SigningKeyDoc, which: 'private' | 'public'): Promise<CryptoKey | Uint8Array> {
    const cacheKey = `${doc._id}:${which}`;
    let key = this.keyCache.get(cacheKey);
    if (!key) {
      key = await importJWK(which === 'private' ? this.privateJwk(doc) : doc.publicJwk, 'ES256');
      this.keyCache.set(cacheKey, key);
    }
    return key;
  }

  private privateJwk(doc: SigningKeyDoc): JWK {
    if (doc.privateJwk) return doc.privateJwk;
    if (!doc.sealedPrivateJwk || !this.kek) throw new Error(`signing key ${doc._id} is sealed and no key-encryption key opens it`);
    return openJwk(doc.sealedPrivateJwk, this.kek, doc._id);
  }

  async sign(type: TokenType, claims: Record<string, unknown>, expiresAt: Date): Promise<string> {
    const key = await this.signingKey();
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: key._id, typ: type })
      .setIssuer(this.issuer)
      .setIssuedAt(Math.floor(this.clock.now().getTime() / 1000))
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(await this.importKey(key, 'private'));
  }

  /**
   * The public keys that still verify (active and retired), as a JWK Set an app's backend checks verdict tokens with:
   * a retired key stays listed so tokens signed before a rotation verify until they expire; a revoked one is dropped.
   */
  async publicJwks(): Promise<{ keys: JWK[] }> {
    // Served without a credential: requests that arrive while a read is in flight share it, so a flood of them costs
    // one read at a time; an answer is as fresh as the read in flight when its request arrived.
    this.jwksReading ??= this.repo.findVerifying().finally(() => (this.jwksReading = null));
    const docs = await this.jwksReading;
    return { keys: docs.map((d) => ({ ...d.publicJwk, kid: d._id, alg: 'ES256', use: 'sig' })) };
  }

  private jwksReading: Promise<Array<Pick<SigningKeyDoc, '_id' | 'publicJwk'>>> | null = null;

  private publicKeys: { readAt: number; byKid: Map<string, CryptoKey | Uint8Array> } | null = null;
  private publicKeysLoading: Promise<Map<string, CryptoKey | Uint8Array>> | null = null;

  /**
   * The public keys of the keys that still verify, read from the database at most once per PUBLIC_KEYS_MAX_AGE_MS,
   * or once per PUBLIC_KEYS_MIN_AGE_MS when a kid is not among them (a key made since): whatever a client sends, these
   * lookups cost at most one read a second per instance.
   */
  private async publicKeyOf(kid: string): Promise<CryptoKey | Uint8Array | undefined> {
    const age = this.publicKeys ? performance.now() - this.publicKeys.readAt : Infinity;
    const known = this.publicKeys?.byKid.get(kid);
    if (known && age < PUBLIC_KEYS_MAX_AGE_MS) return known;
    if (!known && age < PUBLIC_KEYS_MIN_AGE_MS) return undefined;
    this.publicKeysLoading ??= (async () => {
      try {
        const byKid = new Map<string, CryptoKey | Uint8Array>();
        for (const doc of await this.repo.findVerifying()) byKid.set(doc._id, await importJWK(doc.publicJwk, 'ES256'));
        this.publicKeys = { readAt: performance.now(), byKid };
        return byKid;
      } finally {
        this.publicKeysLoading = null;
      }
    })();
    return (await this.publicKeysLoading).get(kid);
  }

  /**
   * Whether the token's signature, type, issuer and expiry hold, checked against public keys read at most once a
   * second (publicKeyOf), never the key's status: what a caller refusing a client's failed tokens without a look
   * still checks, so a forged token costs no database read and a genuine one is not refused with them. A true
   * answer is no verification: verify() follows, and reads the key's status.
   */
  async signatureHolds(type: TokenType, unverifiedToken: string): Promise<boolean> {
    try {
      const header = decodeProtectedHeader(unverifiedToken);
      if (header.alg !== 'ES256' || typeof header.kid !== 'string' || header.typ !== type) return false;
      const key = await this.publicKeyOf(header.kid);
      if (!key) return false;
      await jwtVerify(unverifiedToken, key, this.verifyOptions(type));
      return true;
    } catch {
      return false;
    }
  }

  private verifyOptions(type: TokenType) {
    return {
      algorithms: ['ES256'], // never what the token's header asks for
      issuer: this.issuer,
      typ: type, // an upload token can never pass as an access token, nor the reverse
      currentDate: this.clock.now(),
      clockTolerance: 0, // our own tokens: both clocks are ours
      requiredClaims: ['exp', 'iat'],
    };
  }

  /** Verifies a token this service signed. Returns null on any failure: callers answer with one generic refusal. */
  async verify(type: TokenType, unverifiedToken: string): Promise<VerifiedServiceToken | null> {
    try {
      const header = decodeProtectedHeader(unverifiedToken);
      if (header.alg !== 'ES256' || typeof header.kid !== 'string' || header.typ !== type) return null;
      const doc = await this.repo.findById(header.kid);
      if (!doc || doc.status === 'revoked') return null;
      const { payload } = await jwtVerify(unverifiedToken, await this.importKey(doc, 'public'), this.verifyOptions(type));
      return { kid: doc._id, claims: payload as VerifiedServiceToken['claims'] };
    } catch {
      return null;
    }
  }
}
