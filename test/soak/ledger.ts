/**
 * What the soak's clients saw, kept by the clients themselves: every request's outcome and latency, the events the
 * service acknowledged, the uploads it answered 200, the webhook deliveries the receivers got. The reckoning
 * (reckon.ts) holds these records against the database and the store; nothing here asks the service what it did.
 */
export interface UploadRecord {
  appId: string;
  buildId: string;
  sha256: string;
  sizeBytes: number;
  /** How the upload ended: `200` answered, `409` an earlier attempt had stored it (its answer was lost to a fault). */
  answer: 200 | 409;
  cut: boolean;
}

/** A 5xx the contract does not allow: anything but 503 with Retry-After. */
export interface Violation {
  op: string;
  status: number;
  at: number;
  detail: string;
}

export class Ledger {
  requests = 0;
  /** Requests that failed below HTTP (refused, reset, timed out): a killed instance or a cut upload. */
  networkErrors = 0;
  readonly statuses = new Map<number, number>();
  /** `op status` -> count, for the answers other than 2xx: what refused what. */
  readonly refusals = new Map<string, number>();
  readonly violations: Violation[] = [];
  /** Latencies (ms) of answered requests; uploads are measured apart, their time is mostly the transfer. */
  private readonly latencies: number[] = [];
  /** appId -> event ids the service acknowledged (202). */
  readonly acknowledged = new Map<string, Set<string>>();
  /** Batches sent a second time on purpose, and the duplicates the service reported for them. */
  resentEvents = 0;
  resentReportedDuplicates = 0;
  readonly uploads: UploadRecord[] = [];
  cutUploads = 0;
  /** webhook id -> delivery ids (webhook-id header) its receiver was sent, with how many times each came. */
  readonly received = new Map<string, Map<string, number>>();
  readonly startedAt = Date.now();
  /** Answers no fault explains (a valid batch refused, say): each fails the soak. */
  readonly unexpected: string[] = [];

  answered(op: string, status: number, ms: number, retryAfter: string | null, detail = ''): void {
    this.requests += 1;
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    if (status >= 300) this.refusals.set(`${op} ${status}`, (this.refusals.get(`${op} ${status}`) ?? 0) + 1);
    if (op !== 'upload') this.latencies.push(ms);
    const allowed = status === 503 && retryAfter !== null && /^\d+$/.test(retryAfter);
    if (status >= 500 && !allowed) this.violations.push({ op, status, at: Date.now() - this.startedAt, detail: detail.slice(0, 300) });
  }

  failed(): void {
    this.requests += 1;
    this.networkErrors += 1;
  }

  acknowledge(appId: string, ids: string[]): void {
    let set = this.acknowledged.get(appId);
    if (!set) this.acknowledged.set(appId, (set = new Set()));
    for (const id of ids) set.add(id);
  }

  receive(webhookId: string, deliveryId: string): void {
    let map = this.received.get(webhookId);
    if (!map) this.received.set(webhookId, (map = new Map()));
    map.set(deliveryId, (map.get(deliveryId) ?? 0) + 1);
  }

  percentile(p: number): number {
    if (!this.latencies.length) return 0;
    const sorted = Float64Array.from(this.latencies).sort();
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  }
}
