// Protects: the lifecycle configuration the S3 store sends at start keeps the bucket's own rules (a PUT replaces the
// whole configuration), adds the abort rule once, and sees an operator's whole-bucket abort rule as enough.
import type { LifecycleRule } from '@aws-sdk/client-s3';
import { ABORT_AFTER_DAYS, ABORT_RULE_ID, rulesWithAbort } from '../../src/storage/s3-lifecycle';

const expiry: LifecycleRule = { ID: 'expire-logs', Status: 'Enabled', Filter: { Prefix: 'logs/' }, Expiration: { Days: 30 } };

describe('rulesWithAbort', () => {
  it('adds the abort rule beside the rules the bucket has', () => {
    const rules = rulesWithAbort([expiry])!;
    expect(rules[0]).toEqual(expiry);
    expect(rules[1]).toEqual({ ID: ABORT_RULE_ID, Status: 'Enabled', Filter: { Prefix: '' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: ABORT_AFTER_DAYS } });
  });

  it('changes nothing when a rule already aborts incomplete uploads in the whole bucket', () => {
    expect(rulesWithAbort([{ ID: 'ops', Status: 'Enabled', Filter: {}, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 3 } }])).toBeNull();
    expect(rulesWithAbort(rulesWithAbort([])!)).toBeNull();
  });

  it('does not count an abort rule limited to a prefix, or a disabled one', () => {
    const prefixed: LifecycleRule = { ID: 'a', Status: 'Enabled', Filter: { Prefix: 'tmp/' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } };
    const disabled: LifecycleRule = { ID: ABORT_RULE_ID, Status: 'Disabled', Filter: { Prefix: '' }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } };
    const rules = rulesWithAbort([prefixed, disabled])!;
    // Our own disabled rule is replaced, not duplicated (rule ids are unique in a configuration).
    expect(rules.map((r) => [r.ID, r.Status])).toEqual([['a', 'Enabled'], [ABORT_RULE_ID, 'Enabled']]);
  });
});
