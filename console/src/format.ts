/** Dates are UTC days throughout, as the service counts them. */
export const DAY_MS = 86_400_000;

export function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** Every UTC day from `from` to `to`, both included ("2026-11-01"). */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS) out.push(isoDay(new Date(t)));
  return out;
}

/** The range as the API takes it (DateRange): from the first day's start to the end of the last day (exclusive). */
export function rangeVariables(range: { from: string; to: string }): { range: { from: string; to: string } } {
  return { range: { from: `${range.from}T00:00:00.000Z`, to: new Date(Date.parse(`${range.to}T00:00:00Z`) + DAY_MS).toISOString() } };
}

const number = new Intl.NumberFormat('en-US');
export const n = (value: number): string => number.format(value);

/** `part` of `whole` as a whole percentage; never 0% or 100% when it is not exactly that. */
export function percent(part: number, whole: number): string {
  if (whole <= 0) return '—';
  const p = (part * 100) / whole;
  if (part > 0 && p < 1) return '<1%';
  if (part < whole && p > 99) return '>99%';
  return `${Math.round(p)}%`;
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return iso.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
}

export function ago(iso: string, now = Date.now()): string {
  const s = Math.round((now - Date.parse(iso)) / 1000);
  // The service's clock and this machine's differ by seconds or minutes: a near-future time is "just now".
  if (s < 60 && s > -600) return 'just now';
  if (s < 0) return `in ${span(-s)}`;
  return `${span(s)} ago`;
}

export function span(seconds: number): string {
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} d`;
}

export function bytes(value: number): string {
  if (value < 1024) return `${value} B`;
  if (value < 1024 ** 2) return `${(value / 1024).toFixed(1)} KiB`;
  if (value < 1024 ** 3) return `${(value / 1024 ** 2).toFixed(1)} MiB`;
  return `${(value / 1024 ** 3).toFixed(2)} GiB`;
}

export const label = (value: string): string => value.replace(/_/g, ' ');

/** One colour per detection, the same in every chart and legend. */
export const DETECTION_COLORS: Record<string, string> = {
  root_jailbreak: '#d9480f',
  emulator: '#1971c2',
  debugger: '#7048e8',
  hooking: '#c2255c',
  tamper: '#e67700',
  overlay: '#0c8599',
  accessibility_abuse: '#5c940d',
  screen_capture: '#495057',
  remote_access: '#862e9c',
};

/** A digest or fingerprint shortened for reading; the whole value goes in the element's title, to copy. */
export const shortHash = (hex: string, digits = 12): string => (hex.length > digits ? `${hex.slice(0, digits)}…` : hex);
