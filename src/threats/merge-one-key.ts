import type { Occurrences, ThreatDoc, ThreatsRepo } from '../data/threats-repo';
import { threatIdFor } from './merge-key';
import { contains } from './windows';
import { seedOf, windowDoc, type PreparedEvent } from './window-doc';

/** Late events: how many generations below the newest are searched for a window that holds them. */
const LOOK_BACK = 4;
/** Each round either places the event or learns of one more generation; this many means something is wrong. */
const MAX_ROUNDS = 100;

/**
 * Places the events of one merge key that already has windows. The windows of a key are numbered (generations) and
 * their ids derive from (key, generation), so opening a window is an insert that exactly one ingest can win:
 *
 * - Generation n is only ever inserted after generation n-1 was seen to exist, so every generation up to the newest
 *   known one exists, and generation 0 keeps a lower bound of the newest ($max, raised after each insert).
 * - An event goes into the window that holds it (first occurrence <= t <= first + 5 min), as an atomic $inc by _id:
 *   window bounds never change, so the check made on the read document stays true.
 * - Otherwise it opens generation newest+1. If that id is taken, another ingest opened it first: it is read and
 *   checked like the others, and the event merges into it or tries the next generation.
 *
 * Two ingests racing on the same event therefore end in one window. Two racing on different occurrence times of one
 * key end as if the later one had been ingested first: when the later wins, the earlier is a late event and opens its
 * own window (a window never moves its first occurrence, which is the sort key). Counts are exact either way.
 */
export async function mergeOneKey(repo: ThreatsRepo, events: PreparedEvent[], receivedAt: Date): Promise<void> {
  const sorted = [...events].sort((a, b) => a.at.getTime() - b.at.getTime());
  const { key, appId } = sorted[0];
  const windows = new Map<number, ThreatDoc>();
  const additions = new Map<string, Occurrences>();
  let newest = -1;

  const load = async (generation: number): Promise<ThreatDoc | null> => {
    const cached = windows.get(generation);
    if (cached) return cached;
    const doc = await repo.findWindow(appId, threatIdFor(key, generation));
    if (doc) windows.set(generation, doc);
    return doc;
  };

  const add = (doc: ThreatDoc, e: PreparedEvent) => {
    const prior = additions.get(doc._id);
    additions.set(doc._id, {
      count: (prior?.count ?? 0) + 1,
      last: prior && prior.last > e.at ? prior.last : e.at,
      confidence: Math.max(prior?.confidence ?? 0, e.confidence),
    });
  };

  /** The earliest-starting window among the newest generations that holds `at`. */
  const holding = async (at: Date): Promise<ThreatDoc | null> => {
    let best: ThreatDoc | null = null;
    for (let g = newest; g >= Math.max(0, newest - LOOK_BACK); g--) {
      const doc = await load(g);
      if (doc && contains(doc, at) && (!best || doc.occurredAt < best.occurredAt)) best = doc;
    }
    return best;
  };

  const open = async (e: PreparedEvent, generation: number): Promise<boolean> => {
    const doc = windowDoc(e, seedOf(e), generation, receivedAt);
    if (!(await repo.insertWindow(doc))) return false;
    windows.set(generation, doc);
    if (generation > 0) await repo.raiseLatestGeneration(threatIdFor(key, 0), generation);
    return true;
  };

  const place = async (e: PreparedEvent): Promise<void> => {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (newest < 0) {
        const first = await load(0);
        if (!first) {
          if (await open(e, 0)) return void (newest = 0);
          continue; // opened by another ingest meanwhile: read it
        }
        newest = first.latestGeneration ?? 0;
      }
      const window = await holding(e.at);
      if (window) return add(window, e);
      if (await open(e, newest + 1)) return void (newest += 1);
      newest += 1; // taken: the next round reads it
    }
    throw new Error('threat merge did not settle');
  };

  for (const e of sorted) await place(e);
  await repo.addOccurrences(additions);
}
