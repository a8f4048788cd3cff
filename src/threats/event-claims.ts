import { createHash } from 'node:crypto';
import { isExpired, type ThreatEventClaimDoc, type ThreatEventClaimsRepo } from '../data/threat-event-claims-repo';
import type { ThreatEventIdsRepo } from '../data/threat-event-ids-repo';

/**
 * A repeat of an id claimed less than this long ago is placed again, idempotently (its merge record has an id derived
 * from the claim, so a record that exists is not inserted twice). That is what makes a claim safe across a crash
 * between claiming and counting: the client's retry counts the event if the first attempt did not. Merge records are
 * folded and removed only well after this (threat-retention), so the record a repeat collides with still exists.
 */
export const REPLACE_WITHIN_MS = 10 * 60 * 1000;

export type ClaimOutcome =
  /**
   * Counted by this request unless it was counted under the same claim already. `fresh`: this request made the claim
   * (inserted it, or took over an expired one), so nobody else has counted it; otherwise a repeat of a recent claim.
   */
  | { kind: 'count'; recordId: string; claimedAt: Date; fresh: boolean }
  /** Claimed long ago: acknowledged, not counted again. */
  | { kind: 'duplicate' };

/**
 * The claim's _id: SHA-256 of the app id and the event id, cut to 15 bytes (20 base64url characters, 120 bits, so
 * no two of an app's ids in a day collide in practice). Short and of one length whatever the id: on the embedded
 * database a batch of claims keyed by random UUIDs costs a third less than with `appId:eventId` keys (bench:threats).
 * Neither part may hold a NUL, so the pair is unambiguous.
 */
export function claimKeyFor(appId: string, eventId: string): string {
  return createHash('sha256').update(`${appId}\0${eventId}`).digest().subarray(0, 15).toString('base64url');
}

/** The _id the previous release gave a claim (threat-event-ids-repo.ts), looked up while such claims live. */
export function legacyClaimIdFor(appId: string, eventId: string): string {
  return `${appId}:${eventId}`;
}

/** The id of the one merge record that counts a claimed event: the same for every attempt under one claim. */
export function recordIdFor(claim: Pick<ThreatEventClaimDoc, '_id' | 'claimedAt'>): string {
  return `mrg_${createHash('sha256').update(`${claim._id}\n${claim.claimedAt.toISOString()}`).digest('hex').slice(0, 24)}`;
}

export interface ClaimRepos {
  threatEventClaims: ThreatEventClaimsRepo;
  threatEventIds: ThreatEventIdsRepo;
}

/**
 * Claims the event ids of one request (distinct, of one app). Ids nobody holds are claimed by one insert; for the
 * others the claim is read: expired ones are taken over, recent ones are counted again idempotently, older ones are
 * duplicates. An id the previous release claimed (while any such claim is live) is settled by that claim instead.
 */
export async function claimEventIds(repos: ClaimRepos, appId: string, eventIds: string[], now: Date): Promise<Map<string, ClaimOutcome>> {
  const outcomes = await settleLegacy(repos.threatEventIds, appId, eventIds, now);
  const open = outcomes.size ? eventIds.filter((id) => !outcomes.has(id)) : eventIds;
  if (!open.length) return outcomes;
  const repo = repos.threatEventClaims;
  const docs = open.map((id): ThreatEventClaimDoc => ({ _id: claimKeyFor(appId, id), claimedAt: now }));
  const taken = await repo.claim(docs);
  await Promise.all(
    docs.map(async (doc, i) => {
      if (!taken.has(i)) return void outcomes.set(open[i], { kind: 'count', recordId: recordIdFor(doc), claimedAt: now, fresh: true });
      outcomes.set(open[i], await settleTaken(repo, doc, now));
    }),
  );
  return outcomes;
}

/**
 * Outcomes for the ids held by a live claim of the previous release, decided as that release decided them (a recent
 * claim counts again under its own merge record id, an older one is a duplicate), so nothing counts twice across the
 * upgrade. Such ids get no new claim: their old one keeps answering until it expires.
 */
async function settleLegacy(legacy: ThreatEventIdsRepo, appId: string, eventIds: string[], now: Date): Promise<Map<string, ClaimOutcome>> {
  const outcomes = new Map<string, ClaimOutcome>();
  if (!(await legacy.holdsLive(now))) return outcomes;
  const byKey = new Map(eventIds.map((id) => [legacyClaimIdFor(appId, id), id]));
  for (const claim of await legacy.findMany([...byKey.keys()])) {
    const eventId = byKey.get(claim._id);
    if (eventId === undefined || isExpired(claim, now)) continue;
    outcomes.set(eventId, recentOrDuplicate(claim, now));
  }
  return outcomes;
}

function recentOrDuplicate(existing: ThreatEventClaimDoc, now: Date): ClaimOutcome {
  if (now.getTime() - existing.claimedAt.getTime() < REPLACE_WITHIN_MS) {
    return { kind: 'count', recordId: recordIdFor(existing), claimedAt: existing.claimedAt, fresh: false };
  }
  return { kind: 'duplicate' };
}

async function settleTaken(repo: ThreatEventClaimsRepo, doc: ThreatEventClaimDoc, now: Date): Promise<ClaimOutcome> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await repo.find(doc._id);
    if (!existing) {
      // Removed by the retention sweep between our insert and this read: claim it now.
      if ((await repo.claim([doc])).size === 0) return { kind: 'count', recordId: recordIdFor(doc), claimedAt: now, fresh: true };
      continue;
    }
    if (isExpired(existing, now)) {
      if (await repo.replaceExpired(existing, doc)) return { kind: 'count', recordId: recordIdFor(doc), claimedAt: now, fresh: true };
      continue; // another ingest renewed it first: read its claim
    }
    return recentOrDuplicate(existing, now);
  }
  return { kind: 'duplicate' };
}
