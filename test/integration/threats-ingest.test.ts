// Protects: POST /v1/events (device keys with events:ingest): batches of 1 to 100 validated per event with pointers
// naming the event's index; device ids stored only as a keyed hash and never returned; the merge rule (identical
// events but time and confidence, one device, within 5 minutes of the first occurrence: one Threat whose count grows,
// lastOccurredAt moves, occurredAt stays), in one batch and across batches.
import { startHarness, bearer, json, readJson, type Harness } from '../support/harness';
import { DEVICE, accessToken, after, event, ingest, list, listAll, minutes } from './threats-support';

let h: Harness;
let appId: string;
let device: string; // events:ingest
let reader: string; // threats:read
const t0 = new Date('2025-03-14T10:00:00.000Z');

beforeAll(async () => {
  h = await startHarness({ now: after(t0, minutes(60)) });
  appId = (await h.newApp('enterprise')).appId;
  device = (await h.newKey(appId, ['events:ingest'])).key;
  reader = (await h.newKey(appId, ['threats:read'])).key;
});
afterAll(async () => h.close());

/** A fresh app per test keeps expectations exact. */
async function freshApp() {
  const { appId: id } = await h.newApp('enterprise');
  return { appId: id, device: (await h.newKey(id, ['events:ingest'])).key, reader: (await h.newKey(id, ['threats:read'])).key };
}

describe('ingest', () => {
  it('accepts a batch with 202 and lists the event as a Threat, without the device id', async () => {
    const a = await freshApp();
    const res = await ingest(h.baseUrl, a.device, [event(t0, { buildId: 'bld_7Hq2LmXa9c' })]);
    expect(res).toEqual({ status: 202, body: { accepted: 1, duplicates: 0 } });
    const page = await list(h, a.reader, a.appId);
    expect(page.status).toBe(200);
    expect(page.body).toEqual({
      data: [
        {
          id: expect.stringMatching(/^thr_[0-9a-f]{32}$/),
          detection: 'hooking',
          verdict: 'compromised',
          confidence: 0.8,
          action: 'block',
          signals: ['frida_server', 'suspicious_library'],
          platform: 'android',
          appVersion: '2.4.1',
          buildId: 'bld_7Hq2LmXa9c',
          // No verdict token with the batch (docs/attestation.md): not attested.
          attested: false,
          attestedBuildId: null,
          occurredAt: t0.toISOString(),
          lastOccurredAt: t0.toISOString(),
          count: 1,
        },
      ],
      hasMore: false,
      nextCursor: null,
    });
    expect(JSON.stringify(page.body)).not.toContain(DEVICE);
  });

  it('stores the device id only as a keyed hash', async () => {
    const a = await freshApp();
    await ingest(h.baseUrl, a.device, [event(t0, { deviceId: 'raw-device-id-0042' })]);
    const docs = await h.deps.db.collection('threats').find({ appId: a.appId }).toArray();
    expect(docs).toHaveLength(1);
    expect(JSON.stringify(docs)).not.toContain('raw-device-id-0042');
    expect(docs[0].deviceHash).toMatch(/^[0-9a-f]{64}$/);
    // Keyed: a plain SHA-256 of the id (or of app + id) is not what is stored.
    const { createHash } = await import('node:crypto');
    expect(docs[0].deviceHash).not.toBe(createHash('sha256').update('raw-device-id-0042').digest('hex'));
    expect(docs[0].deviceHash).not.toBe(createHash('sha256').update(`${a.appId}\nraw-device-id-0042`).digest('hex'));
  });

  it('accepts optional fields left out and lists them as null', async () => {
    const a = await freshApp();
    const { platform: _p, appVersion: _v, ...bare } = event(t0);
    expect((await ingest(h.baseUrl, a.device, [bare])).status).toBe(202);
    const [threat] = (await list(h, a.reader, a.appId)).body.data;
    expect(threat).toMatchObject({ platform: null, appVersion: null, buildId: null });
  });
});

