// Protects: an event-id claim's key is 20 base64url characters (120 bits of SHA-256), the same for the same app and
// id, and different across apps and ids, including pairs whose plain concatenation is equal.
import { claimKeyFor } from '../../src/threats/event-claims';

it('is 20 base64url characters whatever the lengths of app id and event id', () => {
  for (const [app, id] of [['app_1', 'evt-00000001'], ['app_' + 'x'.repeat(40), 'e'.repeat(64)], ['a', '01890a5d-ac96-774b-bcce-b302099a8057']]) {
    expect(claimKeyFor(app, id)).toMatch(/^[A-Za-z0-9_-]{20}$/);
  }
});

it('is deterministic', () => {
  expect(claimKeyFor('app_1', 'evt-00000001')).toBe(claimKeyFor('app_1', 'evt-00000001'));
  // Pinned: claims stored by one release must be found by the next.
  expect(claimKeyFor('app_1', 'evt-00000001')).toBe('nIbxjXtb4QO9GCqmAI9H');
});

it('differs per app, per id, and where the boundary between them moves', () => {
  const keys = [claimKeyFor('app_1', 'evt-00000001'), claimKeyFor('app_2', 'evt-00000001'), claimKeyFor('app_1', 'evt-00000002'), claimKeyFor('app_1e', 'vt-00000001')];
  expect(new Set(keys).size).toBe(keys.length);
});
