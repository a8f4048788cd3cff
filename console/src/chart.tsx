import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  color: string;
  values: number[];
  /** Drawn as bars (counts of a day) rather than a line. */
  bars?: boolean;
  dash?: number[];
}

/** A time chart of UTC days; uPlot draws on a canvas, so the page needs no inline style or script. */
export function DayChart(props: { days: string[]; series: Series[]; height?: number; title: string }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const xs = props.days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const bars = uPlot.paths.bars?.({ size: [0.7, 28], gap: 1 });
    const opts: uPlot.Options = {
      width: Math.max(320, el.clientWidth),
      height: props.height ?? 260,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      legend: { live: true },
      cursor: { points: { size: 7 } },
      // Half a day of room either side, so the first and last bars are whole.
      scales: { x: { time: true, range: () => [xs[0] - 43_200, xs[xs.length - 1] + 43_200] }, y: { range: (_u, _min, max) => [0, Math.max(1, Math.ceil(max * 1.1))] } },
      axes: [
        {
          stroke: '#5c6370',
          grid: { stroke: '#eef0f3' },
          ticks: { stroke: '#dfe3e8' },
          // Whole UTC days only: the data has no finer grain.
          incrs: [86_400, 2 * 86_400, 7 * 86_400, 14 * 86_400, 30 * 86_400],
          space: 48,
          values: (_u, splits) => splits.map((v) => new Date(v * 1000).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' })),
        },
        { stroke: '#5c6370', grid: { stroke: '#eef0f3' }, ticks: { stroke: '#dfe3e8' }, size: 48 },
      ],
      series: [
        { label: 'day', value: (_u, v) => (v == null ? '—' : new Date(v * 1000).toISOString().slice(0, 10)) },
        ...props.series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          dash: s.dash,
          fill: s.bars ? `${s.color}cc` : undefined,
          paths: s.bars ? bars : undefined,
          points: { show: !s.bars, size: 5 },
        })),
      ],
    };
    const plot = new uPlot(opts, [xs, ...props.series.map((s) => s.values)] as uPlot.AlignedData, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(320, el.clientWidth), height: opts.height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.days.join(), JSON.stringify(props.series), props.height]);
  return <div class="chart" ref={host} role="img" aria-label={props.title} />;
}
