/**
 * The console's operations, each typed with the result and variables codegen derives from its .graphql file and the
 * schema (src/generated/console-operations.ts): a field an operation stops selecting, or the schema stops having,
 * fails the console's type check (npm run build:console), not a screen at 3 a.m.
 */
import type * as G from '../../src/generated/console-operations';
import AppBuildsOp from '../operations/AppBuilds.graphql';
import AppKeysOp from '../operations/AppKeys.graphql';
import AppSuppressionsOp from '../operations/AppSuppressions.graphql';
import AppThreatsOp from '../operations/AppThreats.graphql';
import AttestVerdictsOp from '../operations/AttestVerdicts.graphql';
import BuildFindingsOp from '../operations/BuildFindings.graphql';
import BuildTrendOp from '../operations/BuildTrend.graphql';
import ConsoleAppsOp from '../operations/ConsoleApps.graphql';
import ConsoleBuildOp from '../operations/ConsoleBuild.graphql';
import DeleteSuppressionOp from '../operations/DeleteSuppression.graphql';
import RefusedExchangesOp from '../operations/RefusedExchanges.graphql';
import RevokeKeyOp from '../operations/RevokeKey.graphql';
import ThreatTrendOp from '../operations/ThreatTrend.graphql';
import TopDetectionsOp from '../operations/TopDetections.graphql';
import WhoamiOp from '../operations/Whoami.graphql';

type RawOperation = typeof WhoamiOp;

/** An operation module with the types of its answer and variables (the phantom field is never set). */
export interface Operation<TData, TVars> extends RawOperation {
  readonly types?: { data: TData; variables: TVars };
}

const typed = <TData, TVars>(op: RawOperation): Operation<TData, TVars> => op;

export const AppBuilds = typed<G.AppBuildsQuery, G.AppBuildsQueryVariables>(AppBuildsOp);
export const AppKeys = typed<G.AppKeysQuery, G.AppKeysQueryVariables>(AppKeysOp);
export const AppSuppressions = typed<G.AppSuppressionsQuery, G.AppSuppressionsQueryVariables>(AppSuppressionsOp);
export const AppThreats = typed<G.AppThreatsQuery, G.AppThreatsQueryVariables>(AppThreatsOp);
export const AttestVerdicts = typed<G.AttestVerdictsQuery, G.AttestVerdictsQueryVariables>(AttestVerdictsOp);
export const BuildFindings = typed<G.BuildFindingsQuery, G.BuildFindingsQueryVariables>(BuildFindingsOp);
export const BuildTrend = typed<G.BuildTrendQuery, G.BuildTrendQueryVariables>(BuildTrendOp);
export const ConsoleApps = typed<G.ConsoleAppsQuery, G.ConsoleAppsQueryVariables>(ConsoleAppsOp);
export const ConsoleBuild = typed<G.ConsoleBuildQuery, G.ConsoleBuildQueryVariables>(ConsoleBuildOp);
export const DeleteSuppression = typed<G.DeleteSuppressionMutation, G.DeleteSuppressionMutationVariables>(DeleteSuppressionOp);
export const RefusedExchanges = typed<G.RefusedExchangesQuery, G.RefusedExchangesQueryVariables>(RefusedExchangesOp);
export const RevokeKey = typed<G.RevokeKeyMutation, G.RevokeKeyMutationVariables>(RevokeKeyOp);
export const ThreatTrend = typed<G.ThreatTrendQuery, G.ThreatTrendQueryVariables>(ThreatTrendOp);
export const TopDetections = typed<G.TopDetectionsQuery, G.TopDetectionsQueryVariables>(TopDetectionsOp);
export const Whoami = typed<G.WhoamiQuery, G.WhoamiQueryVariables>(WhoamiOp);

export type { G as Types };
