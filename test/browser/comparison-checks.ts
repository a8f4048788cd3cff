/**
 * What the builds drill-down and the suppressions view must show, read from the page, and the API's answers they
 * are compared with (asked with free text as an admin: the page's own documents are not the oracle).
 */
import type { Page } from 'playwright-core';

export interface ApiFinding {
  id: string;
  fingerprint: string | null;
  status: 'new' | 'existing' | null;
  suppressed: { id: string; reason: string; expiresAt: string } | null;
}
export interface ApiRef {
  id: string;
  fingerprint: string;
  title: string;
}
export interface ApiComparedScan {
  id: string;
  findings: ApiFinding[];
  baseline: { scanId: string; buildId: string } | null;
  diff: { new: number; existing: number; fixed: number } | null;
  fixedFindings: ApiRef[];
  unsuppressed: ApiRef[];
}
export interface ApiSuppression {
  id: string;
  findingId: string;
  fingerprint: string | null;
  reason: string;
  expiresAt: string;
  status: string;
  createdBy: string;
  createdAt: string;
}

export const COMPARED_SCAN = `query($id: ID!) { scan(id: $id) { id findings { id fingerprint status suppressed { id reason expiresAt } }
  baseline { scanId buildId } diff { new existing fixed } fixedFindings { id fingerprint title } unsuppressed { id fingerprint title } } }`;

export const SUPPRESSIONS = `query($id: ID!) { app(id: $id) { suppressions(first: 100) { totalCount nodes { id findingId fingerprint reason expiresAt status createdBy createdAt } } } }`;

/** The findings the drill-down lists, in its order, with the status, suppression and expiry each shows. */
export const shownFindings = (page: Page) =>
  page.$$eval('[data-finding]', (els) =>
    els.map((e) => ({
      id: e.getAttribute('data-finding'),
      fingerprint: e.getAttribute('data-fingerprint') || null,
      status: e.getAttribute('data-status') || null,
      suppressed: e.getAttribute('data-suppressed') || null,
      expires: e.querySelector('[data-field=suppression]')?.getAttribute('data-expires') ?? null,
      reason: e.querySelector('[data-field=suppression] q')?.textContent ?? null,
      tags: [...e.querySelectorAll('.finding-head .tag')].map((t) => (t.textContent ?? '').trim()),
    })),
  );

/** The same findings as the API gives them, in the drill-down's shape. */
export const expectedFindings = (scan: ApiComparedScan) =>
  scan.findings.map((f) => ({
    id: f.id,
    fingerprint: f.fingerprint,
    status: f.status,
    suppressed: f.suppressed?.id ?? null,
    expires: f.suppressed?.expiresAt ?? null,
    reason: f.suppressed?.reason ?? null,
  }));

/** The diff counts the drill-down shows. */
export const shownDiff = (page: Page) =>
  page.locator('[data-diff]').evaluate((el) => Object.fromEntries([...el.querySelectorAll('[data-field]')].map((b) => [b.getAttribute('data-field'), Number((b.textContent ?? '').replace(/,/g, ''))])));

/** The fingerprints of a list of referenced findings (fixed, unsuppressed), as shown. */
export const shownRefs = (page: Page, kind: 'fixed' | 'unsuppressed') => page.$$eval(`[data-refs=${kind}] li`, (lis) => lis.map((li) => ({ id: li.getAttribute('data-ref'), fingerprint: li.getAttribute('data-fingerprint') })));

/** Every row of the suppressions view, in its order. */
export const shownSuppressions = (page: Page) =>
  page.$$eval('[data-table=suppressions] tbody tr', (trs) =>
    trs.map((tr) => {
      const cell = (f: string) => tr.querySelector(`[data-field=${f}]`);
      return {
        id: tr.getAttribute('data-suppression'),
        findingId: cell('rule')?.textContent,
        fingerprint: cell('fingerprint')?.getAttribute('data-value') || null,
        fingerprintTitle: cell('fingerprint')?.querySelector('code')?.getAttribute('title') ?? null,
        reason: cell('reason')?.textContent,
        createdBy: cell('created-by')?.textContent,
        createdAt: cell('created-at')?.getAttribute('data-value'),
        expiresAt: cell('expires-at')?.querySelector('[data-expires]')?.getAttribute('data-expires'),
        expiredMark: Boolean(cell('expires-at')?.querySelector('.expired')),
        status: cell('status')?.textContent?.trim(),
      };
    }),
  );
