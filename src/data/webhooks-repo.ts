import type { Collection, Db } from 'mongodb';
import { ensureIndexes, insertIntoFreeSlot } from './db';
import type { StoredSecret } from '../crypto/secret-box';

/** At most this many webhooks per app. Enforced by slots, not by counting (see OidcRuleDoc.slot). */
export const MAX_WEBHOOKS_PER_APP = 10;

export const WEBHOOK_EVENTS = ['threat.opened', 'threat.spike', 'scan.completed', 'oidc.denied'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface WebhookDoc {
  _id: string; // whk_...
  appId: string;
  slot: number; // 0..MAX_WEBHOOKS_PER_APP-1, unique per app
  url: string;
  events: WebhookEvent[];
  minVerdict: 'clean' | 'suspicious' | 'compromised';
  spikeThreshold: number;
  gradeBelow: string;
  /** Never returned after creation nor logged. */
  secret: StoredSecret;
  createdAt: Date;
  /** Pending deliveries dropped unsent because the app had too many (WEBHOOK_MAX_PENDING_PER_APP); absent: none. */
  droppedDeliveries?: number;
  /** When the last of them was dropped. */
  lastDroppedAt?: Date | null;
}

export type NewWebhook = Omit<WebhookDoc, 'slot'>;

/** Webhooks of apps (where alerts are delivered). Every method is scoped to one app. */
export class WebhooksRepo {
  static readonly collectionName = 'webhooks';
  private readonly col: Collection<WebhookDoc>;
  constructor(db: Db) {
    this.col = db.collection<WebhookDoc>(WebhooksRepo.collectionName);
  }
  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.col, [
      { key: { appId: 1, slot: 1 }, name: 'app_slot', unique: true },
      { key: { appId: 1, createdAt: 1, _id: 1 }, name: 'app_created' },
    ]);
  }

  /** Inserts the webhook into a free slot of its app; null when the app already has MAX_WEBHOOKS_PER_APP. */
  insertIfRoom(webhook: NewWebhook): Promise<WebhookDoc | null> {
    return insertIntoFreeSlot(this.col, webhook, MAX_WEBHOOKS_PER_APP);
  }

  /** The app's webhooks, oldest first. */
  listForApp(appId: string): Promise<WebhookDoc[]> {
    return this.col.find({ appId }).sort({ createdAt: 1, _id: 1 }).toArray();
  }

  findForApp(appId: string, id: string): Promise<WebhookDoc | null> {
    return this.col.findOne({ _id: id, appId });
  }

  /** Counts `n` deliveries of the webhook dropped by the per-app cap (shown in its status). */
  async countDropped(appId: string, id: string, n: number, now: Date): Promise<void> {
    if (n > 0) await this.col.updateOne({ _id: id, appId }, { $inc: { droppedDeliveries: n }, $set: { lastDroppedAt: now } });
  }

  /** Returns the deleted webhook, or null when the app has no webhook with this id. */
  deleteForApp(appId: string, id: string): Promise<WebhookDoc | null> {
    return this.col.findOneAndDelete({ _id: id, appId });
  }
}
