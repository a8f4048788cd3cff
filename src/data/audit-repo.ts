import type { Collection, Db, Filter } from 'mongodb';
import { ensureIndexes, isDuplicateKeyError } from './db';

export const AUDIT_ACTIONS = [
  'oidc.exchanged',
  'oidc.denied',
  'oidc.rule_created',
  'oidc.rule_deleted',
  'oidc.dry_run',
  'oidc.rule_pinned',
  // A deliberate re-key: an app's key holder (rules:write) records the signer of a package.
  'signer.recorded',
  // An accepted finding (rules:write): the suppression and the finding it names.
  'suppression.created',
  'suppression.deleted',
  // A webhook sends an app's alerts to a URL its key holder (rules:write) or an admin chose: who added or removed one.
  'webhook.created',
  'webhook.deleted',
  // An app's device attestation configuration was set (rules:write): which engines, never a key.
  'attestation.configured',
  // Staff (GraphQL) and operator (CLI) mutations: `actor` says who, `resource` what it was done to.
  'app.created',
  'api_key.created',
  'api_key.revoked',
  'staff.created',
  'staff.revoked',
  'signing_key.rotated',
  'attest_key.rotated',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** The claims rules look at, under the token's provider's names. */
export type AuditClaims = Record<string, string | null>;

export interface AuditDoc {
  _id: string; // aud_...
  appId: string | null; // null: an entry about no app (a staff token, a signing key)
  org: string | null;
  action: AuditAction;
  occurredAt: Date;
  subject: string | null; // the OIDC `sub`, never the token
  reason: string | null;
  ruleId: string | null;
  details: Record<string, string | number | boolean | null>;
  /** oidc.denied of a token whose signature was verified: the claims rules look at (never the token). */
  claims?: AuditClaims | null;
  /** oidc.denied of a verified token, and oidc.dry_run: per rule of the app, the first check that failed. */
  rules?: AuditRuleOutcome[] | null;
  /**
   * oidc.denied: how many refusals this entry counts (of one token, or of one reason and minute when unproven);
   * oidc.dry_run: how many dry runs of one caller, outcome and minute.
   */
  count?: number | null;
  /** Who did it: `staff:<id>`, `operator:<os user>`; absent on entries written before actors were recorded. */
  actor?: string | null;
  /** What it was done to: `app:<id>`, `api_key:<id>`, `staff:<id>`, `signing_key:<kid>`. */
  resource?: string | null;
  /**
   * oidc.denied: the CI provider whose model judged the token (`github` until a token named another trusted issuer;
   * `unknown` when it named an issuer no rule trusts); absent on entries written before providers existed (GitHub).
   */
  provider?: string | null;
}

export interface AuditRuleOutcome {
  id: string;
  matched: boolean;
  failed: { check: string; expected: string; actual: string | null } | null;
}

/** The fields an aggregated entry is created with; `count` starts at 1 and grows. */
export type AggregatedAuditDoc = Omit<AuditDoc, 'count'>;

/**
 * Claim names are stored as field names, and a field name may hold neither `.` nor a leading `$` (CircleCI's are
 * `oidc.circleci.com/project-id`): `%`, `.` and `$` are written as `%25`, `%2E` and `%24`, and read back. GitHub's,
 * GitLab's, Buildkite's and Bitbucket's names have none of them, so their entries read as they always did.
 */
const encodeName = (name: string) => name.replace(/%/g, '%25').replace(/\./g, '%2E').replace(/\$/g, '%24');
const decodeName = (name: string) => name.replace(/%2E/g, '.').replace(/%24/g, '$').replace(/%25/g, '%');
const mapNames = (claims: AuditClaims, map: (name: string) => string): AuditClaims => Object.fromEntries(Object.entries(claims).map(([name, value]) => [map(name), value]));
const stored = <T extends Pick<AuditDoc, 'claims'>>(doc: T): T => (doc.claims ? { ...doc, claims: mapNames(doc.claims, encodeName) } : doc);
const read = (doc: AuditDoc): AuditDoc => (doc.claims ? { ...doc, claims: mapNames(doc.claims, decodeName) } : doc);

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
      // Dashboards: one action across every app in a time range (refused exchanges per day and reason).
      { key: { action: 1, occurredAt: -1, _id: -1 }, name: 'action_time' },
      // The admins' log of every entry, and the retention sweep's oldest-first reads.
      { key: { occurredAt: -1, _id: -1 }, name: 'time' },
    ]);
  }
  async insert(doc: AuditDoc): Promise<void> {
    await this.col.insertOne(stored(doc));
  }

  /**
   * Counts one more occurrence in the entry whose _id the caller derived (app, reason, minute), creating it on the
   * first: the unique _id gives exactly one creator, and every later occurrence is one atomic $inc by _id, so
   * concurrent refusals never make two entries nor lose a count. (Insert-then-increment rather than an upsert with
   * $setOnInsert: FerretDB 1.x drops null fields from $setOnInsert.)
   */
  /** True when this call created the entry (the first occurrence of its bucket). */
  async incrementAggregate(doc: AggregatedAuditDoc): Promise<boolean> {
    try {
      await this.col.insertOne(stored({ ...doc, count: 1 }));
      return true;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    await this.col.updateOne({ _id: doc._id }, { $inc: { count: 1 } });
    return false;
  }

  /** An entry by id, of any app or of none (node lookups; the caller checks who may read it). */
  async findById(id: string): Promise<AuditDoc | null> {
    const doc = await this.col.findOne({ _id: id });
    return doc && read(doc);
  }

  /** Newest first, keyset-paginated on (occurredAt, _id) so pages stay stable while entries are added. */
  async list(appId: string | null, opts: { limit: number; action?: AuditAction; after?: { occurredAt: Date; id: string } }): Promise<AuditPage> {
    // appId null: every entry (admins only; the service checks).
    const filter: Filter<AuditDoc> = appId === null ? {} : { appId };
    if (opts.action) filter.action = opts.action;
    if (opts.after) {
      filter.$or = [
        { occurredAt: { $lt: opts.after.occurredAt } },
        { occurredAt: opts.after.occurredAt, _id: { $lt: opts.after.id } },
      ];
    }
    const docs = await this.col.find(filter).sort({ occurredAt: -1, _id: -1 }).limit(opts.limit + 1).toArray();
    return { data: docs.slice(0, opts.limit).map(read), hasMore: docs.length > opts.limit };
  }

  /**
   * Dashboards: reason and count of the refused exchanges (oidc.denied) in [from, to), of one app or (null) of every
   * app, at most `cap` + 1 entries (the caller refuses beyond).
   */
  refusals(appId: string | null, from: Date, to: Date, cap: number): AsyncIterable<Pick<AuditDoc, 'occurredAt' | 'reason' | 'count' | 'provider'>> {
    const filter: Filter<AuditDoc> = { action: 'oidc.denied', occurredAt: { $gte: from, $lt: to } };
    if (appId !== null) filter.appId = appId;
    return this.col.find(filter, { projection: { _id: 0, occurredAt: 1, reason: 1, count: 1, provider: 1 } }).limit(cap + 1) as unknown as AsyncIterable<
      Pick<AuditDoc, 'occurredAt' | 'reason' | 'count' | 'provider'>
    >;
  }

  /**
   * Removes up to `batch` entries older than `cutoff`, oldest first; returns how many went. Bounded so one sweep never
   * holds the database for long: the caller repeats while a full batch was removed.
   */
  async deleteOlderThan(cutoff: Date, batch: number): Promise<number> {
    const ids = await this.col.find({ occurredAt: { $lt: cutoff } }, { projection: { _id: 1 } }).sort({ occurredAt: 1 }).limit(batch).toArray();
    if (ids.length === 0) return 0;
    const result = await this.col.deleteMany({ _id: { $in: ids.map((d) => d._id) }, occurredAt: { $lt: cutoff } });
    return result.deletedCount;
  }
}
