/**
 * The viewers of the inspector topic. Changes are coalesced: the collector
 * only says "something changed", and at most once per `flushMs` each viewer
 * gets what moved since its own cursors (tree version, timeline seq, its
 * selected actor's version and event seq). A viewer whose socket has more
 * than `maxBufferedBytes` unsent is skipped (its cursors stay put, so it
 * catches up with the latest state later) and, after `maxSkips` skipped
 * flushes in a row, dropped. Nothing is ever queued per viewer in here.
 */
import type { WebSocket } from 'ws';
import type { InspectionCollector } from './InspectionCollector.js';
import { actorFrame, eventsFrame, treeFrame } from './inspectorFrames.js';
import { INSPECT_PROTOCOL_VERSION, type InspectServerFrame } from './inspectorProtocol.js';
import type { JobLookup } from './jobIndex.js';
import { parseInspectFrame } from './parseInspectFrame.js';
import type { SafeJsonLimits } from './safeJson.js';

/** The timers the hub uses. */
export interface HubClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

export interface HubOptions {
  clock: HubClock;
  flushMs: number;
  /** Tree frames (the biggest) go to a viewer at most this often. */
  treeIntervalMs: number;
  maxBufferedBytes: number;
  maxSkips: number;
  json: Partial<SafeJsonLimits>;
  logger: { warn(obj: object, msg: string): void };
  /** The first viewer came (true) or the last one left (false): opens and closes the gate. */
  onWatching?(watching: boolean): void;
}

interface Viewer {
  ws: WebSocket;
  treeVersion: number;
  jobsVersion: number;
  treeSentAt: number;
  timelineCursor: number;
  selected: string | null;
  actorVersion: number;
  eventCursor: number;
  graphSent: boolean;
  skips: number;
  errorsSeen: number;
}

export class InspectorHub {
  private readonly viewers = new Set<Viewer>();
  /** Sockets closed by `close()` whose close handshake has not ended yet. */
  private readonly closing = new Set<WebSocket>();
  private timer: unknown = null;
  private sentFrames = 0;
  /** Names runners by their jobs (the UI server's board), when mounted with one. */
  private jobs: (JobLookup & { readonly version: number }) | null = null;

  constructor(
    private readonly collector: InspectionCollector,
    private readonly opts: HubOptions,
  ) {}

  get viewerCount(): number {
    return this.viewers.size;
  }

  stats(): { viewers: number; framesSent: number } {
    return { viewers: this.viewers.size, framesSent: this.sentFrames };
  }

  /** Where runners' jobs are looked up; a new job learnt sends the tree again. */
  useJobs(jobs: (JobLookup & { readonly version: number }) | null): void {
    this.jobs = jobs;
  }

  /** A job was learnt: viewers get the tree with its name. */
  jobsChanged(): void {
    this.schedule();
  }

  /** Takes an authenticated admin socket: greets it, sends the state now, then follows changes. */
  attach(ws: WebSocket): void {
    const v: Viewer = {
      ws,
      treeVersion: -1,
      jobsVersion: -1,
      treeSentAt: Number.NEGATIVE_INFINITY,
      timelineCursor: 0,
      selected: null,
      actorVersion: -1,
      eventCursor: 0,
      graphSent: false,
      skips: 0,
      errorsSeen: 0,
    };
    this.viewers.add(v);
    // Opened before the first frame: the gate tells the collector every live actor now.
    if (this.viewers.size === 1) this.opts.onWatching?.(true);
    this.collector.changed = () => this.schedule();
    ws.on('message', (data, isBinary) => this.onMessage(v, data.toString(), isBinary));
    ws.on('close', () => this.detach(v));
    ws.on('error', (err) => {
      this.opts.logger.warn({ err }, 'inspector socket error');
      this.detach(v);
    });
    const c = this.collector;
    this.send(v, {
      type: 'hello',
      protocol: INSPECT_PROTOCOL_VERSION,
      now: this.opts.clock.now(),
      limits: {
        eventsPerActor: c.limits.eventsPerActor,
        timelineSize: c.limits.timelineSize,
        flushMs: this.opts.flushMs,
      },
    });
    this.update(v);
  }

  /** Sends every viewer what changed (the clock calls it; tests may call it directly). */
  flush(): void {
    this.timer = null;
    let pending = false;
    for (const v of this.viewers) if (!this.update(v)) pending = true;
    if (pending) this.schedule();
  }

