import type { JWK } from 'jose';
import type { Clock } from '../core/clock';

const DISCOVERY_PATH = '/.well-known/openid-configuration';
/** Keys are read again after this long even when every kid is known, so a key the issuer withdrew stops verifying. */
export const JWKS_CACHE_MS = 10 * 60_000;
/** An unknown kid refetches the key set at most this often: forged kids cannot turn us into a load on the issuer. */
export const JWKS_REFETCH_COOLDOWN_MS = 60_000;
const FETCH_TIMEOUT_MS = 5_000;
const MAX_DOCUMENT_BYTES = 256 * 1024;

/** The issuer's discovery document or key set could not be read or is not acceptable. */
export class JwksUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JwksUnavailable';
  }
}

async function fetchJson(url: string): Promise<unknown> {
  const response = await fetch(url, {
    redirect: 'error', // a redirect could lead off the issuer's origin
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    headers: { accept: 'application/json' },
  });
  if (!response.ok) throw new JwksUnavailable(`${url} answered ${response.status}`);
  // Read as it streams and given up past the bound: an issuer (a self-managed GitLab is a tenant's own server)
  // must not make an instance hold more than this of its answer.
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  for (let part = await reader?.read(); part && !part.done; part = await reader!.read()) {
    size += part.value.byteLength;
    if (size > MAX_DOCUMENT_BYTES) {
      await reader!.cancel().catch(() => undefined);
      throw new JwksUnavailable(`${url} is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    }
    chunks.push(Buffer.from(part.value));
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The signing keys of the one accepted OIDC issuer, found through its discovery document and cached in memory
 * (a cache only: every instance may hold its own). The key set is always fetched here, never from a token header
 * (jku, x5u), and only from the issuer's own origin.
 */
export class IssuerKeys {
  private keys: JWK[] | null = null;
  private fetchedAt = 0;
  private lastAttemptAt: number | null = null;
  private inflight: Promise<void> | null = null;

  constructor(
    private readonly issuer: string,
    private readonly clock: Clock,
  ) {}

  /** The issuer's key with this kid, or null. An unknown kid triggers one refetch, at most once per cooldown. */
  async keyFor(kid: string): Promise<JWK | null> {
    if (this.inflight) await this.inflight.catch(() => undefined); // a fetch under way decides for us too
    const now = this.clock.now().getTime();
    const coolingDown = this.lastAttemptAt !== null && now - this.lastAttemptAt < JWKS_REFETCH_COOLDOWN_MS;
    const fresh = this.keys !== null && now - this.fetchedAt < JWKS_CACHE_MS;
    if (!fresh) {
      // Keys older than the cache lifetime are never used. Within the cooldown, no fresh keys means the last fetch failed.
      if (coolingDown) throw new JwksUnavailable('the issuer keys could not be read; waiting for the cooldown');
      await this.refresh(now);
      return this.find(kid); // just fetched: an unknown kid gets no second fetch
    }
    const known = this.find(kid);
    if (known || coolingDown) return known;
    await this.refresh(now);
    return this.find(kid);
  }

  private find(kid: string): JWK | null {
    return this.keys?.find((key) => key.kid === kid) ?? null;
  }

  private refresh(now: number): Promise<void> {
    // Concurrent requests share one fetch.
    this.inflight ??= this.load(now).finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async load(now: number): Promise<void> {
    this.lastAttemptAt = now;
    const jwksUri = await this.discoverJwksUri();
    const jwks = await fetchJson(jwksUri);
    if (!isRecord(jwks) || !Array.isArray(jwks.keys)) throw new JwksUnavailable('the key set has no keys array');
    this.keys = jwks.keys.filter((key): key is JWK => isRecord(key) && typeof key.kid === 'string' && key.kid.length > 0);
    this.fetchedAt = now;
  }

  private async discoverJwksUri(): Promise<string> {
    const issuerUrl = new URL(this.issuer);
    const discovery = await fetchJson(`${this.issuer.replace(/\/+$/, '')}${DISCOVERY_PATH}`);
    if (!isRecord(discovery)) throw new JwksUnavailable('the discovery document is not an object');
    // OpenID Connect Discovery 1.0, section 4.3: the document must name exactly the issuer it was fetched for.
    if (discovery.issuer !== this.issuer) throw new JwksUnavailable('the discovery document names another issuer');
    if (typeof discovery.jwks_uri !== 'string') throw new JwksUnavailable('the discovery document has no jwks_uri');
    let jwksUrl: URL;
    try {
      jwksUrl = new URL(discovery.jwks_uri);
    } catch {
      throw new JwksUnavailable('jwks_uri is not an absolute URL');
    }
    // Same origin (scheme, host, port) as the issuer, whose scheme the configuration already checked.
    if (jwksUrl.origin !== issuerUrl.origin) throw new JwksUnavailable('jwks_uri is not on the issuer origin');
    return jwksUrl.href;
  }
}
