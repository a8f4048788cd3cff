const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 };

/** "3600" (seconds), "90s", "15m", "12h", "7d" -> milliseconds; null for anything else. */
export function parseDuration(text: string): number | null {
  const match = /^(\d{1,7})([smhd]?)$/.exec(text.trim());
  if (!match) return null;
  const value = Number(match[1]) * UNIT_MS[match[2] || 's'];
  return value > 0 ? value : null;
}
