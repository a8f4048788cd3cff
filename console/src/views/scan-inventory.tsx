import type { Types } from '../operations';

type Inventory = NonNullable<NonNullable<Types.BuildFindingsQuery['scan']>['inventory']>;

/** Libraries listed before "and N more": a game engine ships hundreds of files per ABI, a drill-down shows the start. */
const SHOWN = 12;

/**
 * What the scanned package holds: its native libraries (path, ABI, digest), the permissions it requests and the
 * third-party SDKs recognised in it, with what gave each away. Nothing for a scan without an inventory.
 */
export function ScanInventory({ inventory }: { inventory: Inventory | null | undefined }) {
  if (!inventory) return null;
  const { nativeLibraries: libs, permissions, sdks } = inventory;
  return (
    <dl class="facts" data-inventory>
      <dt>SDKs</dt>
      <dd data-field="sdks" data-count={sdks.length}>
        {sdks.length ? sdks.map((s, i) => <span title={s.evidence}>{i ? ', ' : ''}{s.name}</span>) : <span class="muted">none recognised</span>}
      </dd>
      <dt>Permissions</dt>
      <dd data-field="permissions" data-count={permissions.length} class="mono">
        {permissions.length ? permissions.map((p) => p.replace(/^android\.permission\./, '')).join(', ') : '—'}
      </dd>
      <dt>Native code</dt>
      <dd data-field="native-libraries" data-count={libs.length}>
        {libs.length === 0 ? '—' : (
          <ul class="plain">
            {libs.slice(0, SHOWN).map((l) => (
              <li>
                <code>{l.path}</code> <span class="muted">{l.abi}</span> <code class="muted" title={l.sha256}>{l.sha256.slice(0, 12)}…</code>
              </li>
            ))}
            {libs.length > SHOWN ? <li class="muted">and {libs.length - SHOWN} more</li> : null}
          </ul>
        )}
      </dd>
    </dl>
  );
}
