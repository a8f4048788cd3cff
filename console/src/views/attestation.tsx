import { AttestVerdicts, type Types } from '../operations';
import { run } from '../api';
import { daysBetween, label, n, percent, rangeVariables } from '../format';
import { Async, Empty, Panel, Stat, Tag } from '../ui';
import { useQuery } from '../use-query';
import type { ViewProps } from './types';
import { ATTEST_REASONS, ENGINES, VERDICTS, VERDICT_TONE, type VerdictName } from './attest-reasons';

type VerdictDay = NonNullable<Types.AttestVerdictsQuery['app']>['attestVerdicts'][number];

/** One column of the table: a verdict and the first reason it gave (`none` for trusted). */
interface Column {
  key: string;
  verdict: VerdictName;
  reason: string;
  count: number;
}

const columnKey = (verdict: string, reason: string) => `${verdict}|${reason}`;
const asVerdict = (v: string): VerdictName => ((VERDICTS as readonly string[]).includes(v) ? (v as VerdictName) : 'untrusted');
const engineName = (id: string) => ENGINES.find((e) => e.id === id)?.name ?? label(id);
const engineOrder = (id: string) => {
  const i = ENGINES.findIndex((e) => e.id === id);
  return i < 0 ? ENGINES.length : i;
};
const reasonWords = (reason: string) => ATTEST_REASONS[reason] ?? 'A reason this console does not know yet: see docs/attestation.md.';

/** The rows summed by verdict and reason, by day and engine, and by engine. */
export function verdictMatrix(rows: VerdictDay[]) {
  const columns = new Map<string, Column>();
  const cells = new Map<string, Map<string, number>>(); // `${day}|${engine}` -> column -> verdicts
  const engines = new Map<string, Record<VerdictName, number>>();
  const totals: Record<VerdictName, number> = { trusted: 0, suspicious: 0, untrusted: 0 };
  for (const r of rows) {
    const verdict = asVerdict(r.verdict);
    const key = columnKey(verdict, r.reason);
    const column = columns.get(key) ?? { key, verdict, reason: r.reason, count: 0 };
    column.count += r.count;
    columns.set(key, column);
    const cell = cells.get(`${r.day}|${r.engine}`) ?? new Map<string, number>();
    cell.set(key, (cell.get(key) ?? 0) + r.count);
    cells.set(`${r.day}|${r.engine}`, cell);
    const engine = engines.get(r.engine) ?? { trusted: 0, suspicious: 0, untrusted: 0 };
    engine[verdict] += r.count;
    engines.set(r.engine, engine);
    totals[verdict] += r.count;
  }
  const ordered = [...columns.values()].sort((a, b) => VERDICTS.indexOf(a.verdict) - VERDICTS.indexOf(b.verdict) || b.count - a.count || a.reason.localeCompare(b.reason));
  return { columns: ordered, cells, engines, totals, total: totals.trusted + totals.suspicious + totals.untrusted };
}

/**
 * "Are the requests really from our app?": the verdicts of the app's attestation engines per UTC day, engine, verdict
 * and first reason, what each reason means, and how each engine fares.
 */
