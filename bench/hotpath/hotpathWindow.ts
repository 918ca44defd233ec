/**
 * One measured window of a hot-path worker (bench/hotpath/hotpathWorker.ts,
 * bench/hotpath/chartsWorker.ts), as the suite (bench/suites/hotpath.bench.ts)
 * reads it from the worker's last line of output.
 */
export interface HotpathWindow {
  jobs: number;
  wallMs: number;
  /** The process's user + system CPU over the window, µs. */
  cpuUs: number;
  /** Of it, inside PGlite's synchronous protocol call (0 on the server and for the charts). */
  pgliteUs: number;
  /** Share of the window the event loop was busy (absent from an older worker's output). */
  loopBusy?: number;
  /** Share of the window with an `rt_tick` out; null on PGlite and for the charts. */
  tickOut?: number | null;
}
