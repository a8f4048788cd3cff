import { AppKeys, RevokeKey, type Types } from '../operations';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, run } from '../api';
import { ago, when } from '../format';
import { Async, Empty, ErrorBox, LoadMore, Panel, Tag } from '../ui';
import { usePages } from '../use-pages';
import type { ViewProps } from './types';

type Key = NonNullable<Types.AppKeysQuery['app']>['keys']['nodes'][number];

function status(k: Key, now = Date.now()): { text: string; tone: 'ok' | 'bad' | 'muted' | 'warn' } {
  if (k.revokedAt) return { text: 'revoked', tone: 'bad' };
  if (k.expiresAt && Date.parse(k.expiresAt) <= now) return { text: 'expired', tone: 'muted' };
  if (k.expiresAt && Date.parse(k.expiresAt) - now < 7 * 86_400_000) return { text: 'expires soon', tone: 'warn' };
  return { text: 'active', tone: 'ok' };
}

/** An app's API keys; admins revoke one after confirming (support sees the list only). */
export function KeysView({ appId, role }: ViewProps) {
  const [state, reload, more] = usePages(`keys:${appId}`, (after) =>
    run(AppKeys, { appId, after }).then((d) => ({ items: d.app?.keys.nodes ?? [], hasNextPage: d.app?.keys.pageInfo.hasNextPage ?? false, endCursor: d.app?.keys.pageInfo.endCursor })),
  );
  const [asking, ask] = useState<Key | null>(null);
  const [done, setDone] = useState<string | null>(null);
  return (
    <Async state={state} what="API keys" retry={reload}>
      {(pages) => {
        const keys = pages.items;
        const active = keys.filter((k) => status(k).text !== 'revoked' && status(k).text !== 'expired').length;
        return (
          <Panel
            title="API keys"
            id="keys"
            subtitle={`${active} usable of ${keys.length}${pages.hasNextPage ? ' loaded' : ''}; secrets are never shown after creation`}
            actions={role === 'admin' ? <Tag tone="warn">admin: revoke enabled</Tag> : <Tag>support: read only</Tag>}
          >
            {done ? (
              <p class="notice" role="status">
                Key <code>{done}</code> revoked; it is refused from its next request.
              </p>
            ) : null}
            {keys.length === 0 ? (
              <Empty title="This app has no API key.">Admins create one with the createApiKey mutation or shieldgate key create; CI can use trust rules instead.</Empty>
            ) : (
              <div class="table-wrap">
                <table class="table" data-table="keys">
                  <thead>
                    <tr>
                      <th>Name</th>
                      <th>Id</th>
                      <th>Mode</th>
                      <th>Scopes</th>
                      <th>Created</th>
                      <th>Expires</th>
                      <th>Status</th>
                      {role === 'admin' ? <th /> : null}
                    </tr>
                  </thead>
                  <tbody>
                    {keys.map((k) => {
                      const s = status(k);
                      return (
                        <tr data-key={k.id}>
                          <td>{k.name ?? <span class="muted">unnamed</span>}</td>
                          <td class="mono">{k.id}</td>
                          <td>
                            <Tag tone={k.mode === 'live' ? 'ok' : 'muted'}>{k.mode}</Tag>
                          </td>
                          <td class="scopes">{k.scopes.join(' ')}</td>
                          <td title={when(k.createdAt)}>{ago(k.createdAt)}</td>
                          <td>{k.expiresAt ? when(k.expiresAt).slice(0, 10) : <span class="muted">never</span>}</td>
                          <td data-field="status">
                            <Tag tone={s.tone}>{s.text}</Tag>
                            {k.revokedAt ? <span class="muted"> {ago(k.revokedAt)}</span> : null}
                          </td>
                          {role === 'admin' ? (
                            <td class="actions">
                              {!k.revokedAt ? (
                                <button class="button button-danger button-small" onClick={() => (setDone(null), ask(k))}>
                                  Revoke
                                </button>
                              ) : null}
                            </td>
                          ) : null}
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            )}
            <LoadMore pages={pages} more={more} label="Load more keys" />
            {asking ? (
              <ConfirmRevoke
                apiKey={asking}
                cancel={() => ask(null)}
                revoked={(id) => {
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

function ConfirmRevoke(props: { apiKey: Key; cancel(): void; revoked(id: string): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await run(RevokeKey, { id: props.apiKey.id });
      props.revoked(props.apiKey.id);
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError('http', String(e)));
      setBusy(false);
    }
  };
  return (
    <dialog ref={dialog} class="dialog" onCancel={(e) => (e.preventDefault(), props.cancel())} aria-labelledby="revoke-title">
      <h3 id="revoke-title">Revoke this key?</h3>
      <p>
        <b>{props.apiKey.name ?? 'Unnamed key'}</b> <code>{props.apiKey.id}</code> ({props.apiKey.mode}; {props.apiKey.scopes.join(', ')})
      </p>
      <p>Every request made with it is refused from now on. This cannot be undone: the app needs a new key.</p>
      {error ? <ErrorBox error={error} /> : null}
      <div class="dialog-actions">
        <button class="button button-ghost" onClick={props.cancel} disabled={busy}>
          Cancel
        </button>
        <button class="button button-danger" onClick={confirm} disabled={busy} data-confirm>
          {busy ? 'Revoking…' : 'Revoke key'}
        </button>
      </div>
    </dialog>
  );
}