describe('merge rule', () => {
  it('merges identical events of one device within 5 minutes of the first, across requests', async () => {
    const a = await freshApp();
    await ingest(h.baseUrl, a.device, [event(t0, { confidence: 0.5 })]);
    await ingest(h.baseUrl, a.device, [event(after(t0, minutes(2)), { confidence: 0.9 })]);
    await ingest(h.baseUrl, a.device, [event(after(t0, minutes(5)), { confidence: 0.7 })]); // exactly 5 min: still in
    const threats = await listAll(h, a.reader, a.appId);
    expect(threats).toHaveLength(1);
    expect(threats[0]).toMatchObject({
      occurredAt: t0.toISOString(), // the first occurrence stays the sort key
      lastOccurredAt: after(t0, minutes(5)).toISOString(),
      count: 3,
      confidence: 0.9, // the strongest evidence
    });
  });

  it('opens a new window for the first occurrence after the 5 minutes, measured from the first, not the last', async () => {
    const a = await freshApp();
    await ingest(h.baseUrl, a.device, [event(t0)]);
    await ingest(h.baseUrl, a.device, [event(after(t0, minutes(4)))]);
    await ingest(h.baseUrl, a.device, [event(after(t0, minutes(5) + 1))]); // 1 ms past the first's window
    await ingest(h.baseUrl, a.device, [event(after(t0, minutes(9)))]); // inside the second window
    const threats = await listAll(h, a.reader, a.appId);
    expect(threats.map((t) => [t.occurredAt, t.lastOccurredAt, t.count])).toEqual([
      [after(t0, minutes(5) + 1).toISOString(), after(t0, minutes(9)).toISOString(), 2],
      [t0.toISOString(), after(t0, minutes(4)).toISOString(), 2],
    ]);
  });

  it('merges within one batch, and splits a batch into windows', async () => {
    const a = await freshApp();
    const batch = [0, 1, 2, 3, 4, 6, 7].map((m) => event(after(t0, minutes(m)))).reverse(); // order must not matter
    expect((await ingest(h.baseUrl, a.device, batch)).body).toEqual({ accepted: 7, duplicates: 0 });
    const threats = await listAll(h, a.reader, a.appId);
    expect(threats.map((t) => [t.occurredAt, t.count])).toEqual([
      [after(t0, minutes(6)).toISOString(), 2],
      [t0.toISOString(), 5],
    ]);
  });

  it('keeps apart events of other devices, or that differ in anything but time and confidence', async () => {
    const a = await freshApp();
    const variants = [
      {},
      { deviceId: 'device-0002-other' },
      { detection: 'debugger' },
      { verdict: 'suspicious' },
      { action: 'warn' },
      { signals: ['frida_server'] },
      { platform: 'ios' },
      { appVersion: '2.4.2' },
      { buildId: 'bld_7Hq2LmXa9c' },
    ];
    await ingest(h.baseUrl, a.device, variants.map((v) => event(t0, v)));
    await ingest(h.baseUrl, a.device, variants.map((v) => event(after(t0, minutes(1)), v)));
    const threats = await listAll(h, a.reader, a.appId);
    expect(threats).toHaveLength(variants.length);
    expect(threats.every((t) => t.count === 2)).toBe(true);
  });

  it('treats signals as a set: another order is the same event', async () => {
    const a = await freshApp();
    await ingest(h.baseUrl, a.device, [event(t0, { signals: ['a_signal', 'b_signal'] })]);
    await ingest(h.baseUrl, a.device, [event(after(t0, 1000), { signals: ['b_signal', 'a_signal'] })]);
    expect((await listAll(h, a.reader, a.appId)).map((t) => t.count)).toEqual([2]);
  });

  it('gives a late event (before the current window began) its own window and never moves a first occurrence', async () => {
    const a = await freshApp();
    await ingest(h.baseUrl, a.device, [event(after(t0, minutes(3)))]);
    await ingest(h.baseUrl, a.device, [event(after(t0, minutes(1)))]);
    await ingest(h.baseUrl, a.device, [event(after(t0, minutes(4)))]); // both windows hold it: the current one takes it
    const threats = await listAll(h, a.reader, a.appId);
    expect(threats.map((t) => [t.occurredAt, t.count])).toEqual([
      [after(t0, minutes(3)).toISOString(), 2],
      [after(t0, minutes(1)).toISOString(), 1],
    ]);
  });

  it('keeps apps apart: the same event from two apps is two threats, each visible to its own app only', async () => {
    const a = await freshApp();
    const b = await freshApp();
    await ingest(h.baseUrl, a.device, [event(t0)]);
    await ingest(h.baseUrl, b.device, [event(t0)]);
    const [ta] = await listAll(h, a.reader, a.appId);
    const [tb] = await listAll(h, b.reader, b.appId);
    expect(ta.id).not.toBe(tb.id);
    expect((await list(h, a.reader, b.appId)).status).toBe(404);
  });
});

