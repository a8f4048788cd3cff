/**
 * The built-in App Attest trust anchor: the Apple App Attestation Root CA, as Apple publishes it at
 * https://www.apple.com/certificateauthority/Apple_App_Attestation_Root_CA.pem (SHA-256 fingerprint
 * 1CB9823BA28BA6AD2D33A006941DE2AE4F513EF1D4E831B9F7E0FA7B6242C932). It is text in TypeScript, not a .pem file,
 * because the build copies compiled sources only. `ATTEST_APPLE_ROOTS` (a PEM file, read by pem.ts) replaces it.
 */
export interface AttestRoot {
  name: string;
  pem: string;
  /** The certificate's own validity window, restated so a reader sees when the anchor stops working. */
  notBefore: Date;
  notAfter: Date;
}

export const APPLE_APP_ATTEST_ROOTS: readonly AttestRoot[] = [
  {
    name: 'Apple App Attestation Root CA',
    notBefore: new Date('2020-03-18T18:32:53Z'),
    notAfter: new Date('2045-03-15T00:00:00Z'),
    pem: `-----BEGIN CERTIFICATE-----
MIICITCCAaegAwIBAgIQC/O+DvHN0uD7jG5yH2IXmDAKBggqhkjOPQQDAzBSMSYw
JAYDVQQDDB1BcHBsZSBBcHAgQXR0ZXN0YXRpb24gUm9vdCBDQTETMBEGA1UECgwK
QXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTAeFw0yMDAzMTgxODMyNTNa
Fw00NTAzMTUwMDAwMDBaMFIxJjAkBgNVBAMMHUFwcGxlIEFwcCBBdHRlc3RhdGlv
biBSb290IENBMRMwEQYDVQQKDApBcHBsZSBJbmMuMRMwEQYDVQQIDApDYWxpZm9y
bmlhMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAERTHhmLW07ATaFQIEVwTtT4dyctdh
NbJhFs/Ii2FdCgAHGbpphY3+d8qjuDngIN3WVhQUBHAoMeQ/cLiP1sOUtgjqK9au
Yen1mMEvRq9Sk3Jm5X8U62H+xTD3FE9TgS41o0IwQDAPBgNVHRMBAf8EBTADAQH/
MB0GA1UdDgQWBBSskRBTM72+aEH/pwyp5frq5eWKoTAOBgNVHQ8BAf8EBAMCAQYw
CgYIKoZIzj0EAwMDaAAwZQIwQgFGnByvsiVbpTKwSga0kP0e8EeDS4+sQmTvb7vn
53O5+FRXgeLhpJ06ysC5PrOyAjEAp5U4xDgEgllF7En3VcE3iexZZtKeYnpqtijV
oyFraWVIyd/dganmrduC1bmTBGwD
-----END CERTIFICATE-----
`,
  },
];
