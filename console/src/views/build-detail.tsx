import { BuildFindings, type Types } from '../operations';
import { run } from '../api';
import { n, when } from '../format';
import { Async, Empty, Grade, Panel } from '../ui';
import { useQuery } from '../use-query';
import { ScanInventory } from './scan-inventory';
import { ScanSigner } from './scan-signer';
import { openFindings, ScanFindings } from './scan-findings';

export type Build = NonNullable<Types.AppBuildsQuery['app']>['builds']['nodes'][number];
type ScanSummary = Build['scans'][number];

/** The static scan when there is one (it read the package), else the preview. */
export const bestScan = (b: Pick<Build, 'scans'>): ScanSummary | undefined => b.scans.find((s) => s.engine === 'static') ?? b.scans.find((s) => s.engine === 'preview');

/** One build: its facts, and its best scan's grade, signer, inventory and findings compared with the baseline. */
export function BuildDetail({ build, close, open }: { build: Build; close: () => void; open: (buildId: string) => void }) {
  const scan = bestScan(build);
  const [state, reload] = useQuery(`scan:${scan?.id ?? 'none'}`, () => (scan ? run(BuildFindings, { scanId: scan.id }).then((d) => d.scan) : Promise.resolve(null)));
  return (
    <Panel
      title={`Build ${build.version} · ${build.platform}`}
      id="finding"
      subtitle={<span class="mono">{build.id}</span>}
      actions={
        <button class="button button-ghost" onClick={close} aria-label="Close the build">
          Close
        </button>
      }
    >
      <dl class="facts">
        <dt>Registered</dt>
        <dd>{when(build.createdAt)}</dd>
        <dt>Commit</dt>
        <dd class="mono">{build.commit ?? '—'}</dd>
        {build.provenance ? (
          <>
            <dt>Workflow</dt>
            <dd class="mono ellipsis">{build.provenance.workflowRef ?? '—'}</dd>
            <dt>Run</dt>
            <dd class="mono">{build.provenance.runId ?? '—'}</dd>
          </>
        ) : null}
        <dt>Scans</dt>
        <dd>{build.scans.length ? build.scans.map((s) => `${s.engine} ${s.grade} (${s.score})`).join(' · ') : 'none yet'}</dd>
      </dl>
      {!scan ? (
        <Empty title="No scan of this build yet.">A static scan starts when the package upload completes; the preview scan needs the package metadata.</Empty>
      ) : (
        <Async state={state} what="findings" retry={reload}>
          {(detail) =>
            !detail ? (
              <Empty title="The scan is gone.">It may have been removed by retention.</Empty>
            ) : (
              <div data-scan={detail.id}>
                <div class="scan-head">
                  <Grade grade={detail.grade} />
                  <div>
                    <div class="scan-score">
                      score <b data-field="score">{detail.score}</b> / 100 · {detail.engine} scan · <span data-field="findings">{n(detail.findings.length)}</span> findings,{' '}
                      <span data-field="open">{n(openFindings(detail).length)}</span> open
                    </div>
                    <div class="muted">
                      {detail.target.name} {detail.target.version ?? ''} · {when(detail.createdAt)}
                    </div>
                  </div>
                </div>
                <ScanSigner signing={detail.signing} />
                <ScanInventory inventory={detail.inventory} />
                <ScanFindings scan={detail} open={open} />
              </div>
            )
          }
        </Async>
      )}
    </Panel>
  );
}
