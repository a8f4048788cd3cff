import { useState } from 'preact/hooks';
import { AppBuilds, BuildTrend, ConsoleBuild, type Types } from '../operations';
import { run } from '../api';
import { ago, bytes, n, rangeVariables, when } from '../format';
import { Async, Empty, LoadMore, Grade, Panel, Tag } from '../ui';
import { usePages, type Pages } from '../use-pages';
import { useQuery } from '../use-query';
import type { ViewProps } from './types';
import { bestScan, BuildDetail, type Build } from './build-detail';

type ScanSummary = Build['scans'][number];

/** The grades a static scan gives (src/scan/score.ts), best first: BuildFilter.grade matches one exactly. */
const GRADES = ['A+', 'A', 'A-', 'B+', 'B', 'B-', 'C+', 'C', 'C-', 'D+', 'D', 'D-', 'F'];

interface BuildFilter {
  platform: Types.Platform | '';
  grade: string;
}

type GradeCount = Types.BuildTrendQuery['latestGradeDistribution'][number];

/** Builds per day in the range with their grades, and the grade of every app's latest build. */
function BuildTrendPanel({ appId, range }: ViewProps) {
  const [state, reload] = useQuery(`buildtrend:${appId}:${range.from}:${range.to}`, () =>
    run(BuildTrend, { appId, ...rangeVariables(range) }),
  );
  return (
    <Async state={state} what="the build trend" retry={reload}>
      {(data) => {
        const days = [...(data.app?.buildTrend ?? [])].reverse();
        const fleet = data.latestGradeDistribution;
        const fleetTotal = fleet.reduce((s, g) => s + g.count, 0);
        return (
          <div class="split split-even">
            <Panel title="Builds per day" id="build-trend" subtitle={`${range.from} to ${range.to}, grades of their latest static scans`}>
              {days.length === 0 ? (
                <Empty title="No build registered in this range." />
              ) : (
                <table class="table" data-table="build-trend">
                  <tbody>
                    {days.map((d) => (
                      <tr data-day={d.day}>
                        <td class="mono">{d.day}</td>
                        <td class="num" data-field="builds">{n(d.builds)}</td>
                        <td class="grade-strip">
                          {d.grades.map((g) => (
                            <span data-grade={g.grade}>
                              <Grade grade={g.grade === 'none' ? null : g.grade} title={g.grade === 'none' ? 'not scanned yet' : undefined} /> {n(g.count)}
                            </span>
                          ))}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </Panel>
            <Panel title="Latest build of every app" id="fleet" subtitle={`${n(fleetTotal)} apps with a build, by the grade of their newest one`}>
              {fleet.length === 0 ? (
                <Empty title="No app has a build yet." />
              ) : (
                <div class="fleet">
                  {fleet.map((g) => (
                    <div class="fleet-cell" data-grade={g.grade}>
                      <Grade grade={g.grade === 'none' ? null : g.grade} />
                      <b data-field="count">{n(g.count)}</b>
                      <span class="muted">{g.grade === 'none' ? 'not scanned' : `grade ${g.grade}`}</span>
                    </div>
                  ))}
                </div>
              )}
            </Panel>
          </div>
        );
      }}
    </Async>
  );
}

export function BuildsView(props: ViewProps) {
  const { appId } = props;
  const [filter, setFilter] = useState<BuildFilter>({ platform: '', grade: '' });
  const [pages, reload, more] = usePages(`builds:${appId}:${filter.platform}:${filter.grade}`, (after) =>
    run(AppBuilds, {
      appId,
      after,
      filter: { ...(filter.platform ? { platform: filter.platform } : {}), ...(filter.grade ? { grade: filter.grade } : {}) },
    }).then((d) => {
      const c = d.app?.builds;
      return { items: c?.nodes ?? [], hasNextPage: c?.pageInfo.hasNextPage ?? false, endCursor: c?.pageInfo.endCursor, totalCount: c?.totalCount };
    }),
  );
  return (
    <>
      <BuildTrendPanel {...props} />
      <div class={props.build ? 'split' : ''}>
        <Async state={pages} what="builds" retry={reload}>
          {(data) => <BuildList pages={data} more={more} filter={filter} setFilter={setFilter} {...props} />}
        </Async>
        {props.build ? (
          <OpenBuild
            appId={appId}
            id={props.build}
            loaded={pages.status === 'done' ? pages.data.items.find((b) => b.id === props.build) : undefined}
            close={() => props.navigate({ view: 'builds', build: null })}
            open={(id) => props.navigate({ view: 'builds', build: id })}
          />
        ) : null}
      </div>
    </>
  );
}

/** The open build: from the loaded pages, else read by id (a shared link to an older build). */
function OpenBuild({ appId, id, loaded, close, open }: { appId: string; id: string; loaded: Build | undefined; close: () => void; open: (buildId: string) => void }) {
  const [state, reload] = useQuery(`build:${id}:${loaded ? 'loaded' : 'fetch'}`, () => (loaded ? Promise.resolve(loaded) : run(ConsoleBuild, { id }).then((d) => (d.build?.appId === appId ? d.build : null))));
  return (
    <Async state={state} what="the build" retry={reload}>
      {(build) =>
        build ? (
          <BuildDetail build={build} close={close} open={open} />
        ) : (
          <Panel title="Build not found" id="finding">
            <Empty title={`No build ${id} exists for this app.`}>Pick a build from the list.</Empty>
          </Panel>
        )
      }
    </Async>
  );
}

function Filters({ filter, setFilter }: { filter: BuildFilter; setFilter: (f: BuildFilter) => void }) {
  return (
    <span class="filters">
      <label>
        Platform{' '}
        <select name="platform" value={filter.platform} onChange={(e) => setFilter({ ...filter, platform: (e.currentTarget as HTMLSelectElement).value as BuildFilter['platform'] })}>
          <option value="">any</option>
          <option value="android">android</option>
          <option value="ios">ios</option>
        </select>
      </label>
      <label>
        Grade{' '}
        <select name="grade" value={filter.grade} onChange={(e) => setFilter({ ...filter, grade: (e.currentTarget as HTMLSelectElement).value })}>
          <option value="">any</option>
          {GRADES.map((g) => (
            <option value={g}>{g}</option>
          ))}
        </select>
      </label>
    </span>
  );
}

function BuildList({ pages, more, filter, setFilter, navigate, build }: ViewProps & { pages: Pages<Build>; more: () => void; filter: BuildFilter; setFilter: (f: BuildFilter) => void }) {
  const builds = pages.items;
  const filtered = Boolean(filter.platform || filter.grade);
  const graded = builds.map(bestScan).filter((s): s is ScanSummary => Boolean(s));
  const grades = ['A', 'B', 'C', 'D', 'E', 'F'].map((g) => [g, graded.filter((s) => s.grade[0] === g).length] as const).filter(([, c]) => c > 0);
  const total = pages.totalCount;
  return (
    <Panel
      title="Builds"
      id="builds"
      actions={<Filters filter={filter} setFilter={setFilter} />}
      subtitle={
        <span class="grade-strip">
          <span>
            <span data-field="shown">{n(builds.length)}</span> shown of <span data-field="total">{total === null ? '?' : n(total)}</span>
            {filtered ? ' matching' : ''}, newest first ·
          </span>
          {grades.map(([g, c]) => (
            <span>
              <Grade grade={g} /> {c}
            </span>
          ))}
          {builds.length - graded.length > 0 ? <span class="muted"> {builds.length - graded.length} not scanned</span> : null}
        </span>
      }
    >
      {builds.length === 0 ? (
        filtered ? (
          <Empty title="No build matches these filters.">The grade is that of a build's newest static scan, exactly (C is neither C+ nor C-); builds not scanned yet never match a grade.</Empty>
        ) : (
          <Empty title="No build registered yet.">CI registers builds with POST /v1/builds (shieldgate-ci or the GitHub Action); each upload gets a static scan and a grade.</Empty>
        )
      ) : (
      <div class="table-wrap">
        <table class="table table-click" data-table="builds">
          <thead>
            <tr>
              <th>Grade</th>
              <th>Version</th>
              <th>Platform</th>
              <th>Registered</th>
              <th>Commit</th>
              <th>Package</th>
              <th>From</th>
            </tr>
          </thead>
          <tbody>
            {builds.map((b) => {
              const scan = bestScan(b);
              return (
                <tr data-build={b.id} data-grade={b.grade ?? ''} class={b.id === build ? 'row-on' : ''} onClick={() => navigate({ view: 'builds', build: b.id })}>
                  <td>
                    <Grade grade={scan?.grade} title={scan ? `${scan.engine} scan, score ${scan.score}` : 'no scan yet'} />
                    {scan?.engine === 'preview' ? <Tag>preview</Tag> : null}
                  </td>
                  <td class="mono">
                    <button class="link" aria-label={`Open build ${b.version}`}>{b.version}</button>
                  </td>
                  <td>{b.platform}</td>
                  <td title={when(b.createdAt)}>{ago(b.createdAt)}</td>
                  <td class="mono">{b.commit ? b.commit.slice(0, 10) : <span class="muted">—</span>}</td>
                  <td>
                    {b.artifact ? (
                      b.artifact.status === 'uploaded' ? (
                        bytes(b.artifact.sizeBytes)
                      ) : (
                        <Tag tone="warn">upload pending</Tag>
                      )
                    ) : (
                      <span class="muted">none declared</span>
                    )}
                  </td>
                  <td class="ellipsis">{b.provenance?.repository ? `${b.provenance.repository} (CI, OIDC)` : <span class="muted">API key</span>}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      )}
      <LoadMore pages={pages} more={more} label={`Load ${Math.min(25, (total ?? 0) - builds.length) || 25} more`} />
    </Panel>
  );
}
