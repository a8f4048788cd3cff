// Protects: cursors are opaque and authenticated: tampering, other filters and other kinds are refused with 400.
import { randomBytes } from 'node:crypto';
import { CursorCodec } from '../../src/crypto/cursors';
import { DomainError } from '../../src/core/errors';

describe('CursorCodec', () => {
  const codec = new CursorCodec(randomBytes(32));
  const filter = { appId: 'app_1', detection: 'hooking' };

  it('round-trips a position for the same filter', () => {
    const cursor = codec.encode('threats', filter, [1700000000000, 'thr_abc']);
    expect(codec.decode('threats', filter, cursor)).toEqual([1700000000000, 'thr_abc']);
  });

  function expectRefused(fn: () => unknown) {
    try {
      fn();
      throw new Error('not refused');
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('invalid_cursor');
      expect((error as DomainError).status).toBe(400);
    }
  }

  it('refuses a cursor reused with another filter', () => {
    const cursor = codec.encode('threats', filter, [1, 'a']);
    expectRefused(() => codec.decode('threats', { ...filter, detection: 'tamper' }, cursor));
  });

  it('refuses a cursor of another kind', () => {
    const cursor = codec.encode('threats', filter, [1, 'a']);
    expectRefused(() => codec.decode('audit', filter, cursor));
  });

  it('refuses tampered cursors', () => {
    const cursor = codec.encode('threats', filter, [1, 'a']);
    const [body, mac] = cursor.split('.');
    const forged = Buffer.from(JSON.stringify({ p: [9e15, 'z'], f: 'x' })).toString('base64url');
    expectRefused(() => codec.decode('threats', filter, `${forged}.${mac}`));
    // The first character changed (the last one may carry only padding bits, or already be the replacement).
    const otherFirst = mac[0] === 'A' ? 'B' : 'A';
    expectRefused(() => codec.decode('threats', filter, `${body}.${otherFirst}${mac.slice(1)}`));
    expectRefused(() => codec.decode('threats', filter, body));
    expectRefused(() => codec.decode('threats', filter, `${cursor}.extra`));
  });

  it('refuses a cursor made with another secret', () => {
    const other = new CursorCodec(randomBytes(32));
    expectRefused(() => codec.decode('threats', filter, other.encode('threats', filter, [1, 'a'])));
  });
});
