// Protects: every audit entry reads its actor in one form (`api_key:<id>`, `staff:<id>`, ...), entries written
// before the one actorOf (a trust rule's or a signer's actor kept in details, an API key as `key:<id>`) included.
import { actorOfEntry } from '../../src/services/audit-service';

it('reads the top-level actor of an entry as it was written', () => {
  expect(actorOfEntry({ actor: 'api_key:key_abc', details: {} })).toBe('api_key:key_abc');
  expect(actorOfEntry({ actor: 'staff:stf_1', details: { actor: 'key:other' } })).toBe('staff:stf_1');
});

it('reads an older entry whose actor is in its details, an API key in the old `key:` form', () => {
  expect(actorOfEntry({ details: { actor: 'key:key_abc' } })).toBe('api_key:key_abc');
  expect(actorOfEntry({ actor: null, details: { actor: 'staff:stf_1' } })).toBe('staff:stf_1');
});

it('has no actor for an entry no caller made', () => {
  expect(actorOfEntry({ details: {} })).toBeNull();
  expect(actorOfEntry({ details: { actor: null } })).toBeNull();
});
