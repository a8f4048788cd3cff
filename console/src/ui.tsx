import type { ComponentChildren } from 'preact';
import type { ApiError } from './api';
import type { QueryState } from './use-query';
import type { Pages } from './use-pages';

export function Panel(props: { title: string; subtitle?: ComponentChildren; actions?: ComponentChildren; children: ComponentChildren; id?: string }) {
  return (
    <section class="panel" data-panel={props.id}>
      <header class="panel-head">
        <div>
          <h2>{props.title}</h2>
          {props.subtitle ? <p class="panel-sub">{props.subtitle}</p> : null}
        </div>
        {props.actions ? <div class="panel-actions">{props.actions}</div> : null}
      </header>
      <div class="panel-body">{props.children}</div>
    </section>
  );
}

/** Nothing to show is said, with what would make something appear. */
export function Empty(props: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty" role="status">
      <div class="empty-mark" aria-hidden="true">∅</div>
      <p class="empty-title">{props.title}</p>
      {props.children ? <p class="empty-hint">{props.children}</p> : null}
    </div>
  );
}

export function ErrorBox(props: { error: ApiError; retry?: () => void }) {
  const { error } = props;
  return (
    <div class="error" role="alert">
      <p class="error-title">{error.kind === 'forbidden' ? 'Not allowed' : error.kind === 'network' ? 'Service unreachable' : 'The request failed'}</p>
      <p>{error.message}</p>
      <p class="error-meta">
        {error.code ? <span>code <code>{error.code}</code></span> : null}
        {error.requestId ? <span>request id <code data-request-id>{error.requestId}</code></span> : <span>no request id (the request did not reach the service)</span>}
      </p>
      {props.retry ? <button class="button" onClick={props.retry}>Try again</button> : null}
    </div>
  );
}

export function Loading(props: { what: string }) {
  return (
    <div class="loading" aria-busy="true">
      <span class="spinner" aria-hidden="true" /> Loading {props.what}…
    </div>
  );
}

/** Loading, error or the content, so that no panel is ever blank. */
export function Async<T>(props: { state: QueryState<T>; what: string; retry?: () => void; children: (data: T) => ComponentChildren }) {
  const { state } = props;
  if (state.status === 'loading') return <Loading what={props.what} />;
  if (state.status === 'error') return <ErrorBox error={state.error} retry={props.retry} />;
  return <>{props.children(state.data)}</>;
}

export function Grade(props: { grade: string | null | undefined; title?: string }) {
  const g = props.grade ?? 'none';
  // Grades carry a sign (A-, B+): the letter picks the colour.
  const letter = /^[A-F]/.test(g) ? g[0] : 'none';
  return (
    <span class={`grade grade-${letter}`} title={props.title}>
      {g === 'none' ? '—' : g}
    </span>
  );
}

export function Stat(props: { label: string; value: ComponentChildren; hint?: string; id?: string }) {
  return (
    <div class="stat" data-stat={props.id}>
      <div class="stat-label">{props.label}</div>
      <div class="stat-value">{props.value}</div>
      {props.hint ? <div class="stat-hint">{props.hint}</div> : null}
    </div>
  );
}

export function Tag(props: { tone?: 'ok' | 'warn' | 'bad' | 'muted'; children: ComponentChildren }) {
  return <span class={`tag tag-${props.tone ?? 'muted'}`}>{props.children}</span>;
}

/**
 * The foot of a paged list: why the last "load more" failed (with a retry), and the button that reads the next page
 * while there is one. `label` names what the button loads.
 */
export function LoadMore(props: { pages: Pages<unknown>; more: () => void; label: string }) {
  const { pages, more } = props;
  return (
    <>
      {pages.moreError ? <ErrorBox error={pages.moreError} retry={more} /> : null}
      {pages.hasNextPage ? (
        <div class="more">
          <button class="button" data-more onClick={more} disabled={pages.loadingMore}>
            {pages.loadingMore ? 'Loading…' : props.label}
          </button>
        </div>
      ) : null}
    </>
  );
}
