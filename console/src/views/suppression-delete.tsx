import { useEffect, useRef, useState } from 'preact/hooks';
import { DeleteSuppression } from '../operations';
import { ApiError, run } from '../api';
import { when } from '../format';
import { ErrorBox } from '../ui';
import type { Suppression } from './suppressions';

/** Admins: delete one suppression once confirmed (audited as suppression.deleted by the service). */
export function ConfirmDeleteSuppression(props: { appId: string; suppression: Suppression; cancel(): void; deleted(id: string): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const s = props.suppression;
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await run(DeleteSuppression, { appId: props.appId, id: s.id });
      props.deleted(s.id);
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError('http', String(e)));
      setBusy(false);
    }
  };
  return (
    <dialog ref={dialog} class="dialog" onCancel={(e) => (e.preventDefault(), props.cancel())} aria-labelledby="delete-suppression-title">
      <h3 id="delete-suppression-title">Delete this suppression?</h3>
      <p>
        <code>{s.id}</code> accepts <code>{s.findingId}</code> {s.fingerprint ? 'at one location' : 'everywhere'} until {when(s.expiresAt)}: <q>{s.reason}</q>
      </p>
      <p>Scans made from now on count its findings again (and take their penalty); scans already made keep them suppressed.</p>
      {error ? <ErrorBox error={error} /> : null}
      <div class="dialog-actions">
        <button class="button button-ghost" onClick={props.cancel} disabled={busy}>
          Cancel
        </button>
        <button class="button button-danger" onClick={confirm} disabled={busy} data-confirm>
          {busy ? 'Deleting…' : 'Delete suppression'}
        </button>
      </div>
    </dialog>
  );
}
