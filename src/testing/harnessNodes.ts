/**
 * The other nodes of a harness (`h.addNode`): replicas on the harness's
 * store, simulated cluster and virtual clock, as replicas behind a load
 * balancer or the two sides of a rolling deploy have them. The harness's
 * `advance` and `settle` wait on every node's I/O, not only its own boot's
 * (a test that booted a second node with `createRuntime` had to copy a
 * settle loop of its own, and an advance fired timers while that node's
 * statements were still out), and its `close` kills and drains them.
 */
import type { Runtime, RuntimeCaps } from '../actors/runtimeTypes.js';

/** What an added node may set apart from the harness's own options. */
export interface AddNodeOptions {
  /**
   * Its node id, as owners and logs name it. Two boots of one id are one
   * node rebooted (each boot has its own owner); a replica has its own.
   */
  nodeId: string;
  /** Default: the harness's. */
  caps?: RuntimeCaps;
  /** This node's share of the global cap. Default: the harness's. */
  localMax?: number;
  /** The image it runs tasks in when a task names none of its own. */
  runnerImage?: string;
}

export class HarnessNodes {
  /** Every node added, killed ones too, until close drains them. */
  private readonly nodes: Runtime[] = [];
  private added = 0;

  /** `boot` creates the node's runtime with the harness's parts and `bootId`. */
  constructor(private readonly boot: (o: AddNodeOptions, bootId: string) => Promise<Runtime>) {}

  /** Boots a node; resolves once createRuntime did (the caller settles). */
  async add(o: AddNodeOptions): Promise<Runtime> {
    this.added += 1;
    const node = await this.boot(o, `added${this.added}`);
    this.nodes.push(node);
    return node;
  }

  /** I/O calls in flight over every added node (a killed one's included, until done). */
  busy(): number {
    let n = 0;
    for (const node of this.nodes) n += node.busy();
    return n;
  }

  /** The added nodes, in the order they were added. */
  all(): readonly Runtime[] {
    return [...this.nodes];
  }

  /** Kills every added node (no cleanup), as `close` does to the harness's own. */
  killAll(): void {
    for (const node of this.nodes) node.kill();
  }
}
