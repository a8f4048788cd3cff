import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../core/errors';

/**
 * Opaque, authenticated page cursors. A cursor carries its position and a digest of the filter it was made for, and
 * a MAC over both: a tampered cursor, or one reused with another filter, is refused (400 invalid_cursor).
 */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  encode(kind: string, filter: unknown, position: unknown): string {
    const body = Buffer.from(JSON.stringify({ p: position, f: this.filterDigest(kind, filter) })).toString('base64url');
    return `${body}.${this.mac(kind, body)}`;
  }

  /** `field` names where the caller got the cursor, for the refusal's message (REST nextCursor, GraphQL endCursor). */
  decode<T>(kind: string, filter: unknown, unverifiedCursor: string, field = 'nextCursor'): T {
    const invalid = () => new DomainError('invalid_cursor', `The cursor is not valid; pass ${field} exactly as returned.`);
    const [body, mac, extra] = unverifiedCursor.split('.');
    if (!body || !mac || extra !== undefined) throw invalid();
    const expected = Buffer.from(this.mac(kind, body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
    let parsed: { p: T; f: string };
    try {
      parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    if (parsed.f !== this.filterDigest(kind, filter)) {
      throw new DomainError('invalid_cursor', 'The cursor belongs to another query; start again without it.');
    }
    return parsed.p;
  }

  private mac(kind: string, body: string): string {
    return createHmac('sha256', this.secret).update(`${kind}\n${body}`).digest('base64url').slice(0, 32);
  }

  private filterDigest(kind: string, filter: unknown): string {
    return createHmac('sha256', this.secret).update(`${kind}\nfilter\n${JSON.stringify(filter ?? null)}`).digest('base64url').slice(0, 16);
  }
}
