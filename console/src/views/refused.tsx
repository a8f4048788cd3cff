import { RefusedExchanges, type Types } from '../operations';
import { run } from '../api';
import { ago, daysBetween, label, n, rangeVariables, when } from '../format';
import { Async, Empty, Panel, Stat, Tag } from '../ui';
import { useQuery } from '../use-query';
import type { ViewProps } from './types';

type Denied = NonNullable<Types.RefusedExchangesQuery['app']>['auditEvents']['nodes'][number];

type Rule = NonNullable<Types.RefusedExchangesQuery['app']>['oidcRules']['nodes'][number];

/** What each refusal reason means, in the words support repeats to the customer. */
export const REASONS: Record<string, string> = {
  not_trusted: 'No trust rule of the app matches the job: compare the claims with the rules below.',
  pull_request: 'Tokens of pull or merge requests (and forks\' builds) are refused whatever the rules say (forks could mint them).',
  untrusted_trigger: 'A GitLab pipeline started by another on an unprotected ref, or a CircleCI SSH re-run: refused whatever the rules say.',
  unknown_app: 'The appId sent with the token names no app.',
  expired: 'The token had expired: the job waited too long between requesting and exchanging it.',
  not_yet_valid: 'The token is dated in the future: the runner clock or ours is off.',
  audience: 'The token was requested for another audience than this service.',
  issuer: 'The token names an issuer no trust rule of the app names (or one the operator no longer allows): nothing of it was fetched.',
  bad_signature: 'The signature does not verify: the token was altered or forged.',
  replayed: 'The same token was exchanged twice; each token works once.',
  malformed: 'What was sent is not a token (often a truncated secret or an empty variable).',
  too_long: 'What was sent is over 8192 characters: not a CI token.',
  missing_claim: 'The token lacks a claim the rules need.',
  lifetime: 'The token lives over an hour (on GitLab: the job\'s timeout is over an hour).',
  subject_mismatch: 'The sub claim names another repository than the token.',
  subject_unrecognized: 'The sub claim holds a template key the token does not explain (custom OIDC subject).',
  algorithm: 'The token is signed with an algorithm the service refuses.',
  no_kid: 'The token header names no key.',
  forbidden_header: 'The token header carries a field the service refuses (embedded keys, crit...).',
  unknown_key: 'No key of the issuer has this kid.',
  key_size: 'The signing key is too small.',
  jwks_unavailable: "The CI provider's key set could not be read at the time: retry the job.",
};

type RefusalDay = NonNullable<Types.RefusedExchangesQuery['app']>['refusedExchanges'][number];

async function load(appId: string, range: ViewProps['range']) {
  const data = await run(RefusedExchanges, { appId, ...rangeVariables(range) });
  return { days: data.app?.refusedExchanges ?? [], entries: data.app?.auditEvents.nodes ?? [], rules: data.app?.oidcRules.nodes ?? [] };
}

