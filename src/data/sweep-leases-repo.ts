import type { Collection, Db } from 'mongodb';
import { claimOrTakeOver } from './db';

export interface SweepLeaseDoc {
  _id: string; // the sweep's name: one document per periodic sweep
  holder: string; // the instance running it
  until: Date; // no other instance runs the sweep before this
}

/**
 * Leases of periodic sweeps: one instance among many runs a given sweep per period. The unique _id decides between
 * concurrent first takers; an ended lease is taken over by one conditional update, so two instances never both win.
 */
export class SweepLeasesRepo {
  static readonly collectionName = 'sweep_leases';
  private readonly col: Collection<SweepLeaseDoc>;
  constructor(db: Db) {
    this.col = db.collection<SweepLeaseDoc>(SweepLeasesRepo.collectionName);
  }

  async claim(name: string, holder: string, now: Date, leaseMs: number): Promise<boolean> {
    return claimOrTakeOver(this.col, { _id: name, holder, until: new Date(now.getTime() + leaseMs) }, { until: { $lte: now } });
  }
}
