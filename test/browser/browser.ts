/**
 * Debian's chromium (apt package `chromium`, installed by .ci/run) driven by playwright-core: no browser download,
 * and flags that keep it off the network (no update, sync, safe-browsing or metrics calls; every host name but the
 * loopback address fails to resolve), so a test can only ever talk to the service it started.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO_ROOT } from '../../src/core/paths';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS = path.join(REPO_ROOT, 'test', 'artifacts');

const OFFLINE_FLAGS = [
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-domain-reliability',
  '--disable-client-side-phishing-detection',
  '--disable-breakpad',
  '--metrics-recording-only',
  '--no-first-run',
  '--no-default-browser-check',
  '--no-pings',
  '--no-proxy-server',
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
];

export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; .ci/run does)`);
  // The sandbox needs user namespaces a root process in a container does not get.
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...OFFLINE_FLAGS, ...(root ? ['--no-sandbox'] : [])] });
}

/** What the page's Content-Security-Policy refused, and every script error, collected for the test to assert. */
export interface PageProblems {
  violations(): Promise<string[]>;
  errors: string[];
}

export async function watchProblems(page: Page): Promise<PageProblems> {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (msg) => {
    // A refused request (401 from a revoked token) is logged by the browser itself; CSP refusals and script errors are not that.
    if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) errors.push(`console: ${msg.text()}`);
  });
  // Page-side code as text: this project's TypeScript settings know Node, not the DOM.
  await page.addInitScript({
    content: `window.cspViolations = [];
      document.addEventListener('securitypolicyviolation', (e) => window.cspViolations.push(e.effectiveDirective + ' ' + e.blockedURI));`,
  });
  return {
    errors,
    violations: () => page.evaluate<string[]>('window.cspViolations || []'),
  };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
