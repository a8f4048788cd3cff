import type { RequestContext } from './context';
import { requireDeviceKey } from '../threats/device-principal';
import { evaluateStub, type AttestInput, type AttestOutcome } from '../attest/attest-stub';

/** Checks an attestation token with the stub engine (src/attest/attest-stub.ts): API keys with attest:verify only. */
export async function verifyAttestation(ctx: RequestContext, input: AttestInput): Promise<AttestOutcome> {
  requireDeviceKey(ctx, 'attest:verify');
  return evaluateStub(input);
}
