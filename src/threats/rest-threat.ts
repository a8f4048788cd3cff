import type { components } from '../generated/openapi';
import type { ThreatsQuery } from '../generated/rest-operations';
import type { ThreatDoc } from '../data/threats-repo';

export type RestThreat = components['schemas']['Threat'];

type ListedThreat = NonNullable<ThreatsQuery['app']>['threats']['nodes'][number];
/** What the REST Threat is made from: a node of the GraphQL connection, or a stored threat (the export, webhooks). */
export type ThreatSource = ListedThreat | (ThreatDoc & { id: string });

const iso = (value: Date | string) => new Date(value).toISOString();

/**
 * The one REST Threat (openapi/v1.yaml, Threat): the list, the NDJSON export and the threat.opened webhook all show
 * it. Its fields are named one by one, so nothing else of a stored threat (the device hash) goes out.
 */
export function toRestThreat(t: ThreatSource): RestThreat {
  return {
    id: t.id,
    detection: t.detection,
    verdict: t.verdict,
    confidence: t.confidence,
    action: t.action,
    signals: t.signals,
    platform: t.platform ?? null,
    appVersion: t.appVersion ?? null,
    buildId: t.buildId ?? null,
    attested: t.attested ?? false,
    attestedBuildId: t.attestedBuildId ?? null,
    occurredAt: iso(t.occurredAt),
    lastOccurredAt: iso(t.lastOccurredAt),
    count: t.count,
  };
}
