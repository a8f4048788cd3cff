import type { RestHandler } from '../handler';
import { execute } from '../support/execute';
import { IngestEventsDocument } from '../../src/generated/rest-operations';

/** Device ids travel in the variables only: nothing here logs them, and no response carries them. */
export const ingestEvents: RestHandler<'ingestEvents'> = async (call, ctx) => {
  const body = call.body;
  const { ingestEvents } = await execute(ctx, IngestEventsDocument, {
    events: body.events.map((e) => ({
      detection: e.detection,
      verdict: e.verdict,
      confidence: e.confidence,
      action: e.action,
      signals: e.signals,
      platform: e.platform ?? null,
      appVersion: e.appVersion ?? null,
      buildId: e.buildId ?? null,
      occurredAt: e.occurredAt,
      deviceId: e.deviceId,
      eventId: e.eventId ?? null,
    })),
    verdictToken: body.verdictToken ?? null,
  });
  call.answer(202, { accepted: ingestEvents.accepted, duplicates: ingestEvents.duplicates });
};
