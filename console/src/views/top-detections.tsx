import { TopDetections, type Types } from '../operations';
import { run } from '../api';
import { label, n, rangeVariables } from '../format';
import { Async, Empty, Panel } from '../ui';
import { useQuery } from '../use-query';
import type { ViewProps } from './types';

type Row = NonNullable<Types.TopDetectionsQuery['app']>['threatBreakdown'][number];

/** Which detections hit which release: what a security lead brings to the weekly review. */
export function TopDetectionsView({ appId, range, navigate }: ViewProps) {
  const [state, reload] = useQuery(`top:${appId}:${range.from}:${range.to}`, () =>
    run(TopDetections, { appId, ...rangeVariables(range) }).then((d) => d.app?.threatBreakdown ?? []),
  );
  return (
    <Async state={state} what="top detections" retry={reload}>
      {(rows) => {
        const max = Math.max(1, ...rows.map((r) => r.threats));
        return (
          <Panel title="Top detections by app version and build" id="top" subtitle={`threats first seen between ${range.from} and ${range.to}, biggest first (50 at most)`}>
            {rows.length === 0 ? (
              <Empty title="No threats in this range.">Nothing to rank: no device reported a detection for this app between these days.</Empty>
            ) : (
              <div class="table-wrap">
                <table class="table" data-table="top">
                  <thead>
                    <tr>
                      <th class="num">#</th>
                      <th>Detection</th>
                      <th>App version</th>
                      <th>Build</th>
                      <th class="num">Threats</th>
                      <th class="bar-col" aria-hidden="true" />
                      <th class="num">Events</th>
                      <th class="num">Devices</th>
                      <th class="num" title="events per device: one noisy device or many">Events / device</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((g, i) => (
                      <tr data-detection={g.detection} data-version={g.appVersion ?? ''} data-build={g.buildId ?? ''}>
                        <td class="num muted">{i + 1}</td>
                        <td>
                          <span class="swatch" data-color={g.detection} aria-hidden="true" /> {label(g.detection ?? 'unknown')}
                        </td>
                        <td class="mono">{g.appVersion ?? <span class="muted">unknown</span>}</td>
                        <td class="mono">
                          {g.buildId ? (
                            <button class="link mono" onClick={() => navigate({ view: 'builds', build: g.buildId })} title={g.buildId}>
                              {g.build ? `${g.build.version} · ${g.build.platform}` : g.buildId}
                            </button>
                          ) : (
                            <span class="muted">not reported</span>
                          )}
                        </td>
                        <td class="num" data-field="threats">{n(g.threats)}</td>
                        <td class="bar-col" aria-hidden="true">
                          <meter class="bar" min={0} max={max} value={g.threats} data-color={g.detection} />
                        </td>
                        <td class="num" data-field="events">{n(g.events)}</td>
                        <td class="num" data-field="devices">{n(g.devices)}</td>
                        <td class="num muted">{g.devices ? (g.events / g.devices).toFixed(1) : '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Panel>
        );
      }}
    </Async>
  );
}
