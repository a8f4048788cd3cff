/** Back-off with full jitter, capped; `attempt` starts at 1. */
export function backoffMs(attempt: number, baseMs = 500, capMs = 15_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Seconds of a Retry-After header (delta-seconds form only), bounded so a hostile value cannot park the job. */
export function retryAfterMs(header: string | null | undefined, maxMs = 60_000): number | null {
  if (!header || !/^\d{1,6}$/.test(header.trim())) return null;
  return Math.min(maxMs, Number(header.trim()) * 1000);
}

/** Statuses worth another try: the service or a proxy in front of it was briefly unable to answer. */
export const isRetryableStatus = (status: number) => status === 429 || status === 502 || status === 503 || status === 504 || status === 500;
