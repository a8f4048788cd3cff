export interface Range {
  /** First UTC day, YYYY-MM-DD. */
  from: string;
  /** Last UTC day, included. */
  to: string;
}

export interface ViewProps {
  appId: string;
  range: Range;
  role: 'support' | 'admin';
  /** Another view of the console, e.g. a build's findings. */
  navigate(route: { view: string; build?: string | null }): void;
  build?: string | null;
}