  /**
   * Sends each viewer what changed since its last flush, then closes it with
   * 1001 and stops the timer. The last changes are often why the server
   * closes (a supervisor that reached its restart intensity stops the UI
   * server with the rest of the tree): a viewer sees them before the close.
   */
  close(): void {
    if (this.timer !== null) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
    for (const v of [...this.viewers]) {
      this.update(v, true);
      v.ws.close(1001, 'server closing');
      this.closing.add(v.ws);
      v.ws.once('close', () => this.closing.delete(v.ws));
      this.detach(v);
    }
  }

  /** Cuts the sockets `close()` closed that never answered its close frame. */
  terminate(): void {
    for (const ws of this.closing) ws.terminate();
    this.closing.clear();
  }

  private detach(v: Viewer): void {
    if (!this.viewers.delete(v)) return;
    // Nobody watching: the collector stops calling us at all.
    if (this.viewers.size === 0) {
      this.collector.changed = null;
      this.opts.onWatching?.(false);
    }
  }

  private schedule(): void {
    if (this.timer !== null || this.viewers.size === 0) return;
    const t = this.opts.clock.setTimeout(() => this.flush(), this.opts.flushMs);
    // A pending flush must never keep the process alive.
    (t as { unref?: () => void } | null)?.unref?.();
    this.timer = t;
  }

  private send(v: Viewer, frame: InspectServerFrame): void {
    v.ws.send(JSON.stringify(frame));
    this.sentFrames += 1;
  }

  /**
   * Brings one viewer up to date. Returns false when something is still
   * pending for it. `last`: the viewer is about to be closed, so the tree
   * goes now, whatever `treeIntervalMs` says, and a slow viewer is not counted.
   */
  private update(v: Viewer, last = false): boolean {
    if (v.ws.readyState !== v.ws.OPEN) return true;
    if (v.ws.bufferedAmount > this.opts.maxBufferedBytes) {
      if (last) return true;
      v.skips += 1;
      if (v.skips > this.opts.maxSkips) {
        this.opts.logger.warn({ skips: v.skips }, 'inspector viewer too slow: dropped');
        v.ws.terminate();
        this.detach(v);
        return true;
      }
      return false;
    }
    v.skips = 0;
    const c = this.collector;
    let pending = false;
    const jobsVersion = this.jobs?.version ?? 0;
    if (v.treeVersion !== c.treeVersion || v.jobsVersion !== jobsVersion) {
      const now = this.opts.clock.now();
      if (last || now - v.treeSentAt >= this.opts.treeIntervalMs) {
        v.treeVersion = c.treeVersion;
        v.jobsVersion = jobsVersion;
        v.treeSentAt = now;
        this.send(v, treeFrame(c, this.jobs));
      } else pending = true;
    }
    if (v.timelineCursor !== c.timeline.seq) {
      const read = c.timeline.since(v.timelineCursor);
      // A viewer's first timeline frame replaces whatever its page still shows
      // (a reconnect, or a node that restarted): it carries everything kept.
      const reset = read.lost || v.timelineCursor === 0;
      v.timelineCursor = read.next;
      this.send(v, { type: 'timeline', reset, entries: read.items });
    }
    const { observerErrors, lastError } = c.stats();
    if (observerErrors > v.errorsSeen) {
      v.errorsSeen = observerErrors;
      const message = `${observerErrors} inspection frame(s) failed; last: ${String((lastError as Error | undefined)?.message ?? lastError)}`;
      this.send(v, { type: 'error', code: 'observer_failed', message });
    }
    if (v.selected !== null) this.updateSelected(v, v.selected);
    return !pending;
  }

  private updateSelected(v: Viewer, sessionId: string): void {
    const rec = this.collector.actors.get(sessionId);
    if (!rec) {
      v.selected = null;
      this.send(v, { type: 'gone', sessionId });
      return;
    }
    if (rec.version === v.actorVersion && v.graphSent) return;
    v.actorVersion = rec.version;
    this.send(v, actorFrame(rec, !v.graphSent, this.opts.json));
    v.graphSent = true;
    const read = rec.events.since(v.eventCursor);
    const events = eventsFrame(sessionId, read, v.eventCursor, this.opts.json);
    if (events !== null) this.send(v, events);
    v.eventCursor = read.next;
  }

  private onMessage(v: Viewer, text: string, isBinary: boolean): void {
    const frame = parseInspectFrame(text, isBinary);
    if ('code' in frame) {
      this.send(v, { type: 'error', ...frame });
      return;
    }
    v.selected = frame.sessionId;
    v.actorVersion = -1;
    v.eventCursor = 0;
    v.graphSent = false;
    if (v.selected !== null) this.updateSelected(v, v.selected);
  }
}
