/**
 * One `docker exec` of the wrapper in a simulated container: the command
 * after the wrapper's arguments is looked up among the scripted commands
 * and played in the container's `/tmp` (playScript.ts), and the exec is
 * logged so tests can prove nothing ran twice. The cluster only runs the
 * wrapper: anything else is the caller's bug.
 */
import type { Clock } from '../Clock.js';
import { ContainerError } from '../ContainerError.js';
import { markerPath, outputPath, WRAPPER_SCRIPT } from '../wrapper.js';
import { type SimCommandRegistry, scriptFor } from './commands.js';
import { playScript, type RunningExec } from './playScript.js';
import type { ExecRecord, SimContainer, SimService } from './simulatedState.js';

export interface WrapperExec {
  clock: Clock;
  commands: SimCommandRegistry;
  service: SimService;
  container: SimContainer;
  /** The container's execs in flight. */
  running: Set<RunningExec>;
  /** The cluster's exec log, appended to. */
  log: ExecRecord[];
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  onOutput: (chunk: string) => void;
}

/** Starts the exec; `done` settles as the script plays out (or its container is lost). */
export function execWrapper(x: WrapperExec): {
  startedAt: number;
  done: Promise<{ exitCode: number }>;
} {
  const { argv, container, service } = x;
  if (argv[0] !== 'sh' || argv[2] !== WRAPPER_SCRIPT) {
    throw new ContainerError('invalid_argument', 'the simulated cluster only runs the wrapper');
  }
  const sessionId = x.env.ROUNDTABLE_SESSION_ID ?? service.sessionId;
  const command = argv.slice(4);
  const startedAt = x.clock.now();
  x.log.push({
    sessionId,
    containerId: container.id,
    node: container.node,
    atMs: startedAt,
    command,
  });
  const out = outputPath(sessionId);
  const marker = markerPath(sessionId);
  container.tmp.delete(marker);
  container.tmp.set(out, '');
  const done = playScript(scriptFor(x.commands, command), {
    clock: x.clock,
    tmp: container.tmp,
    outputPath: out,
    markerPath: marker,
    what: `container ${container.id} of ${service.name}`,
    onOutput: x.onOutput,
    running: x.running,
  });
  return { startedAt, done };
}
