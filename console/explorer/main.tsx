/** @jsxImportSource react */
/**
 * The bundled GraphQL explorer (GraphiQL) at /console/explorer: Apollo Sandbox's stand-in where Apollo's CDN cannot
 * be reached. Everything it loads comes from this service; its only requests are to this origin's /graphql.
 */
import './workers';
import 'graphiql/style.css';
import './explorer.css';
import { createRoot } from 'react-dom/client';
import { StrictMode, useEffect, useMemo, useState } from 'react';
import { GraphiQL, type GraphiQLProps } from 'graphiql';
import { memoryStorage } from './memory-storage';
import { post, setToken, whenRefused } from './token';
import { SignIn, type Identity } from './sign-in';

const FIRST_QUERY = `# Runs against this service's /graphql with the staff token given at sign-in.
# Ctrl-Space completes; the Docs button on the left lists the schema.
query Me {
  staffWhoami {
    id
    role
    expiresAt
  }
}
`;

type Fetcher = GraphiQLProps['fetcher'];

/** GraphiQL's operations, sent as they are: the token goes in the Authorization header, never in GraphiQL's state. */
const fetcher: Fetcher = async (params) => (await post(params)).answer as Awaited<ReturnType<Fetcher>>;

function Explorer({ identity, signOut }: { identity: Identity; signOut(): void }) {
  const storage = useMemo(memoryStorage, []);
  return (
    <div className="explorer">
      <header className="explorer-bar">
        <span className="explorer-brand">shieldgate · GraphQL explorer</span>
        <span className="explorer-who" data-role={identity.role}>
          {identity.name ?? identity.id} ({identity.role})
        </span>
        <a href="/console">Console</a>
        <button type="button" onClick={signOut} data-action="sign-out">
          Sign out
        </button>
      </header>
      <div className="explorer-body">
        <GraphiQL fetcher={fetcher} storage={storage} defaultQuery={FIRST_QUERY} isHeadersEditorEnabled={false} shouldPersistHeaders={false} showPersistHeadersSettings={false} />
      </div>
    </div>
  );
}

function Page() {
  const [identity, setIdentity] = useState<Identity | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => {
    whenRefused(() => {
      setToken(null);
      setIdentity(null);
      setNotice('The service no longer accepts the staff token (expired or revoked). Sign in with a new one.');
    });
    return () => whenRefused(null);
  }, []);
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
  const signOut = () => {
    setToken(null);
    setIdentity(null);
    setNotice('Signed out. The token was held by this tab only and is gone.');
  };
  return <Explorer identity={identity} signOut={signOut} />;
}

const root = document.getElementById('root');
if (root) {
  root.textContent = '';
  createRoot(root).render(
    <StrictMode>
      <Page />
    </StrictMode>,
  );
}
