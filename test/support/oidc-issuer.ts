/**
 * A real OIDC issuer on loopback for tests, shaped like GitHub Actions' (token.actions.githubusercontent.com): a
 * discovery document, a JWKS whose keys carry kty, n, e, kid, alg, use, x5t and x5c (a real self-signed certificate
 * made by openssl for each key, x5t the base64url SHA-1 of its DER, kid the same thumbprint in upper-case hex), and
 * tokens whose header is GitHub's `{"typ","alg","x5t","kid"}` and whose payload holds every claim of GitHub's
 * documented token, values as GitHub writes them (ids and counters as strings, ref_protected "true"/"false",
 * nbf before iat, five minutes of life). Sources: GitHub Docs, "OpenID Connect reference" / "About security
 * hardening with OpenID Connect" (example token and claim table).
 *
 * Tokens are assembled by hand so tests can also build the malformed and hostile ones of RFC 8725 (alg none, HS256
 * keyed with the public key, embedded keys, crit, nested tokens). Keys: RSA-2048 (GitHub's), RSA-3072, EC P-256 and
 * an RSA-1024 key the service must refuse.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createHash, createHmac, generateKeyPairSync, randomBytes, randomUUID, sign as cryptoSign, X509Certificate, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { runSync } from './host-tools';

/** Every claim of a GitHub Actions OIDC token (GitHub Docs, "OpenID Connect reference"), as GitHub types them. */
export interface GitHubClaims {
  jti: string;
  sub: string;
  /** Only when the job names an environment. */
  environment?: string;
  aud: string;
  ref: string;
  sha: string;
  repository: string;
  repository_owner: string;
  repository_owner_id: string;
  run_id: string;
  run_number: string;
  run_attempt: string;
  repository_visibility: 'public' | 'private' | 'internal';
  repository_id: string;
  actor_id: string;
  actor: string;
  workflow: string;
  head_ref: string;
  base_ref: string;
  event_name: string;
  ref_protected: 'true' | 'false';
  ref_type: 'branch' | 'tag';
  workflow_ref: string;
  workflow_sha: string;
  job_workflow_ref: string;
  job_workflow_sha: string;
  runner_environment: 'github-hosted' | 'self-hosted';
  iss: string;
  nbf: number;
  exp: number;
  iat: number;
}

/** Claims to change; a value of undefined removes the claim, other names are added (hostile tokens). */
export type ClaimOverrides = { [K in keyof GitHubClaims]?: GitHubClaims[K] | undefined } & Record<string, unknown>;

export interface IssuerKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: KeyObject;
  /** As the JWKS lists it: kty, n, e (or crv, x, y), kid, alg, use, x5t, x5c. */
  publicJwk: JWK;
  /** base64url SHA-1 of the certificate's DER, as GitHub puts it in the token header. */
  x5t: string;
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

/**
 * Another provider's issuer served by the same loopback server at a path of its own (`<url><path>`), as a
 * self-managed GitLab under a relative URL is: its own discovery document (naming exactly `<url><path>`), its own
 * key set at the provider's own place (GitLab `/oauth/discovery/keys`, Bitbucket `/keys.json`), and its own key,
 * which no other issuer publishes.
 */
export interface PathIssuer {
  url: string;
  key: IssuerKey;
  /** A compact JWS signed by this issuer's key (or `opts.key`), header `{ ...header, alg, kid }` as the provider writes it. */
  sign(claims: Record<string, unknown>, header: Record<string, unknown>, opts?: { key?: IssuerKey }): string;
  readonly jwksFetches: number;
}

