/**
 * A real OIDC issuer on loopback for tests: a discovery document and a JWKS served over http, and real signatures
 * (RSA-2048, RSA-3072, EC P-256, and an RSA-1024 key the service must refuse). Tokens are assembled by hand so tests
 * can also build the malformed and hostile ones of RFC 8725 (alg none, HS256 keyed with the public key, embedded
 * keys, crit, nested tokens).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, generateKeyPairSync, randomUUID, sign as cryptoSign, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';

export interface IssuerKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: KeyObject;
  publicJwk: JWK;
}

export interface SignOptions {
  key?: IssuerKey;
  /** Merged into the protected header; a value of undefined removes the member (e.g. { kid: undefined }). */
  header?: Record<string, unknown>;
}

export interface ClaimsBase {
  audience: string;
  now: Date;
}

export interface OidcIssuer {
  url: string;
  keys: { rsa: IssuerKey; rsa3072: IssuerKey; ec: IssuerKey; weakRsa: IssuerKey };
  /** The keys the JWKS currently lists (default: all four). */
  publish(keys: IssuerKey[]): void;
  /** Replaces the discovery document (null: the normal one). */
  setDiscovery(doc: Record<string, unknown> | null): void;
  /** Makes discovery and JWKS answer this status (null: normal service). */
  setFailure(status: number | null): void;
  readonly jwksFetches: number;
  newKey(alg: 'RS256' | 'ES256', kid?: string): IssuerKey;
  /** GitHub Actions-like claims for acme/mobile-app on main; an override of undefined removes the claim. */
  claims(base: ClaimsBase, overrides?: Record<string, unknown>): Record<string, unknown>;
  /** A compact JWS really signed by an issuer key. */
  sign(claims: Record<string, unknown>, opts?: SignOptions): string;
  /** A compact JWS with any header and a signature computed by the caller's recipe (attacks). */
  forge(header: Record<string, unknown>, claims: Record<string, unknown>, signature: (signingInput: string) => Buffer): string;
  close(): Promise<void>;
}

const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}

function makeKey(alg: 'RS256' | 'ES256', kid: string, modulusLength = 2048): IssuerKey {
  const pair = alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicJwk = { ...(pair.publicKey.export({ format: 'jwk' }) as JWK), kid, alg, use: 'sig' };
  return { kid, alg, privateKey: pair.privateKey, publicJwk };
}

function signWith(key: IssuerKey, signingInput: string): Buffer {
  if (key.alg === 'RS256') return cryptoSign('sha256', Buffer.from(signingInput), key.privateKey);
  // JWS ES256 signatures are r || s (IEEE P1363), not DER.
  return cryptoSign('sha256', Buffer.from(signingInput), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
}

/** HMAC-SHA256 keyed with the given bytes: the algorithm-confusion attack uses the issuer's public key as the secret. */
export function hs256(secret: Buffer | string): (signingInput: string) => Buffer {
  return (signingInput) => createHmac('sha256', secret).update(signingInput).digest();
}

export async function startOidcIssuer(): Promise<OidcIssuer> {
  const keys = {
    rsa: makeKey('RS256', 'rsa-2048'),
    rsa3072: makeKey('RS256', 'rsa-3072', 3072),
    ec: makeKey('ES256', 'ec-p256'),
    weakRsa: makeKey('RS256', 'rsa-1024', 1024),
  };
  let published: IssuerKey[] = Object.values(keys);
  let discoveryOverride: Record<string, unknown> | null = null;
  let failure: number | null = null;
  let jwksFetches = 0;

  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (failure !== null) return send(failure, { error: 'unavailable' });
    if (req.url === '/.well-known/openid-configuration') {
      return send(200, discoveryOverride ?? { issuer: url, jwks_uri: `${url}/.well-known/jwks`, id_token_signing_alg_values_supported: ['RS256'] });
    }
    if (req.url === '/.well-known/jwks') {
      jwksFetches++;
      return send(200, { keys: published.map((key) => key.publicJwk) });
    }
    send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const forge: OidcIssuer['forge'] = (header, claims, signature) => {
    const signingInput = `${b64url(withoutUndefined(header))}.${b64url(claims)}`;
    return `${signingInput}.${signature(signingInput).toString('base64url')}`;
  };

  return {
    url,
    keys,
    publish: (next) => {
      published = next;
    },
    setDiscovery: (doc) => {
      discoveryOverride = doc;
    },
    setFailure: (status) => {
      failure = status;
    },
    get jwksFetches() {
      return jwksFetches;
    },
    newKey: (alg, kid = `k-${randomUUID()}`) => makeKey(alg, kid),
    claims: ({ audience, now }, overrides = {}) => {
      const iat = Math.floor(now.getTime() / 1000);
      return withoutUndefined({
        iss: url,
        aud: audience,
        sub: 'repo:acme/mobile-app:ref:refs/heads/main',
        jti: randomUUID(),
        iat,
        nbf: iat,
        exp: iat + 300,
        repository: 'acme/mobile-app',
        repository_id: '123456789',
        repository_owner: 'acme',
        repository_owner_id: '4242',
        ref: 'refs/heads/main',
        ref_type: 'branch',
        event_name: 'push',
        workflow_ref: 'acme/mobile-app/.github/workflows/release.yml@refs/heads/main',
        job_workflow_ref: 'acme/mobile-app/.github/workflows/release.yml@refs/heads/main',
        runner_environment: 'github-hosted',
        ...overrides,
      });
    },
    sign: (claims, opts = {}) => {
      const key = opts.key ?? keys.rsa;
      return forge({ alg: key.alg, kid: key.kid, typ: 'JWT', ...opts.header }, claims, (input) => signWith(key, input));
    },
    forge,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
