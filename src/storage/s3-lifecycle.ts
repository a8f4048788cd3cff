import {
  GetBucketLifecycleConfigurationCommand,
  PutBucketLifecycleConfigurationCommand,
  S3ServiceException,
  type LifecycleRule,
  type S3Client,
} from '@aws-sdk/client-s3';

/** The rule's id: found again on the next start, so it is added once and an operator's own rules are kept. */
export const ABORT_RULE_ID = 'shieldgate-abort-incomplete-multipart';
/**
 * One day: an upload takes at most UPLOAD_MAX_DURATION_MS (minutes), so parts older than a day belong to an upload
 * whose abort failed while the store was down; a day is also the smallest period S3 accepts.
 */
export const ABORT_AFTER_DAYS = 1;

export type LifecycleOutcome = 'created' | 'present' | 'unsupported';

/** True when a rule already aborts incomplete multipart uploads for the whole bucket (ours or the operator's). */
function coversBucket(rule: LifecycleRule): boolean {
  if (rule.Status !== 'Enabled' || !rule.AbortIncompleteMultipartUpload?.DaysAfterInitiation) return false;
  const filter = rule.Filter;
  const prefix = filter?.Prefix ?? rule.Prefix ?? '';
  return prefix === '' && !filter?.Tag && !filter?.And && filter?.ObjectSizeGreaterThan === undefined && filter?.ObjectSizeLessThan === undefined;
}

/**
 * The bucket's rules with the abort rule added, or null when one already covers the bucket. A PUT replaces the
 * whole configuration, so the existing rules are always sent back with it.
 */
export function rulesWithAbort(existing: LifecycleRule[]): LifecycleRule[] | null {
  if (existing.some(coversBucket)) return null;
  const abort: LifecycleRule = {
    ID: ABORT_RULE_ID,
    Status: 'Enabled',
    Filter: { Prefix: '' },
    AbortIncompleteMultipartUpload: { DaysAfterInitiation: ABORT_AFTER_DAYS },
  };
  return [...existing.filter((rule) => rule.ID !== ABORT_RULE_ID), abort];
}

function status(error: unknown): number | undefined {
  return error instanceof S3ServiceException ? error.$metadata?.httpStatusCode : undefined;
}

/** A store without lifecycle support (versitygw's POSIX backend answers 501 NotImplemented). */
function unsupported(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.name === 'NotImplemented' || status(error) === 501);
}

/**
 * Makes sure parts of multipart uploads that were never completed nor aborted are removed by the store after
 * ABORT_AFTER_DAYS. 'unsupported' when the store has no lifecycle rules; any other failure is thrown.
 */
export async function ensureAbortRule(client: S3Client, bucket: string): Promise<LifecycleOutcome> {
  let existing: LifecycleRule[] = [];
  try {
    const out = await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }));
    existing = out.Rules ?? [];
  } catch (error) {
    if (unsupported(error)) return 'unsupported';
    // A bucket without a configuration answers 404 NoSuchLifecycleConfiguration.
    if (!(error instanceof S3ServiceException && (error.name === 'NoSuchLifecycleConfiguration' || status(error) === 404))) throw error;
  }
  const rules = rulesWithAbort(existing);
  if (!rules) return 'present';
  try {
    await client.send(new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: rules } }));
  } catch (error) {
    if (unsupported(error)) return 'unsupported';
    throw error;
  }
  return 'created';
}
