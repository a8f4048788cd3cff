// Protects: POST /v1/auth/oidc end to end with a real loopback issuer and real signed tokens: a matching rule gives a
// 10-minute access token with the union of the matching rules' scopes; every refusal (whatever its cause, jose's
// TypeErrors included) is the same 401 and its reason goes only to the audit trail (`oidc.denied`, with the sub,
// never the token); each jti is exchanged once, also under a race between two instances; access tokens work where
// their scopes allow, never on rules or device operations, share one rate-limit bucket per rule, and are cut off at
// once by deleting a rule or revoking the service key. Tokens never reach a stored document or a log line.
import { JtiRepo } from '../../src/data/jti-repo';
import { JTI_MARGIN_S } from '../../src/services/oidc-exchange-service';
import { CLOCK_TOLERANCE_S } from '../../src/oidc/token-verifier';
import { randomInt } from 'node:crypto';
import { Writable } from 'node:stream';
import { startHarness, bearer, json, type Harness } from '../support/harness';
import { hs256, startOidcIssuer, type OidcIssuer } from '../support/oidc-issuer';
import { createLogger } from '../../src/core/logger';
import { PLAN_LIMITS } from '../../src/rate-limit/plans';
import type { AuditDoc } from '../../src/data/audit-repo';

// Response bodies are read as any: each test states the shape it expects.
const readJson = (res: Response): Promise<any> => res.json();
const WORKFLOW = 'acme/mobile-app/.github/workflows/release.yml@refs/heads/main';
let issuer: OidcIssuer;
let h: Harness;
const logLines: string[] = [];

beforeAll(async () => {
  issuer = await startOidcIssuer();
  h = await startHarness({ env: { OIDC_ISSUER: issuer.url, OIDC_ALLOW_INSECURE_ISSUER: 'on' } });
  issuer.bind({ audience: h.baseUrl, now: () => h.clock.now() });
  // Capture every log line the service writes, to prove no token ever reaches one.
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  h.deps.logger = createLogger('trace', sink);
});
afterAll(async () => {
  await h.close();
  await issuer.close();
});

// GitHub's token, field for field (test/support/oidc-issuer.ts), with overrides.
const claims = (overrides: Record<string, unknown> = {}) => issuer.githubClaims(overrides);
// Each request from its own client address: the anonymous rate-limit bucket is per address and shared by the run.
const clientAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

function exchange(token: string, appId: string) {
  return h.api('/v1/auth/oidc', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientAddress() },
    body: JSON.stringify({ token, appId }),
  });
}

async function newAppWithRules(rules: Array<Record<string, unknown>>, plan = 'startup') {
  const { appId } = await h.newApp(plan);
  const admin = await h.newKey(appId, ['rules:write', 'rules:read']);
  const ids: string[] = [];
  for (const rule of rules) {
    const res = await h.api(`/v1/apps/${appId}/oidc-rules`, { method: 'POST', headers: json(admin.key), body: JSON.stringify(rule) });
    expect(res.status).toBe(201);
    ids.push((await readJson(res)).id);
    h.clock.advance(1000); // distinct createdAt: "earliest-created" is unambiguous
  }
  return { appId, adminKey: admin.key, ruleIds: ids };
}

async function accessTokenFor(appId: string, overrides: Record<string, unknown> = {}) {
  const res = await exchange(issuer.mint(overrides), appId);
  expect(res.status).toBe(200);
  return (await readJson(res)) as { accessToken: string; scopes: string[]; expiresIn: number; appId: string; tokenType: string };
}

async function auditOf(appId: string, action?: AuditDoc['action']): Promise<AuditDoc[]> {
  return (await h.deps.repos.audit.list(appId, { limit: 100, action })).data;
}

