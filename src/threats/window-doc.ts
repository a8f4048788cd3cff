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
  /** Events with a client event id: counted once per claim (see firstWindowDoc and claimRecord). */
  claim?: EventClaim;
}

export interface EventClaim {
  recordId: string;
  claimedAt: Date;
  /** This request made the claim: nobody else can have counted the event yet (ClaimOutcome). */
  fresh: boolean;
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
    attested: event.attested ?? false,
    attestedBuildId: event.attestedBuildId ?? null,
    occurredAt: seed.first,
    lastOccurredAt: seed.last,
    windowEnd: windowEnd(seed.first),
    count: seed.count,
    receivedAt,
  };
}


/** Members a window document counts itself: those without an event id (each of those has its own merge record). */
export const countedByWindow = (members: readonly PreparedEvent[]): number => members.filter((m) => !m.claim).length;

/**
 * How a window document names a claimed event it counts itself (claimTags): 64 bits of the record id it would
 * otherwise have, enough among the few events of one window, and a fifth of a merge record's size.
 */
export const claimTag = (claim: EventClaim): string => claim.recordId.slice(4, 20);

/** Whether `window` counts the event of `claim` itself: only a first window (generation 0) ever does. */
export const countsClaim = (window: ThreatDoc, claim: EventClaim): boolean => window.generation === 0 && (window.claimTags?.includes(claimTag(claim)) ?? false);

/**
 * The first window (generation 0) of a merge key no window exists for, holding every event of the batch of that key.
 * It counts the events without an id and those whose claim this request made (fresh), naming the latter in
 * claimTags, so the common case, a batch of new observations each with an id, writes no merge record at all. This is
 * exactly-once because a fresh claim is held by this request alone, and this insert either succeeds, counting the
 * events once, or collides with a window someone else opened (then the events are placed by mergeOneKey, by merge
 * records). A repeat of a recent claim (a retry) is never counted here: it gets its claim's merge record, and before
 * that the first window of its key is checked for its tag (countsClaim), at any depth of generations.
 */
export function firstWindowDoc(members: readonly PreparedEvent[], seed: Omit<WindowSeed, 'count'>, receivedAt: Date): { doc: ThreatDoc; recorded: PreparedEvent[] } {
  const countedHere = members.filter((m) => !m.claim || m.claim.fresh);
  const doc = windowDoc(members[0], { ...seed, count: countedHere.length }, 0, receivedAt);
  const tags = countedHere.flatMap((m) => (m.claim ? [claimTag(m.claim)] : []));
  if (tags.length) doc.claimTags = tags;
  return { doc, recorded: members.filter((m) => m.claim && !m.claim.fresh) };
}

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
