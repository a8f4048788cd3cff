import type { ThreatDoc } from '../data/threats-repo';
import type { ThreatMergeDoc } from '../data/threat-merges-repo';
import { threatIdFor, type MergeIdentity } from './merge-key';
import { windowEnd } from './windows';

/** An event after validation: its merge identity (device id already hashed), merge key, time and confidence. */
export interface PreparedEvent extends MergeIdentity {
  detection: ThreatDoc['detection'];
  verdict: ThreatDoc['verdict'];
  action: ThreatDoc['action'];
  platform: ThreatDoc['platform'];
  signals: string[];
  key: string;
  at: Date;
  confidence: number;
  /** Events with a client event id: counted by a merge record of their own, whose id derives from the claim. */
  claim?: EventClaim;
}

export interface EventClaim {
  recordId: string;
  claimedAt: Date;
}

export interface WindowSeed {
  first: Date;
  last: Date;
  confidence: number;
  count: number;
}

/** The document of a new window of `event`'s merge key, holding the occurrences of `seed`. */
export function windowDoc(event: PreparedEvent, seed: WindowSeed, generation: number, receivedAt: Date): ThreatDoc {
  return {
    _id: threatIdFor(event.key, generation),
    appId: event.appId,
    mergeKey: event.key,
    generation,
    deviceHash: event.deviceHash,
    detection: event.detection,
    verdict: event.verdict,
    confidence: seed.confidence,
    action: event.action,
    signals: event.signals,
    platform: event.platform,
    appVersion: event.appVersion,
    buildId: event.buildId,
    occurredAt: seed.first,
    lastOccurredAt: seed.last,
    windowEnd: windowEnd(seed.first),
    count: seed.count,
    receivedAt,
  };
}

export const seedOf = (event: PreparedEvent): WindowSeed => ({ first: event.at, last: event.at, confidence: event.confidence, count: 1 });

/** Members a window document counts itself: those without an event id (each of those has its own merge record). */
export const countedByWindow = (members: readonly PreparedEvent[]): number => members.filter((m) => !m.claim).length;

/** The merge record of one event with an event id, in the window that holds it. */
export function claimRecord(window: ThreatDoc, e: PreparedEvent & { claim: EventClaim }): ThreatMergeDoc {
  return {
    _id: e.claim.recordId,
    appId: window.appId,
    threatId: window._id,
    count: 1,
    last: e.at,
    confidence: e.confidence,
    threatOccurredAt: window.occurredAt,
    detection: window.detection,
    deviceHash: window.deviceHash,
    createdAt: e.claim.claimedAt,
  };
}