const MAIN_RULE = { subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/main', scopes: ['builds:write'] };

describe('a successful exchange', () => {
  it('answers a 10-minute access token with the union of the matching rules, and audits it', async () => {
    const { appId, ruleIds } = await newAppWithRules([
      MAIN_RULE,
      { subjectPattern: 'repo:acme/mobile-*:ref:refs/heads/*', workflowRef: WORKFLOW, scopes: ['builds:read', 'scans:read'] },
      { subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/dev', scopes: ['threats:read'] }, // does not match
    ]);
    const res = await exchange(issuer.sign(claims()), appId);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await readJson(res);
    expect(body).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 600, scopes: ['builds:write', 'builds:read', 'scans:read'], appId });

    const who = await h.api('/v1/whoami', { headers: bearer(body.accessToken) });
    expect(who.status).toBe(200);
    expect(await readJson(who)).toEqual({
      appId,
      plan: 'startup',
      scopes: ['builds:write', 'builds:read', 'scans:read'],
      auth: 'oidc',
      expiresAt: new Date(Math.floor(h.clock.now().getTime() / 1000) * 1000 + 600_000).toISOString(),
    });

    const [entry] = await auditOf(appId, 'oidc.exchanged');
    expect(entry).toMatchObject({ subject: 'repo:acme/mobile-app:ref:refs/heads/main', ruleId: ruleIds[0], reason: null });
    expect(entry.details.rules).toBe(`${ruleIds[0]} ${ruleIds[1]}`);
  });

  it('matches a subject in the immutable form against a rule written with names, honouring id pins', async () => {
    const sub = 'repo:acme@4242/mobile-app@123456789:ref:refs/heads/main';
    const pinned = await newAppWithRules([{ ...MAIN_RULE, repositoryId: '123456789', repositoryOwnerId: '4242' }]);
    expect((await exchange(issuer.sign(claims({ sub })), pinned.appId)).status).toBe(200);
    const otherRepo = await newAppWithRules([{ ...MAIN_RULE, repositoryId: '999' }]);
    expect((await exchange(issuer.sign(claims({ sub })), otherRepo.appId)).status).toBe(401);
    const otherOwner = await newAppWithRules([{ ...MAIN_RULE, repositoryOwnerId: '1' }]);
    expect((await exchange(issuer.sign(claims()), otherOwner.appId)).status).toBe(401);
    expect((await auditOf(otherRepo.appId, 'oidc.denied'))[0].reason).toBe('not_trusted');
  });

  it('requires workflowRef and environment exactly', async () => {
    const { appId } = await newAppWithRules([
      { subjectPattern: 'repo:acme/mobile-app:environment:production', environment: 'production', workflowRef: WORKFLOW, scopes: ['builds:write'] },
    ]);
    const sub = 'repo:acme/mobile-app:environment:production';
    expect((await exchange(issuer.sign(claims({ sub, environment: 'production' })), appId)).status).toBe(200);
    expect((await exchange(issuer.sign(claims({ sub, environment: 'Production' })), appId)).status).toBe(401);
    expect((await exchange(issuer.sign(claims({ sub, environment: undefined })), appId)).status).toBe(401);
    const otherWorkflow = 'acme/mobile-app/.github/workflows/lint.yml@refs/heads/main';
    expect((await exchange(issuer.sign(claims({ sub, environment: 'production', job_workflow_ref: otherWorkflow })), appId)).status).toBe(401);
  });
});

