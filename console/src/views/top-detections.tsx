import TopDetections from '../../operations/TopDetections.graphql';
import { run } from '../api';
import { label, n, rangeVariables, when } from '../format';
import { Async, Empty, Panel, Tag } from '../ui';
import { useQuery } from '../use-query';
import type { ViewProps } from './types';

interface ThreatRow {
  detection: string;
  platform: string | null;
  appVersion: string | null;
  buildId: string | null;
  count: number;
  lastOccurredAt: string;
}

export interface DetectionGroup {
  detection: string;
  appVersion: string | null;
  buildId: string | null;
  platform: string | null;
  threats: number;
  events: number;
  last: string;
}

/** Pages read at most (100 threats each): a range with more is shown as a sample and says so. */
const MAX_PAGES = 20;

/** Groups threats by detection, app version and build, biggest first. */
export function groupThreats(rows: ThreatRow[]): DetectionGroup[] {
  const groups = new Map<string, DetectionGroup>();
  for (const r of rows) {
    const key = JSON.stringify([r.detection, r.appVersion, r.buildId, r.platform]);
    const g = groups.get(key) ?? { detection: r.detection, appVersion: r.appVersion, buildId: r.buildId, platform: r.platform, threats: 0, events: 0, last: r.lastOccurredAt };
    g.threats += 1;
    g.events += r.count;
    if (r.lastOccurredAt > g.last) g.last = r.lastOccurredAt;
    groups.set(key, g);
  }
  return [...groups.values()].sort((a, b) => b.threats - a.threats || b.events - a.events || a.detection.localeCompare(b.detection));
}

async function load(appId: string, range: ViewProps['range']): Promise<{ groups: DetectionGroup[]; threats: number; truncated: boolean }> {
  const rows: ThreatRow[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const data: { threats: { data: ThreatRow[]; hasMore: boolean; nextCursor: string | null } } = await run(TopDetections, { appId, ...rangeVariables(range), cursor });
    rows.push(...data.threats.data);
    cursor = data.threats.hasMore ? data.threats.nextCursor : null;
    if (!cursor) return { groups: groupThreats(rows), threats: rows.length, truncated: false };
  }
  return { groups: groupThreats(rows), threats: rows.length, truncated: true };
}

/** Which detections hit which release: what a security lead brings to the weekly review. */
export function TopDetectionsView({ appId, range, navigate }: ViewProps) {
  const [state, reload] = useQuery(`top:${appId}:${range.from}:${range.to}`, () => load(appId, range));
  return (
    <Async state={state} what="top detections" retry={reload}>
      {({ groups, threats, truncated }) => (
        <Panel
          title="Top detections by app version and build"
          id="top"
          subtitle={
            <>
              {n(threats)} threats between {range.from} and {range.to}
              {truncated ? <Tag tone="warn">newest {n(threats)} only</Tag> : null}
            </>
          }
        >
          {groups.length === 0 ? (
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
                    <th>Platform</th>
                    <th class="num">Threats</th>
                    <th class="num">Events</th>
                    <th>Last seen</th>
                  </tr>
                </thead>
                <tbody>
                  {groups.slice(0, 50).map((g, i) => (
                    <tr data-detection={g.detection} data-version={g.appVersion ?? ''} data-build={g.buildId ?? ''}>
                      <td class="num muted">{i + 1}</td>
                      <td>
                        <span class="swatch" data-color={g.detection} aria-hidden="true" /> {label(g.detection)}
                      </td>
                      <td class="mono">{g.appVersion ?? <span class="muted">unknown</span>}</td>
                      <td class="mono">
                        {g.buildId ? (
                          <a href="#" onClick={(e) => (e.preventDefault(), navigate({ view: 'builds', build: g.buildId }))}>
                            {g.buildId}
                          </a>
                        ) : (
                          <span class="muted">not reported</span>
                        )}
                      </td>
                      <td>{g.platform ?? <span class="muted">—</span>}</td>
                      <td class="num" data-field="threats">{n(g.threats)}</td>
                      <td class="num" data-field="events">{n(g.events)}</td>
                      <td class="muted">{when(g.last)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Panel>
      )}
    </Async>
  );
}
