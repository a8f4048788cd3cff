/**
 * Standard Play Integrity requests: their tokens can only be decoded by Google's server, so the service hands them to a
 * decoder and runs the same checks on the verdict it returns (checkIntegrityPayload in verdict.ts, with the
 * `requestHash` the app was told to bind, in place of the nonce). This is an interface only; nothing here calls Google.
 *
 * A real decoder POSTs `{"integrityToken": token}` to
 * `https://playintegrity.googleapis.com/v1/{packageName}:decodeIntegrityToken` and resolves with the response's
 * `tokenPayloadExternal` object (the verdict, shaped like a classic one but with requestDetails.requestHash instead of
 * nonce). It authenticates with an OAuth 2.0 access token of a Google Cloud service account, in the Cloud project
 * linked to the app in Play Console and with the Play Integrity API enabled there, requested with the scope
 * `https://www.googleapis.com/auth/playintegrity`. It is the one remote call attestation would make, so the service
 * wires one only when an operator configures those credentials; without it, standard tokens are not verified.
 * Sources: https://developer.android.com/google/play/integrity/standard (decoding on Google's server),
 * https://hexdocs.pm/google_api_play_integrity/GoogleApi.PlayIntegrity.V1.Api.V1.html (the decodeIntegrityToken call),
 * https://googleapis.dev/ruby/google-apis-playintegrity_v1/v0.1.0/Google/Apis/PlayintegrityV1.html (the OAuth scope).
 */
export interface StandardIntegrityDecoder {
  /** Resolves with the decoded verdict (tokenPayloadExternal); rejects when Google refuses the token. */
  decode(packageName: string, token: string): Promise<unknown>;
}
