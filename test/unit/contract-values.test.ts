// Protects: REST answers carry only enum values the contract lists. GraphQL types these fields as String; the REST
// mappers narrow each through the list openapi/v1.yaml declares (read here with the yaml parser, as the oracle), and
// a value outside it is a server error rather than an answer outside the contract.
import fs from 'node:fs';
import YAML from 'yaml';
import { OPENAPI_FILE } from '../../src/core/paths';
import { contractMember, contractValue, contractValues } from '../../rest/support/contract-values';

const schemas = YAML.parse(fs.readFileSync(OPENAPI_FILE, 'utf8')).components.schemas;

it('passes every value a named enum lists, and refuses any other', () => {
  for (const value of schemas.CiScope.enum as string[]) expect(contractValue('CiScope', value)).toBe(value);
  expect(contractValues('Scope', schemas.Scope.enum)).toEqual(schemas.Scope.enum);
  // A scope API keys may hold but CI tokens may not: outside CiScope.
  const keyOnly = (schemas.Scope.enum as string[]).find((s) => !(schemas.CiScope.enum as string[]).includes(s))!;
  expect(() => contractValue('CiScope', keyOnly)).toThrow(`"${keyOnly}" is not a CiScope the REST contract knows`);
  // An action of the service's own log (staff tokens), never in an app's trail: outside AuditAction.
  expect(() => contractValues('AuditAction', ['oidc.denied', 'staff.created'])).toThrow('"staff.created" is not a AuditAction');
});

it('passes every value an inline enum lists, and refuses any other', () => {
  for (const value of schemas.WebhookDelivery.properties.status.enum as string[]) expect(contractMember('WebhookDelivery', 'status', value)).toBe(value);
  expect(contractMember('OidcExchangeResponse', 'tokenType', 'Bearer')).toBe('Bearer');
  expect(() => contractMember('OidcExchangeResponse', 'tokenType', 'bearer')).toThrow('is not a OidcExchangeResponse.tokenType');
});
