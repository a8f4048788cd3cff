import { MERGE_WINDOW_MS } from './merge-key';

/** One occurrence as the merge logic sees it. */
export interface Occurrence {
  at: Date;
  confidence: number;
}

/** Occurrences of one merge key that fall into one window: [first, first + 5 min]. */
export interface PlannedWindow<T extends Occurrence> {
  first: Date;
  last: Date;
  confidence: number; // the highest seen: the strongest evidence is what a reader acts on
  members: T[];
}

export function windowEnd(first: Date): Date {
  return new Date(first.getTime() + MERGE_WINDOW_MS);
}

export function contains(window: { occurredAt: Date; windowEnd: Date }, at: Date): boolean {
  return at.getTime() >= window.occurredAt.getTime() && at.getTime() <= window.windowEnd.getTime();
}

/** Splits occurrences of one merge key into windows, in time order, each starting at its first occurrence. */
export function planWindows<T extends Occurrence>(occurrences: readonly T[]): PlannedWindow<T>[] {
  const sorted = [...occurrences].sort((a, b) => a.at.getTime() - b.at.getTime());
  const windows: PlannedWindow<T>[] = [];
  for (const occurrence of sorted) {
    const current = windows[windows.length - 1];
    if (current && occurrence.at.getTime() - current.first.getTime() <= MERGE_WINDOW_MS) {
      current.last = occurrence.at;
      current.confidence = Math.max(current.confidence, occurrence.confidence);
      current.members.push(occurrence);
    } else {
      windows.push({ first: occurrence.at, last: occurrence.at, confidence: occurrence.confidence, members: [occurrence] });
    }
  }
  return windows;
}
