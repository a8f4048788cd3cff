import { Whoami, type Types } from './operations';
import { useState } from 'preact/hooks';
import { ApiError, run, setToken } from './api';
import { ErrorBox } from './ui';

export type Identity = Types.WhoamiQuery['staffWhoami'];

const TOKEN = /^stf_[A-Za-z0-9]+_[A-Za-z0-9_-]+$/;

/** The token is checked by asking the service who it is; it is kept in memory only if the service accepts it. */
export function SignIn(props: { notice: string | null; signedIn(who: Identity): void }) {
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const token = value.trim();
    if (!TOKEN.test(token)) {
      setError(new ApiError('auth', 'That is not a staff token: it looks like stf_<id>_<secret>, as printed by shieldgate staff create.'));
      return;
    }
    setBusy(true);
    setError(null);
    setToken(token);
    try {
      const who = await run(Whoami, {});
      setValue('');
      props.signedIn(who.staffWhoami);
    } catch (err) {
      setToken(null);
      setError(err instanceof ApiError && err.kind === 'auth' ? new ApiError('auth', 'The service did not accept this token: it has expired, was revoked, or is mistyped.', err.requestId, err.code) : err instanceof ApiError ? err : new ApiError('http', String(err)));
      setBusy(false);
    }
  };
  return (
    <div class="signin">
      <form class="signin-card" onSubmit={submit} autocomplete="off">
        <div class="brand brand-large">
          <span class="logo" aria-hidden="true">◆</span> shieldgate <span class="brand-sub">console</span>
        </div>
        <p class="muted">Threats, builds, device attestation, refused CI exchanges and API keys of every app, for support and security staff.</p>
        {props.notice ? (
          <p class="notice" role="status" data-notice>
            {props.notice}
          </p>
        ) : null}
        <label class="field field-block">
          <span>Staff token</span>
          <input
            type="password"
            name="token"
            value={value}
            onInput={(e) => setValue((e.target as HTMLInputElement).value)}
            placeholder="stf_…"
            spellcheck={false}
            autocomplete="off"
            autofocus
            data-control="token"
          />
        </label>
        {error && error.kind === 'auth' ? (
          <p class="field-error" role="alert">
            {error.message}
            {error.requestId ? <span class="muted"> (request id <code>{error.requestId}</code>)</span> : null}
          </p>
        ) : error ? (
          <ErrorBox error={error} />
        ) : null}
        <button class="button button-primary button-block" type="submit" disabled={busy || !value.trim()}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        <p class="fine">
          Create a token with <code>shieldgate staff create --role support</code>. It is kept in this tab's memory only: closing or reloading the tab signs you out.
        </p>
      </form>
    </div>
  );
}