/** The providers of the refusals, most refused first, with their counts. */
export function refusalsPerProvider(days: RefusalDay[]): Array<readonly [string, number]> {
  const counts = new Map<string, number>();
  for (const d of days) counts.set(d.provider, (counts.get(d.provider) ?? 0) + d.count);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** What a rule pins besides its pattern, as `name value` pairs (the fields its provider checks). */
export function rulePins(rule: Rule): Array<[string, string]> {
  const pins: Array<[string, string | boolean | string[] | null | undefined]> = [
    ['repository id', rule.repositoryId],
    ['owner id', rule.repositoryOwnerId],
    ['namespace id', rule.namespaceId],
    ['project id', rule.projectId],
    ['config', rule.configRef],
    ['protected refs only', rule.protectedRefOnly ? 'yes' : null],
    ['organization', rule.organizationSlug],
    ['organization id', rule.organizationId],
    ['repository', rule.vcsOrigin],
    ['pipeline', rule.pipelineSlug],
    ['branch', rule.branch],
    ['contexts', rule.contextIds?.join(', ')],
    ['workspace', rule.workspaceUuid],
    ['repository', rule.repositoryUuid],
    ['deployment environment', rule.deploymentEnvironmentUuid],
  ];
  return pins.filter((pin): pin is [string, string] => typeof pin[1] === 'string' && pin[1] !== '');
}

/** reason -> day -> refusals. */
export function refusalsPerDay(days: RefusalDay[]): Map<string, Map<string, number>> {
  const byReason = new Map<string, Map<string, number>>();
  for (const d of days) {
    const row = byReason.get(d.reason) ?? new Map<string, number>();
    row.set(d.day, (row.get(d.day) ?? 0) + d.count);
    byReason.set(d.reason, row);
  }
  return byReason;
}

/** "CI can't get a token": why exchanges were refused, day by day, and the latest refusals with what failed. */
export function RefusedView({ appId, range }: ViewProps) {
  const [state, reload] = useQuery(`refused:${appId}:${range.from}:${range.to}`, () => load(appId, range));
  return (
    <Async state={state} what="refused exchanges" retry={reload}>
      {({ days: perDay, entries, rules }) => {
        const matrix = refusalsPerDay(perDay);
        const reasons = [...matrix.entries()].map(([r, days]) => [r, [...days.values()].reduce((a, b) => a + b, 0)] as const).sort((a, b) => b[1] - a[1]);
        const days = daysBetween(range.from, range.to).reverse().filter((d) => reasons.some(([r]) => matrix.get(r)?.has(d)));
        const total = reasons.reduce((s, [, c]) => s + c, 0);
        const providers = refusalsPerProvider(perDay);
        return (
          <>
            <div class="stats">
              <Stat id="refusals" label="Refused exchanges" value={n(total)} hint={`${range.from} to ${range.to}`} />
              <Stat id="reason" label="Main reason" value={reasons[0] ? label(reasons[0][0]) : 'none'} hint={reasons[0] ? `${n(reasons[0][1])} refusals` : 'no refusal'} />
              <Stat id="last" label="Last refusal" value={entries[0] ? when(entries[0].occurredAt).slice(5, 16) : 'never'} hint={entries[0] ? `${label(entries[0].reason ?? 'unknown')}, ${ago(entries[0].occurredAt)}` : 'no oidc.denied entry'} />
              <Stat id="rules" label="Trust rules" value={n(rules.length)} hint={rules.length ? 'on this app' : 'none: every exchange is refused'} />
            </div>
            <Panel title="Refused exchanges per day and reason" id="refusals" subtitle="UTC days with at least one refusal, newest first">
              {total === 0 ? (
                <Empty title="No refused exchange in this range.">
                  If CI still cannot get a token, the request may not reach the service: check the job asks for id-token: write and posts to /v1/auth/oidc with this app's id.
                </Empty>
              ) : (
                <div class="table-wrap">
                  <table class="table" data-table="refusals">
                    <thead>
                      <tr>
                        <th>Day</th>
                        {reasons.map(([r]) => (
                          <th class="num" title={REASONS[r] ?? r}>
                            {label(r)}
                          </th>
                        ))}
                      </tr>
                    </thead>
                    <tbody>
                      {days.map((d) => (
                        <tr data-day={d}>
                          <td class="mono">{d}</td>
                          {reasons.map(([r]) => {
                            const c = matrix.get(r)?.get(d) ?? 0;
                            return (
                              <td class={`num${c ? ' heat' : ' muted'}`} data-reason={r}>
                                {c ? n(c) : '·'}
                              </td>
                            );
                          })}
                        </tr>
                      ))}
                    </tbody>
                  </table>
                  <ul class="reasons">
                    {reasons.map(([r, c]) => (
                      <li>
                        <Tag tone="bad">{label(r)}</Tag> <b>{n(c)}</b> — {REASONS[r] ?? 'See the audit entry.'}
                      </li>
                    ))}
                  </ul>
                </div>
              )}
            </Panel>
            {providers.length > 0 ? (
              <Panel title="Refused exchanges per CI provider" id="providers" subtitle={`${range.from} to ${range.to}`}>
                <ul class="reasons" data-table="providers">
                  {providers.map(([p, c]) => (
                    <li data-provider={p}>
                      <Tag>{p}</Tag> <b>{n(c)}</b>
                    </li>
                  ))}
                </ul>
              </Panel>
            ) : null}
            <div class="split split-even">
              <Panel title="Latest refusals" id="denied" subtitle="the newest oidc.denied audit entries, whatever the range">
                {entries.length === 0 ? (
                  <Empty title="No exchange of this app was ever refused." />
                ) : (
                  <ul class="denied">
                    {entries.slice(0, 12).map((e) => (
                      <DeniedEntry entry={e} />
                    ))}
                  </ul>
                )}
              </Panel>
              <Panel title="Trust rules" id="rules" subtitle="what a job's claims must match">
                {rules.length === 0 ? (
                  <Empty title="This app has no trust rule.">Every exchange is refused as not_trusted until an app admin adds one (POST /v1/apps/{'{appId}'}/oidc-rules).</Empty>
                ) : (
                  <ul class="rules">
                    {rules.map((r) => (
                      <li data-rule={r.id} data-provider={r.provider}>
                        <code class="muted">{r.id}</code> <Tag>{r.provider}</Tag>
                        {r.provider === 'github' ? null : <div class="mono ellipsis">issuer {r.issuer}</div>}
                        {r.subjectPattern ? <div class="mono">sub {r.subjectPattern}</div> : null}
                        {r.workflowRef ? <div class="mono">workflow {r.workflowRef}</div> : null}
                        {r.environment ? <div class="mono">environment {r.environment}</div> : null}
                        {rulePins(r).map(([name, value]) => (
                          <div class="mono" data-pin={name}>
                            {name} {value}
                          </div>
                        ))}
                        <div>
                          {r.provider === 'github' ? `events ${r.events ? r.events.join(', ') : 'any but workflow_run'} · ` : ''}scopes {r.scopes.join(', ')}
                        </div>
                      </li>
                    ))}
                  </ul>
                )}
              </Panel>
            </div>
          </>
        );
      }}
    </Async>
  );
}

function DeniedEntry({ entry }: { entry: Denied }) {
  const claims = entry.claims ? entry.claims.all.filter(({ value }) => value !== null).map(({ name, value }) => [name, value] as const) : [];
  return (
    <li class="denied-entry" data-entry={entry.id}>
      <div class="denied-head">
        <Tag tone="bad">{label(entry.reason ?? 'unknown')}</Tag>
        {entry.provider ? <Tag>{entry.provider}</Tag> : null}
        <span class="muted">{when(entry.occurredAt)}</span>
        {entry.count && entry.count > 1 ? <span class="muted">× {n(entry.count)}</span> : null}
      </div>
      {claims.length ? null : entry.subject ? <div class="mono ellipsis">{entry.subject}</div> : <div class="muted">No claims: the token was refused before its signature was verified.</div>}
      {claims.length ? (
        <dl class="claims">
          {claims.map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd class="mono">{v}</dd>
            </>
          ))}
        </dl>
      ) : null}
      {entry.rules?.length ? (
        <ul class="outcomes">
          {entry.rules.map((r) => (
            <li data-outcome={r.id}>
              <code>{r.id}</code>{' '}
              {r.matched ? (
                <Tag tone="ok">matched</Tag>
              ) : r.failed ? (
                <>
                  failed <b>{r.failed.check}</b>: expected <code>{r.failed.expected}</code>, token said <code>{r.failed.actual ?? '(absent)'}</code>
                </>
              ) : (
                <Tag>not matched</Tag>
              )}
            </li>
          ))}
        </ul>
      ) : null}
    </li>
  );
}
