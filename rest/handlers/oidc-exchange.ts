import type { RestHandler } from '../handler';
import { execute } from '../support/execute';
import { ExchangeOidcTokenDocument } from '../../src/generated/rest-operations';
import { contractMember, contractValues } from '../support/contract-values';

export const exchangeOidcToken: RestHandler<'exchangeOidcToken'> = async (call, ctx) => {
  // Validated against the contract (shape and length) but untrusted until the exchange verifies the token.
  const unverified = call.body;
  const { exchangeOidcToken } = await execute(ctx, ExchangeOidcTokenDocument, { token: unverified.token, appId: unverified.appId });
  call.res.setHeader('Cache-Control', 'no-store'); // a credential: no cache may keep it
  call.answer(200, {
    ...exchangeOidcToken,
    tokenType: contractMember('OidcExchangeResponse', 'tokenType', exchangeOidcToken.tokenType),
    scopes: contractValues('CiScope', exchangeOidcToken.scopes),
  });
};
