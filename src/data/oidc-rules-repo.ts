import type { Collection, Db, Filter } from 'mongodb';
import { ensureIndexes, insertIntoFreeSlot } from './db';
import type { RuleFields } from '../oidc/providers/model';

/** At most this many trust rules per app (spec, Limits). Enforced by slots, not by counting. */
export const MAX_RULES_PER_APP = 20;

/**
 * A trust rule as stored: the fields every provider's model reads (src/oidc/providers/model.ts, RuleFields), each
 * null where the rule sets none; `provider` and `issuer` absent on rules stored before other providers existed
 * (GitHub, the configured issuer).
 */
export interface OidcRuleDoc extends RuleFields {
  _id: string; // rul_...
  appId: string;
  /**
   * 0..MAX_RULES_PER_APP-1, unique per app. Without transactions, "count then insert" lets two concurrent creations
   * both see 19 rules; a unique (appId, slot) index makes the 21st insert impossible instead.
   */
  slot: number;
  /** GitHub's and GitLab's subject pattern; null on rules of the other providers. */
  subjectPattern: string | null;
  scopes: string[];
  /** GitHub event names allowed to exchange; null: any event but the ones only a listing allows (workflow_run). */
  events?: string[] | null; // absent on rules stored before the field existed
  /** Builds registered through the rule are release builds; absent (false) on rules stored before the field existed. */
  releaseBuilds?: boolean;
  createdAt: Date;
}

export type NewOidcRule = Omit<OidcRuleDoc, 'slot'>;

type OwnerPin = 'repositoryOwnerId' | 'namespaceId' | 'vcsOrigin' | 'organizationId';
type ProjectPin = 'repositoryId' | 'projectId';
interface Pin<F extends string> {
  field: F;
  value: string;
}

/** Trust rules of apps for the CI token exchange. Every method is scoped to one app. */
export class OidcRulesRepo {
  static readonly collectionName = 'oidc_rules';
  private readonly col: Collection<OidcRuleDoc>;
  constructor(db: Db) {
    this.col = db.collection<OidcRuleDoc>(OidcRulesRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [
      { key: { appId: 1, slot: 1 }, name: 'app_slot', unique: true },
      { key: { appId: 1, createdAt: 1, _id: 1 }, name: 'app_created' },
    ]);
  }

  /** Inserts the rule into a free slot of its app; null when the app already has MAX_RULES_PER_APP rules. */
  insertIfRoom(rule: NewOidcRule): Promise<OidcRuleDoc | null> {
    return insertIntoFreeSlot(this.col, rule, MAX_RULES_PER_APP);
  }

  /** The app's rules, oldest first (ties broken by id, so every instance picks the same earliest rule). */
  listForApp(appId: string): Promise<OidcRuleDoc[]> {
    return this.col.find({ appId }).sort({ createdAt: 1, _id: 1 }).toArray();
  }

  /** The rules of the app among `ids`, oldest first. Ids of another app are simply not found. */
  findManyForApp(appId: string, ids: string[]): Promise<OidcRuleDoc[]> {
    return this.col.find({ appId, _id: { $in: ids } }).sort({ createdAt: 1, _id: 1 }).toArray();
  }

  /**
   * Fills a rule's empty id pins (never overwrites one: each update matches only while its field is still null, so
   * of two jobs racing to pin, the first wins and the other reads its pin). `owner` is the owner-level pin
   * (repositoryOwnerId, namespaceId), `project` the one-project pin (repositoryId, projectId). Returns the fields this
   * call set and the rule as stored after; null when the rule is gone.
   */
  async pinIds(appId: string, id: string, owner: Pin<OwnerPin>, project: Pin<ProjectPin> | null): Promise<{ pinned: string[]; rule: OidcRuleDoc | null }> {
    // Each step is one conditional update, and the first pins both ids at once: two jobs racing to pin a fresh rule
    // must not each pin one field (the loser would record a pin of the winner's owner as its own).
    const pin = async (filter: Filter<OidcRuleDoc>, set: Partial<OidcRuleDoc>): Promise<boolean> =>
      (await this.col.updateOne({ _id: id, appId, ...filter }, { $set: set })).modifiedCount > 0;
    let pinned: string[] = [];
    if (project !== null) {
      if (await pin({ [project.field]: null, [owner.field]: null }, { [project.field]: project.value, [owner.field]: owner.value })) pinned = [project.field, owner.field];
      else if (await pin({ [project.field]: null, [owner.field]: owner.value }, { [project.field]: project.value })) pinned = [project.field];
    }
    if (pinned.length === 0 && (await pin({ [owner.field]: null }, { [owner.field]: owner.value }))) pinned = [owner.field];
    return { pinned, rule: await this.col.findOne({ _id: id, appId }) };
  }
  /** A rule by id, of any app (node lookups; the caller checks the app). */
  findById(id: string): Promise<OidcRuleDoc | null> {
    return this.col.findOne({ _id: id });
  }

  /** Newest first by (createdAt, _id), keyset-paginated, limit + 1 read (the app_created index, walked backwards). */
  page(appId: string, limit: number, after?: { at: Date; id: string }): Promise<OidcRuleDoc[]> {
    const filter: Filter<OidcRuleDoc> = { appId };
    if (after) filter.$or = [{ createdAt: { $lt: after.at } }, { createdAt: after.at, _id: { $lt: after.id } }];
    return this.col.find(filter).sort({ createdAt: -1, _id: -1 }).limit(limit + 1).toArray();
  }

  count(appId: string): Promise<number> {
    return this.col.countDocuments({ appId });
  }

  /** Returns the deleted rule, or null when the app has no rule with this id. */
  async deleteForApp(appId: string, id: string): Promise<OidcRuleDoc | null> {
    return this.col.findOneAndDelete({ _id: id, appId });
  }
}
