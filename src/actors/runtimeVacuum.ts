/**
 * Every tick rewrites the same few rows (the lines, the state row, the
 * sessions it moves). PGlite never autovacuums, and a server may not, so
 * dead versions would pile up and slow every later tick: besides the
 * Reconciler's pass, a node vacuums after every `every` of its ticks, one
 * vacuum at a time, off the tick's path (errors reported, never fatal).
 */
export interface VacuumScheduleOptions {
  /** Ticks of this node between two vacuums of the dispatch tables. */
  every: number;
  vacuum(): Promise<void>;
  track<T>(work: Promise<T>): Promise<T>;
  onError(error: unknown): void;
}

/** Ticks of this node between two vacuums, by default. */
export const VACUUM_EVERY = 2_000;

export class VacuumSchedule {
  private ticks = 0;
  private running = false;

  constructor(private readonly o: VacuumScheduleOptions) {}

  /** One tick of this node committed: vacuums when `every` of them have since the last one. */
  ticked(): void {
    this.ticks += 1;
    if (this.running || this.ticks < this.o.every) return;
    this.ticks = 0;
    this.running = true;
    void this.o
      .track(this.o.vacuum())
      .catch(this.o.onError)
      .finally(() => {
        this.running = false;
      });
  }
}