describe('validation', () => {
  const problem = async (events: unknown, headers: Record<string, string> = json(device)) => {
    const res = await h.api('/v1/events', { method: 'POST', headers, body: typeof events === 'string' ? events : JSON.stringify(events) });
    return { status: res.status, body: await readJson(res) };
  };
  const pointers = (body: any) => (body.errors ?? []).map((e: any) => e.pointer);

  it('refuses an empty batch and one over 100 events', async () => {
    for (const events of [[], Array.from({ length: 101 }, () => event(t0))]) {
      const res = await problem({ events });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('validation_failed');
      expect(pointers(res.body)).toEqual(['/events']);
    }
    expect((await ingest(h.baseUrl, device, Array.from({ length: 100 }, () => event(t0)))).status).toBe(202);
  });

  it.each([
    ['confidence', { confidence: 1.5 }],
    ['confidence', { confidence: -0.1 }],
    ['detection', { detection: 'malware' }],
    ['verdict', { verdict: 'bad' }],
    ['action', { action: 'reboot' }],
    ['platform', { platform: 'windows' }],
    ['appVersion', { appVersion: '' }],
    ['appVersion', { appVersion: 'x'.repeat(41) }],
    ['buildId', { buildId: 'build-1' }],
    ['deviceId', { deviceId: 'short' }],
    ['deviceId', { deviceId: 'd'.repeat(129) }],
    ['occurredAt', { occurredAt: 'yesterday' }],
    ['signals', { signals: Array.from({ length: 33 }, (_, i) => `s${i}`) }],
    ['signals/0', { signals: [''] }],
    ['eventId', { eventId: 'short' }],
    ['eventId', { eventId: 'e'.repeat(65) }],
    ['eventId', { eventId: 'evt 0001 with spaces' }],
  ])('names the event index in the pointer: %s %j', async (field, override) => {
    const events = [event(t0), event(t0), event(t0), event(t0, override)];
    const res = await problem({ events });
    expect(res.status).toBe(422);
    expect(pointers(res.body).some((p: string) => p.startsWith(`/events/3/${field}`))).toBe(true);
    expect(pointers(res.body).every((p: string) => p.startsWith('/events/3'))).toBe(true);
  });

  it('refuses missing required fields and unknown fields, per event', async () => {
    const { deviceId: _d, ...noDevice } = event(t0);
    const res = await problem({ events: [event(t0), noDevice] });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.errors)).toContain('/events/1');
    const extra = await problem({ events: [{ ...event(t0), imei: '356938035643809' }] });
    expect(extra.status).toBe(422);
    expect(pointers(extra.body).some((p: string) => p.startsWith('/events/0'))).toBe(true);
    expect(JSON.stringify(extra.body)).not.toContain('356938035643809');
    expect((await problem({ events: [event(t0)], extra: 1 })).status).toBe(422);
  });

  it('refuses events dated more than 10 minutes ahead or more than 30 days back', async () => {
    const now = h.clock.now();
    const ahead = await problem({ events: [event(after(now, minutes(11)))] });
    expect(ahead.status).toBe(422);
    expect(pointers(ahead.body)).toEqual(['/events/0/occurredAt']);
    expect((await problem({ events: [event(after(now, minutes(9)))] })).status).toBe(202);
    const old = await problem({ events: [event(t0), event(after(now, -31 * 24 * 60 * minutes(1)))] });
    expect(old.status).toBe(422);
    expect(pointers(old.body)).toEqual(['/events/1/occurredAt']);
  });

  it('stores nothing of a batch with one bad event', async () => {
    const a = await freshApp();
    const res = await ingest(h.baseUrl, a.device, [event(t0), event(t0, { confidence: 2 })]);
    expect(res.status).toBe(422);
    expect(await h.deps.db.collection('threats').countDocuments({ appId: a.appId })).toBe(0);
  });

  it('answers 400 to a body that is not JSON and 415 to another media type', async () => {
    expect((await problem('{"events": [')).status).toBe(400);
    const res = await h.api('/v1/events', { method: 'POST', headers: { ...bearer(device), 'content-type': 'text/plain' }, body: 'x' });
    expect(res.status).toBe(415);
  });

  it('never echoes a device id in an error', async () => {
    const res = await problem({ events: [event(t0, { deviceId: 'secret-device-id-77', confidence: 9 })] });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).not.toContain('secret-device-id-77');
  });
});

describe('credentials', () => {
  it('needs events:ingest (403) and a valid credential (401)', async () => {
    const noScope = (await h.newKey(appId, ['threats:read', 'attest:verify'])).key;
    expect((await ingest(h.baseUrl, noScope, [event(t0)])).status).toBe(403);
    expect((await ingest(h.baseUrl, 'svc_live_nope_nope', [event(t0)])).status).toBe(401);
  });

  it('refuses access tokens (403): device scopes never reach a CI job', async () => {
    const token = await accessToken(h, appId, ['threats:read', 'builds:write']);
    const res = await ingest(h.baseUrl, token, [event(t0)]);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('insufficient_scope');
    expect((await list(h, token, appId)).status).toBe(200); // the token itself works where it may
  });
});
