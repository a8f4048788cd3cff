/** @jsxImportSource react */
import { useState, type FormEvent } from 'react';
import Whoami from '../operations/Whoami.graphql';
import { post, setToken, TOKEN_SHAPE } from './token';

export interface Identity {
  id: string;
  role: string;
  name: string | null;
}

/**
 * Asks the service who the token belongs to with the console's registered Whoami document (so sign-in works where
 * GRAPHQL_TRUSTED_DOCUMENTS is on); the token is kept, in memory, only if the service accepts it.
 */
async function whoami(): Promise<Identity> {
  const { status, answer } = await post({ operationName: Whoami.operationName, query: Whoami.query, extensions: { persistedQuery: { version: 1, sha256Hash: Whoami.sha256Hash } } });
  const who = (answer.data as { staffWhoami?: Identity } | null | undefined)?.staffWhoami;
  if (status === 401) throw new Error('The service did not accept this token: it has expired, was revoked, or is mistyped.');
  if (!who) throw new Error(answer.errors?.[0]?.message ?? `The service answered ${status}.`);
  return who;
}

export function SignIn(props: { notice: string | null; signedIn(who: Identity): void }) {
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const token = value.trim();
    if (!TOKEN_SHAPE.test(token)) {
      setError('That is not a staff token: it looks like stf_<id>_<secret>, as printed by shieldgate staff create.');
      return;
    }
    setBusy(true);
    setError(null);
    setToken(token);
    try {
      const who = await whoami();
      setValue('');
      props.signedIn(who);
    } catch (err) {
      setToken(null);
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  };
  return (
    <div className="signin">
      <form className="signin-card" onSubmit={submit} autoComplete="off">
        <h1>shieldgate · GraphQL explorer</h1>
        <p className="muted">Run any GraphQL operation against this service with a staff token. Nothing here is loaded from, or sent to, anywhere else.</p>
        {props.notice ? (
          <p className="notice" role="status" data-notice>
            {props.notice}
          </p>
        ) : null}
        <label className="field">
          <span>Staff token</span>
          <input type="password" name="token" value={value} onChange={(e) => setValue(e.target.value)} placeholder="stf_…" spellCheck={false} autoComplete="off" autoFocus data-control="token" />
        </label>
        {error ? (
          <p className="field-error" role="alert">
            {error}
          </p>
        ) : null}
        <button className="button-primary" type="submit" disabled={busy || !value.trim()}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        <p className="fine">
          Create a token with <code>shieldgate staff create --role support</code>. It is kept in this tab's memory only: closing or reloading the tab signs you out.
        </p>
      </form>
    </div>
  );
}
