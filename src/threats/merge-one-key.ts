import type { Occurrences, ThreatDoc, ThreatsRepo } from '../data/threats-repo';
import { ThreatMergesRepo, type ThreatMergeDoc } from '../data/threat-merges-repo';
import { MERGE_WINDOW_MS, threatIdFor } from './merge-key';
import { contains } from './windows';
import { claimRecord, countedByWindow, countsClaim, windowDoc, type PreparedEvent } from './window-doc';
import type { WindowCache } from './window-cache';

/** Late events: how many generations below the newest are searched for a window that holds them. */
const LOOK_BACK = 4;
/** Each round either places events or learns of a newer generation; this many means something is wrong. */
const MAX_ROUNDS = 100;

interface Repos {
  threats: ThreatsRepo;
}

/**
 * Places the events of one merge key that already has windows (or several windows in one batch). The windows of a
 * key are numbered (generations) and their ids derive from (key, generation), so opening a window is an insert that
 * exactly one ingest can win, on any server, without transactions:
 *
 * - Generation n is only inserted after generation n-1 was seen to exist, so generations 0..newest all exist and the
 *   newest is found by probing ids (doubling, then bisecting): reads by _id only.
 * - An event goes into a window that holds it (first occurrence <= t <= first + 5 min), the latest-starting one when
 *   several do. Window bounds never change, so the check made on the read document stays true; the occurrences are
 *   returned as one merge record per window, for the caller to insert.
 * - Otherwise it opens generation newest+1, together with the following events that fall inside. If that id is
 *   taken, another ingest opened it first: it is read and checked like the others.
 *
 * The same event ingested twice at once therefore ends in one window. Racing events of different times of one key end
 * as if the later had been ingested first: the earlier is then a late event and opens its own window (a window never
 * moves its first occurrence, the sort key). Counts are exact either way.
 *
 * Events with an event id are counted here by a merge record of their own whose id derives from their claim
 * (claimRecord), so placing such an event again, after a retry, counts it at most once. An event a first window
 * counts itself (firstWindowDoc) is not counted again when placed into that window: `counted` says how many.
 */
export async function mergeOneKey(repos: Repos, events: PreparedEvent[], receivedAt: Date, cache: WindowCache, onOpened: (doc: ThreatDoc, occurrences: number) => void = () => undefined): Promise<{ records: ThreatMergeDoc[]; counted: number }> {
  const sorted = [...events].sort((a, b) => a.at.getTime() - b.at.getTime());
  const { key, appId } = sorted[0];
  const windows = new Map<number, ThreatDoc>();
  const merged = new Map<string, { window: ThreatDoc; occ: Occurrences }>();
  const claimed: ThreatMergeDoc[] = [];
  let counted = 0;
  let newest = -1;
  // What this process already knows of the key (see WindowCache): a repeat inside the frontier window, or after it,
  // needs no read. A late event (before the frontier began) searches as usual.
  await cache.settled(key);
  const known = cache.get(key);
  let frontier = known?.frontier ?? null;
  if (known) {
    newest = known.newest;
    windows.set(known.frontier.generation, known.frontier);
  }

  const load = async (generation: number): Promise<ThreatDoc | null> => {
    const cached = windows.get(generation);
    if (cached) return cached;
    const doc = await repos.threats.findWindow(appId, threatIdFor(key, generation));
    if (doc) windows.set(generation, doc);
    return doc;
  };

  /** The newest generation, given that `known` exists: double the step while ids exist, then bisect. */
  const findNewest = async (known: number): Promise<number> => {
    let low = known;
    let step = 1;
    let high = known + step;
    while (await load(high)) {
      low = high;
      step *= 2;
      high = known + step;
    }
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if (await load(mid)) low = mid;
      else high = mid;
    }
    return low;
  };

  /** The latest-starting window among the newest generations that holds `at` (the frontier, when it does). */
  const holding = async (at: Date): Promise<ThreatDoc | null> => {
    let best: ThreatDoc | null = null;
    for (let g = newest; g >= Math.max(0, newest - LOOK_BACK); g--) {
      const doc = await load(g);
      if (doc && contains(doc, at) && (!best || doc.occurredAt > best.occurredAt)) best = doc;
    }
    return best;
  };

  const add = (window: ThreatDoc, e: PreparedEvent) => {
    if (e.claim && countsClaim(window, e.claim)) return void (counted += 1);
    if (e.claim) return void claimed.push(claimRecord(window, { ...e, claim: e.claim }));
    const prior = merged.get(window._id)?.occ;
    merged.set(window._id, {
      window,
      occ: {
        count: (prior?.count ?? 0) + 1,
        last: prior && prior.last > e.at ? prior.last : e.at,
        confidence: Math.max(prior?.confidence ?? 0, e.confidence),
      },
    });
  };

  /** Opens generation `generation` at sorted[i] with the events after it that fall inside; how many it took, or 0. */
  const open = async (i: number, generation: number): Promise<number> => {
    const first = sorted[i];
    let j = i + 1;
    while (j < sorted.length && sorted[j].at.getTime() - first.at.getTime() <= MERGE_WINDOW_MS) j++;
    const members = sorted.slice(i, j);
    const doc = windowDoc(first, { first: first.at, last: members[members.length - 1].at, confidence: Math.max(...members.map((m) => m.confidence)), count: countedByWindow(members) }, generation, receivedAt);
    if (!(await repos.threats.insertWindow(doc))) return 0;
    windows.set(generation, doc);
    onOpened(doc, members.length);
    for (const m of members) if (m.claim) claimed.push(claimRecord(doc, { ...m, claim: m.claim }));
    return members.length;
  };

  /** Places sorted[i] (and maybe followers); returns the index of the next event to place. */
  const place = async (i: number): Promise<number> => {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (newest < 0) {
        if (!(await load(0))) {
          const taken = await open(i, 0);
          if (taken) return (newest = 0), (frontier = windows.get(0)!), i + taken;
          continue; // opened by another ingest meanwhile: read it
        }
        newest = await findNewest(0);
      }
      const at = sorted[i].at;
      if (frontier && contains(frontier, at)) return add(frontier, sorted[i]), i + 1;
      const window = frontier && at > frontier.windowEnd ? null : await holding(at);
      if (window) return add(window, sorted[i]), i + 1;
      const taken = await open(i, newest + 1);
      if (taken) {
        newest += 1;
        const opened = windows.get(newest)!;
        if (!frontier || opened.windowEnd > frontier.windowEnd) frontier = opened;
        return i + taken;
      }
      frontier = null; // another ingest got there first: trust only what is read from here on
      newest = await findNewest(newest + 1); // taken: it exists now, and maybe more after it
    }
    throw new Error('threat merge did not settle');
  };

  for (let i = 0; i < sorted.length; ) i = await place(i);
  if (newest >= 0) cache.remember(key, newest, windows.values());

  // The caller inserts the records of every key of the request at once, after every window is open.
  const perRequest = [...merged.values()].map(({ window, occ }) => ({
    _id: ThreatMergesRepo.newId(),
    appId,
    threatId: window._id,
    count: occ.count,
    last: occ.last,
    confidence: occ.confidence,
    threatOccurredAt: window.occurredAt,
    detection: window.detection,
    deviceHash: window.deviceHash,
    createdAt: receivedAt,
  }));
  return { records: [...perRequest, ...claimed], counted };
}
