import type { Plan } from '../data/apps-repo';

/** Requests per 60 s window, per bucket (docs/contract.md, "Rate limits"). */
export const PLAN_LIMITS: Record<Plan, number> = {
  hatchling: 60,
  indie: 300,
  startup: 1200,
  scale: 6000,
  enterprise: 30000,
};

/** Requests with no valid credential (every 401, and the OIDC exchange) are counted per client address. */
export const ANONYMOUS_LIMIT = 120;

export const WINDOW_SECONDS = 60;