describe('every refusal is the same 401', () => {
  it('answers identical status, headers and body (apart from the request id) whatever the cause; the reason goes to the audit', async () => {
    const { appId } = await newAppWithRules([MAIN_RULE]);
    const { appId: noRulesApp } = await h.newApp();
    const replayed = issuer.sign(claims());
    expect((await exchange(replayed, appId)).status).toBe(200);
    const pem = issuer.keys.rsa.publicJwk;
    const brokenEc = issuer.newKey('ES256', 'broken-ec');
    brokenEc.publicJwk = { ...brokenEc.publicJwk, x: Buffer.alloc(32, 1).toString('base64url'), y: Buffer.alloc(32, 2).toString('base64url') };
    issuer.publish([...Object.values(issuer.keys), brokenEc]);
    h.clock.advance(61_000); // past the refetch cooldown, so the new kid is looked up
    const now = Math.floor(h.clock.now().getTime() / 1000);
    const impostor = issuer.newKey('RS256', issuer.keys.rsa.kid);

    const cases: Array<[string, string, string, string | null]> = [
      // [label, token, app, expected reason (null: nothing to audit against)]
      ['unknown app', issuer.sign(claims()), 'app_doesnotexist00', null],
      ['no rules', issuer.sign(claims()), noRulesApp, 'not_trusted'],
      ['other branch', issuer.sign(claims({ ref: 'refs/heads/dev' })), appId, 'not_trusted'],
      ['sub of another repository', issuer.sign(claims({ sub: 'repo:evil/mobile-app:ref:refs/heads/main' })), appId, 'subject_mismatch'],
      ['expired', issuer.sign(claims({ iat: now - 400, nbf: now - 400, exp: now - 61 })), appId, 'expired'],
      ['replayed', replayed, appId, 'replayed'],
      ['bad signature', issuer.sign(claims(), { key: impostor }), appId, 'bad_signature'],
      ['pull_request', issuer.sign(claims({ event_name: 'pull_request' })), appId, 'pull_request'],
      ['pull_request_target', issuer.sign(claims({ event_name: 'pull_request_target' })), appId, 'pull_request'],
      ['audience array', issuer.sign(claims({ aud: [h.baseUrl] })), appId, 'audience'],
      ['other issuer', issuer.sign(claims({ iss: 'https://token.actions.githubusercontent.com' })), appId, 'issuer'],
      ['lifetime', issuer.sign(claims({ exp: now + 3601 })), appId, 'lifetime'],
      ['no jti', issuer.sign(claims({ jti: undefined })), appId, 'missing_claim'],
      ['alg none', issuer.forge({ alg: 'none', kid: issuer.keys.rsa.kid }, claims(), () => Buffer.from('x')), appId, 'algorithm'],
      ['HS256 with the public key', issuer.forge({ alg: 'HS256', kid: issuer.keys.rsa.kid }, claims(), hs256(JSON.stringify(pem))), appId, 'algorithm'],
      ['embedded jwk', issuer.sign(claims(), { header: { jwk: issuer.newKey('RS256', 'x').publicJwk } }), appId, 'forbidden_header'],
      ['jku', issuer.sign(claims(), { header: { jku: 'https://attacker.example/jwks' } }), appId, 'forbidden_header'],
      ['nested JWT', issuer.sign(claims(), { header: { cty: 'JWT' } }), appId, 'forbidden_header'],
      ['no kid', issuer.sign(claims(), { header: { kid: undefined } }), appId, 'no_kid'],
      ['RSA-1024', issuer.sign(claims(), { key: issuer.keys.weakRsa }), appId, 'key_size'],
      ['TypeError inside jose', issuer.sign(claims(), { key: brokenEc }), appId, 'malformed'],
      ['not a JWT', 'x'.repeat(40), appId, 'malformed'],
    ];

    const answers = new Set<string>();
    for (const [label, token, app] of cases) {
      const res = await exchange(token, app);
      const body = await readJson(res);
      const { instance, ...rest } = body;
      expect(instance).toMatch(/^urn:shieldgate:request:/);
      const headers = [...res.headers.entries()].filter(([name]) => !['date', 'x-request-id', 'ratelimit-reset'].includes(name));
      answers.add(JSON.stringify({ status: res.status, headers, body: rest }));
      expect({ label, status: res.status }).toEqual({ label, status: 401 });
    }
    expect(answers.size).toBe(1);
    const [answer] = [...answers].map((text) => JSON.parse(text));
    expect(answer.body).toEqual({
      type: 'https://shieldgate.dev/problems/unauthorized',
      title: 'Unauthorized',
      status: 401,
      code: 'unauthorized',
      detail: 'The token could not be exchanged.',
    });

    // The reasons: an entry per refusal of a verified token; refusals before verification counted per reason and minute.
    const expected = cases.filter(([, , , reason]) => reason !== null);
    const denied = [...(await auditOf(appId, 'oidc.denied')), ...(await auditOf(noRulesApp, 'oidc.denied'))];
    for (const [label, , app, reason] of expected) {
      expect({ label, found: denied.some((d) => d.appId === app && d.reason === reason) }).toEqual({ label, found: true });
    }
    expect(denied.reduce((sum, d) => sum + (d.count ?? 1), 0)).toBe(expected.length);
    const unverified = ['bad_signature', 'algorithm', 'forbidden_header', 'no_kid', 'key_size', 'malformed', 'expired'];
    for (const reason of unverified) {
      const entries = denied.filter((d) => d.reason === reason);
      expect({ reason, entries: entries.length, count: entries[0].count, claims: entries[0].claims ?? null }).toEqual({
        reason,
        entries: 1,
        count: expected.filter(([, , , r]) => r === reason).length,
        claims: null,
      });
    }
    // The subject is recorded once the signature is verified, and never when it is not.
    expect(denied.find((d) => d.reason === 'subject_mismatch')?.subject).toBe('repo:evil/mobile-app:ref:refs/heads/main');
    expect(denied.find((d) => d.reason === 'expired')?.subject).toBeNull(); // signed, but it proves nothing about who sends it now
    expect(denied.find((d) => d.reason === 'bad_signature')?.subject).toBeNull();
    expect(denied.find((d) => d.reason === 'algorithm')?.subject).toBeNull();
    // An unknown app has no trail: it is logged, without the token.
    expect(logLines.some((line) => line.includes('"reason":"unknown_app"') && line.includes('app_doesnotexist00'))).toBe(true);
    issuer.publish(Object.values(issuer.keys));
  });

  it('refuses an oversized token: 400 by the contract over REST, refused before parsing through GraphQL', async () => {
    const { appId } = await newAppWithRules([MAIN_RULE]);
    const big = issuer.sign(claims({ padding: 'x'.repeat(9000) }));
    const res = await exchange(big, appId);
    expect(res.status).toBe(400);
    expect((await readJson(res)).code).toBe('validation_failed');
    const admin = await h.newStaff('admin');
    const gql = await h.api('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(admin) },
      body: JSON.stringify({ query: 'mutation($t: String!, $a: ID!) { exchangeOidcToken(token: $t, appId: $a) { accessToken } }', variables: { t: big, a: appId } }),
    });
    const body = await readJson(gql);
    expect(body.errors[0].extensions.code).toBe('unauthorized');
    expect((await auditOf(appId, 'oidc.denied'))[0].reason).toBe('too_long');
  });

  it('lets the app owner read why exchanges were refused (rules:read), never seeing a token', async () => {
    const { appId, adminKey } = await newAppWithRules([MAIN_RULE]);
    const token = issuer.sign(claims({ event_name: 'pull_request' }));
    expect((await exchange(token, appId)).status).toBe(401);
    const res = await h.api(`/v1/apps/${appId}/audit-events?action=oidc.denied`, { headers: bearer(adminKey) });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text).data[0]).toMatchObject({
      action: 'oidc.denied',
      reason: 'pull_request',
      subject: 'repo:acme/mobile-app:ref:refs/heads/main',
      count: 1,
      claims: { repository: 'acme/mobile-app', event_name: 'pull_request', environment: null },
      rules: [{ id: expect.stringMatching(/^rul_/), matched: true, failed: null }],
    });
    expect(text).not.toContain(token.split('.')[2]);
  });
  it('keeps no claims of jobs whose owner no rule names: a stranger cannot fill an app\'s trail with entries of their choosing', async () => {
    const { appId } = await newAppWithRules([MAIN_RULE]);
    const stranger = {
      sub: 'repo:stranger/mobile-app:ref:refs/heads/main',
      repository: 'stranger/mobile-app',
      repository_owner: 'stranger',
      repository_owner_id: '777',
      repository_id: '778',
      job_workflow_ref: 'stranger/mobile-app/.github/workflows/release.yml@refs/heads/main',
    };
    for (let i = 0; i < 3; i++) expect((await exchange(issuer.sign(claims(stranger)), appId)).status).toBe(401);
    const denied = await auditOf(appId, 'oidc.denied');
    expect(denied).toHaveLength(1); // one entry per reason and minute, not one per token
    expect(denied[0]).toMatchObject({ reason: 'not_trusted', count: 3, subject: null });
    expect(denied[0].claims ?? null).toBeNull();
    expect(denied[0].rules ?? null).toBeNull();
    // A job of the owner the rule names keeps its claims and the per-rule explanation.
    expect((await exchange(issuer.sign(claims({ ref: 'refs/heads/dev' })), appId)).status).toBe(401);
    const explained = (await auditOf(appId, 'oidc.denied')).find((d) => d.claims);
    expect(explained).toMatchObject({ reason: 'not_trusted', claims: { repository: 'acme/mobile-app', ref: 'refs/heads/dev' } });
  });
});

