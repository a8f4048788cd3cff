/** The sealed decryption key's record id (secret-box's additional data): a sealed key copied to another app does not open. */
export const sealedKeyRecordId = (appId: string): string => `attestation:${appId}`;
