import type { Types } from '../operations';
import { Tag } from '../ui';

type Signing = NonNullable<NonNullable<Types.BuildFindingsQuery['scan']>['signing']>;

/** A certificate digest shortened for reading (16 hex digits); the whole one is its title, to copy. */
const short = (sha256: string) => `${sha256.slice(0, 16)}…`;

/**
 * Who signed the scanned package: the first signer's certificate (digest and subject), the schemes that verified
 * (Android) or the team (iOS), and whether the signature verified. Nothing for a scan that read no signature.
 */
export function ScanSigner({ signing }: { signing: Signing | null | undefined }) {
  if (!signing) return null;
  const first = signing.signers[0];
  return (
    <dl class="facts" data-signing={signing.verified ? 'verified' : 'unverified'}>
      <dt>Signature</dt>
      <dd>{signing.verified ? <Tag tone="ok">verified</Tag> : <Tag tone="bad">not verified</Tag>}</dd>
      <dt>Signer</dt>
      <dd>
        {first ? (
          <>
            <code data-field="signer-sha256" title={first.sha256}>{short(first.sha256)}</code> <span class="muted">{first.subject}</span>
          </>
        ) : (
          <span class="muted">no certificate</span>
        )}
      </dd>
      {signing.__typename === 'AndroidSigning' ? (
        <>
          <dt>Schemes</dt>
          <dd data-field="schemes">{signing.schemes.length ? signing.schemes.join(', ') : '—'}</dd>
          {signing.lineage.length ? (
            <>
              <dt>Lineage</dt>
              <dd class="mono">{signing.lineage.map(short).join(' → ')}</dd>
            </>
          ) : null}
        </>
      ) : (
        <>
          <dt>Team</dt>
          <dd class="mono" data-field="team-id">{signing.teamId ?? '—'}</dd>
        </>
      )}
    </dl>
  );
}