describe('each jti is exchanged once', () => {
  it('gives exactly one 200 among parallel exchanges of one token, and keeps refusing it inside the tolerance', async () => {
    const { appId } = await newAppWithRules([MAIN_RULE]);
    const token = issuer.sign(claims());
    const statuses = await Promise.all(Array.from({ length: 20 }, () => exchange(token, appId).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 401)).toHaveLength(19);
    expect((await auditOf(appId, 'oidc.denied')).every((d) => d.reason === 'replayed')).toBe(true);
    h.clock.advance(300_000 + 50_000); // past exp, inside the tolerance
    expect((await exchange(token, appId)).status).toBe(401);
    expect((await auditOf(appId, 'oidc.denied'))[0].reason).toBe('replayed');
  });

  it('keeps an exchanged jti for a margin past exp + tolerance, so a late claim of a replay still loses', async () => {
    const { appId } = await newAppWithRules([MAIN_RULE]);
    const token = issuer.sign(claims({ jti: 'jti-margin' }));
    expect((await exchange(token, appId)).status).toBe(200);
    const exp = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).exp as number;
    const stored = await h.deps.db.collection('oidc_used_jtis').findOne({ _id: JtiRepo.idFor(issuer.url, 'jti-margin') } as any);
    expect(stored?.expiresAt.getTime()).toBe((exp + CLOCK_TOLERANCE_S + JTI_MARGIN_S) * 1000);
    // A replay verified at the last instant, its claim judged by a clock up to the margin later: still refused.
    const lastInstant = new Date((exp + CLOCK_TOLERANCE_S) * 1000);
    expect(await h.deps.repos.jtis.claim(issuer.url, 'jti-margin', new Date(lastInstant.getTime() + (JTI_MARGIN_S - 1) * 1000), lastInstant)).toBe(false);
  });

  it('stores each jti until exp + tolerance, checked against the stored expiresAt', async () => {
    const now = h.clock.now();
    const until = new Date(now.getTime() + 60_000);
    expect(await h.deps.repos.jtis.claim(issuer.url, 'jti-kept', now, until)).toBe(true);
    expect(await h.deps.repos.jtis.claim(issuer.url, 'jti-kept', new Date(until.getTime() - 1), until)).toBe(false);
    expect(await h.deps.repos.jtis.claim('https://another.issuer', 'jti-kept', now, until)).toBe(true); // per issuer
    expect(await h.deps.repos.jtis.claim(issuer.url, 'jti-kept', until, until)).toBe(true); // expired record: taken over
  });

  it('gives exactly one winner across two instances sharing the database', async () => {
    const second = await startHarness({
      now: h.clock.now(),
      env: { OIDC_ISSUER: issuer.url, OIDC_ALLOW_INSECURE_ISSUER: 'on', MONGODB_DATABASE: h.config.mongodbDatabase, PUBLIC_BASE_URL: h.baseUrl },
    });
    try {
      const { appId } = await newAppWithRules([MAIN_RULE]);
      const token = issuer.sign(claims());
      const post = (base: string) =>
        fetch(`${base}/v1/auth/oidc`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': clientAddress() },
          body: JSON.stringify({ token, appId }),
        }).then((r) => r.status);
      const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => post(i % 2 ? second.baseUrl : h.baseUrl)));
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 401)).toHaveLength(9);
    } finally {
      // Close without dropping the shared database (the first instance owns it).
      await closeWithoutDrop(second);
    }
  });
});

