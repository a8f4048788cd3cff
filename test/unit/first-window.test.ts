// Protects: the first window of a new threat counts the events without an id and those whose claim the request made,
// naming the latter by tag; repeats of a claim made earlier (retries) are left to their merge records; and only a
// first window is ever taken to count a claimed event.
import { claimTag, countsClaim, firstWindowDoc, type EventClaim, type PreparedEvent } from '../../src/threats/window-doc';

const at = (s: number) => new Date(Date.UTC(2025, 2, 14, 10, 0, s));
const claim = (n: number, fresh: boolean): EventClaim => ({ recordId: `mrg_${String(n).repeat(24)}`, claimedAt: at(0), fresh });
const event = (s: number, c?: EventClaim): PreparedEvent => ({
  appId: 'app_first',
  deviceHash: 'd'.repeat(64),
  detection: 'hooking',
  verdict: 'compromised',
  action: 'block',
  signals: ['frida_server'],
  platform: 'android',
  appVersion: '2.4.1',
  buildId: null,
  key: 'k'.repeat(64),
  at: at(s),
  confidence: 0.5,
  ...(c ? { claim: c } : {}),
});

it('counts events without an id and fresh claims, tags the fresh claims, and leaves repeats to merge records', () => {
  const fresh1 = claim(1, true);
  const fresh2 = claim(2, true);
  const repeat = claim(3, false);
  const members = [event(0), event(1, fresh1), event(2, repeat), event(3, fresh2), event(4)];
  const { doc, recorded } = firstWindowDoc(members, { first: at(0), last: at(4), confidence: 0.5 }, at(10));
  expect(doc.generation).toBe(0);
  expect(doc.count).toBe(4);
  expect(doc.claimTags).toEqual([claimTag(fresh1), claimTag(fresh2)]);
  expect(recorded).toEqual([members[2]]);
  expect(countsClaim(doc, fresh1)).toBe(true);
  expect(countsClaim(doc, fresh2)).toBe(true);
  expect(countsClaim(doc, repeat)).toBe(false);
});

it('writes no tags without fresh claims, and no later window is ever taken to count a claim', () => {
  const { doc } = firstWindowDoc([event(0), event(1)], { first: at(0), last: at(1), confidence: 0.5 }, at(10));
  expect(doc.claimTags).toBeUndefined();
  expect(doc.count).toBe(2);
  const c = claim(7, true);
  const later = { ...firstWindowDoc([event(0, c)], { first: at(0), last: at(0), confidence: 0.5 }, at(10)).doc, generation: 3 };
  expect(countsClaim(later, c)).toBe(false);
});
