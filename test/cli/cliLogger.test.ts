import { describe, expect, it } from 'vitest';
import { createCliLogger, prettyLogs } from '../../src/cli/cliLogger.js';

function capture(format: 'auto' | 'json' | 'pretty', isTTY: boolean, color?: boolean) {
  const lines: string[] = [];
  const logger = createCliLogger({
    level: 'info',
    format,
    isTTY,
    write: (l) => lines.push(l),
    ...(color === undefined ? {} : { color }),
  });
  return { logger, lines };
}

describe('createCliLogger', () => {
  it('writes JSON lines when the output is not a terminal', () => {
    const { logger, lines } = capture('auto', false);
    logger.info({ url: 'http://x' }, 'ready');
    const record = JSON.parse(lines[0]!);
    expect(record).toMatchObject({ level: 30, msg: 'ready', url: 'http://x', name: 'roundtable' });
    expect(record.pid).toBe(process.pid);
  });

  it('writes one readable line per record on a terminal, coloured', () => {
    const { logger, lines } = capture('auto', true);
    logger.child({ component: 'board' }).warn({ task: 't1' }, 'moved');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('\x1b[');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping ANSI colours
    expect(lines[0]!.replace(/\x1b\[\d+m/g, '')).toMatch(
      /^\d\d:\d\d:\d\d WARN {2}\[board\] moved task=t1\n$/,
    );
  });

  it('honours an explicit format over the terminal check', () => {
    const json = capture('json', true);
    json.logger.info('x');
    expect(() => JSON.parse(json.lines[0]!)).not.toThrow();
    const pretty = capture('pretty', false);
    pretty.logger.info('x');
    expect(pretty.lines[0]).toMatch(/INFO {2}x\n$/);
    expect(pretty.lines[0]).not.toContain('\x1b[');
  });

  it('prints the stack of an error at error level, not below', () => {
    const { logger, lines } = capture('pretty', false);
    const err = new TypeError('boom');
    logger.error({ err }, 'failed');
    logger.warn({ err }, 'noted');
    expect(lines[0]).toContain('err="TypeError: boom"');
    expect(lines[0]!.split('\n').length).toBeGreaterThan(2);
    expect(lines[1]!.trimEnd().split('\n')).toHaveLength(1);
  });

  it('drops records under the level', () => {
    const { logger, lines } = capture('json', false);
    logger.debug('hidden');
    expect(lines).toEqual([]);
  });

  it('prettyLogs decides auto by the terminal', () => {
    expect([prettyLogs('auto', true), prettyLogs('auto', false), prettyLogs('json', true)]).toEqual(
      [true, false, false],
    );
  });
});
