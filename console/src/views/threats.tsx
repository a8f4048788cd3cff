import { AppThreats, ThreatTrend, type Types } from '../operations';
import { useState } from 'preact/hooks';
import { run } from '../api';
import { DayChart } from '../chart';
import { DETECTION_COLORS, ago, daysBetween, label, n, rangeVariables, when } from '../format';
import { Async, Empty, LoadMore, Panel, Stat, Tag } from '../ui';
import { usePages } from '../use-pages';
import { useQuery } from '../use-query';
import type { ViewProps } from './types';

type Point = NonNullable<Types.ThreatTrendQuery['app']>['threatTrend'][number];

type Threat = NonNullable<Types.AppThreatsQuery['app']>['threats']['nodes'][number];

const THREAT_TONE: Record<Types.Verdict, 'ok' | 'warn' | 'bad'> = { clean: 'ok', suspicious: 'warn', compromised: 'bad' };

/** Threats per detection per day, the events behind them against the distinct devices that sent them, and the latest threats. */
export function ThreatsView(props: ViewProps) {
  const { appId, range } = props;
  const [state, reload] = useQuery(`trend:${appId}:${range.from}:${range.to}`, () =>
    run(ThreatTrend, { appId, ...rangeVariables(range) }).then((d) => d.app?.threatTrend ?? []),
  );
  return (
    <Async state={state} what="the threat trend" retry={reload}>
      {(points) => (
        <>
          <Trend points={points} range={range} />
          {/* The list has the trend's range: with no point, it has no threat either. */}
          {points.length ? <LatestThreats {...props} /> : null}
        </>
      )}
    </Async>
  );
}

/**
 * The threats themselves, 25 at a time: what the device reported (detection, verdict, signals, the build it named) and
 * whether its batch carried a verdict token that verified, with the registered build that verdict named.
 */
function LatestThreats({ appId, range, navigate }: ViewProps) {
  const [state, reload, more] = usePages(`threats:${appId}:${range.from}:${range.to}`, (after) => {
    const { from, to } = rangeVariables(range).range;
    return run(AppThreats, { appId, after, from, to }).then((d) => {
      const c = d.app?.threats;
      return { items: c?.nodes ?? [], hasNextPage: c?.pageInfo.hasNextPage ?? false, endCursor: c?.pageInfo.endCursor };
    });
  });
  return (
    <Async state={state} what="the latest threats" retry={reload}>
      {(pages) => {
        const items = pages.items;
        const attested = items.filter((t) => t.attested).length;
        return (
          <Panel
            title="Latest threats"
            id="threats"
            subtitle={
              <span>
                first seen between {range.from} and {range.to}, newest first; <span data-field="attested">{n(attested)}</span> of{' '}
                <span data-field="shown">{n(items.length)}</span> shown attested (reported with a verdict token that verified)
              </span>
            }
          >
            {items.length === 0 ? (
              <Empty title="No threat first seen in this range." />
            ) : (
              <div class="table-wrap">
                <table class="table" data-table="threats">
                  <thead>
                    <tr>
                      <th>First seen (UTC)</th>
                      <th>Detection</th>
                      <th>Verdict</th>
                      <th>Signals</th>
                      <th>Reported version</th>
                      <th>Attested</th>
                      <th class="num">Events</th>
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((t) => (
                      <ThreatRow threat={t} open={(build) => navigate({ view: 'builds', build })} />
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <LoadMore pages={pages} more={more} label="Load more threats" />
          </Panel>
        );
      }}
    </Async>
  );
}

/** A build as a link to its findings: version and platform, the id as its title. */
function BuildLink({ id, build, open }: { id: string; build: Threat['build']; open: (id: string) => void }) {
  return build ? (
    <button class="link mono" onClick={() => open(build.id)} title={id}>
      {build.version} · {build.platform}
    </button>
  ) : (
    <span class="mono muted" title="not a build of this app">
      {id}
    </span>
  );
}

function ThreatRow({ threat: t, open }: { threat: Threat; open: (build: string) => void }) {
  return (
    <tr data-threat={t.id} data-attested={String(t.attested)}>
      <td class="mono nowrap" title={`${when(t.occurredAt)} (${ago(t.occurredAt)}), last ${when(t.lastOccurredAt)}`}>
        {when(t.occurredAt).slice(5, 16)}
      </td>
      <td class="nowrap">
        <span class="swatch" data-color={t.detection} aria-hidden="true" /> {label(t.detection)}
      </td>
      <td>
        <Tag tone={THREAT_TONE[t.verdict]}>{t.verdict}</Tag> <span class="muted">{label(t.action)}</span>
      </td>
      <td class="mono ellipsis" title={t.signals.join(', ')}>
        {t.signals.join(', ')}
      </td>
      <td class="nowrap" data-field="reported">
        {/* The build the device named, else the version it reported; both when they disagree. */}
        {t.appVersion && (!t.build || t.build.version !== t.appVersion) ? <span class="mono">{t.appVersion} </span> : null}
        {t.buildId ? <BuildLink id={t.buildId} build={t.build} open={open} /> : t.appVersion ? null : <span class="muted">unknown</span>}
      </td>
      <td class="nowrap" data-field="attested" data-build={t.attestedBuildId ?? ''}>
        {t.attested ? (
          <>
            <Tag tone="ok">attested</Tag>{' '}
            {t.attestedBuildId ? <BuildLink id={t.attestedBuildId} build={t.attestedBuild} open={open} /> : <span class="muted">no registered build named</span>}
          </>
        ) : (
          <span title="The batch carried no verdict token, or one that did not verify (expired, untrusted, another app's)">
            <Tag>not attested</Tag>
          </span>
        )}
      </td>
      <td class="num" data-field="count">
        {n(t.count)}
      </td>
    </tr>
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
