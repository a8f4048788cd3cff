import { ConsoleApps } from './operations';
import { useEffect, useRef, useState } from 'preact/hooks';
import { run, setToken, whenAuthLost, ApiError } from './api';
import { span } from './format';
import { parseRoute, routeHash, type Route, VIEWS } from './route';
import { SignIn, type Identity } from './sign-in';
import { Async, Empty, Panel } from './ui';
import { useQuery } from './use-query';
import { AttestationView } from './views/attestation';
import { BuildsView } from './views/builds';
import { KeysView } from './views/keys';
import { RefusedView } from './views/refused';
import { SuppressionsView } from './views/suppressions';
import { ThreatsView } from './views/threats';
import { TopDetectionsView } from './views/top-detections';
import type { ViewProps } from './views/types';

/** The service marks the page when it serves the bundled GraphQL explorer (GRAPHQL_SANDBOX on). */
const EXPLORER = document.documentElement.hasAttribute('data-explorer');

export function App() {
  const [identity, setIdentity] = useState<Identity | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // A refused token while signed in ends the session with the reason; at sign-in the form says it itself.
  const signedIn = useRef(false);
  signedIn.current = identity !== null;
  useEffect(
    () =>
      whenAuthLost((error) => {
        if (!signedIn.current) return;
        setToken(null);
        setIdentity(null);
        setNotice(error.message);
      }),
    [],
  );
  if (!identity) {
    return (
      <SignIn
        notice={notice}
        signedIn={(who) => {
          setNotice(null);
          setIdentity(who);
        }}
      />
    );
  }
  return (
    <Shell
      identity={identity}
      signOut={() => {
        setToken(null);
        setIdentity(null);
        setNotice('Signed out. The token was held by this tab only and is gone.');
      }}
    />
  );
}

function useRoute(): [Route, (r: Partial<Route>) => void] {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const go = (next: Partial<Route>) => {
    const merged = { ...route, ...next };
    location.hash = routeHash(merged);
    setRoute(merged);
  };
  return [route, go];
}

function Shell({ identity, signOut }: { identity: Identity; signOut(): void }) {
  const [route, go] = useRoute();
  const [apps, reloadApps] = useQuery('apps', () => run(ConsoleApps, {}).then((d) => d.appsConnection.nodes));
  const list = apps.status === 'done' ? apps.data : [];
  const appId = route.app && list.some((a) => a.id === route.app) ? route.app : (list[0]?.id ?? null);
  const left = Math.max(0, Math.round((Date.parse(identity.expiresAt) - Date.now()) / 1000));
  const props: ViewProps | null = appId ? { appId, range: { from: route.from, to: route.to }, role: identity.role, build: route.build, navigate: (r) => go({ ...r, app: appId }) } : null;
  const current = VIEWS.find((v) => v.id === route.view) ?? VIEWS[0];
  return (
    <div class="shell">
      <header class="topbar">
        <div class="brand">
          <span class="logo" aria-hidden="true">◆</span> shieldgate <span class="brand-sub">console</span>
        </div>
        <label class="field field-app">
          <span>App</span>
          <select value={appId ?? ''} onChange={(e) => go({ app: (e.target as HTMLSelectElement).value, build: null })} disabled={!list.length} data-control="app">
            {list.map((a) => (
              <option value={a.id}>
                {a.name} · {a.org} · {a.plan}
              </option>
            ))}
          </select>
        </label>
        <RangePicker from={route.from} to={route.to} set={(r) => go(r)} />
        <div class="who" data-role={identity.role}>
          <span class={`role role-${identity.role}`}>{identity.role}</span>
          <span class="who-name" title={identity.id}>{identity.name ?? `staff ${identity.id.slice(0, 6)}…`}</span>
          <span class="muted who-exp" title={identity.expiresAt}>
            token ends in {span(left)}
          </span>
          <button class="button button-ghost button-small" onClick={signOut} data-action="sign-out">
            Sign out
          </button>
        </div>
      </header>
      <nav class="nav" aria-label="Views">
        {VIEWS.map((v) => (
          <a href={`#${routeHash({ ...route, view: v.id, build: null, app: appId })}`} class={v.id === current.id ? 'nav-on' : ''} aria-current={v.id === current.id ? 'page' : undefined} data-view={v.id}>
            <span class="nav-title">{v.title}</span>
            <span class="nav-hint">{v.hint}</span>
          </a>
        ))}
        {EXPLORER ? (
          // A tab of its own, so the console stays signed in; the explorer asks for the token itself (memory only).
          <a href="/console/explorer" target="_blank" rel="noopener noreferrer" data-view="explorer">
            <span class="nav-title">GraphQL explorer ↗</span>
            <span class="nav-hint">any query; new tab, sign in there</span>
          </a>
        ) : null}
      </nav>
      <main class="main" data-current={current.id}>
        <h1 class="view-title">{current.title}</h1>
        <Async state={apps} what="apps" retry={reloadApps}>
          {() =>
            !props ? (
              <Panel title="No app yet">
                <Empty title="There is no app to look at.">An admin creates one with shieldgate app create (or the createApp mutation).</Empty>
              </Panel>
            ) : current.id === 'threats' ? (
              <ThreatsView {...props} />
            ) : current.id === 'top' ? (
              <TopDetectionsView {...props} />
            ) : current.id === 'builds' ? (
              <BuildsView {...props} />
            ) : current.id === 'attestation' ? (
              <AttestationView {...props} />
            ) : current.id === 'refused' ? (
              <RefusedView {...props} />
            ) : current.id === 'suppressions' ? (
              <SuppressionsView {...props} />
            ) : (
              <KeysView {...props} />
            )
          }
        </Async>
      </main>
    </div>
  );
}

const PRESETS = [7, 14, 30, 90];

function RangePicker(props: { from: string; to: string; set(r: { from: string; to: string }): void }) {
  const [error, setError] = useState<string | null>(null);
  const change = (from: string, to: string) => {
    if (!from || !to) return;
    const days = (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1;
    if (days < 1) return setError('The first day comes after the last.');
    if (days > 92) return setError('At most 92 days.');
    setError(null);
    props.set({ from, to });
  };
  return (
    <div class="range" role="group" aria-label="Date range (UTC days)">
      <label class="field">
        <span>From</span>
        <input type="date" value={props.from} onChange={(e) => change((e.target as HTMLInputElement).value, props.to)} data-control="from" />
      </label>
      <label class="field">
        <span>To</span>
        <input type="date" value={props.to} onChange={(e) => change(props.from, (e.target as HTMLInputElement).value)} data-control="to" />
      </label>
      <div class="presets">
        {PRESETS.map((d) => (
          <button
            class="chip"
            onClick={() => {
              const to = new Date().toISOString().slice(0, 10);
              change(new Date(Date.now() - (d - 1) * 86_400_000).toISOString().slice(0, 10), to);
            }}
          >
            {d}d
          </button>
        ))}
      </div>
      {error ? <span class="range-error" role="alert">{error}</span> : null}
    </div>
  );
}

export { ApiError };
