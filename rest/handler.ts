import type { Request, Response } from 'express';
import type { RequestContext } from '../src/services/context';
import type { OperationId } from './support/spec';

/** A REST handler maps the validated request to variables, executes a document, and maps the result. */
export type Handler = (req: Request, res: Response, ctx: RequestContext) => Promise<void>;

export type HandlerMap = Record<OperationId, Handler>;
