// Protects: what an instance keeps in memory (Deps.instance) is made per instance by createDeps, so two instances in
// one process (two test harnesses, or two services in one worker) never share a cache, a budget or a count.
import { startHarness, type Harness } from '../support/harness';
import { createDeps, closeDeps } from '../../src/bootstrap';
import type { Deps } from '../../src/core/deps';

let h: Harness;
let other: Deps;
beforeAll(async () => {
  h = await startHarness({ jobs: false });
  other = await createDeps(h.config, { clock: h.clock, mongo: h.deps.mongo });
});
afterAll(async () => {
  await closeDeps(other, { closeMongo: false });
  await h.close();
});

it('gives every member of deps.instance its own object', () => {
  const members = Object.keys(h.deps.instance) as (keyof Deps['instance'])[];
  expect(members.sort()).toEqual(Object.keys(other.instance).sort());
  for (const member of members) {
    expect({ member, shared: h.deps.instance[member] === other.instance[member] }).toEqual({ member, shared: false });
  }
});
