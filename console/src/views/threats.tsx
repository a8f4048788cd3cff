import { ThreatTrend, type Types } from '../operations';
import { useState } from 'preact/hooks';
import { run } from '../api';
import { DayChart } from '../chart';
import { DETECTION_COLORS, daysBetween, label, n, rangeVariables } from '../format';
import { Async, Empty, Panel, Stat } from '../ui';
import { useQuery } from '../use-query';
import type { ViewProps } from './types';

type Point = NonNullable<Types.ThreatTrendQuery['app']>['threatTrend'][number];

/** Threats per detection per day, and the events behind them against the distinct devices that sent them. */
export function ThreatsView({ appId, range }: ViewProps) {
  const [state, reload] = useQuery(`trend:${appId}:${range.from}:${range.to}`, () =>
    run(ThreatTrend, { appId, ...rangeVariables(range) }).then((d) => d.app?.threatTrend ?? []),
  );
  return (
    <Async state={state} what="the threat trend" retry={reload}>
      {(points) => <Trend points={points} range={range} />}
    </Async>
  );
}

function Trend({ points, range }: { points: Point[]; range: ViewProps['range'] }) {
  const days = daysBetween(range.from, range.to);
  const detections = [...new Set(points.map((p) => p.detection))];
  const totals = new Map<string, Point>();
  for (const p of points) {
    const t = totals.get(p.detection) ?? { day: '', detection: p.detection, threats: 0, events: 0, devices: 0 };
    t.threats += p.threats;
    t.events += p.events;
    t.devices = Math.max(t.devices, p.devices);
    totals.set(p.detection, t);
  }
  const ranked = [...totals.values()].sort((a, b) => b.threats - a.threats || b.events - a.events);
  const [picked, pick] = useState<string | null>(null);
  const focus = picked && totals.has(picked) ? picked : (ranked[0]?.detection ?? null);
  if (points.length === 0) {
    return (
      <Panel title="Threats per detection per day" id="trend">
        <Empty title={`No threats reported between ${range.from} and ${range.to}.`}>
          Devices report security events to POST /v1/events with a key holding events:ingest. Widen the date range or pick another app.
        </Empty>
      </Panel>
    );
  }
  const at = (detection: string, day: string) => points.find((p) => p.detection === detection && p.day === day);
  const sum = (key: 'threats' | 'events') => points.reduce((s, p) => s + p[key], 0);
  return (
    <>
      <div class="stats">
        <Stat id="threats" label="Threats" value={n(sum('threats'))} hint="merged per device, detection and hour" />
        <Stat id="events" label="Events" value={n(sum('events'))} hint="reports received" />
        <Stat id="top" label="Top detection" value={label(ranked[0].detection)} hint={`${n(ranked[0].threats)} threats`} />
        <Stat id="detections" label="Detections seen" value={n(detections.length)} hint="of 9 kinds" />
      </div>
      <Panel title="Threats per detection per day" subtitle={`${range.from} to ${range.to}, UTC days`} id="trend">
        <DayChart
          title="Threats per detection per day"
          days={days}
          series={ranked.map((t) => ({ label: label(t.detection), color: DETECTION_COLORS[t.detection] ?? '#333', values: days.map((d) => at(t.detection, d)?.threats ?? 0) }))}
        />
      </Panel>
      {focus ? (
        <Panel
          title={`Events against distinct devices: ${label(focus)}`}
          subtitle="Many events from few devices is one noisy device; as many devices as events is spread."
          id="events"
          actions={
            <div class="chips" role="group" aria-label="Detection">
              {ranked.map((t) => (
                <button class={`chip${t.detection === focus ? ' chip-on' : ''}`} onClick={() => pick(t.detection)} aria-pressed={t.detection === focus}>
                  {label(t.detection)}
                </button>
              ))}
            </div>
          }
        >
          <DayChart
            title={`Events and distinct devices per day for ${label(focus)}`}
            days={days}
            height={200}
            series={[
              { label: 'events', color: DETECTION_COLORS[focus] ?? '#333', bars: true, values: days.map((d) => at(focus, d)?.events ?? 0) },
              { label: 'distinct devices', color: '#1f2937', values: days.map((d) => at(focus, d)?.devices ?? 0) },
            ]}
          />
        </Panel>
      ) : null}
      <Panel title="By day" subtitle="threats / events / distinct devices" id="trend-table">
        <div class="table-wrap">
          <table class="table" data-table="trend">
            <thead>
              <tr>
                <th>Day</th>
                <th>Detection</th>
                <th class="num">Threats</th>
                <th class="num">Events</th>
                <th class="num">Devices</th>
              </tr>
            </thead>
            <tbody>
              {[...points]
                .sort((a, b) => b.day.localeCompare(a.day) || b.threats - a.threats)
                .map((p) => (
                  <tr data-day={p.day} data-detection={p.detection}>
                    <td class="mono">{p.day}</td>
                    <td>
                      <span class="swatch" data-color={p.detection} aria-hidden="true" /> {label(p.detection)}
                    </td>
                    <td class="num" data-field="threats">{n(p.threats)}</td>
                    <td class="num" data-field="events">{n(p.events)}</td>
                    <td class="num" data-field="devices">{n(p.devices)}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </div>
      </Panel>
    </>
  );
}