export interface OidcIssuer {
  url: string;
  /** A further issuer at `path` (the keys at `jwksPath` below it), e.g. at('/gitlab', '/oauth/discovery/keys'). */
  at(path: string, jwksPath: string, alg?: 'RS256' | 'ES256'): PathIssuer;
  keys: { rsa: IssuerKey; rsa3072: IssuerKey; ec: IssuerKey; weakRsa: IssuerKey };
  /** The audience and clock mint() and githubClaims() use (tests bind the service's base URL and clock). */
  bind(base: { audience: string; now: () => Date }): void;
  /** GitHub's claims for a push to main of acme/mobile-app by its release workflow, with overrides. */
  githubClaims(overrides?: ClaimOverrides): Record<string, unknown>;
  /** A token exactly as GitHub issues it (RS256, header typ/alg/x5t/kid), claims and header overridable. */
  mint(overrides?: ClaimOverrides, headerOverrides?: Record<string, unknown>): string;
  /** The keys the JWKS currently lists (default: all four). */
  publish(keys: IssuerKey[]): void;
  /** Replaces the discovery document (null: the normal one). */
  setDiscovery(doc: Record<string, unknown> | null): void;
  /** Makes discovery and JWKS answer this status (null: normal service). */
  setFailure(status: number | null): void;
  readonly jwksFetches: number;
  newKey(alg: 'RS256' | 'ES256', kid?: string): IssuerKey;
  /** githubClaims with an explicit audience and time. */
  claims(base: ClaimsBase, overrides?: ClaimOverrides): Record<string, unknown>;
  /** A compact JWS really signed by an issuer key, with GitHub's header. */
  sign(claims: Record<string, unknown>, opts?: SignOptions): string;
  /** A compact JWS with any header and a signature computed by the caller's recipe (attacks). */
  forge(header: Record<string, unknown>, claims: Record<string, unknown>, signature: (signingInput: string) => Buffer): string;
  close(): Promise<void>;
}

/** GitHub's token lives five minutes from iat; nbf is set before iat, as in GitHub's documented example. */
export const GITHUB_TOKEN_LIFETIME_S = 300;
export const GITHUB_NBF_BEFORE_IAT_S = 600;

const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}

