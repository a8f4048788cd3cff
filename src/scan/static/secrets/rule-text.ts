import type { SecretRuleId } from './patterns';

/**
 * Title, what the detail calls the value, and fix of each secret rule. Anything in a package is readable by
 * whoever downloads it (apktool, strings, unzip): a secret in it is a published secret, so every fix starts with
 * revoking the value, because removing it from the next build does not take it back from the copies out there.
 *
 * Google API keys: Firebase writes one into every Firebase app (google-services' `google_api_key` and
 * `google_crash_reporting_api_key` resource strings, `API_KEY` in GoogleService-Info.plist), and Maps keys live in
 * the same places; Firebase documents those keys as identifiers of the project, not secrets, to be restricted to
 * the app. Reporting them would flag nearly every app for a value that must ship, so, as the scanners with the
 * fewest false positives do, keys in those places (resources.arsc strings, GoogleService-Info.plist) are not
 * reported; a key hard-coded in code (DEX), assets, raw resources or other bundle files is, because that is where
 * keys of paid server APIs (Gemini, YouTube Data, Places web service) end up, usable by anyone to spend the
 * project's quota.
 */
export const RULE_TEXT: Record<SecretRuleId, { title: string; what: string; fix: string }> = {
  'package.secret-aws': {
    title: 'AWS access key pair shipped in the package',
    what: 'An AWS access key id with its secret access key',
    fix: 'Deactivate the key pair now in IAM (Access keys: Make inactive, then Delete) and check CloudTrail for its use. Do not ship AWS credentials in an app: have your backend call AWS, or give the app temporary, narrowly scoped credentials from Amazon Cognito identity pools.',
  },
  'package.secret-google-api-key': {
    title: 'Google API key hard-coded in the package',
    what: 'A Google API key outside the app\'s Firebase or Maps configuration',
    fix: 'Regenerate the key in Google Cloud console (APIs & Services > Credentials) and delete the old one. If the app must call the API itself, restrict the new key to your app (Android package and signing certificate SHA-1, or iOS bundle id) and to the APIs it needs; keys for server APIs (Gemini, YouTube Data, Places web service) belong on your backend. Firebase\'s own google_api_key and GoogleService-Info.plist API_KEY are not reported: restrict them too.',
  },
  'package.secret-private-key': {
    title: 'Private key shipped in the package',
    what: 'A PEM private key',
    fix: 'Treat the key as compromised: revoke its certificate or remove the public key wherever it is trusted (servers, service accounts in Google Cloud IAM, SSH authorized_keys), issue a new key and keep it on the server side. For a Google service account, delete the key in IAM > Service accounts > Keys; apps should authenticate users (Firebase Auth) instead of carrying a service account.',
  },
  'package.secret-stripe': {
    title: 'Stripe live secret key shipped in the package',
    what: 'A Stripe live secret or restricted key',
    fix: 'Roll the key in the Stripe dashboard (Developers > API keys: Roll key) and review recent API activity. Apps use only the publishable key (pk_live_); create PaymentIntents and other secret-key calls on your server.',
  },
  'package.secret-slack': {
    title: 'Slack token or webhook shipped in the package',
    what: 'A Slack token or incoming webhook URL',
    fix: 'Revoke the token (api.slack.com/apps > your app > OAuth & Permissions: revoke, or auth.revoke) or delete the incoming webhook and create a new one. Post to Slack from your backend, never from the app.',
  },
  'package.secret-github': {
    title: 'GitHub token shipped in the package',
    what: 'A GitHub token',
    fix: 'Revoke the token now (GitHub Settings > Developer settings > Personal access tokens, or the GitHub App or OAuth app that issued it) and review the audit log of what it could reach. Call GitHub from your backend with a token that never leaves it.',
  },
};
