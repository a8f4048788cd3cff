import type { Collection, Db, Filter } from 'mongodb';
import { ensureIndexes } from './db';

export const AUDIT_ACTIONS = ['oidc.exchanged', 'oidc.denied', 'oidc.rule_created', 'oidc.rule_deleted'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditDoc {
  _id: string; // aud_...
  appId: string;
  org: string | null;
  action: AuditAction;
  occurredAt: Date;
  subject: string | null; // the OIDC `sub`, never the token
  reason: string | null;
  ruleId: string | null;
  details: Record<string, string | number | boolean | null>;
}

export interface AuditPage {
  data: AuditDoc[];
  hasMore: boolean;
}

export class AuditRepo {
  static readonly collectionName = 'audit_events';
  private readonly col: Collection<AuditDoc>;
  constructor(db: Db) {
    this.col = db.collection<AuditDoc>(AuditRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [
      { key: { appId: 1, occurredAt: -1, _id: -1 }, name: 'app_time' },
      { key: { appId: 1, action: 1, occurredAt: -1, _id: -1 }, name: 'app_action_time' },
    ]);
  }
  async insert(doc: AuditDoc): Promise<void> {
    await this.col.insertOne(doc);
  }

  /** Newest first, keyset-paginated on (occurredAt, _id) so pages stay stable while entries are added. */
  async list(appId: string, opts: { limit: number; action?: AuditAction; after?: { occurredAt: Date; id: string } }): Promise<AuditPage> {
    const filter: Filter<AuditDoc> = { appId };
    if (opts.action) filter.action = opts.action;
    if (opts.after) {
      filter.$or = [
        { occurredAt: { $lt: opts.after.occurredAt } },
        { occurredAt: opts.after.occurredAt, _id: { $lt: opts.after.id } },
      ];
    }
    const docs = await this.col.find(filter).sort({ occurredAt: -1, _id: -1 }).limit(opts.limit + 1).toArray();
    return { data: docs.slice(0, opts.limit), hasMore: docs.length > opts.limit };
  }
}
