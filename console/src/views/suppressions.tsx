import { useState } from 'preact/hooks';
import { AppSuppressions, type Types } from '../operations';
import { run } from '../api';
import { ago, n, shortHash, when } from '../format';
import { Async, Empty, LoadMore, Panel, Tag } from '../ui';
import { usePages } from '../use-pages';
import type { ViewProps } from './types';
import { ConfirmDeleteSuppression } from './suppression-delete';

export type Suppression = NonNullable<Types.AppSuppressionsQuery['app']>['suppressions']['nodes'][number];

/** A week: an active suppression ending within it is about to put its findings back into the grade. */
const SOON_MS = 7 * 86_400_000;

/**
 * When it ends: the date, marked expired when the service says so (its clock decides which scans it applies to, not
 * this machine's), else how far ahead, in warning colour within a week.
 */
function Expiry({ at, expired, now = Date.now() }: { at: string; expired: boolean; now?: number }) {
  const left = Date.parse(at) - now;
  return (
    <span class={expired ? 'expired' : left < SOON_MS ? 'soon' : ''} title={when(at)} data-expires={at}>
      {when(at).slice(0, 10)} <span class="muted">({expired ? 'ended' : ago(at, now)})</span>
    </span>
  );
}

/** An app's accepted findings: what each accepts, why, who said so and until when; admins delete one after confirming. */
export function SuppressionsView({ appId, role }: ViewProps) {
  const [state, reload, more] = usePages(`suppressions:${appId}`, (after) =>
    run(AppSuppressions, { appId, after }).then((d) => {
      const c = d.app?.suppressions;
      return { items: c?.nodes ?? [], hasNextPage: c?.pageInfo.hasNextPage ?? false, endCursor: c?.pageInfo.endCursor, totalCount: c?.totalCount };
    }),
  );
  const [asking, ask] = useState<Suppression | null>(null);
  const [done, setDone] = useState<string | null>(null);
  return (
    <Async state={state} what="suppressions" retry={reload}>
      {(pages) => {
        const items = pages.items;
        const active = items.filter((s) => s.status === 'active').length;
        return (
          <Panel
            title="Suppressions"
            id="suppressions"
            subtitle={
              <span>
                <span data-field="active">{n(active)}</span> active of <span data-field="shown">{n(items.length)}</span> shown
                {pages.totalCount !== null ? (
                  <>
                    {' '}(<span data-field="total">{n(pages.totalCount)}</span> in all)
                  </>
                ) : null}
                ; a suppressed finding stays listed in scans and costs no penalty until the expiry
              </span>
            }
            actions={role === 'admin' ? <Tag tone="warn">admin: delete enabled</Tag> : <Tag>support: read only</Tag>}
          >
            {done ? (
              <p class="notice" role="status">
                Suppression <code>{done}</code> deleted; the findings it accepted count again from the next scan.
              </p>
            ) : null}
            {items.length === 0 ? (
              <Empty title="No finding of this app is suppressed.">
                A team accepts a finding with POST /v1/apps/{'{id}'}/suppressions and an API key with the rules:write scope (admins: the
                createSuppression mutation), giving a reason and an expiry at most 366 days ahead. Signature findings cannot be suppressed.
              </Empty>
            ) : (
              <div class="table-wrap">
                <table class="table" data-table="suppressions">
                  <thead>
                    <tr>
                      <th>Rule</th>
                      <th>Fingerprint</th>
                      <th>Reason</th>
                      <th>Created by</th>
                      <th>Created</th>
                      <th>Expires</th>
                      <th>Status</th>
                      {role === 'admin' ? <th /> : null}
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((s) => (
                      <tr data-suppression={s.id}>
                        <td class="mono nowrap" data-field="rule">{s.findingId}</td>
                        <td data-field="fingerprint" data-value={s.fingerprint ?? ''}>
                          {s.fingerprint ? (
                            <code title={s.fingerprint}>{shortHash(s.fingerprint)}</code>
                          ) : (
                            <span class="muted">every instance</span>
                          )}
                        </td>
                        <td class="reason" data-field="reason">{s.reason}</td>
                        <td class="mono" data-field="created-by">{s.createdBy}</td>
                        <td class="nowrap" title={when(s.createdAt)} data-field="created-at" data-value={s.createdAt}>{ago(s.createdAt)}</td>
                        <td data-field="expires-at">
                          <Expiry at={s.expiresAt} expired={s.status === 'expired'} />
                        </td>
                        <td data-field="status">
                          <Tag tone={s.status === 'active' ? 'ok' : 'muted'}>{s.status}</Tag>
                        </td>
                        {role === 'admin' ? (
                          <td class="actions">
                            <button class="button button-danger button-small" onClick={() => (setDone(null), ask(s))}>
                              Delete
                            </button>
                          </td>
                        ) : null}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <LoadMore pages={pages} more={more} label="Load more suppressions" />
            {asking ? (
              <ConfirmDeleteSuppression
                appId={appId}
                suppression={asking}
                cancel={() => ask(null)}
                deleted={(id) => {
                  ask(null);
                  setDone(id);
                  reload();
                }}
              />
            ) : null}
          </Panel>
        );
      }}
    </Async>
  );
}