export function AttestationView({ appId, range }: ViewProps) {
  const [state, reload] = useQuery(`attest:${appId}:${range.from}:${range.to}`, () =>
    run(AttestVerdicts, { appId, ...rangeVariables(range) }).then((d) => d.app?.attestVerdicts ?? []),
  );
  return (
    <Async state={state} what="attestation verdicts" retry={reload}>
      {(rows) => {
        const { columns, cells, engines, totals, total } = verdictMatrix(rows);
        if (total === 0) return <NoVerdicts appId={appId} range={range} />;
        const mainOf = (verdict: VerdictName) => columns.find((c) => c.verdict === verdict) ?? null;
        const untrusted = mainOf('untrusted');
        const suspicious = mainOf('suspicious');
        const dayRows = daysBetween(range.from, range.to)
          .reverse()
          .map((day) => ({ day, engines: [...engines.keys()].filter((e) => cells.has(`${day}|${e}`)).sort((a, b) => engineOrder(a) - engineOrder(b) || a.localeCompare(b)) }))
          .filter((d) => d.engines.length > 0);
        const groups = VERDICTS.map((verdict) => ({ verdict, span: columns.filter((c) => c.verdict === verdict).length })).filter((g) => g.span > 0);
        const seen = new Set(columns.map((c) => c.reason));
        return (
          <>
            <div class="stats">
              <Stat id="verdicts" label="Verdicts" value={n(total)} hint={`real engines, ${range.from} to ${range.to}`} />
              <Stat id="trusted" label="Trusted" value={percent(totals.trusted, total)} hint={`${n(totals.trusted)} of ${n(total)} verdicts`} />
              <Stat id="suspicious" label="Suspicious" value={n(totals.suspicious)} hint={suspicious ? `mostly ${label(suspicious.reason)}` : 'genuine app, weaker device or build'} />
              <Stat
                id="untrusted-reason"
                label="Main untrusted reason"
                value={untrusted ? label(untrusted.reason) : 'none'}
                hint={untrusted ? `${n(untrusted.count)} of ${n(totals.untrusted)} untrusted` : 'no untrusted verdict'}
              />
            </div>
            <Panel title="Verdicts per day, engine and reason" id="verdicts" subtitle="UTC days with at least one verdict, newest first; each verdict counts under its first reason">
              <div class="table-wrap">
                <table class="table" data-table="verdicts">
                  <thead>
                    <tr>
                      <th rowSpan={2}>Day</th>
                      <th rowSpan={2}>Engine</th>
                      <th rowSpan={2} class="num">
                        Verdicts
                      </th>
                      {groups.map((g) => (
                        <th colSpan={g.span} class={`verdict-group verdict-${g.verdict}`} data-group={g.verdict}>
                          {g.verdict}
                        </th>
                      ))}
                    </tr>
                    <tr>
                      {columns.map((c) => (
                        <th class={`num verdict-${c.verdict}`} title={reasonWords(c.reason)}>
                          {c.reason === 'none' ? 'every check passed' : label(c.reason)}
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {dayRows.flatMap(({ day, engines: onDay }) =>
                      onDay.map((engine, i) => {
                        const cell = cells.get(`${day}|${engine}`)!;
                        const sum = [...cell.values()].reduce((a, b) => a + b, 0);
                        return (
                          <tr data-day={day} data-engine={engine} class={i === 0 ? 'day-first' : ''}>
                            {i === 0 ? (
                              <td class="mono" rowSpan={onDay.length}>
                                {day}
                              </td>
                            ) : null}
                            <td>{engineName(engine)}</td>
                            <td class="num" data-field="total">
                              {n(sum)}
                            </td>
                            {columns.map((c) => {
                              const count = cell.get(c.key) ?? 0;
                              return (
                                <td class={`num${count ? ` heat heat-${c.verdict}` : ' muted'}`} data-verdict={c.verdict} data-reason={c.reason}>
                                  {count ? n(count) : '·'}
                                </td>
                              );
                            })}
                          </tr>
                        );
                      }),
                    )}
                  </tbody>
                </table>
              </div>
            </Panel>
            <div class="split">
              <Panel title="What the reasons mean" id="reasons" subtitle="the reasons of this range, most frequent first, in words to repeat to the customer">
                <ul class="reasons" data-legend>
                  {columns.map((c) => (
                    <li data-reason={c.reason} data-verdict={c.verdict}>
                      <Tag tone={VERDICT_TONE[c.verdict]}>{c.reason === 'none' ? 'trusted' : label(c.reason)}</Tag> <b>{n(c.count)}</b> — {reasonWords(c.reason)}
                    </li>
                  ))}
                </ul>
                <details class="all-reasons">
                  <summary>Every other reason an engine gives</summary>
                  <ul class="reasons">
                    {Object.keys(ATTEST_REASONS)
                      .filter((r) => !seen.has(r) && r !== 'none')
                      .map((r) => (
                        <li data-reason={r}>
                          <code>{r}</code> — {ATTEST_REASONS[r]}
                        </li>
                      ))}
                  </ul>
                </details>
              </Panel>
              <Panel title="By engine" id="engines" subtitle="what each engine vouches for, and its verdicts in this range">
                <table class="table" data-table="engines">
                  <thead>
                    <tr>
                      <th>Engine</th>
                      <th class="num">Verdicts</th>
                      <th class="num">Trusted</th>
                      <th class="num">Suspicious</th>
                      <th class="num">Untrusted</th>
                    </tr>
                  </thead>
                  <tbody>
                    {[...engines.entries()]
                      .sort(([a], [b]) => engineOrder(a) - engineOrder(b) || a.localeCompare(b))
                      .map(([id, v]) => {
                        const sum = v.trusted + v.suspicious + v.untrusted;
                        const engine = ENGINES.find((e) => e.id === id);
                        return (
                          <tr data-engine={id}>
                            <td>
                              <b>{engineName(id)}</b> <span class="muted">{engine?.platform ?? ''}</span>
                              {engine ? <div class="fine">{engine.vouches}</div> : null}
                            </td>
                            <td class="num" data-field="total">{n(sum)}</td>
                            <td class="num" data-field="trusted">{percent(v.trusted, sum)}</td>
                            <td class="num" data-field="suspicious">{n(v.suspicious)}</td>
                            <td class="num" data-field="untrusted">{n(v.untrusted)}</td>
                          </tr>
                        );
                      })}
                  </tbody>
                </table>
              </Panel>
            </div>
          </>
        );
      }}
    </Async>
  );
}

/** No verdict: most often an app that never configured attestation (the stub answers it, and is not counted). */
function NoVerdicts({ appId, range }: { appId: string; range: ViewProps['range'] }) {
  return (
    <Panel title="Attestation verdicts" id="verdicts">
      <Empty title={`No verdict of a real attestation engine between ${range.from} and ${range.to}.`}>
        Until an app configures attestation, POST /v1/attest/verify answers with the stub (engine stub): it checks no platform signature, vouches for nothing
        and is not counted here. If this app is configured, no device attested between these days.
      </Empty>
      <ol class="steps" data-steps>
        <li>
          An app admin turns the real engines on with <code>PUT /v1/apps/{appId}/attestation</code> and an API key holding rules:write: Play Integrity's keys
          from Play Console or key attestation for Android, the team id and bundle id for iOS (docs/attestation.md).
        </li>
        <li>The app asks for a challenge (POST /v1/attest/challenges) and sends its platform's token to POST /v1/attest/verify, with a device key holding attest:verify.</li>
        <li>Each verdict is counted here by day, engine and reason; threats reported with the verdict token show as attested, with the build it named.</li>
      </ol>
    </Panel>
  );
}
