import { isoDay } from './format';

export const VIEWS = [
  { id: 'threats', title: 'Threats', hint: 'per detection per day' },
  { id: 'top', title: 'Top detections', hint: 'by app version and build' },
  { id: 'builds', title: 'Builds', hint: 'grades and findings' },
  { id: 'attestation', title: 'Attestation', hint: 'device verdicts by engine and reason' },
  { id: 'refused', title: 'Refused exchanges', hint: "CI can't get a token" },
  { id: 'suppressions', title: 'Suppressions', hint: 'accepted findings, until when' },
  { id: 'keys', title: 'API keys', hint: 'list and revoke' },
] as const;

export interface Route {
  view: string;
  app: string | null;
  from: string;
  to: string;
  build: string | null;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The view, app, days and open build live in the URL fragment (never the token): a link shows the same screen. */
export function parseRoute(hash: string): Route {
  const [path, query = ''] = hash.replace(/^#\/?/, '').split('?');
  const q = new URLSearchParams(query);
  const today = isoDay(new Date());
  const from = q.get('from') ?? '';
  const to = q.get('to') ?? '';
  return {
    view: VIEWS.some((v) => v.id === path) ? path : 'threats',
    app: q.get('app'),
    to: DAY.test(to) ? to : today,
    from: DAY.test(from) ? from : isoDay(new Date(Date.now() - 13 * 86_400_000)),
    build: q.get('build'),
  };
}

export function routeHash(r: Route): string {
  const q = new URLSearchParams();
  if (r.app) q.set('app', r.app);
  q.set('from', r.from);
  q.set('to', r.to);
  if (r.build) q.set('build', r.build);
  return `/${r.view}?${q.toString()}`;
}