/** A self-signed certificate for the key, made by openssl (the tool GitHub's kind of certificate is made with). */
function selfSignedCertificate(privateKey: KeyObject, commonName: string): X509Certificate {
  const dir = mkdtempSync(path.join(tmpdir(), 'oidc-issuer-'));
  try {
    const keyFile = path.join(dir, 'key.pem');
    writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const cert = runSync('openssl', ['req', '-x509', '-new', '-key', keyFile, '-subj', `/CN=${commonName}`, '-days', '2', '-sha256'], { stdio: ['ignore', 'pipe', 'pipe'] });
    return new X509Certificate(cert);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function makeKey(alg: 'RS256' | 'ES256', kid?: string, modulusLength = 2048): IssuerKey {
  const pair = alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const certificate = selfSignedCertificate(pair.privateKey, 'token.actions.githubusercontent.com');
  const thumbprint = createHash('sha1').update(certificate.raw).digest();
  const x5t = thumbprint.toString('base64url');
  const keyId = kid ?? thumbprint.toString('hex').toUpperCase();
  const publicJwk: JWK = { ...(pair.publicKey.export({ format: 'jwk' }) as JWK), kid: keyId, alg, use: 'sig', x5t, x5c: [certificate.raw.toString('base64')] };
  return { kid: keyId, alg, privateKey: pair.privateKey, publicJwk, x5t };
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

const WORKFLOW_REF = 'acme/mobile-app/.github/workflows/release.yml@refs/heads/main';
let runCounter = 0;

/** GitHub's claims, in the order GitHub writes them; `environment` also changes the subject as GitHub does. */
function gitHubClaims(issuerUrl: string, { audience, now }: ClaimsBase, overrides: ClaimOverrides): Record<string, unknown> {
  const iat = Math.floor(now.getTime() / 1000);
  const sha = randomBytes(20).toString('hex');
  const environment = overrides.environment;
  const ref = (overrides.ref as string | undefined) ?? 'refs/heads/main';
  const context = typeof environment === 'string' ? `environment:${environment}` : `ref:${ref}`;
  runCounter++;
  return withoutUndefined({
    jti: randomUUID(),
    sub: `repo:acme/mobile-app:${context}`,
    environment,
    aud: audience,
    ref,
    sha,
    repository: 'acme/mobile-app',
    repository_owner: 'acme',
    repository_owner_id: '4242',
    run_id: String(16_000_000_000 + runCounter),
    run_number: String(40 + runCounter),
    run_attempt: '1',
    repository_visibility: 'private',
    repository_id: '123456789',
    actor_id: '583231',
    actor: 'octocat',
    workflow: 'Release',
    head_ref: '',
    base_ref: '',
    event_name: 'push',
    ref_protected: 'true',
    ref_type: ref.startsWith('refs/tags/') ? 'tag' : 'branch',
    workflow_ref: WORKFLOW_REF,
    workflow_sha: sha,
    job_workflow_ref: WORKFLOW_REF,
    job_workflow_sha: sha,
    runner_environment: 'github-hosted',
    iss: issuerUrl,
    nbf: iat - GITHUB_NBF_BEFORE_IAT_S,
    exp: iat + GITHUB_TOKEN_LIFETIME_S,
    iat,
    ...overrides,
  });
}

export async function startOidcIssuer(): Promise<OidcIssuer> {
  const keys = {
    rsa: makeKey('RS256'),
    rsa3072: makeKey('RS256', undefined, 3072),
    ec: makeKey('ES256'),
    weakRsa: makeKey('RS256', undefined, 1024),
  };
  let published: IssuerKey[] = Object.values(keys);
  let discoveryOverride: Record<string, unknown> | null = null;
  let failure: number | null = null;
  let jwksFetches = 0;
  let bound: { audience: string; now: () => Date } | null = null;

  const pathIssuers = new Map<string, { key: IssuerKey; jwksPath: string; fetches: number }>();
  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (failure !== null) return send(failure, { error: 'unavailable' });
    for (const [path, own] of pathIssuers) {
      if (req.url === `${path}/.well-known/openid-configuration`) {
        return send(200, { issuer: `${url}${path}`, jwks_uri: `${url}${path}${own.jwksPath}`, id_token_signing_alg_values_supported: [own.key.alg], response_types_supported: ['id_token'], subject_types_supported: ['public'] });
      }
      if (req.url === `${path}${own.jwksPath}`) {
        own.fetches++;
        const { x5t: _x5t, x5c: _x5c, ...jwk } = own.key.publicJwk as JWK & { x5t?: string };
        return send(200, { keys: [jwk] });
      }
    }
    if (req.url === '/.well-known/openid-configuration') {
      return send(
        200,
        discoveryOverride ?? {
          issuer: url,
          jwks_uri: `${url}/.well-known/jwks`,
          subject_types_supported: ['public', 'pairwise'],
          response_types_supported: ['id_token'],
          claims_supported: ['sub', 'aud', 'exp', 'iat', 'iss', 'jti', 'nbf', 'ref', 'sha', 'repository', 'repository_id', 'repository_owner', 'repository_owner_id', 'run_id', 'run_number', 'run_attempt', 'actor', 'actor_id', 'workflow', 'workflow_ref', 'workflow_sha', 'head_ref', 'base_ref', 'event_name', 'ref_type', 'ref_protected', 'environment', 'job_workflow_ref', 'job_workflow_sha', 'repository_visibility', 'runner_environment'],
          id_token_signing_alg_values_supported: ['RS256'],
          scopes_supported: ['openid'],
        },
      );
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
  const sign: OidcIssuer['sign'] = (claims, opts = {}) => {
    const key = opts.key ?? keys.rsa;
    // GitHub's header, members in GitHub's order.
    return forge({ typ: 'JWT', alg: key.alg, x5t: key.x5t, kid: key.kid, ...opts.header }, claims, (input) => signWith(key, input));
  };
  const boundBase = (): ClaimsBase => {
    if (!bound) throw new Error('bind the issuer to an audience and a clock first');
    return { audience: bound.audience, now: bound.now() };
  };

  const at: OidcIssuer['at'] = (path, jwksPath, alg = 'RS256') => {
    const own = { key: makeKey(alg, randomBytes(16).toString('hex')), jwksPath, fetches: 0 };
    pathIssuers.set(path, own);
    return {
      url: `${url}${path}`,
      key: own.key,
      sign: (claims, header, opts = {}) => {
        const key = opts.key ?? own.key;
        return forge({ ...header, alg: key.alg, kid: key.kid }, claims, (input) => signWith(key, input));
      },
      get jwksFetches() {
        return own.fetches;
      },
    };
  };

  return {
    url,
    keys,
    at,
    bind: (base) => {
      bound = base;
    },
    githubClaims: (overrides = {}) => gitHubClaims(url, boundBase(), overrides),
    mint: (overrides = {}, headerOverrides = {}) => sign(gitHubClaims(url, boundBase(), overrides), { header: headerOverrides }),
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
    newKey: (alg, kid) => makeKey(alg, kid),
    claims: (base, overrides = {}) => gitHubClaims(url, base, overrides),
    sign,
    forge,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
