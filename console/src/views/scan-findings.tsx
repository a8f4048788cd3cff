import { ConsoleBuild, type Types } from '../operations';
import { run } from '../api';
import { ago, n, shortHash, when } from '../format';
import { Empty, Tag } from '../ui';
import { useQuery } from '../use-query';

type Scan = NonNullable<Types.BuildFindingsQuery['scan']>;
type Finding = Scan['findings'][number];
type Ref = Scan['fixedFindings'][number];

const SEVERITIES: Finding['severity'][] = ['critical', 'high', 'medium', 'low'];
/** Findings of scans stored before comparisons existed have no status: they come last. */
const STATUS_RANK = (f: Finding) => (f.status === 'new' ? 0 : f.status === 'existing' ? 1 : 2);

/**
 * What this build brought comes first: new findings, then existing ones; within each, the open ones before those a
 * suppression accepted, then by severity (the order a reviewer acts in).
 */
export function orderFindings(findings: readonly Finding[]): Finding[] {
  return [...findings].sort(
    (a, b) => STATUS_RANK(a) - STATUS_RANK(b) || Number(Boolean(a.suppressed)) - Number(Boolean(b.suppressed)) || SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity),
  );
}

/** The findings a team still has to act on: a suppressed one costs no penalty and is not open. */
export const openFindings = (scan: Scan) => scan.findings.filter((f) => !f.suppressed);

/** The build the scan was compared with, by version when it can be read (a link opens it). */
function BaselineBuild({ buildId, open }: { buildId: string; open: (id: string) => void }) {
  const [state] = useQuery(`baseline:${buildId}`, () => run(ConsoleBuild, { id: buildId }).then((d) => d.build));
  const version = state.status === 'done' && state.data ? state.data : null;
  return (
    <button class="link mono" data-field="baseline-build" data-build={buildId} onClick={() => open(buildId)} title={buildId}>
      {version ? `build ${version.version} · ${version.platform}, registered ${ago(version.createdAt)}` : buildId}
    </button>
  );
}

/** Against which build the findings were compared, and the counts of the comparison. */
export function ScanComparison({ scan, open }: { scan: Scan; open: (buildId: string) => void }) {
  if (!scan.diff) {
    return (
      <dl class="facts" data-compared="no">
        <dt>Compared</dt>
        <dd>
          <Tag>not compared</Tag> <span class="muted">the scan was stored before findings had fingerprints: none is new, existing or fixed.</span>
        </dd>
      </dl>
    );
  }
  const suppressed = scan.findings.length - openFindings(scan).length;
  return (
    <div data-compared="yes">
      <dl class="facts">
        <dt>Compared with</dt>
        <dd data-baseline={scan.baseline?.scanId ?? ''}>
          {scan.baseline ? (
            <BaselineBuild buildId={scan.baseline.buildId} open={open} />
          ) : (
            <span class="muted">no earlier build of this package: this scan is the baseline of the next one, and every finding counts as new.</span>
          )}
        </dd>
      </dl>
      <div class="diff" data-diff>
        <span class="diff-cell diff-new">
          <b data-field="new">{n(scan.diff.new)}</b> new
        </span>
        <span class="diff-cell">
          <b data-field="existing">{n(scan.diff.existing)}</b> existing
        </span>
        <span class="diff-cell diff-fixed">
          <b data-field="fixed">{n(scan.diff.fixed)}</b> fixed
        </span>
        <span class="diff-cell">
          <b data-field="open">{n(scan.findings.length - suppressed)}</b> open
        </span>
        <span class="diff-cell">
          <b data-field="suppressed">{n(suppressed)}</b> suppressed
        </span>
      </div>
    </div>
  );
}

/** Every finding with its status, its suppression (reason and expiry), and whether it is back after one ended. */
export function FindingList({ scan }: { scan: Scan }) {
  if (scan.findings.length === 0) return <Empty title="No findings.">The scan found nothing to report in this package.</Empty>;
  const back = new Set(scan.unsuppressed.map((r) => r.fingerprint));
  return (
    <ul class="findings">
      {orderFindings(scan.findings).map((f) => (
        <li class={`finding sev-${f.severity}${f.suppressed ? ' finding-suppressed' : ''}`} data-finding={f.id} data-fingerprint={f.fingerprint ?? ''} data-status={f.status ?? ''} data-suppressed={f.suppressed?.id ?? ''}>
          <div class="finding-head">
            <span class={`sev sev-${f.severity}`}>{f.severity}</span>
            {f.status ? <Tag tone={f.status === 'new' ? 'warn' : 'muted'}>{f.status}</Tag> : null}
            {f.suppressed ? <Tag tone="ok">suppressed</Tag> : null}
            {f.fingerprint && back.has(f.fingerprint) ? <Tag tone="bad">back</Tag> : null}
            <b>{f.title}</b>
            <code class="muted" title={f.fingerprint ? `fingerprint ${f.fingerprint}` : undefined}>
              {f.id}
            </code>
          </div>
          {f.suppressed ? (
            <p class="suppression" data-field="suppression" data-expires={f.suppressed.expiresAt}>
              Accepted until <b>{when(f.suppressed.expiresAt)}</b> (<span class="mono">{f.suppressed.id}</span>): <q>{f.suppressed.reason}</q>. It costs no penalty and is not counted as open.
            </p>
          ) : null}
          <p>{f.detail}</p>
          <p class="fix">
            <b>Fix:</b> {f.fix}
          </p>
        </li>
      ))}
    </ul>
  );
}

/** Findings named by reference: fixed since the baseline, or back after their suppression ended. */
export function FindingRefs({ kind, refs, total, title, hint }: { kind: 'fixed' | 'unsuppressed'; refs: readonly Ref[]; total: number; title: string; hint: string }) {
  if (total === 0) return null;
  return (
    <section class={`refs refs-${kind}`} data-refs={kind}>
      <h3>
        {title} <span class="muted">({n(total)})</span>
      </h3>
      <p class="muted">{hint}</p>
      <ul class="plain">
        {refs.map((r) => (
          <li data-ref={r.id} data-fingerprint={r.fingerprint}>
            <b>{r.title}</b> <code class="muted">{r.id}</code>{' '}
            <code class="muted" title={r.fingerprint}>
              {shortHash(r.fingerprint)}
            </code>
          </li>
        ))}
      </ul>
      {total > refs.length ? <p class="muted">and {n(total - refs.length)} more not listed.</p> : null}
    </section>
  );
}

/** The findings part of an open build: the comparison, what came back, the findings, and what was fixed. */
export function ScanFindings({ scan, open }: { scan: Scan; open: (buildId: string) => void }) {
  return (
    <>
      <ScanComparison scan={scan} open={open} />
      <FindingRefs
        kind="unsuppressed"
        refs={scan.unsuppressed}
        total={scan.unsuppressed.length}
        title="Back after their suppression ended"
        hint="Suppressed in the baseline, no longer: their suppression expired or was deleted, so they count again."
      />
      <FindingList scan={scan} />
      <FindingRefs
        kind="fixed"
        refs={scan.fixedFindings}
        total={scan.diff?.fixed ?? scan.fixedFindings.length}
        title="Fixed since the baseline"
        hint="In the baseline's findings and not in this scan's."
      />
    </>
  );
}
