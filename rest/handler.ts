import type { Request, Response } from 'express';
import type { RequestContext } from '../src/services/context';
import type { operations } from '../src/generated/openapi';
import type { OperationId } from './support/spec';

type Operation<K extends OperationId> = operations[K];
type Responses<K extends OperationId> = Operation<K>['responses'];

/** The JSON body the contract declares for operation K (never for one without a JSON body). */
export type RestBody<K extends OperationId> = NonNullable<Operation<K>['requestBody']> extends { content: { 'application/json': infer B } } ? B : never;
/** Its path parameters, and its query parameters as the validator leaves them (coerced to the contract's types). */
export type RestParams<K extends OperationId> = NonNullable<Operation<K>['parameters']['path']>;
export type RestQuery<K extends OperationId> = NonNullable<Operation<K>['parameters']['query']>;

type SuccessStatus = 200 | 201 | 202;
/** The success statuses of K whose answer is JSON, and the JSON of each. */
export type AnswerStatus<K extends OperationId> = {
  [S in keyof Responses<K> & SuccessStatus]: Responses<K>[S] extends { content: { 'application/json': unknown } } ? S : never;
}[keyof Responses<K> & SuccessStatus];
export type RestAnswer<K extends OperationId, S extends PropertyKey = AnswerStatus<K>> = Responses<K>[S & keyof Responses<K>] extends {
  content: { 'application/json': infer J };
}
  ? J
  : never;

/**
 * One request to operation K, typed from the contract (validated before the handler runs): its body, path and query
 * parameters, and `answer`, which takes only a success status K declares with the JSON the contract gives it. `req`
 * and `res` stay at hand for what is not JSON (the upload's byte stream, the NDJSON export, 204, headers).
 */
export interface RestCall<K extends OperationId> {
  body: RestBody<K>;
  params: RestParams<K>;
  query: RestQuery<K>;
  answer<S extends AnswerStatus<K>>(status: S, body: RestAnswer<K, S>): void;
  req: Request;
  res: Response;
}

/** A REST handler maps the validated request to variables, executes a document, and maps the result. */
export type RestHandler<K extends OperationId> = (call: RestCall<K>, ctx: RequestContext) => Promise<void>;

export type RestHandlers = { [K in OperationId]: RestHandler<K> };

/** What the router runs for an operation: the request as Express gives it. */
export type Handler = (req: Request, res: Response, ctx: RequestContext) => Promise<void>;

export type HandlerMap = Record<OperationId, Handler>;