async function closeWithoutDrop(instance: Harness): Promise<void> {
  const drop = instance.deps.db.dropDatabase.bind(instance.deps.db);
  instance.deps.db.dropDatabase = (async () => true) as typeof drop;
  await instance.close();
}

describe('access tokens', () => {
  it('work where their scopes allow and never on rules operations', async () => {
    const { appId } = await newAppWithRules([{ ...MAIN_RULE, scopes: ['builds:write', 'builds:read'] }]);
    const { accessToken } = await accessTokenFor(appId);
    const created = await h.api('/v1/builds', { method: 'POST', headers: json(accessToken), body: JSON.stringify({ platform: 'android', version: '1.0.0' }) });
    expect(created.status).toBe(201);
    const build = await readJson(created);
    expect((await h.api(`/v1/builds/${build.id}`, { headers: bearer(accessToken) })).status).toBe(200);
    for (const [path, method, body] of [
      [`/v1/apps/${appId}/oidc-rules`, 'GET', undefined],
      [`/v1/apps/${appId}/oidc-rules`, 'POST', { subjectPattern: 'repo:acme/x:ref:refs/heads/main', scopes: ['builds:read'] }],
      [`/v1/apps/${appId}/oidc-rules/rul_doesnotmatter`, 'DELETE', undefined],
      [`/v1/apps/${appId}/audit-events`, 'GET', undefined],
    ] as const) {
      const res = await h.api(path, { method, headers: json(accessToken), body: body && JSON.stringify(body) });
      expect({ path, method, status: res.status }).toEqual({ path, method, status: 403 });
    }
  });

  it('stop working at once when a rule that produced them is deleted', async () => {
    const { appId, adminKey, ruleIds } = await newAppWithRules([MAIN_RULE, { ...MAIN_RULE, scopes: ['builds:read'] }, { ...MAIN_RULE, subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/dev' }]);
    const both = await accessTokenFor(appId);
    const devOnly = await accessTokenFor(appId, { ref: 'refs/heads/dev' });
    expect((await h.api('/v1/whoami', { headers: bearer(both.accessToken) })).status).toBe(200);
    expect((await h.api(`/v1/apps/${appId}/oidc-rules/${ruleIds[1]}`, { method: 'DELETE', headers: bearer(adminKey) })).status).toBe(204);
    expect((await h.api('/v1/whoami', { headers: bearer(both.accessToken) })).status).toBe(401);
    expect((await h.api('/v1/whoami', { headers: bearer(devOnly.accessToken) })).status).toBe(200);
  });

  it('stop working at once when the service key is revoked, and expire after 10 minutes', async () => {
    const { appId } = await newAppWithRules([MAIN_RULE]);
    const before = await accessTokenFor(appId);
    expect((await h.api('/v1/whoami', { headers: bearer(before.accessToken) })).status).toBe(200);
    await h.deps.signingKeys.rotate({ revokePrevious: true });
    expect((await h.api('/v1/whoami', { headers: bearer(before.accessToken) })).status).toBe(401);

    const after = await accessTokenFor(appId);
    h.clock.advance(599_000);
    expect((await h.api('/v1/whoami', { headers: bearer(after.accessToken) })).status).toBe(200);
    h.clock.advance(1_000);
    expect((await h.api('/v1/whoami', { headers: bearer(after.accessToken) })).status).toBe(401);
  });

  it('share one rate-limit bucket per rule: the earliest-created matching rule', async () => {
    const { appId } = await newAppWithRules(
      [MAIN_RULE, { ...MAIN_RULE, scopes: ['builds:read'] }, { ...MAIN_RULE, subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/dev' }],
      'hatchling',
    );
    const jobA = await accessTokenFor(appId);
    const jobB = await accessTokenFor(appId);
    const devJob = await accessTokenFor(appId, { ref: 'refs/heads/dev' });
    const remaining = async (token: string) => {
      const res = await h.api('/v1/whoami', { headers: bearer(token) });
      expect(res.headers.get('ratelimit-limit')).toBe(String(PLAN_LIMITS.hatchling));
      return Number(res.headers.get('ratelimit-remaining'));
    };
    const first = await remaining(jobA.accessToken);
    expect(await remaining(jobB.accessToken)).toBe(first - 1);
    expect(await remaining(jobA.accessToken)).toBe(first - 2);
    expect(await remaining(devJob.accessToken)).toBe(PLAN_LIMITS.hatchling - 1);
  });

  it('are refused when tampered with or signed by another key', async () => {
    const { appId } = await newAppWithRules([MAIN_RULE]);
    const { accessToken } = await accessTokenFor(appId);
    const [header, payload, signature] = accessToken.split('.');
    const claimsOf = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const widened = Buffer.from(JSON.stringify({ ...claimsOf, scopes: ['builds:write', 'rules:write', 'attest:verify'] })).toString('base64url');
    expect((await h.api('/v1/whoami', { headers: bearer(`${header}.${widened}.${signature}`) })).status).toBe(401);
    // Even a token the service itself signed carries no rules or device scope past verification.
    const overreaching = await h.deps.signingKeys.sign(
      'access',
      { ...claimsOf, scopes: ['builds:write', 'rules:write', 'rules:read', 'attest:verify', 'events:ingest'] },
      new Date(claimsOf.exp * 1000),
    );
    const who = await h.api('/v1/whoami', { headers: bearer(overreaching) });
    expect((await readJson(who)).scopes).toEqual(['builds:write']);
    // An OIDC token of the CI provider is not an access token.
    expect((await h.api('/v1/whoami', { headers: bearer(issuer.sign(claims())) })).status).toBe(401);
  });

  it('keep their job\'s provenance under any text of their signature, and are refused without their jti', async () => {
    const { appId } = await newAppWithRules([{ ...MAIN_RULE, scopes: ['builds:write', 'builds:read'] }]);
    const { accessToken } = await accessTokenFor(appId, { sha: 'a'.repeat(40) });
    const reader = await h.newKey(appId, ['scans:read']);
    // ECDSA: (r, n - s) verifies wherever (r, s) does, so one token has a second text.
    const [header, payload, signature] = accessToken.split('.');
    const raw = Buffer.from(signature, 'base64url');
    const n = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551'); // P-256's group order
    const s = BigInt(`0x${raw.subarray(32).toString('hex')}`);
    const flipped = Buffer.concat([raw.subarray(0, 32), Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex')]);
    const rewritten = `${header}.${payload}.${flipped.toString('base64url')}`;
    expect((await h.api('/v1/whoami', { headers: bearer(rewritten) })).status).toBe(200);
    for (const token of [accessToken, rewritten]) {
      const created = await h.api('/v1/builds', { method: 'POST', headers: json(token), body: JSON.stringify({ platform: 'android', version: '1.0.0', commit: 'b'.repeat(40) }) });
      expect(created.status).toBe(201);
      const build = await readJson(created);
      expect(build.provenance).toMatchObject({ repository: 'acme/mobile-app', sha: 'a'.repeat(40) });
      const preview = await readJson(await h.api(`/v1/scans/${build.scans[0].id}`, { headers: bearer(reader.key) }));
      expect(preview.findings.map((f: { id: string }) => f.id)).toContain('preview.commit-mismatch');
    }
    // A token the service signed without a jti names no record of its job: refused, never a build without provenance.
    const { jti: _jti, ...withoutJti } = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const unnamed = await h.deps.signingKeys.sign('access', withoutJti, new Date(withoutJti.exp * 1000));
    expect((await h.api('/v1/whoami', { headers: bearer(unnamed) })).status).toBe(401);
    // One whose jti names no recorded job (minted elsewhere, say by an older instance) registers nothing: a 401, so
    // the client exchanges again.
    const unrecorded = await h.deps.signingKeys.sign('access', { ...withoutJti, jti: 'atk_neverrecorded0000000' }, new Date(withoutJti.exp * 1000));
    expect((await h.api('/v1/whoami', { headers: bearer(unrecorded) })).status).toBe(200);
    const refused = await h.api('/v1/builds', { method: 'POST', headers: json(unrecorded), body: JSON.stringify({ platform: 'android', version: '1.0.0' }) });
    expect(refused.status).toBe(401);
  });
});

describe('secrets', () => {
  it('never stores or logs an OIDC token or an access token', async () => {
    const { appId } = await newAppWithRules([MAIN_RULE]);
    const good = issuer.sign(claims());
    const refused = issuer.sign(claims({ event_name: 'pull_request' }));
    const forged = issuer.sign(claims(), { key: issuer.newKey('RS256', issuer.keys.rsa.kid) });
    const res = await exchange(good, appId);
    const { accessToken } = await readJson(res);
    await exchange(good, appId); // replay
    await exchange(refused, appId);
    await exchange(forged, appId);
    await h.api('/v1/whoami', { headers: bearer(accessToken) });
    expect(logLines.some((line) => line.includes('oidc exchange refused'))).toBe(true); // the capture works

    const secrets = [good, refused, forged, accessToken].flatMap((t) => t.split('.').slice(1)); // payloads and signatures
    const stored: string[] = [];
    for (const { name } of await h.deps.db.listCollections().toArray()) {
      for (const doc of await h.deps.db.collection(name).find({}).toArray()) stored.push(JSON.stringify(doc));
    }
    const everything = [...stored, ...logLines].join('\n');
    for (const secret of secrets) expect(everything.includes(secret)).toBe(false);
  });
});

describe('refusals explained to app owners', () => {
  it('records, for a verified token, the claims rules look at and the first failing check of every rule', async () => {
    const { appId, ruleIds } = await newAppWithRules([
      { subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/dev', scopes: ['builds:write'] },
      { ...MAIN_RULE, workflowRef: 'acme/mobile-app/.github/workflows/deploy.yml@refs/heads/main' },
      { ...MAIN_RULE, events: ['release'] },
    ]);
    const token = issuer.mint({ environment: 'production' });
    expect((await exchange(token, appId)).status).toBe(401);
    const [entry] = await auditOf(appId, 'oidc.denied');
    expect(entry.reason).toBe('not_trusted');
    expect(entry.claims).toEqual({
      sub: 'repo:acme/mobile-app:environment:production',
      repository: 'acme/mobile-app',
      repository_id: '123456789',
      repository_owner_id: '4242',
      ref: 'refs/heads/main',
      environment: 'production',
      event_name: 'push',
      job_workflow_ref: WORKFLOW,
    });
    expect(entry.rules).toEqual([
      { id: ruleIds[0], matched: false, failed: { check: 'subjectPattern.ref', expected: 'refs/heads/dev', actual: 'refs/heads/main' } },
      { id: ruleIds[1], matched: false, failed: { check: 'workflowRef', expected: 'acme/mobile-app/.github/workflows/deploy.yml@refs/heads/main', actual: WORKFLOW } },
      { id: ruleIds[2], matched: false, failed: { check: 'events', expected: 'release', actual: 'push' } },
    ]);
    // Never the token nor a part of it.
    const stored = JSON.stringify(entry);
    for (const part of token.split('.')) expect(stored.includes(part)).toBe(false);
    // A release of the same workflow is let in by the third rule.
    expect((await exchange(issuer.mint({ event_name: 'release' }), appId)).status).toBe(200);
  });

  it('records the claims of a verified token refused before the rules (pull request)', async () => {
    const { appId } = await newAppWithRules([MAIN_RULE]);
    expect((await exchange(issuer.mint({ event_name: 'pull_request_target' }), appId)).status).toBe(401);
    const [entry] = await auditOf(appId, 'oidc.denied');
    expect(entry).toMatchObject({ reason: 'pull_request', subject: 'repo:acme/mobile-app:ref:refs/heads/main', claims: { event_name: 'pull_request_target' } });
    expect(entry.rules).toEqual([{ id: expect.any(String), matched: true, failed: null }]);
  });

  it('keeps one entry per refused token, counting its repetitions', async () => {
    const { appId } = await newAppWithRules([{ subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/dev', scopes: ['builds:write'] }]);
    const token = issuer.mint();
    for (let i = 0; i < 3; i++) expect((await exchange(token, appId)).status).toBe(401);
    expect((await exchange(issuer.mint(), appId)).status).toBe(401);
    const denied = await auditOf(appId, 'oidc.denied');
    expect(denied.map((d) => d.count).sort()).toEqual([1, 3]);
    expect(denied.every((d) => d.reason === 'not_trusted' && d.claims?.ref === 'refs/heads/main' && d.rules?.length === 1)).toBe(true);
  });

  it('counts refusals that prove nothing in one entry per app, reason and minute, even under a race', async () => {
    const { appId } = await newAppWithRules([MAIN_RULE]);
    const impostor = issuer.newKey('RS256', issuer.keys.rsa.kid);
    h.clock.advance(60_000 - (h.clock.now().getTime() % 60_000)); // the start of a minute
    const forged = () => issuer.sign(claims(), { key: impostor });
    const statuses = await Promise.all(Array.from({ length: 12 }, () => exchange(forged(), appId).then((r) => r.status)));
    expect(statuses.every((s) => s === 401)).toBe(true);
    expect((await exchange('x'.repeat(40), appId)).status).toBe(401);
    let denied = await auditOf(appId, 'oidc.denied');
    const summary = denied.map((d) => [d.reason, d.count, d.subject, d.claims ?? null]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(summary).toEqual([
      ['bad_signature', 12, null, null],
      ['malformed', 1, null, null],
    ]);
    h.clock.advance(59_000);
    await exchange(forged(), appId);
    expect((await auditOf(appId, 'oidc.denied')).find((d) => d.reason === 'bad_signature')?.count).toBe(13);
    h.clock.advance(1_000); // the next minute: a new entry
    await exchange(forged(), appId);
    denied = await auditOf(appId, 'oidc.denied');
    expect(denied.filter((d) => d.reason === 'bad_signature').map((d) => d.count)).toEqual([1, 13]);
  });
});

describe('events', () => {
  it('refuses workflow_run unless a matching rule lists it', async () => {
    const plain = await newAppWithRules([MAIN_RULE]);
    expect((await exchange(issuer.mint({ event_name: 'workflow_run' }), plain.appId)).status).toBe(401);
    expect((await auditOf(plain.appId, 'oidc.denied'))[0].rules?.[0].failed).toMatchObject({ check: 'events', actual: 'workflow_run' });
    const listed = await newAppWithRules([{ ...MAIN_RULE, events: ['push', 'workflow_run'] }]);
    expect((await exchange(issuer.mint({ event_name: 'workflow_run' }), listed.appId)).status).toBe(200);
    expect((await exchange(issuer.mint({ event_name: 'workflow_dispatch' }), listed.appId)).status).toBe(401);
  });

  it('accepts subjects in the immutable and customised forms on the rule written with names', async () => {
    const { appId } = await newAppWithRules([{ ...MAIN_RULE, repositoryId: '123456789', repositoryOwnerId: '4242' }]);
    for (const sub of [
      'repo:acme@4242/mobile-app@123456789:ref:refs/heads/main',
      `repo:acme/mobile-app:ref:refs/heads/main:job_workflow_ref:${WORKFLOW}`,
      'repository_owner_id:4242:repository_id:123456789:ref:refs/heads/main',
    ]) {
      expect({ sub, status: (await exchange(issuer.mint({ sub }), appId)).status }).toEqual({ sub, status: 200 });
    }
    expect((await exchange(issuer.mint({ sub: 'repository_owner_id:1:repository_id:123456789:ref:refs/heads/main' }), appId)).status).toBe(401);
    expect((await auditOf(appId, 'oidc.denied'))[0].reason).toBe('subject_unrecognized');
  });
});

describe('release builds of keyless jobs (docs/contract.md, "Release builds")', () => {
  const register = async (token: string) => {
    const res = await h.api('/v1/builds', { method: 'POST', headers: json(token), body: JSON.stringify({ platform: 'android', version: '1.0.0', commit: null }) });
    expect(res.status).toBe(201);
    return readJson(res);
  };
  const FEATURE_RULE = { subjectPattern: 'repo:acme/mobile-app:ref:refs/heads/feature-*', scopes: ['builds:write'] };
  const TAG_RULE = { subjectPattern: 'repo:acme/mobile-app:ref:refs/tags/v*', scopes: ['builds:write'], releaseBuilds: true };

  it('while no rule declares release builds, a job on refs/heads/main registers one and a branch job does not', async () => {
    const { appId } = await newAppWithRules([MAIN_RULE, FEATURE_RULE]);
    const main = await register((await accessTokenFor(appId)).accessToken);
    expect(main).toMatchObject({ release: true, provenance: { ref: 'refs/heads/main' } });
    const feature = await register((await accessTokenFor(appId, { ref: 'refs/heads/feature-login' })).accessToken);
    expect(feature).toMatchObject({ release: false, provenance: { ref: 'refs/heads/feature-login' } });
  });

  it('once a rule declares release builds, only its jobs register them (the default branch no longer does)', async () => {
    const { appId, adminKey, ruleIds } = await newAppWithRules([MAIN_RULE, TAG_RULE]);
    const rules = (await readJson(await h.api(`/v1/apps/${appId}/oidc-rules`, { headers: bearer(adminKey) }))).data;
    expect(rules.map((r: any) => [r.id, r.releaseBuilds])).toEqual([[ruleIds[0], false], [ruleIds[1], true]]);
    expect((await auditOf(appId, 'oidc.rule_created')).find((e) => e.ruleId === ruleIds[1])?.details).toMatchObject({ releaseBuilds: true });
    const tag = await register((await accessTokenFor(appId, { ref: 'refs/tags/v2.0.0' })).accessToken);
    expect(tag).toMatchObject({ release: true, provenance: { ref: 'refs/tags/v2.0.0' } });
    const main = await register((await accessTokenFor(appId)).accessToken);
    expect(main).toMatchObject({ release: false, provenance: { ref: 'refs/heads/main' } });
  });
});
